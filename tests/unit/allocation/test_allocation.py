"""Stage 4, allocation (fabric/allocation.py), through real builds: loopbacks, /31 links, server subnets,
management addresses, ASNs, pool and ASN findings, and cables (media, lengths, part numbers, ids)."""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from ipaddress import IPv4Interface, IPv4Network, IPv6Interface, IPv6Network, ip_address, ip_interface
from pathlib import Path
from typing import Any

import pytest

from fabric import Build, Finding, Severity, build_fabric, load_spec_text
from fabric.allocation.allocate import AddressRow
from fabric.allocation.cages import CageKind, CageLookup
from fabric.model.cable import Cable
from fabric.model.topology import LAYER_RANK
from fabric.spec.catalog import Media, port_candidates
from fabric.topology.media import length_code
from fabric.topology.racks import U_M, route_m
from tests.conftest import DESIGNS, built, has_name
from tests.support.design_variants import variant

LAB = (DESIGNS / "lab.yaml").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------- helpers


def build_text(text: str, base_dir: str | Path = ".") -> Build:
    return build_fabric(load_spec_text(text, base_dir=base_dir))


def build_dict(spec: dict[str, Any]) -> Build:
    return build_text(json.dumps(spec))  # JSON is YAML


def edit(text: str, old: str, new: str) -> str:
    """`text` with `old` replaced once; fails loudly if the design no longer contains `old`."""
    assert text.count(old) == 1, f"expected exactly one {old!r} in the spec"
    return text.replace(old, new)


def lab(*edits: tuple[str, str]) -> Build:
    text = LAB
    for old, new in edits:
        text = edit(text, old, new)
    return build_text(text)


def with_code(build: Build, code: str) -> list[Finding]:
    return [f for f in build.findings if f.code == code]


def rows(build: Build, purpose: str, *, version: int | None = None) -> list[AddressRow]:
    out = [r for r in build.allocation.addresses if r.purpose == purpose]
    if version is not None:
        out = [r for r in out if ip_interface(r.address).version == version]
    return out


def ethernet_switches(build: Build) -> list[str]:
    return [s for ft in build.topology.fabrics.values() if ft.technology == "ethernet" for s in ft.switches]


def hinted_prefix(finding: Finding) -> int:
    """The prefix length a pool finding's hint suggests."""
    match = re.search(r"prefix of /(\d+)", finding.hint)
    assert match, finding.hint
    return int(match.group(1))


def _units(pool: str, prefixlen: int, server_prefix: int = 24) -> int:
    """What a pool of this prefix length holds: loopbacks skip .0; /31 links; /24 leaf subnets;
    management addresses skip .0, the gateway .1 and the broadcast address."""
    size = 2 ** (32 - prefixlen)
    return {
        "loopback": size - 1,
        "p2p": size // 2,
        "servers": size // 2 ** (32 - server_prefix),
        "mgmt": size - 3,
    }[pool]


# Three Ethernet tiers, small enough to read: 6 leaves with one server each and 2 uplinks, SN2201
# spines (4 x 100G: 2 down, 2 up), so 2 leaves per pod, 3 pods, and 2 SN4600C cores.
THREE_TIERS = """
name: three-tiers
racks: {rows: [A]}
nodes:
  - {group: srv, type: linux-server, count: 6, name: "srv{index}"}
fabrics:
  compute:
    technology: ethernet
    topology: {kind: clos, tiers: 3, downlinks: 1, uplinks: 2}
    switches: {leaf: sn4600c, spine: sn2201, core: sn4600c}
    attach: [{group: srv, ports: data}]
asn: {scheme: SCHEME, core: 64900, spine: 65000, leaf_start: 65100}
"""


def three_tiers(scheme: str = "rfc7938") -> Build:
    return build_text(edit(THREE_TIERS, "SCHEME", scheme))


def three_fabrics(inband_asn: dict[str, Any] | None = None) -> dict[str, Any]:
    """Three Ethernet fabrics in spec order compute, inband, oob; `inband_asn` overrides inband's ASN plan."""
    inband: dict[str, Any] = {
        "technology": "ethernet",
        "topology": {"kind": "spine-leaf", "leaves": 2, "spines": 2, "uplinks": 4},
        "switches": {"leaf": "sn4600c"},
        "attach": [{"group": "head", "ports": "inband"}],
    }
    if inband_asn is not None:
        inband["asn"] = inband_asn
    return {
        "name": "three-fabrics",
        "nodes": [
            {"group": "srv", "type": "linux-server", "count": 4, "name": "srv{index}"},
            {"group": "head", "type": "mgmt-host", "count": 4, "name": "head{index}"},
        ],
        "fabrics": {
            "compute": {
                "technology": "ethernet",
                "topology": {"kind": "spine-leaf", "leaves": 2, "spines": 2, "uplinks": 2},
                "switches": {"leaf": "sn4600c"},
                "attach": [{"group": "srv", "ports": "data"}],
            },
            "inband": inband,
            "oob": {
                "technology": "ethernet",
                "topology": {"kind": "spine-leaf", "spines": 2},
                "switches": {"leaf": "sn2201", "spine": "sn4600c"},
                "attach": [{"group": "srv", "ports": "bmc"}, {"group": "head", "ports": "bmc"}],
            },
        },
        "asn": {"scheme": "rfc7938", "spine": 65000, "leaf_start": 65100},
    }


