"""Routing on the host (`dual_homing: host_routing`), stage by stage: the plan's loopbacks, links and ASNs of the
servers, the leaves' side of the sessions, the servers' own intent and files, and the default (`none`)."""

from __future__ import annotations

import json
from ipaddress import ip_interface
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric import render_all
from fabric.model.findings import FabricError
from fabric.render.platforms import PLATFORMS
from tests.conftest import built
from tests.support.design_variants import on_platform, variant

SERVERS = ("srv1", "srv2", "srv3", "srv4")


def test_the_plan_gives_each_server_a_loopback_an_asn_and_a_link_per_port() -> None:
    build = built("lab-dual")
    rows = build.allocation.addresses
    loopbacks = [r for r in rows if r.purpose == "host-loopback" and r.address.version == 4]
    # after the 6 switches' loopbacks, in attach order
    assert [(r.device, str(r.address)) for r in loopbacks] == [
        ("srv1", "10.255.0.7/32"),
        ("srv2", "10.255.0.8/32"),
        ("srv3", "10.255.0.9/32"),
        ("srv4", "10.255.0.10/32"),
    ]
    links = [r for r in rows if r.purpose == "host-p2p" and r.address.version == 4]
    assert len(links) == 16  # 4 servers x 2 ports, both ends
    for row in links:
        leaf_end = row.device.startswith("leaf")
        assert (int(row.address.ip) % 2 == 0) == leaf_end  # the leaf takes the even address of the /31
        assert row.address.network.prefixlen == 31
    # after the 8 switch links: the first server link is the 9th /31 of the pool
    assert min(int(r.address.network.network_address) for r in links) == int(ip_interface("10.254.0.16/31").ip)
    assert not [r for r in rows if r.purpose in ("server", "server-gateway")]  # no leaf subnets
    asns = {r.device: (r.asn, r.layer, r.router_id) for r in build.allocation.asns if r.layer == "node"}
    assert asns == {
        "srv1": (4210000000, "node", "10.255.0.7"),
        "srv2": (4210000001, "node", "10.255.0.8"),
        "srv3": (4210000002, "node", "10.255.0.9"),
        "srv4": (4210000003, "node", "10.255.0.10"),
    }
    assert not build.errors


def test_each_server_lands_on_a_leaf_pair() -> None:
    hosts = built("lab-dual").hosts
    assert [(p.name, p.leaf) for p in hosts["srv1"].ports] == [("eth1", "leaf1"), ("eth2", "leaf2")]
    assert [(p.name, p.leaf) for p in hosts["srv3"].ports] == [("eth1", "leaf3"), ("eth2", "leaf4")]


def test_leaves_route_server_ports_and_peer_with_the_servers() -> None:
    build = built("lab-dual")
    leaf = build.intents["leaf1"]
    assert leaf.servers is None  # no server bridge, VLAN or gateway
    routed = [p for p in leaf.used_ports if p.peer_device in SERVERS]
    assert [(p.name, p.role, str(p.ipv4)) for p in routed] == [
        ("swp1", "downlink", "10.254.0.16/31"),
        ("swp2", "downlink", "10.254.0.18/31"),
    ]
    assert leaf.bgp is not None
    servers = [(n.peer, n.remote_as, n.peer_device) for n in leaf.bgp.neighbors if n.peer_device in SERVERS]
    # each routed port an IPv4 session and an IPv6 one (the fabric has IPv6), in HOSTS and HOSTS-V6
    assert servers == [
        ("10.254.0.17", 4210000000, "srv1"),
        ("10.254.0.19", 4210000001, "srv2"),
        ("fd00:1ab:0:1::11", 4210000000, "srv1"),
        ("fd00:1ab:0:1::13", 4210000001, "srv2"),
    ]
    assert [leaf.bgp.group(n) for n in leaf.bgp.neighbors if n.host] == ["HOSTS", "HOSTS", "HOSTS-V6", "HOSTS-V6"]
    assert len(leaf.bgp.neighbors) == 8  # and the two spines, twice
    assert leaf.bgp.networks == (ip_interface("10.255.0.3/32").network,)  # the loopback only: no server subnet
    # a server's loopback is reached over both of its leaves, whose AS paths differ
    spine = build.intents["spine1"]
    assert spine.bgp is not None and spine.bgp.multipath_relax and spine.bgp.maximum_paths == 2
    assert leaf.bgp.multipath_relax
    # the default (`none`) keeps the lab as it was: leaf subnets, bridged servers, no server sessions
    lab = built("lab")
    assert not lab.hosts and not [r for r in lab.allocation.asns if r.layer == "node"]
    assert lab.intents["leaf1"].servers is not None and lab.intents["spine1"].bgp.multipath_relax is False  # type: ignore[union-attr]


