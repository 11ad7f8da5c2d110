"""Allocate addresses, ASNs and cables. Index-based, so the same spec gives the same plan.

Addresses (Ethernet fabrics only; InfiniBand fabrics get management addresses only):
- a /32 (and /128) loopback per switch, fabrics in spec order, each fabric top tier first;
- a /31 (and /127) per switch-to-switch link, the upper switch taking the even address;
  none in fabrics that run BGP unnumbered;
- one subnet per leaf sized for all its down ports plus a gateway (`.1`, interface `servers`),
  node ports numbered from `.2` in port order; one /64 per leaf in IPv6; out-of-band leaves take theirs
  from the management pool, and what they connect (BMCs, switch management ports) its address there;
- a management address for every other switch management port and BMC (`.1` of the pool is the gateway);
- fabrics with `dual_homing: host_routing`: no server subnets; each node port is a routed link (a /31 and /127
  from the link pools after the switch links, the leaf taking the even address; none when unnumbered), and each
  such node a /32 (and /128) loopback after the switches' and a private ASN from `asn.host_start`;
- fabrics with `dual_homing: bond`: one server subnet per MLAG leaf pair (after the leaf subnets; one /64 in
  IPv6): `.1` is the pair's virtual gateway (not a row: both leaves answer for it), the lower leaf's SVI `.2`,
  the upper's `.3` (interface `servers`), then each node's bond (`bond0`) from `.4` in order of its first port.
A pool that is too small is a finding that says how much is needed and how much the pool has.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from ipaddress import IPv4Interface, IPv4Network, IPv6Interface, IPv6Network
from itertools import islice
from typing import Any, Literal, Protocol

from fabric.allocation.cages import CageKind, CageLookup
from fabric.fast.addresses import LazyIPv4Interface, LazyIPv6Interface
from fabric.fast.frozen import maker
from fabric.model.cable import Cable
from fabric.model.findings import Finding, error
from fabric.model.kinds import Layer, MediaKind, Tier
from fabric.model.topology import LAYER_RANK, Device, FabricTopology, Link, Rack, Topology
from fabric.spec.catalog import Media
from fabric.spec.loader import Design
from fabric.spec.platforms import mgmt_port
from fabric.spec.schema import AsnPlan
from fabric.topology.media import CablingRules, Choice, MediaChooser
from fabric.topology.racks import route_m

PRIVATE_ASN_RANGES = ((64512, 65534), (4200000000, 4294967294))
SERVER_INTERFACE = "servers"
BOND_INTERFACE = "bond0"  # a bonded node's one interface (`dual_homing: bond`)

Network = IPv4Network | IPv6Network
Interface = IPv4Interface | IPv6Interface


@dataclass(frozen=True, slots=True)
class AddressRow:
    """An address of the plan: device, interface, address, peer and purpose."""

    device: str
    interface: str
    address: Interface  # address and prefix length
    peer_device: str
    peer_interface: str
    purpose: str  # loopback | p2p | server-gateway | server | mgmt | host-loopback | host-p2p
    fabric: str


_address_row = maker(AddressRow)  # a million at 100k GPUs: built as cheaply as a plain dataclass


@dataclass(frozen=True, slots=True)
class AddressRun:
    """Address integers of one IP version as the allocator hands them out: `first`, `first + step`, … (`count` of
    them). The runs of a plan hold its rows' integers (in another order), so that a check of them reads a few
    thousand runs, not 10,000,000 rows (a million GPUs on RoCE)."""

    version: int
    first: int
    count: int
    step: int = 1


@dataclass(frozen=True, slots=True)
class AddressRuns:
    """The runs of the address rows `rows`, kept with that very tuple: a plan whose rows were replaced since (a
    `dataclasses.replace`, even by as many rows) does not take them for its own (Allocation.address_runs)."""

    rows: tuple[AddressRow, ...]
    runs: tuple[AddressRun, ...]


@dataclass(frozen=True, slots=True)
class AsnRow:
    """A switch's (or routing host's) ASN and router ID."""

    device: str
    fabric: str
    layer: str
    asn: int
    router_id: str


_cable = maker(Cable)


@dataclass(frozen=True)
class Allocation:
    """The allocation stage's plan: cables, addresses and ASNs, with its findings."""

    cables: tuple[Cable, ...]
    addresses: tuple[AddressRow, ...]
    asns: tuple[AsnRow, ...]
    findings: tuple[Finding, ...]
    # each address row's address as text, when keeping a lock already wrote them all (a rebuild of an unchanged
    # spec compares a million at 100k GPUs on RoCE): the renderers take them instead of writing them again
    address_texts: tuple[str, ...] | None = field(default=None, compare=False, repr=False)
    # the allocator's address rows with their integers as runs (None: a lock kept the plan, or a caller made it)
    runs_made: AddressRuns | None = field(default=None, compare=False, repr=False)

    @property
    def address_runs(self) -> tuple[AddressRun, ...] | None:
        """The address rows' integers as runs, where these rows are the allocator's (check_unique_addresses reads
        them instead of the rows), else None."""
        made = self.runs_made
        return made.runs if made is not None and made.rows is self.addresses else None


# --------------------------------------------------------------------------------------------- pools


def interface_at(value: int, prefixlen: int, version: int) -> Interface:
    """The address `value` (an integer) with a prefix length: an interface that makes its network on first use
    (a million of them at 100k GPUs, most only ever printed)."""
    if version == 6:
        return LazyIPv6Interface(value, prefixlen)
    return LazyIPv4Interface(value, prefixlen)


