"""Rack placement and cable routes.

Placement packs devices into racks in the order given, bottom up, starting a new rack at every
block (a node group, a fabric's switches) and whenever a rack is out of units or power. Racks
are named `<row><position>` and filled row by row (`superpod`: every other row back to front); a row
group's racks (a superpod unit's nodes and network rack) start a new row rather than straddle two,
where a row holds them. Devices the spec pins to a rack keep it.

A cable's route is vertical up to a tray above the racks, Manhattan along the rows and aisles,
and down again; within one rack it is the vertical distance only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from fabric.fast.frozen import maker
from fabric.model.findings import Finding, error
from fabric.model.topology import Rack
from fabric.spec.schema import RackLayout

U_M = 0.04445  # one rack unit, m (EIA-310)


@dataclass(frozen=True, slots=True)
class Placeable:
    """Something that takes rack units and power: a switch or node to be placed, or pinned by the spec."""

    name: str
    height_u: int
    power_w: int
    block: str  # a new block starts a new rack
    per_rack: int | None = None
    rack: str | None = None  # pinned by the spec
    u: int | None = None
    path: str = ""  # spec path, for findings about a pinned placement
    row_group: str | None = None  # racks of one group share a row where a row holds them (a superpod unit)


new_placeable = maker(Placeable)  # one per device: as cheaply as a plain dataclass


@dataclass(frozen=True)
class Placement:
    """The racks used and every device's rack and lowest U, with the findings of placing them."""

    racks: dict[str, Rack]
    positions: dict[str, tuple[str, int]]  # device → (rack, lowest U)
    findings: tuple[Finding, ...]


def _rack_xy(layout: RackLayout, row_index: int, position: int) -> tuple[float, float]:
    return (position - 1) * layout.pitch_m, row_index * (layout.depth_m + layout.row_gap_m)


def parse_rack(layout: RackLayout, name: str) -> tuple[int, int] | None:
    """`C03` → (row index of C, 3), or None when the row is unknown."""
    for row_index, row in sorted(enumerate(layout.rows), key=lambda r: -len(r[1])):
        match = re.fullmatch(re.escape(row) + r"(\d+)", name)
        if match and int(match.group(1)) >= 1:
            return row_index, int(match.group(1))
    return None


