"""The ibnetdiscover topology format, written: the plan as topology.net (fabric/tools/ibnetdiscover.py reads
the format back, for `fabric verify`).

Written: every node preceded by a blank line and its GUID line (ibsim takes the GUID from there), a
switch as `Switch <ports> "S-<guid>" # "<name>" enhanced port 0 lid 0 lmc 0`, a CA as
`Ca <ports> "H-<guid>" # "<device> <hca>"`, and every cable on both ends in ibnetdiscover's full form with
the planned rate (`lid 0 4xNDR`; ibsim takes the width and, up to HDR, the speed from there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fabric.intent.infiniband.subnet import IbLink, Subnet

# --------------------------------------------------------------------------------------------- writing


def numbering_notes(subnet: Subnet) -> list[str]:
    """One line per switch model and breakout: how cage ports become IB ports."""
    notes: set[str] = set()
    for node in subnet.switches:
        per_cage = subnet.numbering[node.key].per_cage
        if per_cage == 1:
            notes.add(f"{node.model}: IB port n is cage n")
        else:
            ports = ", ".join(f"{per_cage}n" + (f"-{i}" if i else "") for i in range(per_cage - 1, -1, -1))
            notes.add(f"{node.model}: cage n holds IB ports {ports} (port = {per_cage} x (cage - 1) + sub)")
    return sorted(notes)


def net_view(subnet: Subnet, links: Sequence[IbLink] | None = None) -> dict[str, Any]:
    """What topology.net.j2 lays out: switches then CAs, each with its cabled ports in port order.

    A node is (switch?, GUID, short GUID, node id, ports, name, port rows); a port row is (port, local port GUID
    in parentheses or "", remote node id, remote port, remote port GUID in parentheses or "", remote name, rate).
    """
    links = subnet.links if links is None else links
    by_key = subnet.by_key
    ports: dict[str, list[tuple[int, tuple[str, ...]]]] = {n.key: [] for n in subnet.nodes}
    for link in links:
        rate = f" {link.rate}" if link.rate else ""
        a, b = by_key[link.a.node], by_key[link.b.node]
        a_guid = "" if a.switch else f"({link.a.guid:x})"
        b_guid = "" if b.switch else f"({link.b.guid:x})"
        ports[a.key].append((link.a.port, (str(link.a.port), a_guid, b.nodeid, str(link.b.port), b_guid, b.key, rate)))
        ports[b.key].append((link.b.port, (str(link.b.port), b_guid, a.nodeid, str(link.a.port), a_guid, a.key, rate)))
    nodes = [
        (
            node.switch,
            f"0x{node.guid:016x}",
            f"{node.guid:x}",
            node.nodeid,
            str(node.nports),
            node.key,
            [row for _, row in sorted(ports[node.key])],
        )
        for node in subnet.nodes
    ]
    return {"net_nodes": nodes, "numbering": numbering_notes(subnet), "cables": len(links)}
