"""Rack elevations (front view, U by U, bottom up) and the floor plan.

Elevations: one picture per row of racks (long rows in pages of PAGE racks), its racks wrapped into lines
that fit `diagrams.width_pt` (as the topology pictures: the report shows an elevation at its size, never
shrunk, so a wider page would need scrolling); each device drawn to its
height with name and model, free units shaded, power used / budget per rack; above `documents.split_above`
cables drawn here as SVG (hundreds of pages: dot's layout of them took longer than the rest of the build), with
no PNG. Floor plan: racks in their
rows and positions, coloured by what they hold, with the scalable units each belongs to.

A rack of a rack-scale NVLink system (a node type with `rack_system`, DGX GB200 NVL72) also shows the system's
own parts, which are no devices of the design: its NVLink switch trays, power shelves and in-rack management
switches, in the units the trays leave free (switch trays right above the compute trays, then the power
shelves, the management switches at the top), with the system's name, cooling and power. Their positions are
fabric's [unverified]: NVIDIA's rack layout is in the NVL72 integration guide, which is not public (nvl72.md);
a power shelf is drawn 1U [unverified]. The floor plan marks liquid-cooled racks.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from html import escape
from itertools import pairwise

from fabric.costing import RackPower, costing
from fabric.model.topology import Device
from fabric.pipeline import Build
from fabric.render.engine.documents import split
from fabric.render.outputs.diagrams.adjacency import adjacency
from fabric.render.outputs.diagrams.common import node_sus
from fabric.render.outputs.diagrams.dot import FONT, html_text
from fabric.render.outputs.diagrams.graph import Box, Diagram, Edge
from fabric.spec.catalog import RackSystem

PAGE = 16  # racks per elevation picture
FLOOR_WRAP = 40  # rack positions per line of the floor plan
KIND_COLOURS = {
    "compute": "#cfe2f3",
    "network": "#d9ead3",
    "storage": "#fff2cc",
    "management": "#ead1dc",
    "empty": "#ffffff",
}
FREE = "#eeeeee"
# a rack system's own parts (not devices of the design), and the floor plan's mark of a liquid-cooled rack
PART_COLOURS = {"nvlink": "#d0e0e3", "power": "#fce5cd", "management": KIND_COLOURS["management"]}
LIQUID = "#1155cc"
PARTS_NOTE = "parts' U: fabric's [unverified]"
POWER_SHELF_U = 1  # [unverified] a power shelf's height: the NVL72 integration guide is not public


@dataclass(frozen=True)
class Unit:
    """Something drawn in an elevation: a device, or a part of the rack's NVLink system."""

    name: str
    model: str
    u: int  # lowest U
    height: int
    colour: str


def rack_system(build: Build, devices: list[Device]) -> RackSystem | None:
    """The rack-scale NVLink system whose compute trays stand in this rack, if any."""
    nodes = build.design.catalog.nodes
    for d in devices:
        if d.layer == "node" and d.model in nodes and nodes[d.model].rack_system is not None:
            return nodes[d.model].rack_system
    return None


def _units(build: Build, devices: list[Device]) -> tuple[list[Unit], int]:
    """The rack's devices and its system's parts, and how many parts found no free unit (not drawn)."""
    units = build.design.spec.racks.rack_units
    drawn = [Unit(d.name, d.model, d.u or 1, d.height_u, KIND_COLOURS[device_kind(build, d)]) for d in devices]
    system = rack_system(build, devices)
    if system is None:
        return drawn, 0
    taken = {u for x in drawn for u in range(x.u, x.u + x.height)}
    mgmt_u = 1
    if system.mgmt_switch_model and system.mgmt_switch_model in build.design.catalog.switches:
        mgmt_u = build.design.catalog.switches[system.mgmt_switch_model].u
    wanted = [
        *((f"nvswitch-tray{i}", "NVLink switch tray", 1, "nvlink") for i in range(1, system.nvlink_switch_trays + 1)),
        *((f"power-shelf{i}", "power shelf", POWER_SHELF_U, "power") for i in range(1, system.power_shelves + 1)),
    ]
    mgmt = [
        (f"mgmt-switch{i}", system.mgmt_switch_model or "management switch", mgmt_u, "management")
        for i in range(1, system.mgmt_switches + 1)
    ]
    trays_top = max((x.u + x.height - 1 for x in drawn), default=0)
    missing = 0

    def place(items: list[tuple[str, str, int, str]], candidates: list[int]) -> None:
        nonlocal missing
        for name, model, height, kind in items:
            low = next((u for u in candidates if all(v not in taken and v <= units for v in range(u, u + height))), 0)
            if not low:
                missing += 1
                continue
            taken.update(range(low, low + height))
            drawn.append(Unit(name, model, low, height, PART_COLOURS[kind]))

    place(wanted, [*range(trays_top + 1, units + 1), *range(1, trays_top + 1)])  # up from the trays
    place(mgmt, list(range(units, 0, -1)))  # down from the top
    return drawn, missing


