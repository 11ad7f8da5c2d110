"""Rack elevations (front view, U by U, bottom up) and the floor plan.

Elevations: one picture per row of racks (long rows in pages of PAGE racks); each device drawn to its
height with name and model, free units shaded, power used / budget per rack; above `documents.split_above`
cables drawn here as SVG (hundreds of pages: dot's layout of them took longer than the rest of the build), with
no PNG. Floor plan: racks in their
rows and positions, coloured by what they hold, with the scalable units each belongs to.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from html import escape

from fabric.costing import RackPower, costing
from fabric.model.topology import Device
from fabric.pipeline import Build
from fabric.render.engine.documents import split
from fabric.render.outputs.diagrams.adjacency import adjacency
from fabric.render.outputs.diagrams.common import node_sus
from fabric.render.outputs.diagrams.dot import FONT, html_text
from fabric.render.outputs.diagrams.graph import Box, Diagram

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


def device_kind(build: Build, device: Device) -> str:
    """compute (GPU nodes), network (switches), storage (nodes on a storage fabric only), management (the rest)."""
    if device.layer != "node":
        return "network"
    if build.design.catalog.nodes[device.model].gpus:
        return "compute"
    roles = {ft.role for ft in build.topology.fabrics.values() if device.name in adjacency(ft).layers}
    return "storage" if "storage" in roles and "compute" not in roles else "management"


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
    start: dict[int, Device] = {}
    covered: set[int] = set()
    for d in devices:
        top = (d.u or 1) + d.height_u - 1
        start[min(top, units)] = d
        covered.update(range(d.u or 1, top + 1))
    alarm = ' BGCOLOR="#f4cccc"' if power_w > budget_w else ""
    rows = [
        f'<TR><TD COLSPAN="2" BGCOLOR="#333333"><FONT COLOR="white"><B>{html_text(rack)}</B></FONT></TD></TR>',
        f'<TR><TD COLSPAN="2"{alarm}>{power_w / 1000:.1f} / {budget_w / 1000:g} kW</TD></TR>',
    ]
    for u in range(units, 0, -1):
        cell = ""
        if u in start:
            d = start[u]
            height = min(d.height_u, u)
            colour = KIND_COLOURS[device_kind(build, d)]
            text = f"<B>{html_text(d.name)}</B>" + (
                f"<BR/>{html_text(d.model)}" if height > 1 else f" {html_text(d.model)}"
            )
            text = f'<FONT POINT-SIZE="{9 if height == 1 else 11}">{text}</FONT>'
            cell = f'<TD ROWSPAN="{height}" BGCOLOR="{colour}" WIDTH="150">{text}</TD>'
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


def elevation_diagrams(build: Build) -> list[Diagram]:
    power = {r.rack: r for r in costing(build).racks}
    contents = _by_rack(build)
    diagrams = []
    direct = split(build)  # hundreds of pages at scale: drawn here as SVG, without dot's layout or a PNG
    for page, title, chunk in elevation_pages(build):
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
            svg = elevation_svg(build, title, [(n, contents.get(n, []), power[n]) for n in chunk])
        diagrams.append(
            Diagram(
                page,
                title,
                boxes,
                ranks=(tuple(b.id for b in boxes),),
                graph_attrs={"nodesep": "0.3"},
                png=not direct,
                svg=svg,
            )
        )
    return diagrams


# the directly drawn elevation: sizes in px, as dot draws the table (a U 14 high, a device cell 150 wide)
_U_H, _U_W, _CELL_W, _GAP, _HEAD, _TOP = 14, 22, 150, 24, 36, 40


def elevation_svg(build: Build, title: str, racks: list[tuple[str, list[Device], RackPower]]) -> bytes:
    """A page of rack elevations as SVG, drawn here: the same content as the dot picture (name, power used /
    budget, each device to its height with name and model, free units shaded, U numbers)."""
    units = build.design.spec.racks.rack_units
    width = len(racks) * (_U_W + _CELL_W + _GAP) + _GAP
    height = _TOP + _HEAD + units * _U_H + _GAP
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}pt" height="{height}pt" '
        f'viewBox="0 0 {width} {height}" font-family="{FONT}" font-size="9">',
        f'<text x="{width / 2:g}" y="22" text-anchor="middle" font-size="16">{escape(title)}</text>',
    ]
    for i, (rack, devices, power) in enumerate(racks):
        x = _GAP + i * (_U_W + _CELL_W + _GAP)
        cell = x + _U_W
        alarm = "#f4cccc" if power.total_w > power.budget_w else "white"
        out.append(f'<g class="node"><title>{escape(rack)}</title>')
        out.append(f'<rect x="{x}" y="{_TOP}" width="{_U_W + _CELL_W}" height="18" fill="#333333" stroke="black"/>')
        out.append(
            f'<text x="{cell - _U_W / 2 + _CELL_W / 2:g}" y="{_TOP + 13}" text-anchor="middle" fill="white" '
            f'font-weight="bold" font-size="11">{escape(rack)}</text>'
        )
        out.append(
            f'<rect x="{x}" y="{_TOP + 18}" width="{_U_W + _CELL_W}" height="18" fill="{alarm}" stroke="black"/>'
        )
        out.append(
            f'<text x="{cell - _U_W / 2 + _CELL_W / 2:g}" y="{_TOP + 31}" text-anchor="middle" font-size="11">'
            f"{power.total_w / 1000:.1f} / {power.budget_w / 1000:g} kW</text>"
        )
        top = _TOP + _HEAD
        covered: set[int] = set()
        for d in devices:
            covered.update(range(d.u or 1, min((d.u or 1) + d.height_u - 1, units) + 1))
        for u in range(units, 0, -1):
            y = top + (units - u) * _U_H
            out.append(f'<rect x="{x}" y="{y}" width="{_U_W}" height="{_U_H}" fill="white" stroke="black"/>')
            out.append(f'<text x="{x + _U_W / 2:g}" y="{y + 10}" text-anchor="middle" font-size="8">{u}</text>')
            if u not in covered:
                out.append(f'<rect x="{cell}" y="{y}" width="{_CELL_W}" height="{_U_H}" fill="{FREE}" stroke="black"/>')
        for d in devices:
            low = d.u or 1
            high = min(low + d.height_u - 1, units)
            y = top + (units - high) * _U_H
            h = (high - low + 1) * _U_H
            colour = KIND_COLOURS[device_kind(build, d)]
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
    return (
        f'<TD BGCOLOR="{KIND_COLOURS[kind]}" WIDTH="70"><B>{html_text(name)}</B><BR/>{kind}<BR/>{su_text}'
        f"<BR/>{power[name].total_w / 1000:.1f} kW</TD>"
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
