"""Bonds to MLAG leaf pairs (`dual_homing: bond`), stage by stage: the peer-link cables and the port budget, the
figures that must not see them, one server subnet per pair, the leaves' MLAG intent and BGP, EOS and Cumulus
output, the nodes' netplan bond, and the designs bond refuses."""

from __future__ import annotations

import csv
import io
from collections import Counter
from typing import Any

import pytest
import yaml

from fabric import load_spec_text, render_all
from fabric.analysis.figures import fabric_figures
from fabric.model.findings import FabricError
from fabric.model.kinds import Tier
from tests.conftest import built
from tests.support.design_variants import on_platform, variant

PAIRS = (("leaf1", "leaf2"), ("leaf3", "leaf4"))


def _cabling(design: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(render_all(built(design))["cabling.csv"].decode())))


def test_each_pair_gets_two_peer_link_cables_from_its_down_ports() -> None:
    rows = _cabling("lab-mlag")
    peer = [r for r in rows if r["tier"] == "leaf-leaf"]
    assert len(peer) == len(PAIRS) * 2  # pairs × peer links
    assert sorted({(r["a_device"], r["b_device"]) for r in peer}) == list(PAIRS)
    # the last 2 down ports (Ethernet61/1, 62/1; 63 and 64 are the uplinks), port i to port i
    assert {(r["a_port"], r["b_port"]) for r in peer} == {("Ethernet61/1",) * 2, ("Ethernet62/1",) * 2}
    assert Counter(r["tier"] for r in rows) == {"node-leaf": 8, "leaf-spine": 8, "leaf-leaf": 4}
    ft = built("lab-mlag").topology.fabrics["compute"]
    assert ft.params is not None and ft.params.downlinks == 60  # 62 down ports less the peer link's 2
    assert ft.provisioned_down["leaf1"] == 60 * 100


def test_peer_links_are_no_path_of_the_clos() -> None:
    ft = built("lab-mlag").topology.fabrics["compute"]
    assert sum(1 for link in ft.links if link.tier == Tier.PEER) == 4
    assert not [e for e in ft.graph.edges(data="link") if e[2].tier == Tier.PEER]  # not in ECMP or bisection
    fig = fabric_figures(ft)
    assert fig.links == {"node-leaf": 8, "leaf-spine": 8, "spine-core": 0, "leaf-leaf": 4}
    leaf1 = next(ld for ld in fig.loads if ld.name == "leaf1")
    assert (leaf1.down_links, leaf1.up_links) == (2, 2)  # the servers down, the spines up: the peer link neither
    summary = render_all(built("lab-mlag"))["summary.json"].decode()
    assert '"leaf-leaf"' not in summary  # the summary's per-tier counts are the Clos tiers, as before


def test_one_subnet_per_pair_with_both_svis_and_the_bonds() -> None:
    rows = [r for r in built("lab-mlag").allocation.addresses if r.purpose in ("server", "server-gateway")]
    v4 = [(r.device, r.interface, str(r.address), r.purpose) for r in rows if r.address.version == 4]
    assert v4 == [
        ("leaf1", "servers", "172.16.0.2/25", "server-gateway"),
        ("leaf2", "servers", "172.16.0.3/25", "server-gateway"),
        ("srv1", "bond0", "172.16.0.4/25", "server"),
        ("srv2", "bond0", "172.16.0.5/25", "server"),
        ("leaf3", "servers", "172.16.0.130/25", "server-gateway"),
        ("leaf4", "servers", "172.16.0.131/25", "server-gateway"),
        ("srv3", "bond0", "172.16.0.132/25", "server"),
        ("srv4", "bond0", "172.16.0.133/25", "server"),
    ]
    assert len([r for r in rows if r.address.version == 6]) == 8  # one /64 per pair
    # the peer link is layer 2: no /31 for it, 8 switch links' worth only
    assert (
        len([r for r in built("lab-mlag").allocation.addresses if r.purpose == "p2p" and r.address.version == 4]) == 16
    )


