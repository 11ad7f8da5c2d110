"""The floor's work order of `fabric diff --work-order`: work-order.csv and work-order.xlsx, checked by content."""

from __future__ import annotations

import csv
import io
from functools import cache
from pathlib import Path

import openpyxl
from typer.testing import CliRunner

from fabric.cli import app
from fabric.pipeline import Build, build_fabric
from fabric.spec.loader import load_spec
from fabric.tools.diff import Diff, Outputs, diff_outputs, grown, outputs_of
from fabric.tools.work_order import CSV_FILE, NAMES, XLSX_FILE, work_order, work_order_rows
from tests.conftest import REPO, built

GROWTH = REPO / "tests" / "data" / "growth"
runner = CliRunner()


@cache
def _grown_lab() -> Build:
    """designs/lab.yaml grown by a leaf's worth of servers (5 leaves, 10 servers), with the lab's lock."""
    return build_fabric(grown(built("lab"), load_spec(GROWTH / "lab-5-leaves.yaml")))


def _csv_rows(diff: Diff) -> list[dict[str, str]]:
    text = work_order(diff)[CSV_FILE].decode()
    assert text.splitlines()[0] == ",".join(NAMES)
    return list(csv.DictReader(io.StringIO(text)))


def test_a_grown_lab_gives_a_work_order_of_adds_by_rack_and_u() -> None:
    diff = diff_outputs(outputs_of(built("lab"), "lab"), outputs_of(_grown_lab(), "lab-5-leaves"))
    assert not diff.disruptive
    rows = _csv_rows(diff)
    actions = [r["action"] for r in rows]
    assert actions.count("add-cable") == 4 and actions.count("rack-device") == 3 and len(rows) == 7
    assert {r["device"] for r in rows if r["action"] == "rack-device"} == {"srv9", "srv10", "leaf5"}
    known = next(r for r in rows if r["device"] == "leaf5" and r["port"] == "swp63")
    assert known["action"] == "add-cable" and known["peer_device"] == "spine1" and known["peer_port"] == "swp5"
    assert (known["rack"], known["u"], known["peer_rack"], known["peer_u"]) == ("A04", "1", "A02", "5")
    assert known["cable_id"] == "compute-0019" and known["part"] and float(known["length_m"]) > 0
    assert known["label"].startswith("compute-0019 A04-U01 leaf5 swp63")
    assert known["peer_label"].startswith("compute-0019 A02-U05 spine1 swp5")
    keys = [(r["rack"], int(r["u"])) for r in rows]
    assert keys == sorted(keys)  # by rack and U
    srv9 = [r["action"] for r in rows if r["device"] == "srv9"]
    assert srv9 == ["rack-device", "add-cable"]  # the device before its cables


def test_the_workbook_reads_back_as_the_csv() -> None:
    diff = diff_outputs(outputs_of(built("lab"), "lab"), outputs_of(_grown_lab(), "lab-5-leaves"))
    files = work_order(diff)
    book = openpyxl.load_workbook(io.BytesIO(files[XLSX_FILE]), read_only=True)
    assert book.sheetnames == ["work order"]
    cells = list(book["work order"].iter_rows(values_only=True))
    assert cells[0] == NAMES
    expected = _csv_rows(diff)
    assert len(cells) - 1 == len(expected) == 7
    for got, want in zip(cells[1:], expected, strict=True):
        row = dict(zip(NAMES, got, strict=True))
        assert (row["action"], row["rack"], row["device"], row["port"] or "") == (
            want["action"],
            want["rack"],
            want["device"],
            want["port"],
        )
        assert isinstance(row["u"], int)
        if want["length_m"]:
            assert row["length_m"] == float(want["length_m"])  # a number, to sum per rack
    assert work_order(diff)[XLSX_FILE] == files[XLSX_FILE]  # the same diff, the same bytes