def _system_lines(build: Build, devices: list[Device], missing: int) -> list[str]:
    """The rack system's lines in an elevation: name and cooling, power of the full rack, the parts' positions
    (fabric's), parts without room."""
    system = rack_system(build, devices)
    if system is None:
        return []
    mark = " [unverified]" if "power_kw" in system.unverified else ""
    lines = [f"{system.name}, {system.cooling}-cooled", f"rack up to {system.power_kw:g} kW{mark}", PARTS_NOTE]
    return lines + ([f"{missing} parts not drawn (no free U)"] if missing else [])


def device_kind(build: Build, device: Device) -> str:
    """compute (GPU nodes), network (switches), storage (nodes on a storage fabric and on no compute fabric; on a
    converged storage and in-band fabric, nodes of a type with storage ports), management (the rest)."""
    if device.layer != "node":
        return "network"
    node_type = build.design.catalog.nodes[device.model]
    if node_type.gpus:
        return "compute"
    roles = {ft.role for ft in build.topology.fabrics.values() if device.name in adjacency(ft).layers}
    storage = "storage" in roles or ("converged" in roles and "storage" in node_type.ports)
    return "storage" if storage and "compute" not in roles else "management"


def rack_sus(build: Build) -> dict[str, list[int]]:
    """Rack → the scalable units of the devices in it (compute fabric's SUs)."""
    out: dict[str, set[int]] = defaultdict(set)
    devices = build.topology.devices
    for ft in build.topology.fabrics.values():
        if not ft.rail_optimized:
            continue
        for node, su in node_sus(ft).items():
            rack = devices[node].rack
            if su is not None and rack:
                out[rack].add(su)
        for name in ft.switches:
            d = devices[name]
            if d.su is not None and d.rack:
                out[d.rack].add(d.su)
    return {rack: sorted(sus) for rack, sus in out.items()}


def _by_rack(build: Build) -> dict[str, list[Device]]:
    out: dict[str, list[Device]] = defaultdict(list)
    for d in build.topology.devices.values():
        if d.rack:
            out[d.rack].append(d)
    return out


def _elevation(build: Build, rack: str, devices: list[Device], power_w: float, budget_w: float) -> str:
    units = build.design.spec.racks.rack_units
    drawn, missing = _units(build, devices)
    start: dict[int, Unit] = {}
    covered: set[int] = set()
    for d in drawn:
        top = d.u + d.height - 1
        start[min(top, units)] = d
        covered.update(range(d.u, top + 1))
    alarm = ' BGCOLOR="#f4cccc"' if power_w > budget_w else ""
    rows = [
        f'<TR><TD COLSPAN="2" BGCOLOR="#333333"><FONT COLOR="white"><B>{html_text(rack)}</B></FONT></TD></TR>',
        f'<TR><TD COLSPAN="2"{alarm}>{power_w / 1000:.1f} / {budget_w / 1000:g} kW</TD></TR>',
    ]
    rows += [
        f'<TR><TD COLSPAN="2"><FONT POINT-SIZE="8" COLOR="{LIQUID}">{html_text(line)}</FONT></TD></TR>'
        for line in _system_lines(build, devices, missing)
    ]
    for u in range(units, 0, -1):
        cell = ""
        if u in start:
            d = start[u]
            height = min(d.height, u)
            text = f"<B>{html_text(d.name)}</B>" + (
                f"<BR/>{html_text(d.model)}" if height > 1 else f" {html_text(d.model)}"
            )
            text = f'<FONT POINT-SIZE="{9 if height == 1 else 11}">{text}</FONT>'
            cell = f'<TD ROWSPAN="{height}" BGCOLOR="{d.colour}" WIDTH="150">{text}</TD>'
        elif u not in covered:
            cell = f'<TD BGCOLOR="{FREE}" WIDTH="150"><FONT POINT-SIZE="8"> </FONT></TD>'
        rows.append(f'<TR><TD WIDTH="22" HEIGHT="14" FIXEDSIZE="TRUE"><FONT POINT-SIZE="8">{u}</FONT></TD>{cell}</TR>')
    return '<TABLE BORDER="1" CELLBORDER="1" CELLSPACING="0" CELLPADDING="1">' + "".join(rows) + "</TABLE>"