def test_the_leaves_of_a_pair_agree_on_peer_bonds_and_gateway() -> None:
    intents = built("lab-mlag").intents
    one, two = intents["leaf1"].mlag, intents["leaf2"].mlag
    assert one is not None and two is not None
    assert (one.domain, one.peer, one.primary, one.vlan) == ("leaf1-leaf2", "leaf2", True, 4094)
    assert (two.peer, two.primary) == ("leaf1", False)
    assert (str(one.local_address), str(one.peer_address)) == ("169.254.0.0/31", "169.254.0.1")
    assert (str(two.local_address), str(two.peer_address)) == ("169.254.0.1/31", "169.254.0.0")
    assert one.peer_link.members == two.peer_link.members == ("Ethernet61/1", "Ethernet62/1")
    assert (
        [(b.channel, b.node) for b in one.bonds]
        == [(b.channel, b.node) for b in two.bonds]
        == [
            (1, "srv1"),
            (2, "srv2"),
        ]
    )
    servers = intents["leaf1"].servers
    assert (
        servers is not None
        and str(servers.virtual_v4) == "172.16.0.1/25"
        and str(servers.gateway_v4) == ("172.16.0.2/25")
    )
    assert intents["leaf3"].mlag is not None and intents["leaf3"].mlag.index == 2
    assert intents["spine1"].mlag is None
    roles = Counter(p.role for p in intents["leaf1"].used_ports)
    assert roles == {"server": 2, "peer-link": 2, "uplink": 2}


def test_pair_leaves_peer_over_the_peer_vlan_and_spines_multipath() -> None:
    intents = built("lab-mlag").intents
    bgp = intents["leaf1"].bgp
    assert bgp is not None
    [peer, peer_v6] = [n for n in bgp.neighbors if n.mlag_peer]
    assert (peer.peer, peer.interface, peer.remote_as, peer.peer_device) == ("169.254.0.1", "Vlan4094", 65102, "leaf2")
    # the backup's IPv6 session: over the peer VLAN's link-local addresses, by interface
    assert (peer_v6.peer, peer_v6.interface, peer_v6.remote_as, peer_v6.v6) == ("Vlan4094", "Vlan4094", 65102, True)
    assert peer_v6.local_address is None and bgp.group(peer_v6) == "FABRIC-V6" and not peer.v6
    # 2 spines and the peer, an IPv4 and an IPv6 session each; ECMP over the uplinks
    assert len(bgp.neighbors) == 6 and bgp.maximum_paths == 2
    assert sum(n.v6 for n in bgp.neighbors) == 3
    spine = intents["spine1"].bgp
    assert spine is not None and spine.multipath_relax  # a pair's subnet arrives from two leaf ASNs
    assert len(spine.neighbors) == 8 and spine.maximum_paths == 2  # over both leaves of the pair (2 families)


def test_eos_startup_config_runs_mlag() -> None:
    config = render_all(built("lab-mlag"))["configs/leaf2/startup-config"].decode()
    for block in (
        "vlan 4094\n   name MLAG-PEER\n   trunk group MLAG\n",
        "no spanning-tree vlan-id 4094\n",
        "interface Ethernet61/1\n   description leaf1:Ethernet61/1\n",
        "   channel-group 1000 mode active\n",
        "interface Port-Channel1000\n   description MLAG peer link to leaf1\n   switchport\n   switchport mode trunk\n",
        "interface Port-Channel2\n   description srv2\n   switchport\n   switchport mode access\n"
        "   switchport access vlan 1000\n   mlag 2\n",
        "   ip address 172.16.0.3/25\n   ip virtual-router address 172.16.0.1\n",
        "interface Vlan4094\n   description MLAG-PEER\n   mtu 9214\n   no autostate\n   ip address 169.254.0.1/31\n",
        "mlag configuration\n   domain-id leaf1-leaf2\n   local-interface Vlan4094\n   peer-address 169.254.0.0\n"
        "   peer-link Port-Channel1000\n",
        "   neighbor 169.254.0.0 remote-as 65101\n",
    ):
        assert block in config, block
    assert config.count("channel-group") == 4  # 2 server ports, 2 peer-link ports