def test_a_removal_is_cables_off_before_the_device_leaves() -> None:
    big, small = build_fabric(GROWTH / "lab-5-leaves.yaml"), built("lab")
    diff = diff_outputs(outputs_of(big, "big"), outputs_of(small, "small"))
    rows = _csv_rows(diff)
    assert [r["action"] for r in rows].count("remove-cable") == 4
    assert [(r["action"], r["device"]) for r in rows if r["device"] == "leaf5"] == [
        ("remove-cable", "leaf5"),
        ("remove-cable", "leaf5"),
        ("unrack-device", "leaf5"),
    ]
    assert {r["peer_device"] for r in rows if r["device"] == "leaf5" and r["action"] == "remove-cable"} == {
        "spine1",
        "spine2",
    }


def test_a_move_names_the_end_that_stays_and_both_places_of_the_other() -> None:
    old = built("lab")
    new = build_fabric(grown(old, load_spec(GROWTH / "lab-4-spines.yaml")))
    rows = _csv_rows(diff_outputs(outputs_of(old, "lab"), outputs_of(new, "lab-4-spines")))
    moves = [r for r in rows if r["action"] == "move-cable"]
    assert len(moves) == 8
    first = moves[0]
    assert (first["device"], first["port"], first["peer_device"], first["was_peer_device"]) == (
        "leaf1",
        "swp63",
        "spine3",
        "spine1",
    )
    assert first["was_cable_id"] and first["was_cable_id"] != first["cable_id"]
    assert sum(r["action"] == "rack-device" for r in rows) == 2  # spine3 and spine4


def test_cells_are_formula_safe() -> None:
    header = "cable_id,fabric,a_rack,a_u,a_device,a_port,b_rack,b_u,b_device,b_port,a_label,b_label\n"
    old = Outputs("old", {"cabling.csv": header})
    new = Outputs("new", {"cabling.csv": header + "=HYPERLINK(1),c,A01,1,@leaf,+p1,A01,2,-spine,p1,=l,l\n"})
    (row,) = work_order_rows(diff_outputs(old, new))
    text = work_order(diff_outputs(old, new))[CSV_FILE].decode()
    assert "'=HYPERLINK(1)" in text and "'@leaf" in text and "'+p1" in text and "'-spine" in text
    assert ",=" not in text and ",@" not in text
    assert row[NAMES.index("device")] == "@leaf"  # the guard is the CSV's; the workbook writes strings


def test_the_cli_writes_both_files(tmp_path: Path) -> None:
    out = tmp_path / "wo"
    result = runner.invoke(
        app, ["diff", str(REPO / "designs/lab.yaml"), str(GROWTH / "lab-5-leaves.yaml"), "--work-order", str(out)]
    )
    assert result.exit_code == 0, result.stdout
    assert (out / CSV_FILE).is_file() and (out / XLSX_FILE).is_file()
    assert (out / CSV_FILE).read_text().count("\nadd-cable,") == 4
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "mine.txt").write_text("not fabric's")
    refused = runner.invoke(
        app, ["diff", str(REPO / "designs/lab.yaml"), str(GROWTH / "lab-5-leaves.yaml"), "--work-order", str(plain)]
    )
    assert refused.exit_code == 2 and "output-foreign" in refused.output and "not empty" in refused.output
    assert (plain / "mine.txt").read_text() == "not fabric's"
    # the work order's own directory: a floor lead's notes in its CSV are not replaced by the next diff
    edited = (out / CSV_FILE).read_text() + "# done up to row 3\n"
    (out / CSV_FILE).write_text(edited)
    again = runner.invoke(
        app, ["diff", str(REPO / "designs/lab.yaml"), str(GROWTH / "lab-5-leaves.yaml"), "--work-order", str(out)]
    )
    assert again.exit_code == 2 and "output-modified" in again.output and f"'{CSV_FILE}'" in again.output
    assert (out / CSV_FILE).read_text() == edited
    (out / CSV_FILE).unlink()
    assert (
        runner.invoke(
            app, ["diff", str(REPO / "designs/lab.yaml"), str(GROWTH / "lab-5-leaves.yaml"), "--work-order", str(out)]
        ).exit_code
        == 0
    )
    assert (out / CSV_FILE).read_text().count("\nadd-cable,") == 4
