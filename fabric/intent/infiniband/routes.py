"""The subnet manager's routes of a planned subnet: the subnet as the ftree model sees it (analysis/traffic/sm.py),
from the same GUIDs, ports and GUID files fabric writes for OpenSM."""

from __future__ import annotations

from fabric.analysis.traffic.sm import IbGraph, NotModelled, Routes, ftree_routes
from fabric.intent.infiniband.subnet import Subnet

MODELLED = ("ftree",)  # routing engines whose routes are modelled (updn's depend on the LIDs OpenSM assigns)


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
    if engine not in MODELLED:
        raise NotModelled(f"{subnet.label} routes with {engine}: the SM's routes are modelled for ftree only")
    if subnet.settings.lmc:
        raise NotModelled(f"{subnet.label} has LMC {subnet.settings.lmc}: ftree refuses it")
    if not subnet.roots:
        raise NotModelled(f"{subnet.label} has no root GUID file: ftree would guess the roots")
    return ftree_routes(ib_graph(subnet))