def test_eos_structured_config_carries_mlag_configuration() -> None:
    data = yaml.safe_load(render_all(built("lab-mlag"))["configs/leaf1/structured-config.yaml"])
    assert data["mlag_configuration"] == {
        "domain_id": "leaf1-leaf2",
        "local_interface": "Vlan4094",
        "peer_address": "169.254.0.1",
        "peer_link": "Port-Channel1000",
    }
    assert [p["name"] for p in data["port_channel_interfaces"]] == [
        "Port-Channel1000",
        "Port-Channel1",
        "Port-Channel2",
    ]
    assert data["port_channel_interfaces"][1]["mlag"] == 1
    assert data["vlan_interfaces"][0]["ip_virtual_router_addresses"] == ["172.16.0.1"]
    assert data["ip_virtual_router_mac_address"] == "00:1c:73:00:00:99"
    members = [e for e in data["ethernet_interfaces"] if "channel_group" in e]
    assert [(e["name"], e["channel_group"]["id"]) for e in members] == [
        ("Ethernet1/1", 1),
        ("Ethernet2/1", 2),
        ("Ethernet61/1", 1000),
        ("Ethernet62/1", 1000),
    ]


@pytest.mark.parametrize("unnumbered", (False, True))
def test_cumulus_runs_mlag_with_peerlink_backup_and_vrr(unnumbered: bool) -> None:
    build = on_platform("lab-mlag", "cumulus", unnumbered)
    assert not build.findings, [f.format() for f in build.findings]
    [doc] = yaml.safe_load(render_all(build)["configs/leaf1/startup.yaml"])
    config = doc["set"]
    assert config["mlag"] == {
        "enable": "on",
        "mac-address": "44:38:39:ff:00:01",
        "peer-ip": "linklocal",
        "priority": 1000,
        "backup": {"10.255.0.4": {}},  # leaf2's loopback
    }
    interfaces = config["interface"]
    assert interfaces["peerlink"] == {"type": "peerlink", "bond": {"member": {"swp61": {}, "swp62": {}}}}
    assert interfaces["peerlink.4094"] == {"type": "sub", "base-interface": "peerlink", "vlan": 4094}
    assert interfaces["bond2"]["bond"] == {"member": {"swp2": {}}, "mlag": {"enable": "on", "id": 2}}
    assert interfaces["bond2"]["bridge"] == {"domain": {"br_default": {"access": 1000}}}
    assert "bridge" not in interfaces["swp2"]  # the bond is in the bridge, not its member
    vrr = interfaces["vlan1000"]["ip"]["vrr"]
    assert list(vrr["address"]) == ["172.16.0.1/25", "fd00:1ab:0:2::1/64"] and vrr["enable"] == "on"
    neighbor = config["vrf"]["default"]["router"]["bgp"]["neighbor"]["peerlink.4094"]
    assert neighbor["type"] == "unnumbered" and neighbor["description"] == "leaf2:peerlink.4094"
    assert ("remote-as" in neighbor) == (not unnumbered)  # unnumbered: the peer group's `external`
    [doc2] = yaml.safe_load(render_all(build)["configs/leaf2/startup.yaml"])
    assert doc2["set"]["mlag"]["priority"] == 2000


@pytest.mark.parametrize("platform", ("sonic", "frr"))
def test_a_platform_without_mlag_is_a_finding(platform: str) -> None:
    # (not on_platform, which turns the bond off on such a platform)
    build = variant("lab-mlag", lambda data: data["fabrics"]["compute"].update(platform=platform))
    found = [f for f in build.errors if f.code == "platform-capability"]
    assert len(found) == 1 and "run MLAG on a leaf pair" in found[0].message
    assert "cumulus, eos" in found[0].hint


