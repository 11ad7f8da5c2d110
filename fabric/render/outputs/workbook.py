"""cabling.xlsx, written by xlsxwriter in constant-memory mode (rows stream out; 300k rows stay small).

Sheets: `summary` (cables per fabric, tier and medium), one per fabric (frozen header, filters, widths,
cables sorted by rack and U) and `labels` (both ends of every cable, TIA-606-style identifiers as in
cabling.csv, then this end's faceplate cage, port in the cage and lanes, and the label with both ends' cages),
ready for label-printer software, then `physical` (one row per physical cable, as cabling-physical.csv:
cages, ports in the cage, transceivers). Every text cell is written as a string, never a formula.
The document's dates are fixed so the same spec gives the same bytes.

Above `documents.split_above` cables, cabling.xlsx holds the summary and a `racks` sheet listing each rack's
cabling document (`cabling/<rack>.md`; cabling.csv holds every cable). With `documents.row_workbooks` it lists
one workbook per row of racks instead, `cabling/row-<row>.xlsx` (the cables whose a-end is in that row, same
sheets); those are opt-in because xlsxwriter writes each cell in Python: minutes of CPU at 300,000 cables. The row
workbooks are shards, so the render pool writes them side by side.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

import xlsxwriter

from fabric.model.cable import Cable
from fabric.pipeline import Build
from fabric.render.engine.documents import split
from fabric.render.engine.memo import per_build
from fabric.render.engine.registry import Output
from fabric.render.outputs.cabling_md import UNPLACED, rack_file
from fabric.render.outputs.tables import (
    NO_CAGE,
    PHYSICAL_COLUMNS,
    faceplate_labels,
    link_cages,
    physical_rows,
)

FIXED_DATE = datetime(2000, 1, 1)
Place = tuple[str, str, str, str, str, str, str]  # both ends' cage, port in the cage, lanes; the physical cable
COLUMNS = (
    ("cable_id", 16),
    ("tier", 11),
    ("plane", 6),
    ("rail", 5),
    ("a_rack", 7),
    ("a_u", 5),
    ("a_device", 18),
    ("a_port", 10),
    ("b_rack", 7),
    ("b_u", 5),
    ("b_device", 18),
    ("b_port", 10),
    ("speed_gbps", 8),
    ("media", 10),
    ("part", 16),
    ("length_m", 8),
    ("a_label", 60),
    ("b_label", 60),
    # each end's faceplate cage, port in the cage and lanes: cabling.csv's columns of the same names
    ("a_cage", 8),
    ("a_cage_port", 6),
    ("a_cage_lanes", 8),
    ("b_cage", 8),
    ("b_cage_port", 6),
    ("b_cage_lanes", 8),
)
# the `physical` sheet: cabling-physical.csv's columns (labels wide, names mid, the rest narrow)
PHYSICAL_WIDTHS = tuple(
    (c, 60 if c.endswith("label") else 18 if c.endswith(("device", "links", "interfaces", "part")) else 10)
    for c in PHYSICAL_COLUMNS
)
LABEL_COLUMNS = (
    ("cable_id", 16),
    ("end", 5),
    ("rack", 7),
    ("u", 5),
    ("device", 18),
    ("port", 10),
    ("label", 64),
    # this end's faceplate place (cabling.csv's cage columns) and the label with both ends' places after their ports
    ("cage", 8),
    ("cage_port", 6),
    ("cage_lanes", 8),
    ("faceplate_label", 96),
)


def sheet_name(name: str, taken: set[str]) -> str:
    """Excel's rules: at most 31 characters, none of []:*?/\\, unique."""
    base = re.sub(r"[\[\]:*?/\\]", "_", name)[:31] or "sheet"
    candidate, n = base, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{base[: 31 - len(str(n)) - 1]}~{n}"
    taken.add(candidate.lower())
    return candidate


def _order(c: Cable) -> tuple[str, int, str, str]:
    return (c.a_rack or "~", c.a_u or 0, c.link.a, c.link.a_port)


def _row(c: Cable, cages: Place) -> Sequence[object]:
    link = c.link
    a_label, b_label = c.labels()
    return (
        c.cable_id,
        link.tier,
        link.plane,
        link.rail,
        c.a_rack,
        c.a_u,
        link.a,
        link.a_port,
        c.b_rack,
        c.b_u,
        link.b,
        link.b_port,
        link.speed_gbps,
        c.media,
        c.part,
        c.length_m,
        a_label,
        b_label,
        *cages[:6],
    )


def _write(sheet: xlsxwriter.worksheet.Worksheet, r: int, values: Sequence[object], fmt: object = None) -> None:
    for col, value in enumerate(values):
        if value is None or value == "":
            continue
        if isinstance(value, int | float) and not isinstance(value, bool):
            sheet.write_number(r, col, value, fmt)
        else:
            sheet.write_string(r, col, str(value), fmt)


def _table(
    book: xlsxwriter.Workbook, name: str, columns: Sequence[tuple[str, int]], rows: list[Sequence[object]], bold: object
) -> None:
    sheet = book.add_worksheet(name)
    for col, (_, width) in enumerate(columns):
        sheet.set_column(col, col, width)
    sheet.freeze_panes(1, 0)
    sheet.autofilter(0, 0, max(1, len(rows)), len(columns) - 1)
    _write(sheet, 0, [c for c, _ in columns], bold)
    for r, values in enumerate(rows, start=1):
        _write(sheet, r, values)