def elevation_pages(build: Build) -> list[tuple[str, str, list[str]]]:
    """(diagram name, title, racks) of each page of rack elevations: PAGE racks of a row a page."""
    rows: dict[str, list[str]] = defaultdict(list)
    for name, rack in build.topology.racks.items():
        rows[rack.row].append(name)
    pages = []
    for row, names in rows.items():
        for page in range(0, len(names), PAGE):
            chunk = names[page : page + PAGE]
            suffix = "" if len(names) <= PAGE else f"-{chunk[0]}-{chunk[-1]}"
            title = f"{build.name} · rack elevations, row {row}: {chunk[0]}–{chunk[-1]} (front, U1 at the bottom)"
            pages.append((f"racks/row-{row}{suffix}", title, chunk))
    return pages


# a rack's width in dot's picture: the U column and the device cell (22 + 150 pt, wider for a long device name
# and model), or its widest 8-pt line of the rack system (0.7 em a character, as topology.estimated_width),
# plus table borders and nodesep 0.3 in: a row of
# 10 HGX racks measured 2,106 pt (211 a rack), of 6 GB200 NVL72 racks 1,372 pt (229 a rack)
_RACK_EXTRA_PT = 38.0


def racks_per_line(build: Build, chunk: list[str], contents: dict[str, list[Device]]) -> int:
    """How many racks of this page stand side by side within `diagrams.width_pt` (at least one)."""
    widest = float(_CELL_W)
    for name in chunk:
        devices = contents.get(name, [])
        drawn, missing = _units(build, devices)
        for line in _system_lines(build, devices, missing):
            widest = max(widest, len(line) * 8 * 0.7 + 2 - _U_W)
        for d in drawn:  # a 1U device's name and model on one 9-pt line, a taller one's on two 11-pt lines
            text = (len(d.name) + 1 + len(d.model)) * 9 if d.height == 1 else max(len(d.name), len(d.model)) * 11
            widest = max(widest, text * 0.7 + 2)
    widest += _U_W
    return max(1, int((build.design.spec.diagrams.width_pt - _GAP) // (widest + _RACK_EXTRA_PT)))


def elevation_diagrams(build: Build) -> list[Diagram]:
    power = {r.rack: r for r in costing(build).racks}
    contents = _by_rack(build)
    diagrams = []
    direct = split(build)  # hundreds of pages at scale: drawn here as SVG, without dot's layout or a PNG
    for page, title, chunk in elevation_pages(build):
        per_line = racks_per_line(build, chunk, contents)
        boxes = tuple(
            Box(
                f"r_{name}",
                _elevation(build, name, contents.get(name, []), power[name].total_w, power[name].budget_w),
                html=True,
                attrs={"shape": "plaintext", "style": ""},
            )
            for name in chunk
        )
        svg = None
        if direct:
            svg = elevation_svg(build, title, [(n, contents.get(n, []), power[n]) for n in chunk], per_line)
        lines = tuple(tuple(b.id for b in boxes[i : i + per_line]) for i in range(0, len(boxes), per_line))
        below = tuple(Edge(a[0], b[0], attrs={"style": "invis"}) for a, b in pairwise(lines))
        diagrams.append(
            Diagram(
                page,
                title,
                boxes,
                below,  # each line of racks below the one before
                ranks=lines,
                graph_attrs={"nodesep": "0.3"},
                png=not direct,
                svg=svg,
                orders=tuple(line for line in lines if len(line) > 1) if len(lines) > 1 else (),
            )
        )
    return diagrams


# the directly drawn elevation: sizes in px, as dot draws the table (a U 14 high, a device cell 150 wide)
_U_H, _U_W, _CELL_W, _GAP, _HEAD, _TOP = 14, 22, 150, 24, 36, 40


def elevation_svg(
    build: Build, title: str, racks: list[tuple[str, list[Device], RackPower]], per_line: int | None = None
) -> bytes:
    """A page of rack elevations as SVG, drawn here: the same content as the dot picture (name, power used /
    budget, each device to its height with name and model, free units shaded, U numbers), `per_line` racks a
    line (all of them in one by default)."""
    units = build.design.spec.racks.rack_units
    per_line = per_line or max(1, len(racks))
    width = min(len(racks), per_line) * (_U_W + _CELL_W + _GAP) + _GAP
    lines = [_units(build, devices) for _, devices, _ in racks]
    systems = [
        _system_lines(build, devices, missing) for (_, devices, _), (_, missing) in zip(racks, lines, strict=True)
    ]
    head = _HEAD + 12 * max(map(len, systems), default=0)  # the rack system's lines
    block = head + units * _U_H + _GAP  # one line of racks
    height = _TOP + block * -(-len(racks) // per_line)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}pt" height="{height}pt" '
        f'viewBox="0 0 {width} {height}" font-family="{FONT}" font-size="9">',
        f'<text x="{width / 2:g}" y="22" text-anchor="middle" font-size="16">{escape(title)}</text>',
    ]
    for i, ((rack, _, power), (drawn, _), system) in enumerate(zip(racks, lines, systems, strict=True)):
        x = _GAP + (i % per_line) * (_U_W + _CELL_W + _GAP)
        base = _TOP + (i // per_line) * block  # this line's top
        cell = x + _U_W
        alarm = "#f4cccc" if power.total_w > power.budget_w else "white"
        out.append(f'<g class="node"><title>{escape(rack)}</title>')
        out.append(f'<rect x="{x}" y="{base}" width="{_U_W + _CELL_W}" height="18" fill="#333333" stroke="black"/>')
        out.append(
            f'<text x="{cell - _U_W / 2 + _CELL_W / 2:g}" y="{base + 13}" text-anchor="middle" fill="white" '
            f'font-weight="bold" font-size="11">{escape(rack)}</text>'
        )
        out.append(
            f'<rect x="{x}" y="{base + 18}" width="{_U_W + _CELL_W}" height="18" fill="{alarm}" stroke="black"/>'
        )
        out.append(
            f'<text x="{cell - _U_W / 2 + _CELL_W / 2:g}" y="{base + 31}" text-anchor="middle" font-size="11">'
            f"{power.total_w / 1000:.1f} / {power.budget_w / 1000:g} kW</text>"
        )
        for k, line in enumerate(system):
            out.append(
                f'<text x="{cell - _U_W / 2 + _CELL_W / 2:g}" y="{base + 46 + 12 * k}" text-anchor="middle" '
                f'font-size="8" fill="{LIQUID}">{escape(line)}</text>'
            )
        top = base + head
        covered: set[int] = set()
        for d in drawn:
            covered.update(range(d.u, min(d.u + d.height - 1, units) + 1))
        for u in range(units, 0, -1):
            y = top + (units - u) * _U_H
            out.append(f'<rect x="{x}" y="{y}" width="{_U_W}" height="{_U_H}" fill="white" stroke="black"/>')
            out.append(f'<text x="{x + _U_W / 2:g}" y="{y + 10}" text-anchor="middle" font-size="8">{u}</text>')
            if u not in covered:
                out.append(f'<rect x="{cell}" y="{y}" width="{_CELL_W}" height="{_U_H}" fill="{FREE}" stroke="black"/>')
        for d in drawn:
            low = d.u
            high = min(low + d.height - 1, units)
            y = top + (units - high) * _U_H
            h = (high - low + 1) * _U_H
            colour = d.colour
            label = f"{d.name} {d.model}" if h == _U_H else d.name
            out.append(f'<rect x="{cell}" y="{y}" width="{_CELL_W}" height="{h}" fill="{colour}" stroke="black"/>')
            out.append(
                f'<text x="{cell + _CELL_W / 2:g}" y="{y + min(h / 2 + 4, 12):g}" text-anchor="middle" '
                f'font-weight="bold">{escape(label)}</text>'
            )
            if h > _U_H:
                out.append(
                    f'<text x="{cell + _CELL_W / 2:g}" y="{y + 23}" text-anchor="middle">{escape(d.model)}</text>'
                )
        out.append("</g>")
    out.append("</svg>")
    return ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + "\n".join(out) + "\n").encode()


def _floor_cell(
    build: Build,
    name: str,
    contents: dict[str, list[Device]],
    sus: dict[str, list[int]],
    power: dict[str, RackPower],
) -> str:
    kinds: Counter[str] = Counter()
    for d in contents.get(name, []):
        kinds[device_kind(build, d)] += d.height_u
    kind = kinds.most_common(1)[0][0] if kinds else "empty"
    su = sus.get(name, [])
    su_text = ("SU" + ",".join(str(s) for s in su)) if su else "&nbsp;"
    system = rack_system(build, contents.get(name, []))
    cooled = ""
    if system is not None and system.cooling != "air":
        cooled = f'<BR/><FONT COLOR="{LIQUID}"><B>{system.cooling}-cooled</B></FONT>'
    return (
        f'<TD BGCOLOR="{KIND_COLOURS[kind]}" WIDTH="70"><B>{html_text(name)}</B><BR/>{kind}<BR/>{su_text}'
        f"<BR/>{power[name].total_w / 1000:.1f} kW{cooled}</TD>"
    )


def floor_title(build: Build) -> str:
    """The floor plan's title (report.md lists it without drawing the plan)."""
    racks = build.topology.racks
    rows = {rack.row for rack in racks.values()}
    return f"{build.name} · floor plan: {len(racks)} racks in {len(rows)} rows (position 1 at the left)"


def floor_diagram(build: Build) -> Diagram:
    racks = build.topology.racks
    contents = _by_rack(build)
    sus = rack_sus(build)
    power = {r.rack: r for r in costing(build).racks}
    rows: dict[str, dict[int, str]] = defaultdict(dict)
    for name, rack in racks.items():
        rows[rack.row][rack.position] = name
    width = max((max(p) for p in rows.values()), default=0)
    lines = []
    for row in build.design.spec.racks.rows:
        if row not in rows:
            continue
        for first in range(1, width + 1, FLOOR_WRAP):  # long rows wrap onto further lines
            last = min(width, first + FLOOR_WRAP - 1)
            title = f"row {row}" if width <= FLOOR_WRAP else f"row {row}<BR/>{first}–{last}"
            cells = [f"<TD><B>{title}</B></TD>"]
            for position in range(first, last + 1):
                found = rows[row].get(position)
                cells.append(
                    '<TD BORDER="0"> </TD>' if found is None else _floor_cell(build, found, contents, sus, power)
                )
            lines.append("<TR>" + "".join(cells) + "</TR>")
    legend = "".join(f'<TD BGCOLOR="{c}">{k}</TD>' for k, c in KIND_COLOURS.items() if k != "empty")
    table = (
        '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="4" CELLPADDING="4">'
        + "".join(lines)
        + f'<TR><TD BORDER="0"><B>legend</B></TD>{legend}</TR></TABLE>'
    )
    box = Box("floor", table, html=True, attrs={"shape": "plaintext", "style": ""})
    title = floor_title(build)
    # above the split a floor of hundreds of racks: dot's PNG of it is slow (its SVG is not), so SVG only
    return Diagram("floor", title, (box,), png=not split(build))