# --------------------------------------------------------------------------------------------- loopbacks


def test_loopbacks_one_unique_slash32_per_ethernet_switch_from_the_pool() -> None:
    build = built("superpod-h100-4su")
    pool = IPv4Network("10.0.0.0/16")
    lo = rows(build, "loopback", version=4)
    assert sorted(r.device for r in lo) == sorted(ethernet_switches(build))  # InfiniBand switches get none
    assert all(r.interface == "lo" for r in lo)
    addresses = [ip_interface(r.address) for r in lo]
    assert all(a.network.prefixlen == 32 and a.ip in pool for a in addresses)
    assert len({a.ip for a in addresses}) == len(addresses)


def test_loopbacks_go_top_tier_first_fabrics_in_spec_order() -> None:
    build = built("superpod-h100-4su")
    lo = rows(build, "loopback", version=4)
    devices = build.topology.devices
    lo.sort(key=lambda r: ip_interface(r.address).ip)
    assert ip_interface(lo[0].address).ip == ip_address("10.0.0.1")  # the pool's first host
    assert [ip_interface(r.address).ip for r in lo] == [ip_address("10.0.0.1") + i for i in range(len(lo))]
    assert [r.fabric for r in lo] == sorted((r.fabric for r in lo), key=["inband", "oob"].index)
    for fabric in ("inband", "oob"):
        ranks = [LAYER_RANK[devices[r.device].layer] for r in lo if r.fabric == fabric]
        assert ranks == sorted(ranks, reverse=True), fabric
    # the lab, by name: spines first, then the leaves in order
    lab_lo = rows(built("lab"), "loopback", version=4)
    assert [(r.device, str(r.address)) for r in lab_lo][:3] == [
        ("spine1", "10.255.0.1/32"),
        ("spine2", "10.255.0.2/32"),
        ("leaf1", "10.255.0.3/32"),
    ]


def test_loopbacks_ipv6_one_unique_slash128_per_switch() -> None:
    build = built("superpod-h100-4su")
    pool = IPv6Network("fd00::/48")
    lo6 = rows(build, "loopback", version=6)
    assert sorted(r.device for r in lo6) == sorted(ethernet_switches(build))
    addresses = [ip_interface(r.address) for r in lo6]
    assert all(a.network.prefixlen == 128 and a.ip in pool for a in addresses)
    assert len({a.ip for a in addresses}) == len(addresses)


@pytest.mark.parametrize("design", ["lab", "roce-512", "superpod-h100-4su"])
def test_router_id_is_the_loopback(design: str) -> None:
    build = built(design)
    loopback = {r.device: str(ip_interface(r.address).ip) for r in rows(build, "loopback", version=4)}
    assert build.allocation.asns
    for row in build.allocation.asns:
        assert row.router_id == loopback[row.device], row.device


# --------------------------------------------------------------------------------------------- /31 links


def _p2p_by_end(build: Build, version: int) -> dict[tuple[str, str], AddressRow]:
    out: dict[tuple[str, str], AddressRow] = {}
    for r in rows(build, "p2p", version=version):
        assert (r.device, r.interface) not in out, f"{r.device}:{r.interface} has two /31s"
        out[(r.device, r.interface)] = r
    return out


@pytest.mark.parametrize("design", ["lab", "roce-512", "superpod-h100-4su"])
def test_p2p_one_slash31_per_switch_link_upper_end_even(design: str) -> None:
    build = built(design)
    v4, v6 = _p2p_by_end(build, 4), _p2p_by_end(build, 6)
    links = [
        link
        for ft in build.topology.fabrics.values()
        if ft.technology == "ethernet"
        for link in ft.links
        if link.tier not in ("node-leaf", "leaf-leaf")  # an MLAG peer link is layer 2: no /31
    ]
    assert links
    assert len(v4) == len(v6) == 2 * len(links)
    pool = build.design.spec.addressing.p2p
    for link in links:
        upper, lower = v4[(link.b, link.b_port)], v4[(link.a, link.a_port)]
        up, low = IPv4Interface(upper.address), IPv4Interface(lower.address)
        assert up.network.prefixlen == low.network.prefixlen == 31
        assert up.network == low.network and up.network.subnet_of(pool)
        assert int(up.ip) % 2 == 0 and int(low.ip) == int(up.ip) + 1
        assert (upper.peer_device, upper.peer_interface) == (link.a, link.a_port)
        assert (lower.peer_device, lower.peer_interface) == (link.b, link.b_port)
        up6, low6 = ip_interface(v6[(link.b, link.b_port)].address), ip_interface(v6[(link.a, link.a_port)].address)
        assert up6.network.prefixlen == low6.network.prefixlen == 127
        assert up6.network == low6.network and int(up6.ip) % 2 == 0
    nets = [ip_interface(r.address).network for r in v4.values()]
    assert len(set(nets)) == len(links)  # one /31 per link, none shared