def place(items: Iterable[Placeable], layout: RackLayout) -> Placement:
    usable = layout.rack_units - layout.reserved_u
    budget_w = layout.power_kw * 1000
    findings: list[Finding] = []
    positions: dict[str, tuple[str, int]] = {}
    racks: dict[str, Rack] = {}

    auto: list[Placeable] = []
    parsed: dict[str, tuple[int, int] | None] = {}  # a rack's name parsed once (a rebuild pins ~20,000 at 100k GPUs)
    for item in items:
        if item.rack is None:
            auto.append(item)
            continue
        if item.rack in parsed:
            where = parsed[item.rack]
        else:
            where = parsed[item.rack] = parse_rack(layout, item.rack)
        if where is None:
            findings.append(
                error(
                    "unknown-rack",
                    f"{item.path}.rack",
                    f"rack `{item.rack}` is not in any row",
                    f"rack names are a row ({', '.join(layout.rows)}) and a number, e.g. {layout.rows[0]}01",
                )
            )
            auto.append(Placeable(item.name, item.height_u, item.power_w, item.block, item.per_rack))
            continue
        row_index, position = where
        name = item.rack
        if name not in racks:
            x, y = _rack_xy(layout, row_index, position)
            racks[name] = Rack(name, layout.rows[row_index], position, x, y)
        positions[item.name] = (name, item.u or 1)

    # Pack the rest into abstract racks, then name them around the pinned ones.
    bins: list[list[tuple[Placeable, int]]] = []
    used_u = used_w = count = 0
    block: str | None = None
    for item in auto:
        fits = (
            bins
            and item.block == block
            and used_u + item.height_u <= usable
            and used_w + item.power_w <= budget_w
            and (item.per_rack is None or count < item.per_rack)
        )
        if not fits:
            bins.append([])
            used_u = used_w = count = 0
            block = item.block
        bins[-1].append((item, used_u + 1))
        used_u += item.height_u
        used_w += item.power_w
        count += 1

    rows = len(layout.rows)
    total = len(bins) + len(racks)
    groups = _group_runs(bins)
    per_row = layout.per_row or _fewest_per_row(groups, total, rows)
    capacity = per_row * rows
    if layout.per_row is not None and total > capacity:
        findings.append(
            error(
                "rack-space",
                "racks",
                f"the design needs {total} racks; the layout holds {capacity} ({rows} rows × {per_row})",
                f"add rows or raise racks.per_row to {math.ceil(total / rows)}",
            )
        )
    taken = set(racks)
    # superpod: every other row filled back to front, so the last unit of a row stands across the aisle from the
    # first of the next (a leaf serving both, an in-band or out-of-band one, reaches either)
    snake = layout.layout == "superpod"

    def at(slot: int) -> tuple[int, int, str]:
        """The row, the position (from 0) and the name of the rack at a slot of the fill order."""
        row_index, position = divmod(slot, per_row)
        if row_index >= rows:  # overflow (reported above): extend the last row
            row_index, position = rows - 1, slot - (rows - 1) * per_row
        elif snake and row_index % 2:
            position = per_row - 1 - position
        return row_index, position, f"{layout.rows[row_index]}{position + 1:02d}"

    def row_with_room(slot: int, need: int) -> int | None:
        """The first slot from `slot` on that starts `need` free racks in one row (racks a lock keeps are taken)."""
        while slot // per_row < rows:
            end = (slot // per_row + 1) * per_row
            free = 0
            for s in range(slot, end):
                free = 0 if at(s)[2] in taken else free + 1
                if free == need:
                    return s - need + 1
            slot = end
        return None

    slot = 0
    for group, run in groups:
        start = row_with_room(slot, len(run)) if group is not None and len(run) <= per_row else None
        slot = slot if start is None else start  # a group's racks in one row
        for content in run:
            while True:
                row_index, position, name = at(slot)
                slot += 1
                if name not in taken:
                    break
            x, y = _rack_xy(layout, row_index, position + 1)
            racks[name] = Rack(name, layout.rows[row_index], position + 1, x, y)
            taken.add(name)
            for item, u in content:
                positions[item.name] = (name, u)
    ordered = dict(sorted(racks.items(), key=lambda kv: (layout.rows.index(kv[1].row), kv[1].position)))
    return Placement(ordered, positions, tuple(findings))


def _group_runs(
    bins: list[list[tuple[Placeable, int]]],
) -> list[tuple[str | None, list[list[tuple[Placeable, int]]]]]:
    """Consecutive racks of one row group, and each rack of no group on its own."""
    runs: list[tuple[str | None, list[list[tuple[Placeable, int]]]]] = []
    for content in bins:
        group = content[0][0].row_group
        if group is not None and runs and runs[-1][0] == group:
            runs[-1][1].append(content)
        else:
            runs.append((group, [content]))
    return runs


def _fewest_per_row(groups: list[tuple[str | None, list[list[tuple[Placeable, int]]]]], total: int, rows: int) -> int:
    """The fewest racks a row that hold every rack in `rows` rows and each row group's racks in one row (a group
    started on a new row leaves the end of the row before it empty; rows may stay empty)."""
    per_row = max(1, math.ceil(total / rows))
    if all(group is None for group, _ in groups):
        return per_row
    per_row = max(per_row, *(len(run) for group, run in groups if group is not None))
    while True:
        row = used = 0
        for group, run in groups:
            if group is not None and used + len(run) > per_row >= len(run):
                row, used = row + 1, 0
            used += len(run)
            row, used = row + used // per_row, used % per_row
        if row + (used > 0) <= rows:
            return per_row
        per_row += 1


def route_m(
    layout: RackLayout, a: Rack, a_u: int, a_h: int, b: Rack, b_u: int, b_h: int, tray_height_m: float
) -> float:
    """Length of the cable path between the middles of two devices, before slack."""
    a_mid = (a_u - 1 + a_h / 2) * U_M
    b_mid = (b_u - 1 + b_h / 2) * U_M
    if a.name == b.name:
        return abs(a_mid - b_mid)
    top = layout.rack_units * U_M + tray_height_m
    return (top - a_mid) + abs(a.x_m - b.x_m) + abs(a.y_m - b.y_m) + (top - b_mid)
