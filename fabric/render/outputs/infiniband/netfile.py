"""The ibnetdiscover topology format, written: the plan as topology.net (fabric/tools/ibnetdiscover.py reads
the format back, for `fabric verify`).

Written: every node preceded by a blank line and its GUID line (ibsim takes the GUID from there), a
switch as `Switch <ports> "S-<guid>" # "<name>" enhanced port 0 lid 0 lmc 0`, a CA as
`Ca <ports> "H-<guid>" # "<device> <hca>"`, and every cable on both ends in ibnetdiscover's full form with
the planned rate (`lid 0 4xNDR`; ibsim takes the width and, up to HDR, the speed from there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain

from fabric.intent.infiniband.ports import plan_rate
from fabric.intent.infiniband.subnet import IbLink, Subnet, Wire
from fabric.render.engine.lines import Shapes

TEMPLATE = "opensm/topology.net.j2"

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


def topology_net(subnet: Subnet, header: Mapping[str, object], links: Sequence[IbLink] | None = None) -> str:
    """topology.net of the subnet (or of these links of it, as if cabled so): the template's header, then per node,
    switches then CAs, the node macro and the port macro per cabled port, in port order (600,000 ports at 100k
    GPUs: each port's line is filled as the cable is read, its values checked once per node and rate)."""
    wiring: Sequence[Wire] = subnet.wiring
    given: list[str] | None = None  # the links' own rates (a link may train at another width than planned)
    if links is not None:
        wiring = [(k.cable, k.a.node, k.a.port, k.a.guid, k.b.node, k.b.port, k.b.guid) for k in links]
        given = [f" {k.rate}" if k.rate else "" for k in links]
    by_key = subnet.by_key
    shapes = Shapes(
        TEMPLATE, **header, numbering=numbering_notes(subnet), cables=len(wiring), node_count=len(subnet.nodes)
    )
    # the strings a line can bring: a node's id and name, a rate; the rest is written from numbers
    shapes.check(text for n in chain(subnet.nodes, by_key.values()) for text in (n.nodeid, n.key))
    switch, ca = shapes.shape("switch"), shapes.shape("ca")
    switch_port, ca_port = shapes.shape("switch_port"), shapes.shape("ca_port")
    rates: dict[int, str] = {}  # by speed
    lines: dict[str, list[tuple[int, str]]] = {n.key: [] for n in subnet.nodes}
    for i, (cable, a_key, a_number, a_guid, b_key, b_number, b_guid) in enumerate(wiring):
        speed = cable.link.speed_gbps
        rate = rates.get(speed) if given is None else given[i]
        if rate is None:
            planned = plan_rate(speed)
            rate = rates[speed] = f" {planned}" if planned else ""
        a, b = by_key[a_key], by_key[b_key]
        a_port, b_port = str(a_number), str(b_number)
        a_text = "" if a.switch else f"({a_guid:x})"
        b_text = "" if b.switch else f"({b_guid:x})"
        lines[a.key].append(
            (a_number, (switch_port if a.switch else ca_port)(a_port, a_text, b.nodeid, b_port, b_text, b.key, rate))
        )
        lines[b.key].append(
            (b_number, (switch_port if b.switch else ca_port)(b_port, b_text, a.nodeid, a_port, a_text, a.key, rate))
        )
    shapes.check(rates.values() if given is None else given)
    parts = [shapes.text]
    for node in subnet.nodes:
        values = (f"0x{node.guid:016x}", f"{node.guid:x}", str(node.nports), node.nodeid, node.key)
        parts.append(switch(*values) if node.switch else ca(*values))
        ports = lines[node.key]
        ports.sort()
        parts.extend([line for _, line in ports])
    return "".join(parts)