def test_p2p_none_when_bgp_unnumbered() -> None:
    build = lab(("    attach:", "    routing: {bgp_unnumbered: true}\n    attach:"))
    assert build.design.spec.fabrics["compute"].routing is not None
    assert rows(build, "p2p") == []
    assert len(rows(build, "loopback", version=4)) == 6  # the rest is still addressed
    assert len(rows(build, "server-gateway", version=4)) == 4
    assert not build.errors


def test_p2p_none_for_infiniband_fabrics() -> None:
    build = built("superpod-h100-4su")
    fabrics = {r.fabric for r in rows(build, "p2p")}
    assert fabrics == {"inband", "oob"}
    one_su = built("superpod-h100-1su")  # InfiniBand only: management addresses and nothing else
    assert {r.purpose for r in one_su.allocation.addresses} == {"mgmt"}
    assert one_su.allocation.asns == ()


# --------------------------------------------------------------------------------------------- server subnets


def _leaves(build: Build) -> list[str]:
    return [
        s
        for ft in build.topology.fabrics.values()
        if ft.technology == "ethernet"
        for s in ft.switches
        if build.topology.devices[s].layer == "leaf"
    ]


def _unbonded(design: str) -> Build:
    """A bundled design with each node port an address in its leaf's subnet (`dual_homing: none`): the
    SuperPOD's in-band without its bonds (tests/unit/intent/test_mlag.py has the pairs' subnets)."""
    if design != "superpod-h100-4su":
        return built(design)
    return variant(design, lambda data: data["fabrics"]["inband"].pop("dual_homing"))


@pytest.mark.parametrize("design", ["lab", "roce-512", "superpod-h100-4su"])
def test_server_subnet_per_leaf_with_gateway_dot1(design: str) -> None:
    build = _unbonded(design)
    gateways = rows(build, "server-gateway", version=4)
    oob = {s for ft in build.topology.fabrics.values() if ft.role == "oob" for s in ft.switches}
    assert sorted(r.device for r in gateways) == sorted(set(_leaves(build)) - oob)
    pool = build.design.spec.addressing.servers
    subnets = []
    for r in gateways:
        iface = IPv4Interface(r.address)
        assert r.interface == "servers"
        assert iface.ip == iface.network.network_address + 1
        assert iface.network.subnet_of(pool)
        subnets.append(iface.network)
    assert all(not a.overlaps(b) for i, a in enumerate(subnets) for b in subnets[i + 1 :])


@pytest.mark.parametrize("design", ["lab", "roce-512", "superpod-h100-4su"])
def test_server_addresses_from_dot2_in_leaf_port_order(design: str) -> None:
    build = _unbonded(design)
    devices, catalog = build.topology.devices, build.design.catalog
    gateway = {r.device: ip_interface(r.address) for r in rows(build, "server-gateway", version=4)}
    servers = {(r.device, r.interface): r for r in rows(build, "server", version=4)}
    node_links = [
        link
        for ft in build.topology.fabrics.values()
        if ft.technology == "ethernet" and ft.role != "oob"
        for link in ft.links
        if link.tier == "node-leaf"
    ]
    assert len(servers) == len(node_links)
    per_leaf: dict[str, list[tuple[tuple[int, int], str, str]]] = defaultdict(list)
    for link in node_links:
        port = port_candidates(catalog.switches[devices[link.b].model])[link.b_port][0]
        per_leaf[link.b].append(((port.cage, port.sub), link.a, link.a_port))
    for leaf, ports in per_leaf.items():
        subnet = gateway[leaf].network
        for j, (_, node, node_port) in enumerate(sorted(ports)):
            row = servers[(node, node_port)]
            iface = ip_interface(row.address)
            assert iface.network == subnet, f"{node}:{node_port} is outside {leaf}'s subnet"
            assert iface.ip == subnet.network_address + 2 + j, f"{node}:{node_port} on {leaf}"
            assert row.peer_device == leaf


def test_server_prefix_respected() -> None:
    build = built("lab")  # server_prefix: 24
    assert {ip_interface(r.address).network.prefixlen for r in rows(build, "server-gateway", version=4)} == {24}
    assert {ip_interface(r.address).network.prefixlen for r in rows(build, "server", version=4)} == {24}
    assert [str(r.address) for r in rows(build, "server-gateway", version=4)] == [f"172.16.{i}.1/24" for i in range(4)]


def test_server_prefix_default_fits_every_down_port() -> None:
    # without server_prefix: the smallest subnet that holds all 62 down ports of a leaf plus
    # network, gateway and broadcast (65 addresses → /25)
    build = lab(("  server_prefix: 24\n", ""))
    params = build.topology.fabrics["compute"].params
    assert params is not None and params.downlinks == 62
    prefixes = {ip_interface(r.address).network.prefixlen for r in rows(build, "server-gateway", version=4)}
    assert prefixes == {32 - math.ceil(math.log2(62 + 3))} == {25}


def test_server_subnet_ipv6_slash64_per_leaf() -> None:
    build = built("lab")
    pool = IPv6Network("fd00:1ab::/48")
    gateways = {r.device: IPv6Interface(r.address) for r in rows(build, "server-gateway", version=6)}
    assert sorted(gateways) == sorted(_leaves(build))
    assert all(g.network.prefixlen == 64 and g.network.subnet_of(pool) for g in gateways.values())
    assert all(g.ip == g.network.network_address + 1 for g in gateways.values())
    assert len({g.network for g in gateways.values()}) == len(gateways)
    for r in rows(build, "server", version=6):
        assert ip_interface(r.address).network == gateways[r.peer_device].network