def test_host_files_carry_the_sessions_and_the_addresses() -> None:
    files = render_all(built("lab-dual"))
    hosts = sorted(n for n in files if n.startswith("hosts/"))
    assert hosts == [f"hosts/{s}/{f}" for s in SERVERS for f in ("frr.conf", "netplan.yaml")]
    frr = files["hosts/srv1/frr.conf"].decode()
    for line in (
        "router bgp 4210000000",
        " neighbor 10.254.0.16 remote-as 65101",
        " neighbor 10.254.0.20 remote-as 65102",
        "  network 10.255.0.7/32",
        "  neighbor FABRIC route-map HOST-OUT out",
        "  maximum-paths 2",
        " set src 10.255.0.7",
        "ip protocol bgp route-map HOST-SRC",
        "ip prefix-list LOOPBACK seq 10 permit 10.255.0.7/32",
    ):
        assert f"{line}\n" in frr, line
    netplan = yaml.safe_load(files["hosts/srv1/netplan.yaml"])["network"]
    assert netplan["version"] == 2
    assert netplan["ethernets"]["lo"]["addresses"] == ["10.255.0.7/32", "fd00:1ab::7/128"]
    assert netplan["ethernets"]["eth1"]["addresses"] == ["10.254.0.17/31", "fd00:1ab:0:1::11/127"]
    assert netplan["ethernets"]["eth2"]["mtu"] == 9000 and netplan["ethernets"]["eth2"]["dhcp4"] is False
    assert not any("gateway" in e or "routes" in e for e in netplan["ethernets"].values())  # routes come from BGP


def test_unnumbered_sessions_run_over_link_local_on_both_sides() -> None:
    build = on_platform("lab-dual", "frr", unnumbered=True)
    assert not [r for r in build.allocation.addresses if r.purpose == "host-p2p"]
    files = render_all(build)
    frr = files["hosts/srv1/frr.conf"].decode()
    assert " neighbor FABRIC remote-as external\n" in frr
    assert (
        " neighbor eth1 interface peer-group FABRIC\n" in frr and " neighbor eth2 interface peer-group FABRIC\n" in frr
    )
    assert "  network fd00:1ab::7/128\n" in frr and " address-family ipv6 unicast\n" in frr
    assert yaml.safe_load(files["hosts/srv1/netplan.yaml"])["network"]["ethernets"]["eth1"]["link-local"] == ["ipv6"]
    leaf = files["configs/leaf1/frr.conf"].decode()
    assert " neighbor swp1 interface peer-group HOSTS\n" in leaf and " description srv1:eth1\n" in leaf
    assert "  neighbor swp1 prefix-list HOST-srv1 in\n" in leaf
    assert "  neighbor swp1 prefix-list HOST-srv1-V6 in\n" in leaf


@pytest.mark.parametrize("platform", sorted(set(PLATFORMS) - {"frr"}))
def test_every_platform_peers_with_the_servers(platform: str) -> None:
    build = on_platform("lab-dual", platform)
    assert not build.findings, [f.format() for f in build.findings]
    text = b"".join(data for name, data in render_all(build).items() if name.startswith("configs/leaf1/")).decode()
    assert "10.254.0.17" in text and "4210000000" in text  # srv1's end of the link and its ASN
    assert "vlan" not in text.lower()  # no server VLAN, bridge or SVI


def test_server_asns_must_not_meet_the_switches() -> None:
    def clash(data: dict[str, Any]) -> None:
        data["asn"]["host_start"] = 65104  # leaf4's

    build = variant("lab-dual", clash)
    [finding] = [f for f in build.errors if f.code == "duplicate-asn"]
    assert "65104" in finding.message and "leaf4" in finding.message and "srv1" in finding.message


def test_the_link_pool_counts_the_server_links() -> None:
    def small(data: dict[str, Any]) -> None:
        data["addressing"]["p2p"] = "10.254.0.0/28"  # 8 /31s: the switch links fit, the 8 server links do not

    build = variant("lab-dual", small)
    [finding] = [f for f in build.errors if f.code == "address-pool"]
    assert "holds 8 /31 links; the design needs 16" in finding.message


def test_dual_homing_is_for_ethernet_fabrics() -> None:
    def on_ib(data: dict[str, Any]) -> None:
        data["fabrics"]["compute"]["dual_homing"] = "host_routing"

    with pytest.raises(FabricError) as raised:
        variant("lab-ib", on_ib)
    assert any("`dual_homing` applies to Ethernet fabrics only" in f.message for f in raised.value.findings)


