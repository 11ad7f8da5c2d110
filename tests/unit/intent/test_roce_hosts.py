"""The servers' side of a routed RoCE fabric (`dual_homing: none`, a lossless QoS profile): each rail NIC's
address, its own routing table and rule to its own leaf, and NIC QoS and NCCL settings equal to the switches'."""

from __future__ import annotations

import re
from ipaddress import ip_interface
from typing import Any

import yaml

from fabric.intent.hosts import RAIL_TABLE_BASE, RoceHost
from fabric.pipeline import Build
from fabric.render.outputs.hosts import host_files, rail_netplan, roce_files, roce_tos
from tests.conftest import built
from tests.support.design_variants import variant


def _plan_gateways(build: Build) -> dict[str, str]:
    """Leaf → its server subnet's gateway (IPv4), from the plan's rows."""
    return {
        r.device: str(r.address.ip)
        for r in build.allocation.addresses
        if r.purpose == "server-gateway" and r.address.version == 4
    }


def _netplan(host: RoceHost) -> dict[str, Any]:
    text = roce_files(host)[f"hosts/{host.hostname}/netplan.yaml"]
    data: dict[str, Any] = yaml.safe_load(text)
    return data["network"]["ethernets"]


def test_every_gpu_server_of_a_rail_design_gets_one_table_and_rule_per_nic_to_its_own_leaf() -> None:
    build = built("roce-512")
    gateways = _plan_gateways(build)
    plan = {
        (r.device, r.interface): r
        for r in build.allocation.addresses
        if r.purpose == "server" and r.address.version == 4
    }
    assert len(build.roce) == 64  # every GPU server
    for name, host in build.roce.items():
        assert [n.rail for n in host.nics] == list(range(8))
        ethernets = _netplan(host)
        assert list(ethernets) == [f"nic{i}" for i in range(8)]
        tables = set()
        for nic in host.nics:
            entry = ethernets[nic.name]
            row = plan[(name, nic.name)]
            assert str(row.address) in entry["addresses"]  # the ip-plan's address
            assert entry["mtu"] == 9000
            v4_rules = [r for r in entry["routing-policy"] if ":" not in r["from"]]
            assert v4_rules == [{"from": str(row.address.ip), "table": nic.table, "priority": nic.rule_priority}]
            default = [r for r in entry["routes"] if r["to"] == "0.0.0.0/0"]
            assert default == [{"to": "0.0.0.0/0", "via": gateways[row.peer_device], "table": nic.table}]
            assert ip_interface(f"{default[0]['via']}/{row.address.network.prefixlen}").network == row.address.network
            assert all(r["table"] == nic.table for r in entry["routes"])  # nothing of this NIC in another table
            tables.add(nic.table)
        assert len(tables) == 8  # distinct per NIC
        assert min(tables) == RAIL_TABLE_BASE
    text = roce_files(build.roce["gpu064"])["hosts/gpu064/netplan.yaml"]
    expected = yaml.safe_dump(rail_netplan(build.roce["gpu064"]), sort_keys=False, default_flow_style=False, width=120)
    assert text[text.index("network:") :] == expected  # the fast writer's text is PyYAML's


def _qos_lines(host: RoceHost) -> str:
    return roce_files(host)[f"hosts/{host.hostname}/nic-qos.sh"]


