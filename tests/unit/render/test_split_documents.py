"""Documents for people above `documents.split_above` cables: per rack (cabling.md) and, opted in, per row of
racks (cabling.xlsx) behind an index, and the report links the tables; here on a design with the threshold lowered."""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

import pytest

from fabric import build_fabric
from fabric.allocation.optics import physical_cables
from fabric.pipeline import Build
from fabric.render.engine.registry import file_bytes
from fabric.render.engine.templating import render_html
from fabric.render.outputs.cabling_md import cabling_md
from fabric.render.outputs.report.content import report_content
from fabric.render.outputs.workbook import workbook_shard
from tests.conftest import REPO


def _split(tmp_path_factory: pytest.TempPathFactory, documents: str) -> Build:
    text = (REPO / "designs" / "superpod-h100-2su.yaml").read_text()
    spec = Path(tmp_path_factory.mktemp("split")) / "split.yaml"
    spec.write_text(text + f"documents: {documents}\n")
    build = build_fabric(spec)
    assert not build.errors and len(build.allocation.cables) > 100
    return build


@pytest.fixture(scope="module")
def split_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    return _split(tmp_path_factory, "{split_above: 100}")


@pytest.fixture(scope="module")
def row_workbooks_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    return _split(tmp_path_factory, "{split_above: 100, row_workbooks: true}")


def test_cabling_md_is_an_index_of_one_file_per_rack(split_build: Build) -> None:
    files = {path: file_bytes(content).decode() for path, content in cabling_md(split_build).items()}
    index = files["cabling.md"]
    racks = {c.a_rack for c in split_build.allocation.cables}
    assert sorted(files) == sorted(["cabling.md", *(f"cabling/{rack}.md" for rack in racks)])
    assert "### Rack" not in index  # no cable rows in the index
    linked = re.findall(r"^\| \[([^]]+)\]\(cabling/([^)]+)\.md\) \| (\d+) \|$", index, re.M)
    assert {rack for rack, file, _ in linked} == racks and all(rack == file for rack, file, _ in linked)
    assert sum(int(n) for _, _, n in linked) == len(split_build.allocation.cables)
    ids: Counter[str] = Counter()
    physical: Counter[str] = Counter()
    for path, text in files.items():
        if path == "cabling.md":
            continue
        table = ids
        for line in text.splitlines():
            if line.startswith(("| cable ", "| physical cable ")):
                table = ids if line.startswith("| cable ") else physical
            elif line.startswith("| ") and not line.startswith("|---"):
                table[line.split(" | ")[0].removeprefix("| ")] += 1
    assert ids == Counter(c.cable_id for c in split_build.allocation.cables)  # every cable once, in its a-end's rack
    # and every physical cable (cabling-physical.csv's rows) once, after the logical rows of its a-end's rack
    sheet = physical_cables(split_build.design.catalog, split_build.topology, split_build.allocation)
    assert physical == Counter(p.physical_id for p in sheet) and sum(physical.values()) == len(sheet) > 0
    assert "[the index](../cabling.md)" in files["cabling/A01.md"]


def test_workbook_is_an_index_of_the_rack_documents_by_default(split_build: Build) -> None:
    import openpyxl

    files = workbook_shard(split_build, 0, 1)
    assert list(files) == ["cabling.xlsx"] and workbook_shard(split_build, 1, 2) == {}
    index = openpyxl.load_workbook(io.BytesIO(files["cabling.xlsx"]))
    assert index.sheetnames == ["summary", "racks"]
    listed = list(index["racks"].iter_rows(min_row=2, values_only=True))
    per_rack = Counter(c.a_rack for c in split_build.allocation.cables)
    assert [(r[1], r[2], r[3]) for r in listed] == [(k, n, f"cabling/{k}.md") for k, n in sorted(per_rack.items())]
    assert [r[0] for r in listed] == [split_build.topology.racks[r[1]].row for r in listed]
    assert set(cabling_md(split_build)) == {"cabling.md", *(r[3] for r in listed)}  # each one a file that exists


def test_workbook_is_an_index_of_one_workbook_per_row(row_workbooks_build: Build) -> None:
    import openpyxl

    split_build = row_workbooks_build
    files = workbook_shard(split_build, 0, 1)
    assert sorted(files) == ["cabling.xlsx", *(f"cabling/row-{row}.xlsx" for row in "ABCD")]
    index = openpyxl.load_workbook(io.BytesIO(files["cabling.xlsx"]))
    assert index.sheetnames == ["summary", "workbooks"]
    listed = list(index["workbooks"].iter_rows(min_row=2, values_only=True))
    assert [r[3] for r in listed] == [f"cabling/row-{row}.xlsx" for row in "ABCD"]
    assert sum(r[2] for r in listed) == len(split_build.allocation.cables)
    seen: list[str] = []
    for row, _, count, path in listed:
        book = openpyxl.load_workbook(io.BytesIO(files[path]))
        assert book.sheetnames[0] == "summary" and book.sheetnames[-1] == "labels"
        ids = [r[0] for s in book.worksheets[1:-1] for r in s.iter_rows(min_row=2, values_only=True)]
        assert len(ids) == count and book["labels"].max_row == 2 * count + 1
        racks = {r[4] for s in book.worksheets[1:-1] for r in s.iter_rows(min_row=2, values_only=True)}
        assert {split_build.topology.racks[r].row for r in racks} == {row}
        seen += ids
    assert sorted(seen) == sorted(c.cable_id for c in split_build.allocation.cables)
    shards = {**workbook_shard(split_build, 0, 2), **workbook_shard(split_build, 1, 2)}
    assert shards == files  # the pool's shards make the same files