def test_an_out_of_band_fabric_does_not_route_on_the_host() -> None:
    def on_oob(data: dict[str, Any]) -> None:
        data["fabrics"]["compute"]["role"] = "oob"
        data["fabrics"]["compute"]["dual_homing"] = "host_routing"

    with pytest.raises(FabricError) as raised:
        variant("lab-dual", on_oob)
    [finding] = raised.value.findings
    assert finding.code == "spec-invalid" and finding.path == "fabrics.compute.dual_homing"
    assert "out-of-band" in finding.message


def test_the_lab_plans_routing_servers_from_their_generated_files() -> None:
    from fabric.tools.lab import LabStatus, plan_lab

    plan = plan_lab(built("lab-dual"), prefix="x-")
    assert plan.bgp_hosts == {s: f"x-h-{s}" for s in SERVERS}
    assert plan.bridges == {}  # no leaf bridges a routed server port
    assert plan.host_routes == {f"x-h-{s}": [] for s in SERVERS}  # no default gateway: routes come from BGP
    # the addresses of hosts/srv1/netplan.yaml, and its frr.conf to boot
    assert plan.host_addresses["x-h-srv1"] == [
        ("lo", "10.255.0.7/32"),
        ("lo", "fd00:1ab::7/128"),
        ("eth1", "10.254.0.17/31"),
        ("eth1", "fd00:1ab:0:1::11/127"),
        ("eth2", "10.254.0.21/31"),
        ("eth2", "fd00:1ab:0:1::15/127"),
    ]
    assert plan.configs["srv1"].startswith(b"! srv1: generated by fabric")
    # sessions of both families (a numbered port has 2); a server's ECMP width counts its IPv4 ones
    assert plan.expected_peers["srv1"] == 4 and plan.expected_peers["leaf1"] == 8 and plan.expected_peers["spine1"] == 8
    assert plan.host_widths["srv1"] == 2
    assert plan.host_prefixes["srv3"] == ["10.255.0.9/32"]
    # converged only when every server also has every other server's loopback over both its leaves
    sessions = {"srv1": (2, 2)}
    assert LabStatus(sessions, {}, {}, {"srv1": {"10.255.0.9/32": 2}}, {"srv1": 2}).converged
    assert not LabStatus(sessions, {}, {}, {"srv1": {"10.255.0.9/32": 1}}, {"srv1": 2}).converged
    # the plain lab is planned as before: bridged servers with a default gateway
    lab = plan_lab(built("lab"), prefix="x-")
    assert not lab.bgp_hosts and len(lab.bridges) == 4 and lab.host_routes["x-h-srv1"]


def test_server_asns_must_not_meet_another_fabrics_switches() -> None:
    def storage(data: dict[str, Any]) -> None:
        fabric = dict(data["fabrics"]["compute"])
        fabric.pop("dual_homing")
        fabric["role"] = "storage"
        fabric["naming"] = {"leaf": "sleaf{index}", "spine": "sspine{index}"}
        fabric["asn"] = {"spine": 64600, "leaf_start": 4210000002}  # srv3's ASN
        data["fabrics"]["store"] = fabric

    build = variant("lab-dual", storage)
    found = [f for f in build.errors if f.code == "duplicate-asn"]
    assert [(f.path, f.message) for f in found] == [
        (
            "asn.host_start",
            "2 nodes that route on the host share their ASN with switches of another fabric: "
            "srv3 and store-sleaf1 (4210000002), srv4 and store-sleaf2 (4210000003)",
        )
    ]


def test_the_lab_says_why_a_session_is_not_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from fabric.tools import lab

    neighbors = {
        "eth1": {"bgpState": "Idle", "lastResetDueTo": "Interface down", "bgpNeighborAddr": "fe80::1"},
        "eth2": {"bgpState": "Established", "lastResetDueTo": "Waiting for peer OPEN"},
        "eth3": {"bgpState": "Active"},
    }
    monkeypatch.setattr(lab, "vty", lambda path, command: json.dumps(neighbors))
    waiting = lab._waiting(Path("srv1"))
    assert waiting == {
        "eth1": "Idle, last reset: Interface down (fe80::1)",
        "eth3": "Active, last reset: none (neighbour address not known)",
    }
    text = lab.LabStatus({"srv1": (1, 3)}, {}, {}, waiting={"srv1": waiting}).describe().splitlines()
    assert text[-3:] == [
        "device      session not up",
        "srv1        eth1: Idle, last reset: Interface down (fe80::1)",
        "srv1        eth3: Active, last reset: none (neighbour address not known)",
    ]
    monkeypatch.setattr(lab, "vty", lambda path, command: (_ for _ in ()).throw(OSError("no socket")))
    assert lab._waiting(Path("srv1")) == {"bgpd": "does not answer"}