def test_server_subnet_ipv6_with_the_smallest_allowed_pool() -> None:
    build = lab(("ipv6: fd00:1ab::/48", "ipv6: fd00:1ab::/56"))
    gateways6 = rows(build, "server-gateway", version=6)
    short = [f for f in with_code(build, "address-pool") if "ipv6" in f.path]
    assert len(gateways6) == 4 or short, "leaves got no IPv6 subnet and no finding says why"


# --------------------------------------------------------------------------------------------- management


def test_mgmt_address_for_every_switch_and_bmc_unique() -> None:
    build = built("superpod-h100-4su")
    catalog, devices = build.design.catalog, build.topology.devices
    mgmt = rows(build, "mgmt")
    wanted: set[tuple[str, str]] = set()
    for name, dev in devices.items():
        if dev.layer == "node":
            bmc = catalog.nodes[dev.model].ports.get("bmc")
            wanted.update((name, p.name) for p in (bmc.port_list() if bmc else []))
        else:
            wanted.add((name, catalog.switches[dev.model].mgmt_port))
    assert {(r.device, r.interface) for r in mgmt} == wanted
    assert len(mgmt) == len(wanted)
    # every fabric's switches, InfiniBand included
    assert {devices[r.device].fabric for r in mgmt if devices[r.device].layer != "node"} == set(
        build.design.spec.fabrics
    )
    pool = build.design.spec.addressing.mgmt
    ips = [ip_interface(r.address).ip for r in mgmt]
    assert len(set(ips)) == len(ips)
    reserved = {pool.network_address, pool.network_address + 1, pool.broadcast_address}  # .1 is the gateway
    assert all(ip in pool and ip not in reserved for ip in ips)


def test_mgmt_peer_is_the_oob_leaf_port() -> None:
    build = built("superpod-h100-4su")
    oob = {
        (link.a, link.a_port): (link.b, link.b_port)
        for link in build.topology.fabrics["oob"].links
        if link.tier == "node-leaf"
    }
    cabled = [r for r in rows(build, "mgmt") if (r.device, r.interface) in oob]
    assert len(cabled) == len(oob)  # every cabled management port has its address
    for r in rows(build, "mgmt"):
        peer = oob.get((r.device, r.interface))
        if peer is None:  # only the out-of-band switches' own management ports stay uncabled
            assert build.topology.devices[r.device].fabric == "oob"
            assert (r.peer_device, r.peer_interface) == ("", "")
        else:
            assert (r.peer_device, r.peer_interface) == peer
            assert build.topology.devices[r.peer_device].layer == "leaf"
            assert r.fabric == "oob"
    # BMCs of every node group and management ports of the other fabrics' switches are among them
    assert {"dgx001", "ufm001", "head01", "stor01", "spine01", "storage-leaf01", "inband-spine01"} <= {
        r.device for r in cabled
    }


# --------------------------------------------------------------------------------------------- ASNs


def test_asn_rfc7938_two_tiers_spines_share_leaves_count_up() -> None:
    build = built("lab")
    asns = {r.device: r.asn for r in build.allocation.asns}
    assert asns == {
        "spine1": 65000,
        "spine2": 65000,
        "leaf1": 65101,
        "leaf2": 65102,
        "leaf3": 65103,
        "leaf4": 65104,
    }
    assert {r.layer for r in build.allocation.asns} == {"spine", "leaf"}


def test_asn_leaves_continue_across_ethernet_fabrics() -> None:
    build = built("superpod-h100-4su")
    by_fabric: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for r in build.allocation.asns:
        by_fabric[r.fabric].append((r.layer, r.asn))
    assert set(by_fabric) == {"inband", "oob"}  # no ASNs for InfiniBand
    inband_leaves = [a for layer, a in by_fabric["inband"] if layer == "leaf"]
    oob_leaves = [a for layer, a in by_fabric["oob"] if layer == "leaf"]
    assert inband_leaves == list(range(65100, 65100 + len(inband_leaves)))
    assert oob_leaves == list(range(inband_leaves[-1] + 1, inband_leaves[-1] + 1 + len(oob_leaves)))
    for fabric in ("inband", "oob"):
        assert {a for layer, a in by_fabric[fabric] if layer == "spine"} == {65000}


def test_asn_rfc7938_three_tiers_cores_share_pods_spines_share() -> None:
    build = three_tiers()
    assert build.figures["compute"].tiers == 3
    assert build.figures["compute"].switches == {"leaf": 6, "spine": 6, "core": 2}
    devices = build.topology.devices
    assert sum(1 for r in build.allocation.asns if r.layer in ("core", "spine")) == 8
    for r in build.allocation.asns:
        dev = devices[r.device]
        if r.layer == "core":
            assert r.asn == 64900
        elif r.layer == "spine":
            assert dev.pod is not None
            assert r.asn == 65000 + dev.pod - 1, r.device
    leaves = [r.asn for r in build.allocation.asns if r.layer == "leaf"]
    assert leaves == list(range(65100, 65106))
    assert {devices[r.device].pod for r in build.allocation.asns if r.layer == "spine"} == {1, 2, 3}
    assert not build.findings, [f.format() for f in build.findings]