def test_bonded_nodes_get_a_netplan_bond_and_no_frr() -> None:
    files = render_all(built("lab-mlag"))
    assert sorted(n for n in files if n.startswith("hosts/")) == [f"hosts/srv{i}/netplan.yaml" for i in range(1, 5)]
    netplan = yaml.safe_load(files["hosts/srv1/netplan.yaml"])["network"]
    bond = netplan["bonds"]["bond0"]
    assert bond["interfaces"] == ["eth1", "eth2"] and bond["parameters"]["mode"] == "802.3ad"
    assert bond["addresses"] == ["172.16.0.4/25", "fd00:1ab:0:2::4/64"]
    assert bond["routes"] == [{"to": "default", "via": "172.16.0.1"}, {"to": "default", "via": "fd00:1ab:0:2::1"}]
    assert set(netplan["ethernets"]) == {"eth1", "eth2"} and "addresses" not in netplan["ethernets"]["eth1"]
    hosts = built("lab-mlag").bonded
    assert [(p.name, p.leaf) for p in hosts["srv3"].members] == [("eth1", "leaf3"), ("eth2", "leaf4")]


def test_the_default_stays_none() -> None:
    build = built("lab")
    assert all(i.mlag is None for i in build.intents.values()) and not build.bonded
    assert not [link for ft in build.topology.fabrics.values() for link in ft.links if link.tier == Tier.PEER]


@pytest.mark.parametrize(
    ("change", "words"),
    (
        ({"rail_optimized": True, "scalable_unit": 4}, "rail-optimized"),
        ({"planes": 2}, "rail-optimized or has planes"),
    ),
)
def test_bond_needs_a_plain_generated_fabric(change: dict[str, Any], words: str) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["fabrics"]["compute"]["topology"].update(change)
        data["fabrics"]["compute"]["topology"].pop("leaves", None)

    with pytest.raises(FabricError) as raised:
        variant("lab-mlag", edit)
    found = [f for f in raised.value.findings if f.path == "fabrics.compute.dual_homing"]
    assert len(found) == 1 and found[0].code == "spec-invalid" and words in found[0].message


def test_bond_needs_two_ports_per_node() -> None:
    def single(data: dict[str, Any]) -> None:
        data["nodes"][0]["type"] = "linux-server"

    build = variant("lab-mlag", single)
    [finding] = [f for f in build.errors if f.code == "port-budget"]
    assert finding.path == "fabrics.compute.dual_homing" and "bring up to 1 ports" in finding.message


def test_the_servers_pool_counts_the_pair_subnets() -> None:
    def small(data: dict[str, Any]) -> None:
        data["addressing"]["servers"] = "172.16.0.0/25"  # one /25: the first pair fits, the second does not

    build = variant("lab-mlag", small)
    [finding] = [f for f in build.errors if f.code == "address-pool"]
    assert "holds 1 /25 subnets; the design needs 2" in finding.message


def test_a_bonded_design_rebuilt_with_its_own_lock_renders_the_same_outputs() -> None:
    from tests.unit.allocation.test_growth import REPO, grow, lock_json, outputs_of

    build = built("lab-mlag")
    again = grow(build, REPO / "designs" / "lab-mlag.yaml")
    assert again.findings == build.findings
    assert outputs_of(again, "again").files == outputs_of(build, "lab-mlag").files
    assert lock_json(again) == lock_json(build)


def test_bond_is_refused_on_an_explicit_fabric() -> None:
    spec = """\
name: explicit-bond
nodes: [{group: srv, type: linux-server-2p, count: 1, name: "srv{index}"}]
fabrics:
  compute:
    technology: ethernet
    topology:
      kind: explicit
      switches: [{name: leaf1, model: sn4600c, layer: leaf}, {name: leaf2, model: sn4600c, layer: leaf}]
      links: [{a: srv1:eth1, b: leaf1:swp1}, {a: srv1:eth2, b: leaf2:swp1}]
    switches: {leaf: sn4600c}
    dual_homing: bond
    attach: [{group: srv, ports: data}]
"""
    with pytest.raises(FabricError) as raised:
        load_spec_text(spec, "explicit-bond.yaml")
    [finding] = [f for f in raised.value.findings if f.path == "fabrics.compute.dual_homing"]
    assert finding.code == "spec-invalid" and "fabric `compute` is explicit" in finding.message