def _nccl(host: RoceHost) -> dict[str, str]:
    text = roce_files(host)[f"hosts/{host.hostname}/nccl.env"]
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def _assert_host_qos_is_the_switches(build: Build) -> None:
    for host in build.roce.values():
        text = _qos_lines(host)
        for nic in host.nics:
            q = build.intents[nic.leaf].qos  # what the leaf at the other end of the cable programs
            assert q is not None
            pfc = ",".join("1" if p == q.roce_tc else "0" for p in range(8))
            assert f"mlnx_qos -i {nic.name} --trust dscp --pfc {pfc}\n" in text
            assert f"mlnx_qos -i {nic.name} --dscp2prio set,{q.roce_dscp},{q.roce_tc}\n" in text
            assert f"mlnx_qos -i {nic.name} --dscp2prio set,{q.cnp_dscp},{q.cnp_tc}\n" in text
            assert f"echo 1 > /sys/class/net/{nic.name}/ecn/roce_np/enable/{q.roce_tc}\n" in text
            assert f"echo {q.cnp_dscp} > /sys/class/net/{nic.name}/ecn/roce_np/cnp_dscp\n" in text
            tos = re.search(rf"cma_roce_tos -d .*{nic.name}.* -t (\d+)", text)
            assert tos is not None and int(tos.group(1)) >> 2 == q.roce_dscp
            assert int(_nccl(host)["NCCL_IB_TC"]) >> 2 == q.roce_dscp


def test_nic_qos_and_nccl_traffic_class_are_the_switches_profile() -> None:
    build = built("roce-512")
    _assert_host_qos_is_the_switches(build)
    assert roce_tos(26) == 106  # DSCP 26 << 2 with ECT(0)
    assert _nccl(build.roce["gpu001"])["NCCL_IB_HCA"] == "=" + ",".join(f"nic{i}" for i in range(8))


def test_a_qos_override_reaches_the_hosts() -> None:
    def change(data: dict[str, Any]) -> None:
        data["fabrics"]["compute"]["qos"] = {"roce_dscp": 24, "roce_priority": 4, "cnp_dscp": 46, "cnp_priority": 7}

    build = variant("lab", change)
    _assert_host_qos_is_the_switches(build)
    text = _qos_lines(build.roce["srv1"])
    assert "--pfc 0,0,0,0,1,0,0,0" in text and "-t 98" in text  # 24 << 2 | 2
    assert _nccl(build.roce["srv1"])["NCCL_IB_TC"] == "98"


def test_no_host_files_without_a_lossless_routed_ethernet_fabric() -> None:
    def lossy(data: dict[str, Any]) -> None:
        data["fabrics"]["compute"]["qos"] = {"profile": "none"}

    assert not variant("lab", lossy).roce  # no RoCE profile: nothing to match
    dual = built("lab-dual")
    assert not dual.roce  # routing on the host: its own netplan, no leaf subnets
    assert not [n for n in host_files(dual) if n.endswith(("nic-qos.sh", "nccl.env"))]
    assert not built("superpod-h100-1su").roce  # compute on InfiniBand, in-band without a lossless profile
    lab = host_files(built("lab"))
    assert sorted(n for n in lab if n.startswith("hosts/srv1/")) == [
        "hosts/srv1/nccl.env",
        "hosts/srv1/netplan.yaml",
        "hosts/srv1/nic-qos.sh",
        "hosts/srv1/sysctl.conf",
    ]
    sysctl = lab["hosts/srv1/sysctl.conf"]
    for line in ("arp_ignore = 1", "arp_announce = 2", "all.rp_filter = 2"):
        assert line in sysctl


def test_rail_netplan_text_is_pyyamls_of_the_document() -> None:
    """The netplan written through the shape's form (once per shape) is the text PyYAML writes of each host's
    document; a host whose NICs share a name (not one shape) is written by dump."""
    import dataclasses

    from fabric.render.outputs.hosts import (
        ROCE_NETPLAN_HEADER,
        _rail_form,
        _rail_values,
        rail_netplan,
        rail_netplan_text,
    )
    from fabric.render.platforms.base import GENERATED

    hosts = list(built("roce-512").roce.values())
    assert len(hosts) >= 64
    for host in [*hosts, dataclasses.replace(hosts[0], nics=(hosts[0].nics[0],) * 2)]:
        header = ROCE_NETPLAN_HEADER.format(hostname=host.hostname, banner=GENERATED.format(design=host.design))
        text = yaml.safe_dump(rail_netplan(host), sort_keys=False, default_flow_style=False, width=120)
        assert rail_netplan_text(host) == header + text
    shape, values = _rail_values(hosts[0])
    assert _rail_form(shape, len(values)) is not None  # the form's path, not dump's