def _first(network: Network) -> int:
    return int(network.network_address)


class Pool:
    """Hands out consecutive blocks of one prefix length from a network, by index."""

    def __init__(self, network: Network, prefixlen: int, first: int = 0) -> None:
        self.network = network
        self.prefixlen = prefixlen
        self.size = 2 ** (network.max_prefixlen - prefixlen)
        self.first = first
        self.capacity = max(0, (network.num_addresses // self.size) - first)
        self.base = _first(network)

    def start(self, index: int) -> int:
        """The first address of block `index`, as an integer."""
        return self.base + (self.first + index) * self.size

    def block(self, index: int) -> Network:
        start = self.start(index)
        if self.network.version == 6:
            return IPv6Network((start, self.prefixlen))
        return IPv4Network((start, self.prefixlen))


def _short(pool: str, network: Network, unit: str, have: int, need: int, per: int = 1, spare: int = 0) -> Finding:
    """A pool holds `have` units of `per` addresses (after `spare` reserved ones); the design needs `need`."""
    width = 32 if network.version == 4 else 128
    fits = width - math.ceil(math.log2(need * per + spare))  # the longest prefix that holds them all
    return error(
        "address-pool",
        f"addressing.{pool}",
        f"{network} holds {have:,} {unit}; the design needs {need:,} ({(need - have) * per:,} more addresses)",
        f"use a prefix of /{fits} or shorter",
    )


def _asn_findings(fabric: str, rows: Sequence[AsnRow]) -> Iterator[Finding]:
    bad = [r for r in rows if not any(lo <= r.asn <= hi for lo, hi in PRIVATE_ASN_RANGES)]
    if bad:
        leaves = [r for r in bad if r.layer == Layer.LEAF]
        example = bad[0]
        hint = (
            "start leaves in the 4-byte private range, e.g. asn.leaf_start: 4200000000"
            if leaves
            else "use ASNs from 64512–65534 or 4200000000–4294967294"
        )
        yield error(
            "asn-range",
            f"fabrics.{fabric}.asn",
            f"{len(bad)} ASNs of fabric `{fabric}` are outside the private "
            f"ranges (e.g. {example.device}: {example.asn}); the 2-byte range 64512–65534 holds 1,023",
            hint,
        )


def _layer_order(ft: FabricTopology, devices: Mapping[str, Device]) -> list[str]:
    """Switches top tier first, then by plane and index (stable across runs)."""
    # sorted() is stable, so switches of one plane and tier keep their generation order
    return sorted(ft.switches, key=lambda s: (devices[s].plane or 0, -LAYER_RANK[devices[s].layer]))


# --------------------------------------------------------------------------------------------- stages


def _allocate_asns(design: Design, topo: Topology) -> tuple[list[AsnRow], list[Finding]]:
    spec = design.spec
    rows: list[AsnRow] = []
    findings: list[Finding] = []
    next_leaf = spec.asn.leaf_start
    for key, ft in topo.fabrics.items():
        if ft.technology != "ethernet" or not ft.switches:
            continue
        plan: AsnPlan = spec.fabrics[key].asn or spec.asn
        leaf_asn = plan.leaf_start if spec.fabrics[key].asn else next_leaf
        counters = {"core": plan.core, "spine": plan.spine}
        fabric_rows = []
        for name in _layer_order(ft, topo.devices):
            dev = topo.devices[name]
            if dev.layer == Layer.LEAF:
                asn = leaf_asn
                leaf_asn += 1
            elif plan.scheme == "unique":
                asn = counters[dev.layer]
                counters[dev.layer] += 1
            elif dev.layer == Layer.SPINE and ft.tiers == 3:
                asn = plan.spine + (dev.pod or 1) - 1
            else:
                asn = plan.core if dev.layer == Layer.CORE else plan.spine
            fabric_rows.append(AsnRow(name, key, dev.layer, asn, ""))
        if not spec.fabrics[key].asn:
            next_leaf = leaf_asn
        findings.extend(_asn_findings(key, fabric_rows))
        rows.extend(fabric_rows)
    host_rows: list[AsnRow] = []
    next_host: dict[int, int] = {}  # host_start → next ASN of the plan that starts there
    for key, node in _routed_nodes(design, topo):
        plan = spec.fabrics[key].asn or spec.asn
        asn = next_host.get(plan.host_start, plan.host_start)
        next_host[plan.host_start] = asn + 1
        host_rows.append(AsnRow(node, key, Layer.NODE, asn, ""))
    for key in dict.fromkeys(r.fabric for r in host_rows):
        findings.extend(_asn_findings(key, [r for r in host_rows if r.fabric == key]))
    rows.extend(host_rows)
    return rows, findings


def _routed_links(design: Design, topo: Topology) -> list[tuple[str, Link]]:
    """(fabric, node-leaf link) of every fabric whose nodes route on the host, in fabric and link order."""
    return [
        (ft.name, link)
        for ft in _ethernet(topo)
        if design.spec.dual_homing(ft.name) == "host_routing"
        for link in ft.links
        if link.tier == Tier.NODE_LEAF and topo.devices[link.a].layer == Layer.NODE  # not a switch's management port
    ]


def _routed_nodes(design: Design, topo: Topology) -> list[tuple[str, str]]:
    """(first fabric, node) of every node that routes on the host, in order of its first link."""
    first: dict[str, str] = {}
    for fabric, link in _routed_links(design, topo):
        first.setdefault(link.a, fabric)
    return [(fabric, node) for node, fabric in first.items()]


def _ethernet(topo: Topology) -> list[FabricTopology]:
    return [ft for ft in topo.fabrics.values() if ft.technology == "ethernet" and ft.switches]


def _allocate_addresses(
    design: Design, topo: Topology
) -> tuple[list[AddressRow], list[Finding], dict[str, str], list[AddressRun]]:
    """The address rows, their findings, each loopback's address as text, and the rows' integers as runs."""
    spec = design.spec
    pools = spec.addressing
    rows: list[AddressRow] = []
    runs: list[AddressRun] = []
    findings: list[Finding] = []
    loopbacks: dict[str, str] = {}
    v6 = pools.ipv6 if pools.ipv6 is not None else None
    v6_blocks = Pool(v6, 64) if v6 is not None else None  # /64 blocks: 0 loopbacks, 1 links, 2… one per leaf

    ethernet = _ethernet(topo)
    # loopbacks
    switches = [(ft.name, s) for ft in ethernet for s in _layer_order(ft, topo.devices)]
    routed_nodes = _routed_nodes(design, topo)
    lo_pool = Pool(pools.loopback, 32, first=1)
    if len(switches) + len(routed_nodes) > lo_pool.capacity:
        findings.append(
            _short(
                "loopback",
                lo_pool.network,
                "loopback addresses",
                lo_pool.capacity,
                len(switches) + len(routed_nodes),
                spare=1,
            )
        )
    else:
        v6_loopbacks = v6_blocks.start(0) if v6_blocks is not None else 0
        runs.append(AddressRun(4, lo_pool.start(0), len(switches) + len(routed_nodes), lo_pool.size))
        if v6_blocks is not None:
            runs.append(AddressRun(6, v6_loopbacks + 1, len(switches) + len(routed_nodes)))
        for i, (fabric, name) in enumerate([*switches, *routed_nodes]):
            address = interface_at(lo_pool.start(i), 32, 4)
            loopbacks[name] = str(address.ip)
            purpose = "loopback" if i < len(switches) else "host-loopback"
            rows.append(_address_row(name, "lo", address, "", "", purpose, fabric))
            if v6_blocks is not None:
                rows.append(
                    _address_row(
                        name,
                        "lo",
                        interface_at(v6_loopbacks + i + 1, 128, 6),
                        "",
                        "",
                        purpose,
                        fabric,
                    )
                )
    # point-to-point links
    numbered = [
        (ft.name, link)
        for ft in ethernet
        if not _unnumbered(design, ft.name)
        for link in ft.links
        if link.tier not in (Tier.NODE_LEAF, Tier.PEER)  # a peer link is layer 2 (the pair's peer VLAN)
    ]
    # then the routed node links (the leaf is `b`, the upper end, and takes the even address)
    switch_links = len(numbered)
    numbered += [(f, link) for f, link in _routed_links(design, topo) if not _unnumbered(design, f)]
    p2p_pool = Pool(pools.p2p, 31)
    if len(numbered) > p2p_pool.capacity:
        findings.append(_short("p2p", p2p_pool.network, "/31 links", p2p_pool.capacity, len(numbered), 2))
    else:
        v6_links = v6_blocks.start(1) if v6_blocks is not None else 0
        runs += [AddressRun(4, p2p_pool.start(0) + k, len(numbered), p2p_pool.size) for k in (0, 1)]
        if v6_blocks is not None:
            runs += [AddressRun(6, v6_links + k, len(numbered), 2) for k in (0, 1)]
        lazy4, lazy6, row = LazyIPv4Interface, LazyIPv6Interface, _address_row  # (interface_at, 400,000 links)
        for i, (fabric, link) in enumerate(numbered):
            purpose = "p2p" if i < switch_links else "host-p2p"
            block = p2p_pool.start(i)
            a, a_port, b, b_port = link.a, link.a_port, link.b, link.b_port
            rows.append(row(b, b_port, lazy4(block, 31), a, a_port, purpose, fabric))
            rows.append(row(a, a_port, lazy4(block + 1, 31), b, b_port, purpose, fabric))
            if v6_blocks is not None:
                base = v6_links + 2 * i
                rows.append(row(b, b_port, lazy6(base, 127), a, a_port, purpose, fabric))
                rows.append(row(a, a_port, lazy6(base + 1, 127), b, b_port, purpose, fabric))
    # server subnets; an out-of-band fabric's leaves get theirs from the management pool, and its endpoints
    # (BMCs, switch management ports) their management address in them
    bridged = [ft for ft in ethernet if ft.role != "oob" and design.spec.dual_homing(ft.name) == "none"]
    data_leaves = _leaf_ports(topo, bridged)
    oob_leaves = _leaf_ports(topo, [ft for ft in ethernet if ft.role == "oob"])
    pairs = [p for ft in ethernet if design.spec.dual_homing(ft.name) == "bond" for p in mlag_pairs(ft)]
    if data_leaves or pairs:
        prefix = pools.server_prefix or min(
            _subnet_prefix(data_leaves, ethernet) if data_leaves else 32, _pair_prefix(pairs, ethernet)
        )
        blocks = 2 + len(data_leaves) + len(pairs)
        if v6_blocks is not None and blocks > v6_blocks.capacity:
            findings.append(_short("ipv6", v6_blocks.network, "/64 blocks", v6_blocks.capacity, blocks, 2**64))
            v6_blocks = None
        server_pool = Pool(pools.servers, prefix)
        if data_leaves:
            rows.extend(_leaf_subnets("servers", server_pool, data_leaves, v6_blocks, "server", findings, runs))
        if pairs:
            rows.extend(_pair_subnets(server_pool, len(data_leaves), pairs, v6_blocks, findings, runs))
    mgmt_network = pools.mgmt
    oob_blocks = 0
    oob_rows: list[AddressRow] = []
    if oob_leaves:
        mgmt_subnets = Pool(mgmt_network, _subnet_prefix(oob_leaves, ethernet))
        oob_rows = _leaf_subnets("mgmt", mgmt_subnets, oob_leaves, None, "mgmt", findings, runs)
        rows.extend(oob_rows)
        oob_blocks = len(oob_leaves) * mgmt_subnets.size
    # management addresses of everything not on an out-of-band leaf (the rows of that purpose so far)
    done = {(r.device, r.interface) for r in oob_rows if r.purpose == "mgmt"}
    rows.extend(_mgmt(design, topo, findings, done, oob_blocks, runs))
    return rows, findings, loopbacks, runs


def _leaf_ports(topo: Topology, fabrics: list[FabricTopology]) -> dict[str, tuple[str, list[Link]]]:
    """Leaf → (its fabric, its node-leaf links in port order)."""
    leaves: dict[str, tuple[str, list[Link]]] = {}
    for ft in fabrics:
        for name in ft.switches:
            if topo.devices[name].layer == Layer.LEAF:
                leaves[name] = (ft.name, [])
        for link in ft.links:
            if link.tier == Tier.NODE_LEAF and link.b in leaves:
                leaves[link.b][1].append(link)
    return leaves


@dataclass(frozen=True)
class MlagPair:
    """Two leaves of a `dual_homing: bond` fabric joined by a peer link, and the nodes bonded to them."""

    fabric: str
    lower: str  # the odd leaf (end `a` of the peer link)
    upper: str
    nodes: tuple[str, ...]  # in order of their first port


def mlag_pairs(ft: FabricTopology) -> list[MlagPair]:
    """The MLAG pairs of a fabric, in leaf order (found from its peer links)."""
    uppers = {link.a: link.b for link in ft.links if link.tier == Tier.PEER}
    partner = {**uppers, **{b: a for a, b in uppers.items()}}
    nodes: dict[str, dict[str, None]] = {a: {} for a in uppers}
    for link in ft.links:
        if link.tier == Tier.NODE_LEAF and link.b in partner:
            nodes[link.b if link.b in uppers else partner[link.b]].setdefault(link.a)
    return [MlagPair(ft.name, a, b, tuple(nodes[a])) for a, b in uppers.items()]


def _pair_prefix(pairs: Sequence[MlagPair], fabrics: list[FabricTopology]) -> int:
    """The smallest subnet for every node a pair can take (a leaf's designed down ports) plus network, virtual
    gateway, two SVIs and broadcast."""
    designed = [ft.params.downlinks for ft in fabrics if ft.params and any(p.fabric == ft.name for p in pairs)]
    nodes = max([1, *designed, *(len(p.nodes) for p in pairs)])
    return 32 - max(2, math.ceil(math.log2(nodes + 5)))


def _pair_subnets(
    pool: Pool,
    offset: int,
    pairs: Sequence[MlagPair],
    v6_blocks: Pool | None,
    findings: list[Finding],
    runs: list[AddressRun],
) -> list[AddressRow]:
    """One subnet per MLAG pair, after the `offset` leaf subnets: `.1` virtual, the SVIs `.2` and `.3`, nodes
    (their integers' runs added to `runs`)."""
    if offset + len(pairs) > pool.capacity:
        need = offset + len(pairs)
        findings.append(_short("servers", pool.network, f"/{pool.prefixlen} subnets", pool.capacity, need, pool.size))
        return []
    rows = []
    for i, pair in enumerate(pairs):
        subnet = pool.block(offset + i)
        if len(pair.nodes) + 5 > subnet.num_addresses:
            findings.append(
                error(
                    "address-pool",
                    "addressing.server_prefix",
                    f"a /{pool.prefixlen} holds {subnet.num_addresses - 5} bonded nodes; leaf pair "
                    f"{pair.lower}/{pair.upper} has {len(pair.nodes)}",
                    f"use server_prefix: {32 - math.ceil(math.log2(len(pair.nodes) + 5))} or shorter",
                )
            )
            break
        v6_net = v6_blocks.block(2 + offset + i) if v6_blocks is not None else None
        nets: list[tuple[Network, int]] = [(subnet, pool.prefixlen)] + ([(v6_net, 64)] if v6_net else [])
        for net, length in nets:
            version = net.version
            runs += [AddressRun(version, _first(net) + 2, 2), AddressRun(version, _first(net) + 4, len(pair.nodes))]
            for k, leaf in enumerate((pair.lower, pair.upper)):
                address = interface_at(_first(net) + 2 + k, length, version)
                rows.append(_address_row(leaf, SERVER_INTERFACE, address, "", "", "server-gateway", pair.fabric))
            for j, node in enumerate(pair.nodes):
                address = interface_at(_first(net) + 4 + j, length, version)
                rows.append(
                    _address_row(node, BOND_INTERFACE, address, pair.lower, f"bond{j + 1}", "server", pair.fabric)
                )
    return rows


def _subnet_prefix(leaves: dict[str, tuple[str, list[Link]]], fabrics: list[FabricTopology]) -> int:
    """The smallest subnet that holds every down port of a generated leaf (adding nodes never renumbers)
    and every cabled port, plus network, gateway and broadcast."""
    designed = [ft.params.downlinks for ft in fabrics if ft.params and any(f == ft.name for f, _ in leaves.values())]
    ports = max([1, *designed, *(len(links) for _, links in leaves.values())])
    return 32 - max(2, math.ceil(math.log2(ports + 3)))


def _leaf_subnets(
    pool_name: str,
    pool: Pool,
    leaves: dict[str, tuple[str, list[Link]]],
    v6_blocks: Pool | None,
    purpose: str,
    findings: list[Finding],
    runs: list[AddressRun],
) -> list[AddressRow]:
    """One subnet per leaf: the gateway (`.1`, interface `servers`), then its node ports from `.2` in port order
    (their integers' runs added to `runs`)."""
    if len(leaves) > pool.capacity:
        findings.append(
            _short(pool_name, pool.network, f"/{pool.prefixlen} leaf subnets", pool.capacity, len(leaves), pool.size)
        )
        return []
    rows = []
    prefix = pool.prefixlen
    lazy4, lazy6, row = LazyIPv4Interface, LazyIPv6Interface, _address_row  # (interface_at: 200,000 node ports)
    for i, (leaf, (fabric, links)) in enumerate(leaves.items()):
        subnet = pool.start(i)
        if len(links) + 3 > pool.size:
            findings.append(
                error(
                    "address-pool",
                    "addressing.server_prefix",
                    f"a /{prefix} holds {pool.size - 3} hosts; leaf {leaf} has {len(links)}",
                    f"use server_prefix: {32 - math.ceil(math.log2(len(links) + 3))} or shorter",
                )
            )
            break
        rows.append(
            _address_row(
                leaf, SERVER_INTERFACE, interface_at(subnet + 1, prefix, 4), "", "", f"{purpose}-gateway", fabric
            )
        )
        runs.append(AddressRun(4, subnet + 1, 1 + len(links)))  # the gateway, then the node ports
        v6_net = v6_blocks.start(2 + i) if v6_blocks is not None else None
        if v6_net is not None:
            runs.append(AddressRun(6, v6_net + 1, 1 + len(links)))
            rows.append(
                _address_row(
                    leaf, SERVER_INTERFACE, interface_at(v6_net + 1, 64, 6), "", "", f"{purpose}-gateway", fabric
                )
            )
        for j, link in enumerate(links):
            a, a_port, b, b_port = link.a, link.a_port, link.b, link.b_port
            rows.append(row(a, a_port, lazy4(subnet + 2 + j, prefix), b, b_port, purpose, fabric))
            if v6_net is not None:
                rows.append(row(a, a_port, lazy6(v6_net + 2 + j, 64), b, b_port, purpose, fabric))
    return rows


def _unnumbered(design: Design, fabric: str) -> bool:
    routing = design.spec.fabrics[fabric].routing
    return routing is not None and routing.bgp_unnumbered


def _mgmt(
    design: Design,
    topo: Topology,
    findings: list[Finding],
    done: set[tuple[str, str]],
    offset: int,
    runs: list[AddressRun],
) -> list[AddressRow]:
    """A management address for every switch management port and BMC not given one on an out-of-band leaf,
    from the management pool after the out-of-band leaves' subnets (`.1` of the pool is its gateway)."""
    wanted: list[tuple[str, str]] = []
    for name, dev in topo.devices.items():
        if dev.layer == Layer.NODE:
            bmc = design.catalog.nodes[dev.model].ports.get("bmc")
            if bmc is not None:
                wanted.extend((name, p.name) for p in bmc.port_list())
    for ft in topo.fabrics.values():
        for name in ft.switches:
            switch = topo.devices[name]
            wanted.append((name, mgmt_port(switch.platform, design.catalog.switches[switch.model].mgmt_port)))
    # the far end of each such port's link (a handful of port names: the node-leaf links of the data ports, a
    # million at 1M GPUs, are passed over by name)
    names = {port for _, port in wanted}
    peers: dict[tuple[str, str], tuple[str, str, str]] = {}
    for ft in topo.fabrics.values():
        for link in ft.links:
            if link.a_port in names and link.tier == Tier.NODE_LEAF:
                peers[(link.a, link.a_port)] = (link.b, link.b_port, ft.name)
    wanted = [w for w in wanted if w not in done]
    network = design.spec.addressing.mgmt
    pool = Pool(network, 32, first=max(2, offset))  # .0 network, .1 gateway
    capacity = max(0, pool.capacity - 1)  # the broadcast address
    if len(wanted) > capacity:
        findings.append(_short("mgmt", network, "management addresses", capacity, len(wanted), spare=3 + offset))
        return []
    rows = []
    runs.append(AddressRun(4, pool.start(0), len(wanted), pool.size))
    for i, (device, port) in enumerate(wanted):
        peer = peers.get((device, port), ("", "", ""))
        rows.append(
            _address_row(
                device, port, interface_at(pool.start(i), network.prefixlen, 4), peer[0], peer[1], "mgmt", peer[2]
            )
        )
    return rows


# a cable's needed length, chosen medium and the Cable fields that follow from them (with its route)
_Slot = tuple[float | None, Choice | None, tuple[MediaKind | Literal[""], str, str, float | None, float | None]]


def _slot(
    rules: CablingRules,
    chooser: MediaChooser,
    route: float | None,
    link: Link,
    cages: tuple[CageKind, CageKind],
) -> _Slot:
    needed = link.length_m if link.length_m is not None else (rules.length_for(route) if route is not None else None)
    choice = None
    if needed is not None:
        # a medium whose plugs fit both cages; else (none fits) the one that reaches, which `cage-plugs` reports
        choice = chooser.choose(link.speed_gbps, needed, link.media, cages) or chooser.choose(
            link.speed_gbps, needed, link.media
        )
    fields = (
        choice.media.kind if choice else "",
        choice.key if choice else "",
        chooser.part(choice) if choice else "",
        choice.length_m if choice else (round(needed, 1) if needed else None),
        round(route, 2) if route is not None else None,
    )
    return needed, choice, fields


# A cage takes one plug (NVIDIA LinkX: a switch's twin-port OSFP cage takes "Twin port, 2x400G OSFP plugs for
# transceivers, copper DACs and ACCs", https://docs.nvidia.com/networking/display/800GMMA4Z00NS/Overview): the links
# sharing a twin-port cage ride one twin-port transceiver (a fibre each, to any far ends) or one twin-port cable (both
# links to one far cage, one length: "link together two twin-port, OSFP-based ... switches",
# https://docs.nvidia.com/networking/display/mcp4y10nxxx2x400pub/overview). So where a cage's links would take
# different media, or a twin-port cable whose links part ways, they all take fibre with transceivers (the medium the
# longest of them needs); a twin-port cable of two lengths takes the longer. The change can unsettle the far cages,
# which are looked at in turn (media only move to fibre, so this ends). A forced medium (`link.media`) stays: the
# allocation check `cage-plugs` reports a cage it leaves with two plugs.
OPTICAL_KINDS = ("mmf", "smf")
# a device as the cable loop reads it: its rack's name and U, the rack (None: no route from it, which has no U),
# the U as the route takes it, the height, and its ports' cages with the kind of a port they do not list
# (CageLookup.ports)
_Seat = tuple[str, int | None, Rack | None, int, int, Mapping[str, tuple[str, CageKind]], CageKind]


def _one_module(kinds: set[str]) -> bool:
    """Whether a cage whose links take media of these kinds takes one transceiver as they are: fibre of one kind.
    Multimode beside single-mode fibre would need two modules in one cage (an SR8 and a DR8): its links all take
    the fibre the longest needs."""
    return len(kinds) == 1 and kinds <= set(OPTICAL_KINDS)


def _one_fibre(cables: list[Cable], first: int) -> bool:
    """Whether every cable from `first` on is fibre of one kind: then `_one_plug_per_cage` has nothing to move,
    and it makes no key per cable end (6,000,000 at a million GPUs) to find that out."""
    return _one_module({c.media_kind for c in islice(cables, first, None)})


class _Cages(Protocol):
    """The cages of a fabric's cable ends as the one-plug-per-cage pass reads them (a cage: any key)."""

    def of(self, cable: int) -> tuple[Any, Any]: ...  # the cages of the cable's two ends
    def count(self, cage: Any) -> int: ...  # how many cable ends the cage holds
    def cables(self, cage: Any) -> list[int]: ...  # the cables with an end in it, in cable order


class _CageDict:
    """The cages of cables' ends in a dict (a small fabric; fast/groups.py's EndGroups on a large one, which this
    reads like): each cage, named (device, cage), → the cables with an end in it, in cable order."""

    def __init__(self, cables: Sequence[Cable], first: int, cage_of: CageLookup) -> None:
        self._ends: list[tuple[tuple[str, str], tuple[str, str]]] = []
        self._by_cage: dict[tuple[str, str], list[int]] = {}
        seats: dict[str, tuple[Mapping[str, tuple[str, CageKind]], CageKind]] = {}  # per device: its ports' cages
        for i, c in enumerate(islice(cables, first, None)):
            link = c.link
            a_ports, a_other = seats.get(link.a) or seats.setdefault(link.a, cage_of.ports(link.a))
            b_ports, b_other = seats.get(link.b) or seats.setdefault(link.b, cage_of.ports(link.b))
            a = (link.a, (a_ports.get(link.a_port) or (link.a_port, a_other))[0])  # (as cage_of gives them)
            b = (link.b, (b_ports.get(link.b_port) or (link.b_port, b_other))[0])
            self._ends.append((a, b))
            self._by_cage.setdefault(a, []).append(i)
            self._by_cage.setdefault(b, []).append(i)

    def of(self, cable: int) -> tuple[tuple[str, str], tuple[str, str]]:
        return self._ends[cable]

    def count(self, cage: tuple[str, str]) -> int:
        return len(self._by_cage[cage])

    def cables(self, cage: tuple[str, str]) -> list[int]:
        return self._by_cage[cage]

    def shared(self) -> list[tuple[str, str]]:
        """The cages of more than one end, in the order the cables reach them first."""
        return [k for k, v in self._by_cage.items() if len(v) > 1]


def _cage_dict(cables: Sequence[Cable], first: int, cage_of: CageLookup) -> tuple[_Cages, list[Any]]:
    """The cages of the cables from `first` on in a dict, and those of more than one end (the pass looks at)."""
    cages = _CageDict(cables, first, cage_of)
    return cages, cages.shared()


# cables of a fabric from which its cages are grouped as integer arrays (fast/groups.py): numpy loads, and a small
# design's validate needs none
CAGE_ARRAYS_FROM = 50_000


def _cage_groups(cables: Sequence[Cable], first: int, cage_of: CageLookup) -> tuple[_Cages, list[Any]]:
    """The cages of the cables from `first` on as EndGroups, and the cages the pass must look at: of more than one
    end, not all one kind of fibre (as its first question would find them; it leaves them alone until one of their
    cables moves, and then looks at them again anyway)."""
    from fabric.fast.groups import EndGroups

    numbered: dict[int, tuple[dict[str, int], dict[str, int]]] = {}  # id(a model's port map) → port →, cage →
    devices: dict[str, tuple[int, dict[str, int], dict[str, int]]] = {}  # name → its first key, its model's

    def device(name: str) -> tuple[int, dict[str, int], dict[str, int]]:
        ports, _ = cage_of.ports(name)
        maps = numbered.get(id(ports))
        if maps is None:
            names: dict[str, int] = {}  # cage → its number in the model (as cage_of names it)
            maps = numbered[id(ports)] = ({p: names.setdefault(c, len(names)) for p, (c, _) in ports.items()}, names)
        found = devices[name] = (len(devices) << 20, *maps)  # (a model has far fewer than 2**20 cages)
        return found

    def unlisted(numbers: dict[str, int], names: dict[str, int], port: str) -> int:
        number = numbers[port] = names.setdefault(port, len(names))  # a port no cage lists: its own (cage_of)
        return number

    a_keys, b_keys = array("q"), array("q")
    kinds = bytearray()
    code = {kind: n for n, kind in enumerate(OPTICAL_KINDS, start=1)}
    for c in islice(cables, first, None):  # 6,000,000 ends at a million GPUs
        link = c.link
        base, numbers, names = devices.get(link.a) or device(link.a)
        n = numbers.get(link.a_port)
        a_keys.append(base + (n if n is not None else unlisted(numbers, names, link.a_port)))
        base, numbers, names = devices.get(link.b) or device(link.b)
        n = numbers.get(link.b_port)
        b_keys.append(base + (n if n is not None else unlisted(numbers, names, link.b_port)))
        kinds.append(code.get(c.media_kind, 0))
    groups = EndGroups(a_keys, b_keys, kinds)
    return groups, groups.mixed(list(code.values()))


def _one_plug_per_cage(
    cables: list[Cable],
    first: int,
    needs: list[float | None],
    cage_of: CageLookup,
    chooser: MediaChooser,
    media: Mapping[str, Media],
) -> None:
    """`needs`: each cable's needed length (from `first` on); the cages are looked up again here, in a fabric
    that is not cabled in one fibre only (the cable loop keeps no cage per link)."""
    if _one_fibre(cables, first):
        return  # every cage takes transceivers of one kind (a fabric cabled in one fibre only)
    cages, pending = (
        _cage_groups(cables, first, cage_of)
        if len(cables) - first >= CAGE_ARRAYS_FROM
        else _cage_dict(cables, first, cage_of)
    )

    def plugs(i: int) -> tuple[CageKind, CageKind]:
        """The kinds of cage the cable's two ends plug into."""
        link = cables[first + i].link
        return cage_of(link.a, link.a_port)[1], cage_of(link.b, link.b_port)[1]

    # the length each link's medium is chosen for: it only grows (to the longest link of a cage it shares), so the
    # media only move towards longer reach and the pass ends
    floor = [x or 0.0 for x in needs]
    kind = [c.media_kind for c in islice(cables, first, None)]  # each cable's, kept as the pass moves it
    while pending:
        cage = pending.pop()
        idx = cages.cables(cage)
        if _one_module({kind[i] for i in idx}):
            # one kind of fibre: the cage's one module is the optics' business (optics-missing, cage-plugs).
            # Asked first (the next question leaves such a cage alone too): most cages at 100k GPUs
            continue
        here = [cables[first + i] for i in idx]
        if any(c.link.media for c in here) or any(not c.media for c in here):
            continue  # a forced medium, or a link no medium carries: reported, not moved
        names = {c.media for c in here}
        kinds: tuple[str, ...] = OPTICAL_KINDS
        if len(names) == 1:
            medium = media[next(iter(names))]
            split = max((e.plugs for e in medium.ends or ()), default=1)
            if split > 1:
                # a splitter cable (MCP7Y00: a twin-port OSFP to 2 single-port OSFP): this cage's links are its legs,
                # one plug here, one in each far cage; one length, the longest leg's. A cage of more links than
                # one splitter has legs (a 4 x 400G cage) takes fibre.
                if len(idx) <= split:
                    if len({c.part for c in here}) == 1:
                        continue
                    kinds = (medium.kind,)
            elif medium.kind in OPTICAL_KINDS or medium.links <= 1:
                continue
            far = {b if a == cage else a for a, b in map(cages.of, idx)}
            if kinds != OPTICAL_KINDS:
                pass  # a splitter of two lengths: the longer
            elif len(far) == 1 and len(idx) <= medium.links:
                if len({c.part for c in here}) == 1:
                    continue
                kinds = (medium.kind,)  # one twin-port cable of two lengths: the longer
        worst = max(floor[i] for i in idx)
        longest = max(idx, key=lambda i: floor[i])
        pick = chooser.choose(cables[first + longest].link.speed_gbps, worst, None, plugs(longest), kinds)
        if pick is None:
            continue  # no allowed medium serves the cage: `cage-plugs` reports it
        for i in idx:
            c = cables[first + i]
            floor[i] = worst
            needed = worst if kinds != OPTICAL_KINDS else needs[i]
            # the medium for the cage's longest link, at this link's speed (of the picked kind), cut to its length
            ends = plugs(i)
            same = chooser.choose(c.link.speed_gbps, worst, None, ends, (pick.media.kind,))
            if needed is None or same is None:
                continue
            choice = chooser.choose(c.link.speed_gbps, needed, same.key, ends)
            if choice is None or (choice.key, choice.length_m) == (c.media, c.length_m):
                continue
            cables[first + i] = replace(
                c, media_kind=choice.media.kind, media=choice.key, part=chooser.part(choice), length_m=choice.length_m
            )
            kind[i] = choice.media.kind
            a, b = cages.of(i)
            other = b if a == cage else a
            if cages.count(other) > 1:
                pending.append(other)


def _allocate_cables(design: Design, topo: Topology) -> tuple[list[Cable], list[Finding]]:
    spec = design.spec
    cables: list[Cable] = []
    findings: list[Finding] = []
    devices, racks = topo.devices, topo.racks
    cage_of = CageLookup(design.catalog, devices)
    seats: dict[str, _Seat] = {}  # per device (a million at 1M GPUs, read 6,000,000 times)

    def seat(name: str) -> _Seat:
        d = devices[name]
        rack = racks.get(d.rack or "") if d.u else None
        found = seats[name] = (d.rack or "", d.u, rack, d.u or 0, d.height_u, *cage_of.ports(name))
        return found

    for key, ft in topo.fabrics.items():
        rules = CablingRules.resolve(spec.fabrics[key].cabling, spec.cabling)
        chooser = MediaChooser(design.catalog.media, rules, ft.technology)
        width = max(4, len(str(len(ft.links))))
        too_long: list[tuple[float, Link]] = []
        # cables of one route length and speed (a rack pair, the same unit offsets) get the same medium and part:
        # choose once per such slot
        cache: dict[tuple[float | None, int, str | None, CageKind, CageKind], _Slot] = {}
        cable_id = key.replace("%", "%%") + f"-%0{width}d"  # `cable_id % n`: the fabric, then n zero-padded
        layout, tray = spec.racks, rules.tray_height_m
        first = len(cables)
        needs: list[float | None] = []
        for n, link in enumerate(ft.links, start=1):
            a_rack, a_u, ra, a_at, a_h, a_ports, a_other = seats.get(link.a) or seat(link.a)
            b_rack, b_u, rb, b_at, b_h, b_ports, b_other = seats.get(link.b) or seat(link.b)
            # the route between the two ends
            route = route_m(layout, ra, a_at, a_h, rb, b_at, b_h, tray) if ra is not None and rb is not None else None
            a_cage, b_cage = a_ports.get(link.a_port), b_ports.get(link.b_port)
            a_kind = a_cage[1] if a_cage else a_other
            b_kind = b_cage[1] if b_cage else b_other
            slot = (route, link.speed_gbps, link.media, a_kind, b_kind)
            hit = cache.get(slot) if link.length_m is None else None
            if hit is None:
                hit = _slot(rules, chooser, route, link, (a_kind, b_kind))
                if link.length_m is None:
                    cache[slot] = hit
            needed, choice, fields = hit
            if needed is not None and choice is None:
                too_long.append((needed, link))
            cables.append(_cable(cable_id % n, link, a_rack, a_u, b_rack, b_u, *fields))
            needs.append(needed)
        _one_plug_per_cage(cables, first, needs, cage_of, chooser, design.catalog.media)
        if too_long:
            needed, worst = max(too_long, key=lambda t: t[0])
            kinds = ", ".join(rules.kinds) if rules.kinds else "any"
            findings.append(
                error(
                    "cable-reach",
                    f"fabrics.{key}.cabling",
                    f"{len(too_long)} {ft.name} cable(s) need more than any allowed medium ({kinds}) reaches at "
                    f"their speed; longest {needed:.1f} m: {worst.a}:{worst.a_port} — {worst.b}:{worst.b_port} "
                    f"({worst.speed_gbps}G, longest allowed {chooser.reach(worst.speed_gbps):g} m)",
                    "allow a longer-reach medium (fabrics.<f>.cabling.media), "
                    "or place the racks closer (racks.per_row, rows)",
                )
            )
    return cables, findings


# a topology's cables and their findings (`lay_cables`), made once where a caller needs them before the allocation
Laid = tuple[tuple[Cable, ...], tuple[Finding, ...]]


def lay_cables(design: Design, topo: Topology) -> Laid:
    """The topology's cables and the cabling's findings, as the allocation makes them."""
    cables, findings = _allocate_cables(design, topo)
    return tuple(cables), tuple(findings)


def allocate(design: Design, topo: Topology, laid: Laid | None = None) -> Allocation:
    """`laid`: `lay_cables` of this design and topology, already made (its cables object is kept, so that what
    was computed of it, e.g. the optics, is found again)."""
    asn_rows, asn_findings = _allocate_asns(design, topo)
    addresses, addr_findings, loopbacks, runs = _allocate_addresses(design, topo)
    asn_rows = [AsnRow(r.device, r.fabric, r.layer, r.asn, loopbacks.get(r.device, "")) for r in asn_rows]
    cables, cable_findings = laid if laid is not None else lay_cables(design, topo)
    rows = tuple(addresses)
    return Allocation(
        cables,
        rows,
        tuple(asn_rows),
        tuple(asn_findings + addr_findings + [*cable_findings]),
        runs_made=AddressRuns(rows, tuple(runs)),
    )