def _without_ipv6(data: dict[str, Any]) -> None:
    data["addressing"]["ipv6"] = None  # IPv4 only


def test_eos_runs_the_ipv6_backup_session_over_the_peer_vlan() -> None:
    files = render_all(built("lab-mlag"))
    config = files["configs/leaf1/startup-config"].decode()
    assert "interface Vlan4094\n   description MLAG-PEER\n   mtu 9214\n   no autostate\n" in config
    assert "   ip address 169.254.0.0/31\n   ipv6 enable\n" in config
    assert "   neighbor interface Vlan4094 peer-group FABRIC-V6 remote-as 65102\n" in config
    assert "   neighbor 169.254.0.1 peer group FABRIC\n" in config  # the IPv4 one stays
    data = yaml.safe_load(files["configs/leaf1/structured-config.yaml"])
    bgp = data["router_bgp"]
    assert bgp["neighbor_interfaces"] == [{"name": "Vlan4094", "peer_group": "FABRIC-V6", "remote_as": "65102"}]
    assert "169.254.0.1" in [n["ip_address"] for n in bgp["neighbors"]]
    assert next(v for v in data["vlan_interfaces"] if v["name"] == "Vlan4094")["ipv6_enable"] is True
    # negative: a fabric without IPv6 has the IPv4 backup only, and no IPv6 on the peer VLAN
    plain = render_all(variant("lab-mlag", _without_ipv6))["configs/leaf1/startup-config"].decode()
    assert "neighbor interface" not in plain and "ipv6 enable" not in plain
    assert "   neighbor 169.254.0.1 peer group FABRIC\n" in plain
    # unnumbered: the one interface session carries both families already (no second one)
    unnumbered = render_all(on_platform("lab-mlag", "eos", True))["configs/leaf1/startup-config"].decode()
    assert unnumbered.count("neighbor interface Vlan4094") == 1


@pytest.mark.parametrize("unnumbered", (False, True))
def test_cumulus_carries_ipv6_on_the_peer_link_session(unnumbered: bool) -> None:
    build = on_platform("lab-mlag", "cumulus", unnumbered)
    [doc] = yaml.safe_load(render_all(build)["configs/leaf1/startup.yaml"])
    bgp = doc["set"]["vrf"]["default"]["router"]["bgp"]
    neighbor = bgp["neighbor"]["peerlink.4094"]
    if unnumbered:  # the peer group carries both families on every session
        assert "address-family" not in neighbor
        assert bgp["peer-group"]["FABRIC"]["address-family"]["ipv6-unicast"]["enable"] == "on"
        return
    # numbered: the FABRIC group is IPv4 only, so the peer link's session turns IPv6 on for itself
    assert "ipv6-unicast" not in bgp["peer-group"]["FABRIC"]["address-family"]
    v6 = neighbor["address-family"]["ipv6-unicast"]
    assert v6["enable"] == "on" and v6["policy"]["inbound"]["route-map"] == "FABRIC-IN-V6"
    assert v6["prefix-limits"]["inbound"]["maximum"] == 32
    # one session, one planned series for frr_exporter (it names the session by the interface)
    prom = render_all(build)["monitoring/textfile/fabric_plan.prom"].decode()
    assert prom.count('hostname="leaf1",peer="peerlink.4094"') == 1
    plain = variant(
        "lab-mlag", lambda data: (_without_ipv6(data), data["fabrics"]["compute"].update(platform="cumulus"))
    )
    [doc] = yaml.safe_load(render_all(plain)["configs/leaf1/startup.yaml"])
    assert "address-family" not in doc["set"]["vrf"]["default"]["router"]["bgp"]["neighbor"]["peerlink.4094"]