def test_asn_unique_scheme_gives_every_switch_its_own() -> None:
    build = three_tiers("unique")
    asns = [r.asn for r in build.allocation.asns]
    assert len(set(asns)) == len(asns)
    assert [r.asn for r in build.allocation.asns if r.layer == "core"] == [64900, 64901]
    assert [r.asn for r in build.allocation.asns if r.layer == "spine"] == list(range(65000, 65006))
    assert [r.asn for r in build.allocation.asns if r.layer == "leaf"] == list(range(65100, 65106))
    assert not build.errors


def test_asn_per_fabric_override() -> None:
    build = build_dict(three_fabrics({"spine": 65010, "leaf_start": 65300}))
    assert not build.errors, [f.format() for f in build.errors]
    got: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for r in build.allocation.asns:
        got[r.fabric][r.layer].append(r.asn)
    assert got["compute"]["leaf"] == [65100, 65101]
    assert got["inband"]["leaf"] == [65300, 65301]  # its own plan
    assert set(got["inband"]["spine"]) == {65010}
    # the next fabric on the design plan continues after compute, not after inband
    assert got["oob"]["leaf"] == [65102]
    assert set(got["oob"]["spine"]) == set(got["compute"]["spine"]) == {65000}


def test_asn_past_65534_is_an_asn_range_error() -> None:
    build = lab(("leaf_start: 65101", "leaf_start: 65532"))  # leaves 65532..65535
    found = with_code(build, "asn-range")
    assert len(found) == 1
    finding = found[0]
    assert finding.severity == Severity.ERROR
    assert finding.path == "fabrics.compute.asn"
    assert finding.message.startswith("1 ASN")
    assert "65535" in finding.message and "leaf4" in finding.message
    assert "4200000000" in finding.hint


def test_asn_four_byte_leaf_start_accepted() -> None:
    build = lab(("leaf_start: 65101", "leaf_start: 4200000000"))
    assert [r.asn for r in build.allocation.asns if r.layer == "leaf"] == [4200000000 + i for i in range(4)]
    assert not with_code(build, "asn-range")
    assert not build.errors


def test_asn_ranges_overlapping_within_a_fabric_is_duplicate_asn() -> None:
    build = lab(("leaf_start: 65101", "leaf_start: 64999"))  # leaf2 gets 65000, the spines' ASN
    found = with_code(build, "duplicate-asn")
    assert len(found) == 1
    assert found[0].severity == Severity.ERROR
    assert "65000" in found[0].message and "leaf2" in found[0].message


def test_asn_leaf_ranges_overlapping_across_fabrics_is_duplicate_asn() -> None:
    build = build_dict(three_fabrics({"spine": 65010, "leaf_start": 65100}))  # compute has 65100, 65101
    found = with_code(build, "duplicate-asn")
    assert len(found) == 2
    assert {m for f in found for m in re.findall(r"\b651\d\d\b", f.message)} == {"65100", "65101"}
    assert "compute" in found[0].message and "inband" in found[0].message


# --------------------------------------------------------------------------------------------- pools


@pytest.mark.parametrize(
    ("pool", "old", "new", "have", "need"),
    [
        # 6 switches; .0 is skipped, so a /30 holds .1-.3
        ("loopback", "loopback: 10.255.0.0/24", "loopback: 10.255.0.0/30", 3, 6),
        # 8 leaf-spine links; a /29 holds 4 /31s
        ("p2p", "p2p: 10.254.0.0/24", "p2p: 10.254.0.0/29", 4, 8),
        # 4 leaves with a /24 each; a /23 holds 2
        ("servers", "servers: 172.16.0.0/16", "servers: 172.16.0.0/23", 2, 4),
        # 8 BMCs + 6 switches; a /29 holds .2-.6 (.0 network, .1 gateway, .7 broadcast)
        ("mgmt", "mgmt: 192.168.100.0/24", "mgmt: 192.168.100.0/29", 5, 14),
    ],
)
def test_pool_too_small_says_how_much_is_needed(pool: str, old: str, new: str, have: int, need: int) -> None:
    build = lab((old, new))
    found = with_code(build, "address-pool")
    assert len(found) == 1, [f.format() for f in found]
    finding = found[0]
    assert finding.severity == Severity.ERROR
    assert finding.path == f"addressing.{pool}"
    assert re.search(rf"\bholds {have}\b", finding.message), finding.message
    assert re.search(rf"\bneeds {need}\b", finding.message), finding.message
    # the suggested prefix would really do
    assert _units(pool, hinted_prefix(finding)) >= need, finding.hint


def test_server_prefix_too_small_for_a_leaf() -> None:
    build = lab(("server_prefix: 24", "server_prefix: 30"))  # a /30 holds 1 host; each leaf has 2
    found = with_code(build, "address-pool")
    assert len(found) == 1
    assert found[0].path == "addressing.server_prefix"
    assert "holds 1 host" in found[0].message and "has 2" in found[0].message
    assert "server_prefix: 29" in found[0].hint