def test_report_links_the_tables(split_build: Build) -> None:
    html = render_html("report/report.html.j2", **report_content(split_build, items=[]))
    assert 'id="cabling-data"' not in html and 'id="ip-data"' not in html
    assert 'More than 100 cables: cable by cable in <a href="cabling.md">' in html
    assert f"Cabling ({len(split_build.allocation.cables)} cables)" in html


def test_rack_elevations_are_drawn_without_dot_above_the_split(split_build: Build) -> None:
    import xml.etree.ElementTree as ET

    from fabric.render.outputs.diagrams import draw
    from fabric.render.outputs.diagrams.racks import elevation_diagrams
    from tests.conftest import built

    above = elevation_diagrams(split_build)
    below = elevation_diagrams(built("superpod-h100-2su"))
    assert len(above) == len(below) >= 2
    assert all(d.svg is None and d.png for d in below)
    assert all(d.svg is not None and not d.png for d in above)
    racked = {d.name for d in split_build.topology.devices.values() if d.rack}
    drawn_names: set[str] = set()
    for d in above:
        assert d.svg is not None
        root = ET.fromstring(d.svg)  # well-formed
        groups = root.findall("{http://www.w3.org/2000/svg}g")
        assert len(groups) == len(d.boxes)  # one per rack of the page
        drawn_names |= {t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {n for n in racked if n in drawn_names or any(t.startswith(n + " ") for t in drawn_names)} == racked
    items = draw(above, with_dot=True)  # no dot needed: the pictures are their own SVG, no PNG
    assert [(i.svg, i.png) for i in items] == [(d.svg, None) for d in above]


def test_floor_plan_has_no_png_above_the_split(split_build: Build) -> None:
    from fabric.render.outputs.diagrams.racks import floor_diagram
    from tests.conftest import built

    assert floor_diagram(built("superpod-h100-2su")).png is True
    above = floor_diagram(split_build)
    assert above.png is False and above.svg is None  # still laid out by dot, as SVG


def test_cabling_md_shows_the_physical_cables_of_each_rack() -> None:
    """The technician's document has cabling-physical.csv's rows too, per a-end rack: lab-ib's leaf-spine twin-port
    DAC is one row for two links (cage 31, ports 1/2, lanes 1-4 5-8 at both ends), a fibre row names the modules in
    both cages; gb200-nvl72-1su's converged-fabric 1:2 splitter fibre is one row with a leg to each of two trays."""
    from tests.conftest import built

    text = cabling_md(built("lab-ib"))["cabling.md"]
    assert text.count("#### Physical cables, rack ") == 4
    assert (
        "| compute-0013 | compute-0013 compute-0014 | leaf1 U1 cage 31 port 1/2 lanes 1-4 5-8 |  "
        "| spine1 cage 1 port 1/2 lanes 1-4 5-8 | A04 U5 |  | MCP4Y10-N01A | 1.5 |"
    ) in text
    assert (
        "| compute-0001 |  | node01 U1 cage ib0 port 1 lanes 1-4 | MMA4Z00-NS400 | leaf1 cage 1 port 1 lanes 1-4 "
        "| A04 U1 "
        "| MMA4Z00-NS | MFP7E10-N010 | 10 |"
    ) in text
    physical_rows = [line for line in text.splitlines() if re.match(r"\| compute-\d+ \| (compute-| \| \w+ U)", line)]
    assert len(physical_rows) == 12 + 8  # 12 node links on fibre, 16 leaf-spine links on 8 twin-port DACs
    gb = cabling_md(built("gb200-nvl72-1su"))["cabling.md"]
    assert re.search(
        r"\| converged-0001 \| converged-0001 converged-0002 \| gb001 U1 cage LBF3-P2 port 1 lanes 1-2; "
        r"gb002 U2 cage LBF3-P2 port 1 lanes 1-2 "
        r"\| MMA1Z00-NS400 \| converged-leaf01 cage 1 port 1/2 lanes 1-2 3-4 \| B06 U1 \| MMA4Z00-NS \| "
        r"MFP7E20-N\d+ \|",
        gb,
    )
