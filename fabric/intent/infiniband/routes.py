"""The subnet manager's routes of a planned subnet: the subnet as the ftree model sees it (analysis/traffic/sm.py),
from the same GUIDs, ports and GUID files fabric writes for OpenSM."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from fabric.analysis.traffic.fairness import Ints
from fabric.analysis.traffic.net import Net
from fabric.analysis.traffic.routing import DELIVER, NO_ROUTE
from fabric.analysis.traffic.sm import IbGraph, NotModelled, Routes, ftree_routes
from fabric.analysis.traffic.updn import updn_routes
from fabric.intent.infiniband.subnet import AR_ENGINES, Subnet
from fabric.model.topology import FabricTopology, Link

# switch × CA-port entries the build models at most (~7 µs each in Python: 49k take 0.34 s on the 4-SU SuperPOD);
# `fabric traffic --routing sm` models any size
BUILD_ENTRIES = 250_000
MODELLED = ("ftree", "updn")  # routing engines whose routes are modelled (analysis/traffic/sm.py, updn.py)


def ib_graph(subnet: Subnet) -> IbGraph:
    """The subnet's switches, CAs and cables with the roots, compute and I/O ports of the generated GUID files."""
    cables = []
    ca_ports: dict[tuple[str, int], int] = {}
    for link in subnet.links:
        cables.append((link.a.node, link.a.port, link.b.node, link.b.port))
        for end in (link.a, link.b):
            if not subnet.by_key[end.node].switch:
                ca_ports[(end.node, end.port)] = end.guid
    return IbGraph(
        switches={n.key: n.guid for n in subnet.switches},
        cas={n.key: n.guid for n in subnet.cas},
        cables=cables,
        ca_ports=ca_ports,
        roots=[n.key for n in subnet.roots],
        cns=frozenset(p.guid for p in subnet.compute),
        ios=frozenset(p.guid for p in subnet.io) if subnet.io else None,
        max_reverse_hops=subnet.settings.max_reverse_hops,
    )


def sm_routes(subnet: Subnet) -> Routes:
    """Per switch, the output port for each CA port GUID under the subnet's first routing engine (NotModelled:
    an engine or fabric the model does not reproduce)."""
    engine = subnet.engines[0] if subnet.engines else "minhop"
    if engine in AR_ENGINES:  # NVIDIA's OpenSM (UFM): not upstream code, and with AR on the tables are not the path
        raise NotModelled(
            f"{subnet.label} routes with {engine}: adaptive routing, each switch choosing among the ports with the "
            "fewest hops (NVIDIA's TREE AR groups) — `--routing adaptive` is its model; the static tables it starts "
            "from are NVIDIA's code, not documented as upstream updn's or ftree's"
        )
    if engine not in MODELLED:
        raise NotModelled(f"{subnet.label} routes with {engine}: the SM's routes are modelled for ftree and updn only")
    if subnet.settings.lmc:
        raise NotModelled(f"{subnet.label} has LMC {subnet.settings.lmc}: the model routes one LID per port")
    if not subnet.roots:
        raise NotModelled(f"{subnet.label} has no root GUID file: {engine} would guess the roots")
    graph = ib_graph(subnet)
    return updn_routes(graph) if engine == "updn" else ftree_routes(graph)


def sm_table(subnets: Sequence[Subnet], ft: FabricTopology, net: Net, routes: Routes) -> Ints:
    """The subnets' forwarding tables `routes` (sm_routes of each) over `net` (fabric_net of `ft`): per switch and
    NIC port, the link id a packet for that port leaves on, DELIVER at the port's own leaf, NO_ROUTE where the
    tables have none."""
    index = {(link.a, link.a_port, link.b, link.b_port): i for i, link in enumerate(ft.links)}  # a cable's ends
    out_edge: dict[tuple[str, int], int] = {}  # (switch, IB port) → link id leaving the switch there
    port_guid: dict[int, int] = {}  # fabric link index of a NIC port → its CA port GUID
    for subnet in subnets:
        for link in subnet.links:
            i = index[_ends(link.cable.link)]
            if not subnet.by_key[link.a.node].switch:
                port_guid[i] = link.a.guid
            elif not subnet.by_key[link.b.node].switch:
                port_guid[i] = link.b.guid
    by_link = {i: pair for pair, i in enumerate(net.pair_links)}
    names = {name: s for s, name in enumerate(net.names)}
    for subnet in subnets:
        for link in subnet.links:
            pair = by_link.get(index[_ends(link.cable.link)])
            if pair is None:
                continue
            ab, ba = (int(e) for e in net.pair_edges[pair])
            a_is_a = ft.links[net.pair_links[pair]].a == link.a.device
            out_edge[(link.a.node, link.a.port)] = ab if a_is_a else ba
            out_edge[(link.b.node, link.b.port)] = ba if a_is_a else ab
    table = np.full((len(net.names), net.ports), NO_ROUTE, dtype=np.int64)
    for p, i in enumerate(net.port_links):
        guid = port_guid.get(i)
        if guid is None:
            continue
        for switch, lft in routes.items():
            out = lft.get(guid)
            if out is None or switch not in names:
                continue
            s = names[switch]
            if (switch, out) in out_edge:
                table[s, p] = out_edge[(switch, out)]
            elif s == net.port_leaf[p]:
                table[s, p] = DELIVER
    return table


def sm_tables(subnets: Sequence[Subnet], ft: FabricTopology, limit: int | None = None) -> Callable[[Net], Ints]:
    """The forwarding tables of a fabric's subnets (every plane) as the traffic model takes them: routed once,
    laid over any Net of the fabric. NotModelled: no subnet, one the model does not reproduce, or tables of more
    than `limit` entries (switches × CA ports)."""
    if not subnets:
        raise NotModelled(f"`{ft.name}` is not an InfiniBand fabric (no subnet manager)")
    entries = sum(len(s.switches) * len(s.cas) for s in subnets)
    if limit is not None and entries > limit:
        raise NotModelled(f"`{ft.name}`'s tables have {entries:,} entries, over {limit:,}")
    routes: Routes = {}
    for subnet in subnets:
        routes.update(sm_routes(subnet))
    return lambda net: sm_table(subnets, ft, net, routes)


def _ends(link: Link) -> tuple[str, str, str, str]:
    return (link.a, link.a_port, link.b, link.b_port)