def test_mgmt_pool_without_room_holds_zero() -> None:
    build = lab(("mgmt: 192.168.100.0/24", "mgmt: 192.168.100.0/31"))
    found = with_code(build, "address-pool")
    assert len(found) == 1
    assert "holds 0 management addresses" in found[0].message
    assert "needs 14" in found[0].message


def test_servers_pool_smaller_than_one_subnet_hint_fits() -> None:
    # a /24 pool cannot hold a single /22 leaf subnet; 4 leaves need a /20
    build = lab(("servers: 172.16.0.0/16", "servers: 172.16.0.0/24"), ("server_prefix: 24", "server_prefix: 22"))
    found = with_code(build, "address-pool")
    assert len(found) == 1
    assert "holds 0 " in found[0].message
    assert hinted_prefix(found[0]) <= 20, found[0].hint


def test_overlapping_pools_are_duplicate_address() -> None:
    build = lab(("p2p: 10.254.0.0/24", "p2p: 10.255.0.0/24"))  # the loopback pool
    found = with_code(build, "duplicate-address")
    assert found and all(f.severity == Severity.ERROR for f in found)
    pool_findings = [f for f in found if f.path == "addressing.p2p"]
    assert len(pool_findings) == 1
    assert "loopback" in pool_findings[0].message
    assigned = [f for f in found if f.path == "addressing"]
    assert len(assigned) == 1 and "10.255.0.1" in assigned[0].message  # the same address handed out twice


def test_nested_pools_are_duplicate_address() -> None:
    build = lab(("mgmt: 192.168.100.0/24", "mgmt: 172.16.200.0/24"))  # inside servers 172.16.0.0/16
    found = [f for f in with_code(build, "duplicate-address") if f.path.startswith("addressing.")]
    assert len(found) == 1
    assert "servers" in found[0].message and "mgmt" in found[0].message


# --------------------------------------------------------------------------------------------- cables


@pytest.mark.parametrize(
    ("length", "code"),
    [(0.5, "00A"), (1, "001"), (1.5, "01A"), (2, "002"), (2.5, "02A"), (15, "015"), (30, "030"), (100, "100")],
)
def test_length_code(length: float, code: str) -> None:
    assert length_code(length) == code


def _expected_choice(
    media: dict[str, Media],
    kinds: Sequence[str] | None,
    technology: str,
    speed: int,
    needed: float,
    cages: tuple[CageKind | None, CageKind | None] = (None, None),
) -> tuple[str, float] | None:
    """The rule, spelled out: the first allowed medium (catalog order, or the order of `kinds`) that
    carries the speed, whose plugs fit both cages (catalog `ends`) and has an orderable length that reaches; its
    shortest such length."""
    usable = [
        (k, m) for k, m in media.items() if technology in m.technologies and speed in m.speeds_gbps and m.fits(*cages)
    ]
    if kinds is not None:
        usable = sorted((c for c in usable if c[1].kind in kinds), key=lambda c: list(kinds).index(c[1].kind))
    for key, m in usable:
        if needed <= m.reach_m:
            fits = [length for length in m.lengths_m if length >= needed - 1e-9]
            if fits:
                return key, fits[0]
    return None


def _needed(build: Build, cable: Cable, slack_pct: float = 10.0, loop_m: float = 1.0, tray_m: float = 0.3) -> float:
    devices, racks = build.topology.devices, build.topology.racks
    a, b = devices[cable.link.a], devices[cable.link.b]
    assert a.rack and b.rack and a.u and b.u
    route = route_m(build.design.spec.racks, racks[a.rack], a.u, a.height_u, racks[b.rack], b.u, b.height_u, tray_m)
    assert cable.route_m == round(route, 2)
    return route * (1 + slack_pct / 100) + loop_m


def _check_choices(build: Build, kinds: Sequence[str] | None, slack: float = 10.0, loop: float = 1.0) -> Counter[str]:
    media = dict(build.design.catalog.media)
    seen: Counter[str] = Counter()
    cage_of = CageLookup(build.design.catalog, build.topology.devices)
    for cable in build.allocation.cables:
        ft = build.topology.fabrics[cable.link.fabric]
        needed = _needed(build, cable, slack, loop)
        link = cable.link
        cages = (cage_of(link.a, link.a_port)[1], cage_of(link.b, link.b_port)[1])
        expected = _expected_choice(media, kinds, ft.technology, link.speed_gbps, needed, cages)
        assert expected is not None, cable.cable_id
        assert (cable.media, cable.length_m) == expected, (cable.cable_id, needed)
        assert cable.length_m is not None and cable.length_m >= needed - 1e-9
        assert cable.media_kind == media[cable.media].kind
        seen[cable.media_kind] += 1
    return seen