def _book(
    build: Build,
    title: str,
    cables: list[Cable],
    index: list[Sequence[object]] | None = None,
    physical: list[Sequence[object]] | None = None,
) -> bytes:
    """A workbook of `cables` (in rack and U order); with `index`, the summary and the list of workbooks only;
    with `physical`, a `physical` sheet of those rows (cabling-physical.csv's) after the labels."""
    out = io.BytesIO()
    book = xlsxwriter.Workbook(out, {"constant_memory": True, "strings_to_formulas": False, "strings_to_urls": False})
    book.set_properties({"title": title, "created": FIXED_DATE, "author": "fabric"})
    bold = book.add_format({"bold": True, "bg_color": "#EEEEEE"})
    taken = {"summary", "labels", "workbooks", "physical"}
    counts = Counter((c.link.fabric, c.link.tier, c.media or "none") for c in cables)
    summary_rows: list[Sequence[object]] = [
        (fabric, tier, media, counts[(fabric, tier, media)]) for fabric, tier, media in sorted(counts)
    ]
    summary_rows.append(("total", "", "", len(cables)))
    _table(book, "summary", (("fabric", 14), ("tier", 12), ("media", 12), ("cables", 10)), summary_rows, bold)
    if index is not None:
        if build.design.spec.documents.row_workbooks:
            _table(book, "workbooks", (("row", 10), ("racks", 8), ("cables", 10), ("workbook", 28)), index, bold)
        else:
            _table(book, "racks", (("row", 10), ("rack", 10), ("cables", 10), ("document", 28)), index, bold)
        book.close()
        return out.getvalue()
    places = link_cages(build)
    for key in build.topology.fabrics:
        rows = [_row(c, places.get(c.cable_id, NO_CAGE)) for c in cables if c.link.fabric == key]
        _table(book, sheet_name(key, taken), COLUMNS, rows, bold)
    label_rows: list[Sequence[object]] = []
    for c in cables:
        a_label, b_label = c.labels()
        place = places.get(c.cable_id, NO_CAGE)
        a_face, b_face = faceplate_labels(c, place)
        label_rows.append((c.cable_id, "A", c.a_rack, c.a_u, c.link.a, c.link.a_port, a_label, *place[0:3], a_face))
        label_rows.append((c.cable_id, "B", c.b_rack, c.b_u, c.link.b, c.link.b_port, b_label, *place[3:6], b_face))
    _table(book, "labels", LABEL_COLUMNS, label_rows, bold)
    if physical is not None:
        _table(book, "physical", PHYSICAL_WIDTHS, physical, bold)
    book.close()
    return out.getvalue()


def cabling_xlsx(build: Build) -> bytes:
    return _book(
        build, f"{build.name} cabling", sorted(build.allocation.cables, key=_order), physical=list(physical_rows(build))
    )


@per_build  # once per worker, whichever shards it renders
def _rows_of_racks(build: Build) -> dict[str, list[Cable]]:
    """Row of racks (spec order, then the cables in no rack) → its cables (by the a-end's rack), sorted."""
    racks = build.topology.racks
    out: dict[str, list[Cable]] = {row: [] for row in build.design.spec.racks.rows}
    for c in sorted(build.allocation.cables, key=_order):
        out.setdefault(racks[c.a_rack].row if c.a_rack in racks else UNPLACED, []).append(c)
    return {row: cables for row, cables in out.items() if cables}


def _racks_index(build: Build) -> list[Sequence[object]]:
    """(row, rack, cables, document) per rack of cabling.md's per-rack files (the a-end's rack), in rack order."""
    racks = build.topology.racks
    count = Counter(c.a_rack or UNPLACED for c in build.allocation.cables)
    return [(racks[r].row if r in racks else "", r, count[r], rack_file(r)) for r in sorted(count)]


def row_file(row: str) -> str:
    return f"cabling/row-{row}.xlsx"


def workbook_shard(build: Build, k: int, n: int) -> dict[str, bytes]:
    """Shard k of n: the whole cabling.xlsx (shard 0) or, above the split, every n-th row's workbook (and the
    index in shard 0)."""
    if not split(build):
        return {"cabling.xlsx": cabling_xlsx(build)} if k == 0 else {}
    title = f"{build.name} cabling"
    if not build.design.spec.documents.row_workbooks:
        return (
            {"cabling.xlsx": _book(build, title, list(build.allocation.cables), _racks_index(build))} if k == 0 else {}
        )
    rows = _rows_of_racks(build)
    files: dict[str, bytes] = {}
    if k == 0:
        index: list[Sequence[object]] = [
            (row, len({c.a_rack for c in cables}), len(cables), row_file(row)) for row, cables in rows.items()
        ]
        files["cabling.xlsx"] = _book(build, title, list(build.allocation.cables), index)
    for row in list(rows)[k::n]:
        files[row_file(row)] = _book(build, f"{build.name} cabling, row {row}", rows[row])
    return files


OUTPUTS: tuple[Output, ...] = (
    Output("cabling-xlsx", lambda build: workbook_shard(build, 0, 1), shard=workbook_shard, weight=0.2),
)
