"""cabling.xlsx's labels and per-fabric sheets give each end's faceplate cage, port in the cage and lanes (issue 25:
"the faceplate cage and lane for every Ethernet port ... in cabling.csv, the workbook, the labels sheet and
cabling.md"), from the same data as cabling.csv's cage columns."""

from __future__ import annotations

import csv
import io
from functools import cache
from typing import Any

import openpyxl

from fabric.render.outputs.tables import NO_CAGE, cabling_csv, faceplate_labels, place_text
from fabric.render.outputs.workbook import COLUMNS, LABEL_COLUMNS, cabling_xlsx
from tests.conftest import built


@cache
def _sheets(design: str) -> dict[str, list[dict[str, Any]]]:
    book = openpyxl.load_workbook(io.BytesIO(cabling_xlsx(built(design))), read_only=True)
    out: dict[str, list[dict[str, Any]]] = {}
    for sheet in book.worksheets:
        rows = list(sheet.iter_rows(values_only=True))
        out[sheet.title] = [
            {k: ("" if v is None else str(v)) for k, v in zip(rows[0], r, strict=True)} for r in rows[1:]
        ]
    return out


def _csv(design: str) -> dict[str, dict[str, str]]:
    return {r["cable_id"]: r for r in csv.DictReader(io.StringIO(cabling_csv(built(design))))}


def test_the_labels_sheet_gives_each_ends_cage_port_and_lanes() -> None:
    """sonic-th5-512: SONiC's Ethernet264 is cage 34 port 1 lanes 1-4 (its alias etp34a), on the labels sheet as
    in cabling.csv; every end's cage columns are cabling.csv's, and the faceplate label prints them after the port."""
    labels = _sheets("sonic-th5-512")["labels"]
    assert tuple(labels[0])[:7] == ("cable_id", "end", "rack", "u", "device", "port", "label")  # added, not renamed
    assert tuple(labels[0]) == tuple(c for c, _ in LABEL_COLUMNS)
    rows = _csv("sonic-th5-512")
    assert len(labels) == 2 * len(rows)
    for r in labels:
        side = r["end"].lower()
        want = rows[r["cable_id"]]
        assert (r["cage"], r["cage_port"], r["cage_lanes"]) == tuple(
            want[f"{side}_{k}"] for k in ("cage", "cage_port", "cage_lanes")
        )
        assert r["label"] == want[f"{side}_label"]
        here = f"{r['device']} {r['port']} (cage {r['cage']} port {r['cage_port']} lanes {r['cage_lanes']})"
        assert r["faceplate_label"].startswith(f"{r['cable_id']} {want[f'{side}_rack']}-U"), r
        assert here in r["faceplate_label"].split(" > ")[0], r
    row = next(r for r in labels if r["port"] == "Ethernet264" and r["end"] == "A" and r["cable_id"] in _spine_links())
    assert (row["cage"], row["cage_port"], row["cage_lanes"]) == ("34", "1", "1-4")
    assert " Ethernet264 (cage 34 port 1 lanes 1-4) > " in row["faceplate_label"]


def _spine_links() -> set[str]:
    return {k for k, r in _csv("sonic-th5-512").items() if r["tier"] == "leaf-spine"}


def test_each_fabric_sheet_has_cablings_cage_columns() -> None:
    sheets = _sheets("sonic-th5-512")
    rows = _csv("sonic-th5-512")
    compute = sheets["compute"]
    assert tuple(compute[0]) == tuple(c for c, _ in COLUMNS)
    cages = [f"{s}_{k}" for s in "ab" for k in ("cage", "cage_port", "cage_lanes")]
    assert all(all(r[k] for k in cages) for r in compute)  # every end of the compute fabric is in a catalog cage
    assert all(tuple(r[k] for k in cages) == tuple(rows[r["cable_id"]][k] for k in cages) for r in compute)


def test_an_end_without_a_cage_keeps_its_plain_label() -> None:
    """The negative case: no cage (a management port, or a link the physical sheet does not place): no
    parentheses, the label is cabling.csv's."""
    assert place_text("", "1", "1-4") == ""
    assert place_text("eth1", "", "") == "cage eth1"
    cable = built("lab").allocation.cables[0]
    assert faceplate_labels(cable, NO_CAGE) == cable.labels()
    a, b = faceplate_labels(cable, ("", "", "", "7", "", "", cable.cable_id))
    plain_a, plain_b = cable.labels()
    assert a == f"{plain_a} (cage 7)" and b.endswith(f"> {plain_a.split(' > ')[0].removeprefix(cable.cable_id + ' ')}")
    assert b.startswith(plain_b.split(" > ")[0] + " (cage 7) > ")