def test_media_chosen_by_distance_dac_then_longer_reach() -> None:
    # the 1-SU SuperPOD without its mmf-only rule: in-rack leaf-spine runs are short enough for a
    # DAC; the node runs across the room need fibre (mmf at 400G, and for the 200G UFM ports too: the QSFP56 AOC has
    # no plug for the leaf's twin-port OSFP cage, catalog media `ends`)
    text = edit((DESIGNS / "superpod-h100-1su.yaml").read_text(encoding="utf-8"), "cabling: {media: [mmf]}", "")
    build = build_text(text)
    kinds = _check_choices(build, None)
    assert kinds["dac"] > 0 and kinds["mmf"] > 0
    assert set(kinds) <= {"dac", "acc", "aoc", "mmf"}
    leaf_spine = [c for c in build.allocation.cables if c.link.tier == "leaf-spine"]
    assert {c.media_kind for c in leaf_spine} == {"dac"}
    assert max(c.length_m or 0 for c in build.allocation.cables if c.media_kind == "dac") <= 2
    assert min(c.length_m or 0 for c in build.allocation.cables if c.media_kind == "mmf") > 5


@pytest.mark.parametrize("design", ["lab", "roce-512", "superpod-h100-1su", "superpod-h100-4su"])
def test_orderable_length_covers_route_slack_and_service_loop(design: str) -> None:
    build = built(design)
    moved = 0
    for key, fabric in build.design.spec.fabrics.items():
        kinds = fabric.cabling.media if fabric.cabling and fabric.cabling.media else None
        sub = [c for c in build.allocation.cables if c.link.fabric == key]
        assert sub
        media = dict(build.design.catalog.media)
        ft = build.topology.fabrics[key]
        cage_of = CageLookup(build.design.catalog, build.topology.devices)
        for cable in sub:
            needed = _needed(build, cable)
            cages = (cage_of(cable.link.a, cable.link.a_port)[1], cage_of(cable.link.b, cable.link.b_port)[1])
            expected = _expected_choice(media, kinds, ft.technology, cable.link.speed_gbps, needed, cages)
            if (
                expected
                and max((e.plugs for e in media[expected[0]].ends or ()), default=1) > 1
                and cable.media != expected[0]
            ):
                # a splitter for this link alone, but not for its cage's other link (too far): both on fibre
                fibre = [k for k in (kinds or ("mmf", "smf")) if k in ("mmf", "smf")]
                expected = _expected_choice(media, fibre, ft.technology, cable.link.speed_gbps, needed, cages)
                moved += 1
            assert (cable.media, cable.length_m) == expected, cable.cable_id
    assert moved == {"roce-512": 1}.get(design, 0)  # compute-0512: 5 m, its cage partner 7 m


def test_slack_and_service_loop_are_honoured() -> None:
    build = lab(
        (
            "racks: {rows: [A], rack_units: 42, power_kw: 15}",
            "racks: {rows: [A], rack_units: 42, power_kw: 15}\ncabling: {slack_pct: 50, service_loop_m: 2.5}",
        )
    )
    _check_choices(build, None, slack=50, loop=2.5)
    default = built("lab")
    longer = sum(c.length_m or 0 for c in build.allocation.cables)
    assert longer > sum(c.length_m or 0 for c in default.allocation.cables)


def test_in_rack_route_is_the_vertical_distance() -> None:
    build = built("superpod-h100-1su")
    devices = build.topology.devices
    cable = next(c for c in build.allocation.cables if c.link.tier == "leaf-spine")
    a, b = devices[cable.link.a], devices[cable.link.b]
    assert a.rack == b.rack and a.u is not None and b.u is not None
    assert cable.route_m == round(abs((a.u + a.height_u / 2) - (b.u + b.height_u / 2)) * U_M, 2)


def test_forced_media_kinds_in_preference_order() -> None:
    # aoc first even where a DAC would reach
    build = lab(("    attach:", "    cabling: {media: [aoc, dac]}\n    attach:"))
    assert {c.media_kind for c in build.allocation.cables} == {"aoc"}
    _check_choices(build, ["aoc", "dac"])
    # a fabric's own policy beats the design's
    build = lab(
        ("    attach:", "    cabling: {media: [mmf]}\n    attach:"),
        ("asn:", "cabling: {media: [dac]}\nasn:"),
    )
    assert {c.media_kind for c in build.allocation.cables} == {"mmf"}


def test_explicit_lengths_pick_media_and_length() -> None:
    lengths = [1, 2.5, 4, 60, 150]
    spec = {
        "name": "lengths",
        "nodes": [{"group": "srv", "type": "linux-server", "count": len(lengths), "name": "srv{index}"}],
        "fabrics": {
            "compute": {
                "technology": "ethernet",
                "switches": {"leaf": "sn4600c"},
                "attach": [{"group": "srv", "ports": "data"}],
                "topology": {
                    "kind": "explicit",
                    "switches": [{"name": "leaf1", "model": "sn4600c", "layer": "leaf"}],
                    "links": [
                        {"a": f"srv{i + 1}:eth1", "b": f"leaf1:swp{i + 1}", "length_m": length}
                        for i, length in enumerate(lengths)
                    ],
                },
            }
        },
    }
    build = build_dict(spec)
    got = [(c.media, c.length_m, c.part) for c in build.allocation.cables]
    assert got == [
        ("dac-100g", 1, "MCP1600-C001"),  # 100G links: the 100G QSFP28 parts (media named by their rate)
        ("dac-100g", 2.5, "MCP1600-C02A"),
        ("aoc-100g", 5, "MFA1A00-C005"),
        ("aoc-100g", 100, "MFA1A00-C100"),
        ("smf-fr4", 150, "MFP7E20-N150"),
    ]


@pytest.mark.parametrize("design", ["lab", "superpod-h100-1su", "superpod-h100-4su"])
def test_part_numbers_carry_the_length_code(design: str) -> None:
    build = built(design)
    media = build.design.catalog.media
    for cable in build.allocation.cables:
        assert cable.length_m is not None
        template = media[cable.media].part
        assert cable.part == template.format(code=length_code(cable.length_m), length=f"{cable.length_m:g}")
    one_su = built("superpod-h100-1su")
    assert {c.part for c in one_su.allocation.cables if c.length_m == 15} == {"MFP7E10-N015"}
    assert {c.part for c in one_su.allocation.cables if c.length_m == 3} == {"MFP7E10-N003"}


def test_cable_longer_than_any_medium_is_one_aggregated_cable_reach() -> None:
    # one server per rack, copper only: the far servers are out of DAC reach (3 m at 100G)
    build = lab(
        (
            '{group: srv, type: linux-server, count: 8, name: "srv{index}"}',
            '{group: srv, type: linux-server, count: 8, per_rack: 1, name: "srv{index}"}',
        ),
        ("    attach:", "    cabling: {media: [dac]}\n    attach:"),
    )
    too_long = [(_needed(build, c), c) for c in build.allocation.cables if not c.media]
    assert too_long and len(too_long) < len(build.allocation.cables)
    assert all(n > 3 for n, _ in too_long)
    assert all(_needed(build, c) <= 3 for c in build.allocation.cables if c.media)
    found = with_code(build, "cable-reach")
    assert len(found) == 1
    finding = found[0]
    assert finding.severity == Severity.ERROR and finding.path == "fabrics.compute.cabling"
    needed, worst = max(too_long, key=lambda t: t[0])
    link = worst.link
    assert finding.message.startswith(f"{len(too_long)} ")
    assert f"longest {needed:.1f} m" in finding.message
    assert has_name(finding.message, f"{link.a}:{link.a_port} — {link.b}:{link.b_port}")
    assert "3 m" in finding.message  # the longest an allowed medium reaches


@pytest.mark.parametrize("design", ["lab", "roce-512", "superpod-h100-4su"])
def test_cable_ids_unique_and_dense_per_fabric(design: str) -> None:
    build = built(design)
    ids: dict[str, list[str]] = defaultdict(list)
    for cable in build.allocation.cables:
        ids[cable.link.fabric].append(cable.cable_id)
    assert set(ids) == {k for k, ft in build.topology.fabrics.items() if ft.links}
    for key, got in ids.items():
        width = max(4, len(str(len(got))))
        assert got == [f"{key}-{n:0{width}d}" for n in range(1, len(got) + 1)]
        assert len(build.topology.fabrics[key].links) == len(got)
    every = [c.cable_id for c in build.allocation.cables]
    assert len(set(every)) == len(every)


@pytest.mark.parametrize("design", ["superpod-h100-1su", "superpod-h100-2su", "superpod-h100-3su", "superpod-h100-4su"])
def test_superpod_compute_cables_are_multimode_fibre(design: str) -> None:
    build = built(design)
    compute = build.design.spec.fabrics["compute"]
    assert compute.cabling is not None and compute.cabling.media == ["mmf"]
    cables = [c for c in build.allocation.cables if c.link.fabric == "compute"]
    assert cables and {c.media_kind for c in cables} == {"mmf"}
    assert not with_code(build, "cable-reach")


def test_out_of_band_leaves_hold_management_subnets() -> None:
    """A BMC or switch management port on an out-of-band leaf gets its one management address in that leaf's
    subnet of the management pool; the leaf's gateway is `.1` of it."""
    build = built("superpod-h100-4su")
    mgmt_pool = build.design.spec.addressing.mgmt
    gateways = {r.device: IPv4Interface(r.address) for r in rows(build, "mgmt-gateway", version=4)}
    assert sorted(gateways) == sorted(s for s in build.topology.fabrics["oob"].switches if s.startswith("oob-leaf"))
    assert all(g.network.subnet_of(mgmt_pool) and g.ip == g.network.network_address + 1 for g in gateways.values())
    mgmt = {(r.device, r.interface): r for r in rows(build, "mgmt", version=4)}
    cabled = [link for link in build.topology.fabrics["oob"].links if link.tier == "node-leaf"]
    assert len(cabled) == 221  # every BMC and switch management port of the 4-SU design
    for link in cabled:
        row = mgmt[(link.a, link.a_port)]
        assert (row.peer_device, row.peer_interface, row.fabric) == (link.b, link.b_port, "oob")
        assert IPv4Interface(row.address).network == gateways[link.b].network
    # one management address per port: none also gets a server address on the out-of-band leaves
    assert not [r for r in rows(build, "server", version=4) if r.fabric == "oob"]
    addresses = [r.address.ip for r in rows(build, "mgmt", version=4)]
    assert len(addresses) == len(set(addresses))
    intent = build.intents["inband-leaf01"]
    assert intent.mgmt_gateway is not None and intent.mgmt_address is not None
    assert IPv4Interface(intent.mgmt_address).network == IPv4Interface(f"{intent.mgmt_gateway}/26").network
