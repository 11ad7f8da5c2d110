"""Pictures, report, BOM, power and TCO: content, not only that files exist."""

from __future__ import annotations

import csv
import html
import io
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric import render_all, write_outputs
from fabric.costing import costing
from fabric.fast.csvtext import joined as _joined
from fabric.model.topology import Device
from fabric.pipeline import Build
from fabric.render.outputs.diagrams import diagrams, draw, listed
from fabric.render.outputs.diagrams.graph import Diagram
from fabric.render.outputs.diagrams.topology import topology_diagram
from fabric.render.outputs.tables import as_text, csv_pieces, csv_text
from tests.conftest import built, require_tool

DOT_HINT = "Debian: apt-get install graphviz"


def _chrome(chromium: str, driver_path: str, size: str, browser_log: bool = False) -> Any:
    """Debian's headless Chromium through its chromedriver (no browser download), at a window of `size` px."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={size}"):
        options.add_argument(arg)
    if browser_log:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=driver_path), options=options)


def edge_labels(diagram: Diagram) -> tuple[str, ...]:
    return tuple(e.label for e in diagram.edges if e.label)


def _bom(design: str) -> dict[tuple[str, str, str, str], int]:
    lines = costing(built(design)).lines
    return {(line.category, line.model, line.fabric, line.detail): line.count for line in lines}


# --------------------------------------------------------------------------------------------- BOM


def test_4su_compute_bom_is_nvidias() -> None:
    """RA-11333-001 Appendix A, tables 7-8 (4 SU, 127 nodes): 48 QM9700 (32 leaf + 16 spine), 1536 switch-side and
    508 node-side OSFP transceivers (flat top: the DGX H100 cages), 4 UFM system transceivers (980-9I51S-00NS00,
    MMA4Z00-NS400: single-port flat-top OSFP), 2040 NDR 400G cables counted per link (1016 node-leaf + 1024
    leaf-spine) and 4 "NDR Cables, 200 Gbps, UFM to leaf ports" (980-9I557: 1:2 splitter fibre), all multimode."""
    build = built("superpod-h100-4su")
    bom = _bom("superpod-h100-4su")
    assert bom[("switch", "qm9700", "compute", "leaf")] == 32
    assert bom[("switch", "qm9700", "compute", "spine")] == 16
    assert bom[("transceiver", "osfp-2x400g-sr8", "compute", "switch side")] == 1536
    assert bom[("transceiver", "osfp-2x400g-sr8-flat", "compute", "node side")] == 508  # the DGX cages: flat top
    assert bom[("transceiver", "osfp-400g-sr4-flat", "compute", "node side")] == 4  # the UFM appliances
    cables = [line for line in costing(build).lines if line.category == "cable" and line.fabric == "compute"]
    assert sum(line.count for line in cables if line.detail.startswith("mmf-400g")) == 2040
    assert sum(line.count for line in cables if line.detail.startswith("mmf-200g-split")) == 4
    assert {line.detail.split()[0] for line in cables} == {"mmf-400g", "mmf-200g-split"}
    assert {line.model[:7] for line in cables} == {"MFP7E10", "MFP7E20"}
    tiers = [c.link.tier for c in build.allocation.cables if c.link.fabric == "compute" and c.link.speed_gbps == 400]
    assert (tiers.count("node-leaf"), tiers.count("leaf-spine")) == (1016, 1024)
    assert bom[("node", "dgx-h100", "", "8 GPUs")] == 127


def test_bom_csv_totals_and_placeholders() -> None:
    build = built("superpod-h100-4su")
    rows = list(csv.DictReader(io.StringIO(render_all(build)["bom.csv"].decode())))
    assert list(rows[0])[:6] == ["category", "model", "fabric", "count", "unit_price_usd", "total_price_usd"]
    assert {r["category"] for r in rows} <= {"switch", "transceiver", "cable", "nic", "node", "rack", "pdu", "other"}
    for r in rows:
        assert float(r["total_price_usd"]) == pytest.approx(int(r["count"]) * float(r["unit_price_usd"]))
        assert "placeholder" in r["note"]
    c = costing(build)
    assert sum(float(r["total_price_usd"]) for r in rows) == pytest.approx(c.capital_usd)
    racks = next(r for r in rows if r["category"] == "rack")
    assert int(racks["count"]) == len(build.topology.racks) == 40
    assert c.per_gpu_usd == pytest.approx(c.capital_usd / 1016)


def test_dac_links_have_no_transceivers() -> None:
    """roce-512: leaf-spine links within 2 m are DAC; only fibre ends get optics."""
    build = built("roce-512")
    c = costing(build)
    optical = [cb for cb in build.allocation.cables if cb.media_kind in ("mmf", "smf")]
    transceivers = sum(line.count for line in c.lines if line.category == "transceiver")
    # every optical end is in one counted cage; a cage (twin-port) may serve two links
    assert 0 < transceivers <= 2 * len(optical)
    assert not c.unmatched_optics


def test_ends_no_transceiver_fits_are_named_and_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """An end whose cage, medium and speed no transceiver of the catalog fits is named once, and neither its
    cage nor its power is counted; the others' are as before."""
    import fabric.allocation.optics as optics_module
    import fabric.costing as costing_module

    build = built("superpod-h100-4su")
    before = costing_module._costing(build)
    real = optics_module.transceiver_for
    missing = next(c for c in build.allocation.cables if c.media_kind in ("mmf", "smf"))
    speed = missing.link.speed_gbps

    def without(catalog: object, cage: object, kind: str, gbps: int) -> object:
        return None if gbps == speed and kind == missing.media_kind else real(catalog, cage, kind, gbps)  # type: ignore[arg-type]

    monkeypatch.setattr(optics_module, "transceiver_for", without)
    monkeypatch.setattr(optics_module, "_MEMO", {})  # computed afresh with the patched catalog lookup
    after = costing_module._costing(build)
    assert after.unmatched_optics and all(f" {missing.media_kind} {speed}G" in u for u in after.unmatched_optics)
    counted = {line.model: line.count for line in after.lines if line.category == "transceiver"}
    assert 0 < sum(counted.values()) < sum(line.count for line in before.lines if line.category == "transceiver")
    assert sum(r.optics_w for r in after.racks) < sum(r.optics_w for r in before.racks)


def test_power_and_tco() -> None:
    build = built("superpod-h100-4su")
    c = costing(build)
    devices_w = sum(d.power_w for d in build.topology.devices.values())
    assert sum(r.devices_w for r in c.racks) == devices_w
    optics = sum(r.optics_w for r in c.racks)
    # node-side optics of both IB fabrics: DGX twin-port flat (17 W), UFM and storage servers' single-port flat OSFP
    # (9 W, MMA4Z00-NS400 datasheet), DGX storage QSFP112 (9 W)
    assert optics == pytest.approx(508 * 17 + 4 * 9 + 32 * 9 + 254 * 9)
    costs = build.design.spec.costs
    assert len(c.years) == costs.years == 5
    energy = c.power_w / 1000 * costs.load_pct / 100 * costs.pue * 8760 * costs.energy_usd_per_kwh
    assert c.years[1].energy_usd == pytest.approx(energy)
    assert c.years[0].capital_usd == c.capital_usd and c.years[1].capital_usd == 0
    assert c.years[-1].cumulative_usd == pytest.approx(sum(y.total_usd for y in c.years))
    assert c.tco_per_gpu_hour_usd == pytest.approx(c.tco_usd / (1016 * 8760 * 5))
    summary = __import__("json").loads(render_all(build)["summary.json"])
    assert summary["cost"]["tco_usd"] == pytest.approx(c.tco_usd, abs=0.01)
    assert "placeholder" in summary["cost"]["note"]


def test_formulas_are_written_as_text() -> None:
    assert as_text("=cmd|' /C calc'!A0") == "'=cmd|' /C calc'!A0"
    assert [as_text(v) for v in ("+1", "-x", "@sum", "ok", 5, None)] == ["'+1", "'-x", "'@sum", "ok", 5, ""]
    assert csv_text(("a",), [("=1+1",)]) == "a\n'=1+1\n"


CELLS = st.one_of(
    st.none(), st.integers(-5, 5), st.floats(-2, 2, allow_nan=False), st.text(alphabet='=+-@\t\r\n",a1 ', max_size=4)
)


@given(st.lists(st.lists(CELLS, min_size=1, max_size=4), max_size=6))
def test_csv_text_from_a_function_is_the_same_text(rows: list[list[object]]) -> None:
    """The fast path (the table written as it is when no cell could need the apostrophe) changes nothing."""
    columns = ("a", "b", "c", "d")
    assert csv_text(columns, lambda: iter(rows)) == csv_text(columns, iter(rows))


@given(st.lists(st.tuples(CELLS, CELLS, CELLS), max_size=6), st.integers(0, 2))
def test_csv_text_joined_is_the_same_text(rows: list[tuple[object, ...]], width: int) -> None:
    """`plain`'s fast path (cells joined by commas) writes what csv.writer writes, whatever the cells hold."""
    columns = ("a", "b", "c")[: width + 1]
    rows = [r[: width + 1] for r in rows]
    assert csv_text(columns, lambda: iter(rows), plain=True) == csv_text(columns, iter(rows))


@given(st.lists(st.tuples(CELLS, CELLS, CELLS), max_size=9), st.integers(1, 4), st.booleans())
def test_csv_pieces_are_the_text_in_parts(rows: list[tuple[object, ...]], per: int, plain: bool) -> None:
    """A CSV file written as pieces (cabling.csv, cabling-physical.csv) joins to `csv_text`'s text, whichever
    pieces hold a cell that needs the apostrophe or quotes: the header, then a piece per `per` rows."""
    columns = ("a", "b", "c")
    pieces = list(csv_pieces(columns, lambda: iter(rows), plain=plain, per=per))
    assert "".join(pieces) == csv_text(columns, iter(rows))
    assert pieces[0] == "a,b,c\n" and len(pieces) == 1 + -(-len(rows) // per)


def test_csv_pieces_make_a_formula_safe_only_where_it_is() -> None:
    rows = [("x", "1"), ("y", "2"), ("-3", "z"), ("w", "4")]
    pieces = list(csv_pieces(("a", "b"), lambda: iter(rows), plain=True, per=2))
    assert pieces == ["a,b\n", "x,1\ny,2\n", "'-3,z\nw,4\n"]


def test_csv_text_joins_plain_rows() -> None:
    rows = [("x", 1, 2.5, ""), ("y-1", "", 3, "z")]
    assert _joined(("a", "b", "c", "d"), rows) == "a,b,c,d\nx,1,2.5,\ny-1,,3,z\n"
    # a row's first cell that could be a formula is found from the rows' first characters (a cell after a comma
    # from the text)
    assert csv_text(("a", "b"), lambda: iter([("x", "y"), ("-1", "z")]), plain=True) == "a,b\nx,y\n'-1,z\n"
    assert csv_text(("a", "b"), lambda: iter([("x", "-y")]), plain=True) == "a,b\nx,'-y\n"
    assert [_joined(("a", "b"), [bad]) for bad in (("x", None), ("x,y", ""), ('"', ""), ("x\ny", ""), ("x",))] == [
        None
    ] * 5


# --------------------------------------------------------------------------------------------- diagrams (sources)


def test_large_fabric_is_aggregated_the_superpod_way() -> None:
    build = built("superpod-h100-4su")
    d = topology_diagram(build, "compute", detailed=False)
    labels = {b.label.split("\n")[0]: b.label for b in d.boxes}
    assert labels["spines"] == "spines\n16 × qm9700"
    assert [f"SU{i} leaves" in labels for i in (1, 2, 3, 4)] == [True] * 4
    assert "8 × qm9700" in labels["SU4 leaves"]
    assert "32 × dgx-h100\ndgx096–dgx127" in labels["SU4 gpu"]
    assert "31 × dgx-h100\ndgx001–dgx031" in labels["SU1 gpu"]  # SU 1's 32nd slot: the UFM appliances
    assert sorted(edge_labels(d)).count("256 × 400G = 102.4T") == 4 + 3  # leaf-spine per SU, full SUs' node links
    assert "248 × 400G = 99.2T" in edge_labels(d) and "4 × 200G = 800G" in edge_labels(d)


def test_small_fabric_is_detailed() -> None:
    build = built("lab")
    [topo] = [d for d in diagrams(build, ("topology",)) if d.name == "topology-fabric"] or diagrams(
        build, ("topology",)
    )
    names = {b.label.split("\n")[0] for b in topo.boxes}
    assert {"spine1", "spine2", "leaf1", "leaf4"} <= names


def test_a_100k_style_fabric_fits_one_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Layers with many groups fold their middle into one box, link totals kept (6 SUs, at most 4 drawn)."""
    import fabric.render.outputs.diagrams.topology as topology

    monkeypatch.setattr(topology, "MAX_GROUPS", 4)
    build = built("lab-ib-3tier")
    d = topology_diagram(build, "compute", detailed=False)
    assert len(d.boxes) <= 4 * 3 + 1
    assert any(b.label.startswith("… ") for b in d.boxes)
    total = 0
    for label in edge_labels(d):
        match = re.match(r"([\d,]+) × ", label)
        total += int(match.group(1).replace(",", "")) if match else 1
    assert total == len(build.topology.fabrics["compute"].links)


def test_without_dot_only_sources() -> None:
    items = draw(diagrams(built("lab")), with_dot=False)
    assert items and all(i.svg is None and i.png is None and i.dot.startswith(("graph", "strict")) for i in items)


# --------------------------------------------------------------------------------------------- laid out by dot


@pytest.mark.real
def test_diagrams_laid_out_by_dot() -> None:
    require_tool("dot", DOT_HINT)
    files = render_all(built("superpod-h100-4su"))
    names = sorted(n for n in files if n.startswith("diagrams/"))
    for view in ("topology-compute", "topology-storage", "topology-inband", "topology-oob", "rails-compute", "floor"):
        assert {f"diagrams/{view}.{ext}" for ext in ("dot", "svg", "png")} <= set(names)

    def text(name: str) -> str:  # graphviz writes `-` as &#45;
        return html.unescape(files[name].decode())

    topo = text("diagrams/topology-compute.svg")
    assert "SU1 leaves" in topo and "256 × 400G = 102.4T" in topo and "Generated by graphviz" not in topo
    assert files["diagrams/topology-compute.png"].startswith(b"\x89PNG")
    row_a = text("diagrams/racks/row-A.svg")
    assert all(f"dgx{i:03d}" in row_a for i in range(1, 41))
    assert "45 kW" in row_a
    row_d = text("diagrams/racks/row-D.svg")
    assert "spine16" in row_d and "qm9700" in row_d
    floor = text("diagrams/floor.svg")
    assert all(rack in floor for rack in build_racks("superpod-h100-4su"))
    assert "SU1" in floor and "compute" in floor and "network" in floor
    rails = text("diagrams/rails-compute.svg")
    assert "su4-rail7-leaf" in rails and "rail 7: 128 × 400G" in rails


def build_racks(design: str) -> list[str]:
    return list(built(design).topology.racks)


@pytest.mark.real
def test_same_spec_same_pictures() -> None:
    require_tool("dot", DOT_HINT)
    from fabric import build_fabric
    from tests.conftest import REPO  # type: ignore[attr-defined]

    one = render_all(build_fabric(REPO / "designs" / "lab.yaml"))
    two = render_all(build_fabric(REPO / "designs" / "lab.yaml"))
    assert [k for k in one if k.startswith("diagrams/")] and one == two


# --------------------------------------------------------------------------------------------- report in Chromium


def _screenshot_colours(png: bytes) -> int:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return len(image.resize((200, 150)).getcolors(maxcolors=200 * 150) or [])


@pytest.mark.real
def test_report_in_headless_chromium(tmp_path: Path) -> None:
    require_tool("dot", DOT_HINT)
    chromium = require_tool("chromium", "Debian: apt-get install chromium")
    driver_path = require_tool("chromedriver", "Debian: apt-get install chromium-driver")
    from selenium.webdriver.common.by import By

    build = built("superpod-h100-4su")
    out = write_outputs(render_all(build), tmp_path / "out", build.name)
    report = Path(out) / "report.html"
    html = report.read_text()
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html  # no fetches
    known = build.allocation.cables[1500]

    driver = _chrome(chromium, driver_path, "1600,1200", browser_log=True)
    try:
        driver.get(report.as_uri())
        figures = driver.find_elements(By.CSS_SELECTOR, "figure.diagram")
        expected = [n for n in render_all(build) if n.startswith("diagrams/") and n.endswith(".svg")]
        assert len(figures) == len(expected) > 8
        for figure in figures:
            svg = figure.find_element(By.TAG_NAME, "svg")
            assert svg.size["width"] > 50 and svg.size["height"] > 50, figure.get_attribute("data-name")
            assert len(figure.find_elements(By.CSS_SELECTOR, "svg g.node")) >= 1
        rows = driver.find_elements(By.CSS_SELECTOR, "#cabling-table tbody tr")
        assert len(rows) == 200  # one page, not 3,226 rows
        box = driver.find_element(By.ID, "cabling-search")
        box.send_keys(known.cable_id)
        rows = driver.find_elements(By.CSS_SELECTOR, "#cabling-table tbody tr")
        assert len(rows) == 1 and rows[0].find_elements(By.TAG_NAME, "td")[0].text == known.cable_id
        assert known.link.a in rows[0].text and known.link.b in rows[0].text
        shot = driver.get_screenshot_as_png()
        (tmp_path / "report.png").write_bytes(shot)
        assert _screenshot_colours(shot) > 20  # not blank (one colour)
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
    finally:
        driver.quit()


def test_report_md_has_the_content() -> None:
    build = built("superpod-h100-4su")
    text = render_all(build)["report.md"].decode()
    assert "| switch | qm9700 | compute | 32 | leaf |" in text
    assert "| transceiver | osfp-2x400g-sr8 | compute | 1,536 | switch side |" in text
    assert "placeholder" in text and "](diagrams/topology-compute.svg)" in text
    assert text.count("| 5 |") >= 1 and "cumulative" in text


# --------------------------------------------------------------------------------------------- workbook


@pytest.mark.slow
def test_cabling_workbook() -> None:
    import openpyxl

    build = built("superpod-h100-4su")
    data = render_all(build)["cabling.xlsx"]
    book = openpyxl.load_workbook(io.BytesIO(data))
    assert book.sheetnames == ["summary", "compute", "storage", "inband", "oob", "labels", "physical"]
    per_fabric = {
        key: sum(1 for c in build.allocation.cables if c.link.fabric == key) for key in build.topology.fabrics
    }
    for key, count in per_fabric.items():
        sheet = book[key]
        assert sheet.freeze_panes == "A2"
        assert sheet.auto_filter.ref == f"A1:X{count + 1}"  # 18 columns, then the six cage columns
        assert sheet.max_row == count + 1
        header = [c.value for c in sheet[1]]
        assert header[:2] == ["cable_id", "tier"] and header[16:18] == ["a_label", "b_label"]
        assert header[18:] == ["a_cage", "a_cage_port", "a_cage_lanes", "b_cage", "b_cage_port", "b_cage_lanes"]
        order = [(r[4] or "~", r[5] or 0) for r in sheet.iter_rows(min_row=2, values_only=True)]
        assert order == sorted(order)  # by rack and U
        assert sheet.column_dimensions["Q"].width >= 60
    assert book["compute"].max_row == 2044 + 1
    labels_sheet = book["labels"]
    assert labels_sheet.max_row == 2 * len(build.allocation.cables) + 1
    first = build.allocation.cables[0]
    label_rows = {(r[0], r[1]): r[6] for r in labels_sheet.iter_rows(min_row=2, values_only=True)}
    assert (label_rows[(first.cable_id, "A")], label_rows[(first.cable_id, "B")]) == first.labels()
    summary = list(book["summary"].iter_rows(min_row=2, values_only=True))
    assert summary[-1] == ("total", None, None, len(build.allocation.cables))
    physical = book["physical"]  # cabling-physical.csv's rows: one per physical cable, the BOM's count
    sheet_rows = list(physical.iter_rows(values_only=True))
    assert sheet_rows[0][:2] == ("physical_id", "fabric") and sheet_rows[0][-1] == "b_label"
    assert len(sheet_rows) - 1 == sum(line.count for line in costing(build).lines if line.category == "cable")
    assert len(sheet_rows) - 1 == len(build.allocation.cables)  # 4-SU: no twin-port copper, no 800G fibre pairs
    formulas = [c for s in book.worksheets for row in s.iter_rows() for c in row if c.data_type == "f"]
    assert formulas == []


def test_workbook_writes_formula_like_text_as_text() -> None:
    import openpyxl
    import xlsxwriter

    from fabric.render.outputs.workbook import _write

    out = io.BytesIO()
    book = xlsxwriter.Workbook(out, {"constant_memory": True, "strings_to_formulas": False})
    sheet = book.add_worksheet("t")
    _write(sheet, 0, ['=HYPERLINK("x")', "+1", "-2", "@a", 3])
    book.close()
    row = next(openpyxl.load_workbook(io.BytesIO(out.getvalue()))["t"].iter_rows())
    assert [c.data_type for c in row] == ["s", "s", "s", "s", "n"]
    assert row[0].value == '=HYPERLINK("x")'


# --------------------------------------------------------------------------------------------- rack layout


def test_superpod_layout_puts_each_sus_leaves_by_its_nodes() -> None:
    """racks.layout: superpod (opt-in): same fabric, the SU's leaves of every fabric in a network rack right beside
    its nodes' racks in one row, spines in central racks; node-leaf cables get shorter (in-band and BMC ones too)."""
    from fabric import build_fabric
    from tests.conftest import REPO

    text = (REPO / "designs/superpod-h100-4su.yaml").read_text()
    text = text.replace("power_kw: 45}", "power_kw: 45, layout: superpod}", 1)
    assert "layout: superpod" in text
    from fabric import load_spec_text

    build = build_fabric(load_spec_text(text, base_dir=REPO / "designs"))
    default = built("superpod-h100-4su")
    assert not build.errors
    assert build.figures["compute"].links == default.figures["compute"].links
    assert build.figures["compute"].switches == default.figures["compute"].switches
    devices, racks = build.topology.devices, build.topology.racks
    network: set[str] = set()
    for su in (1, 2, 3, 4):
        leaf_racks = {devices[f"su{su}-rail{r}-leaf"].rack for r in range(8)}
        assert len(leaf_racks) == 1
        leaf_rack = racks[leaf_racks.pop() or ""]
        network.add(leaf_rack.name)
        node_racks = [
            racks[devices[c.link.a].rack or ""]
            for c in build.allocation.cables
            if c.link.b.startswith(f"su{su}-rail0") and c.link.a.startswith("dgx")
        ]
        assert {r.row for r in node_racks} == {leaf_rack.row}  # the SU's racks in one row
        positions = sorted({r.position for r in node_racks})
        assert positions == list(range(positions[0], positions[-1] + 1))
        assert leaf_rack.position in (positions[0] - 1, positions[-1] + 1)  # the network rack beside them
    # the in-band and out-of-band leaves most of whose ports serve DGX stand in the SUs' network racks (one
    # out-of-band leaf serves mostly the central racks: the head nodes, storage servers and spines)
    for fabric, count in (("inband", 8), ("oob", 4)):
        served: dict[str, list[str]] = {}
        for link in build.topology.fabrics[fabric].links:
            if link.tier == "node-leaf":
                served.setdefault(link.b, []).append(link.a)
        dgx = [leaf for leaf, ends in served.items() if sum(e.startswith("dgx") for e in ends) * 2 > len(ends)]
        assert len(dgx) == count and {devices[leaf].rack for leaf in dgx} <= network, fabric
    assert devices["spine01"].rack not in network and devices["spine01"].rack != devices["dgx001"].rack

    def node_leaf(b: object, fabric: str) -> list[float]:
        return [c.length_m or 0 for c in b.allocation.cables if c.link.fabric == fabric and c.link.tier == "node-leaf"]  # type: ignore[attr-defined]

    for fabric in ("compute", "inband", "oob"):
        assert sum(node_leaf(build, fabric)) < sum(node_leaf(default, fabric)), fabric
        assert max(node_leaf(build, fabric)) < max(node_leaf(default, fabric)), fabric


def test_floor_plan_wraps_long_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    import fabric.render.outputs.diagrams.racks as racks

    build = built("superpod-h100-4su")  # 4 rows of 10 racks
    monkeypatch.setattr(racks, "FLOOR_WRAP", 4)
    label = racks.floor_diagram(build).boxes[0].label
    assert label.count("<TR>") == 4 * 3 + 1  # 3 lines per row, and the legend
    assert "row A<BR/>1–4" in label and "row D<BR/>9–10" in label
    assert all(f"<B>{rack}</B>" in label for rack in build.topology.racks)
    assert label.count("<BR/>compute<BR/>") == sum(1 for r in build.topology.racks if r[0] in "ABC") + 2  # D01, D02


@pytest.mark.parametrize("design", ["lab", "lab-mlag", "lab-ib-3tier", "superpod-h100-2su", "sonic-th5-512"])
def test_adjacency_keeps_the_graphs_orders(design: str) -> None:
    """The pictures read the fabric through diagrams/adjacency.py: the same nodes, layers and edge order as
    the networkx graph (they fix the bytes of the .dot sources), without building it."""
    from fabric.render.outputs.diagrams.adjacency import adjacency

    build = built(design)
    checked = 0
    for ft in build.topology.fabrics.values():
        graph, adj = ft.graph, adjacency(ft)
        assert list(adj.layers.items()) == [(n, graph.nodes[n]["layer"]) for n in graph.nodes]
        assert [id(link) for link in adj.edges()] == [id(link) for _, _, link in graph.edges(data="link")]
        for name in list(graph.nodes)[:: max(1, len(graph) // 40)]:
            expected = [(o, id(link)) for _, o, link in graph.edges(name, data="link")]
            assert [(o, id(link)) for o, link in adj.edges_of(name)] == expected
        checked += graph.number_of_edges()
    assert checked >= 8


def test_report_md_lists_the_pictures_as_they_are_drawn() -> None:
    # report.md names and titles the pictures without drawing them: the same list, in the same order
    from fabric.render.outputs.diagrams import listed

    compared = 0
    for design in ("lab", "lab-dual", "lab-ib-3tier", "superpod-h100-2su", "roce-512"):
        build = built(design)
        drawn_list = [(d.name, d.title) for d in diagrams(build)]
        assert [(item.name, item.title) for item in listed(build)] == drawn_list, design
        compared += len(drawn_list)
    assert compared >= 20


# --------------------------------------------------------------------------------------------- NVL72 racks


def _nvl72_variant(old: str, new: str) -> Build:
    from fabric.pipeline import build_fabric
    from fabric.spec.loader import load_spec_text
    from tests.conftest import DESIGNS

    text = (DESIGNS / "gb200-nvl72-1su.yaml").read_text(encoding="utf-8")
    assert old in text
    return build_fabric(load_spec_text(text.replace(old, new), "variant.yaml", DESIGNS))


def test_nvl72_elevation_draws_the_rack_systems_parts() -> None:
    from fabric.render.outputs.diagrams import racks

    build = built("gb200-nvl72-1su")
    contents: dict[str, list[Device]] = {}
    for d in build.topology.devices.values():
        contents.setdefault(d.rack or "", []).append(d)
    drawn, missing = racks._units(build, contents["A01"])
    assert missing == 0
    kinds = Counter(u.model for u in drawn)
    assert kinds == {"dgx-gb200-tray": 18, "NVLink switch tray": 9, "power shelf": 8, "sn2201": 2}
    taken = [v for u in drawn for v in range(u.u, u.u + u.height)]
    assert len(taken) == len(set(taken)) and max(taken) <= 48  # no two in one unit, all in the rack
    switch_trays = sorted(u.u for u in drawn if u.model == "NVLink switch tray")
    assert switch_trays == list(range(19, 28))  # right above the 18 compute trays
    assert sorted(u.u for u in drawn if u.model == "sn2201") == [47, 48]
    (page, *_) = racks.elevation_diagrams(build)
    a01_power = next(r.total_w for r in costing(build).racks if r.rack == "A01")
    assert 132_000 <= a01_power <= 135_000  # 18 trays' share of 132 kW, and their in-band optics
    label = {b.id: b.label for b in page.boxes}
    a01 = label["r_A01"]
    assert (
        "DGX GB200 NVL72, liquid-cooled" in a01
        and "rack up to 132 kW [unverified]" in a01
        and f"{a01_power / 1000:.1f} / 135 kW" in a01
    )
    assert all(f"<B>nvswitch-tray{i}</B>" in a01 for i in range(1, 10)) and "<B>mgmt-switch2</B> sn2201" in a01
    assert "nvswitch" not in racks._elevation(build, "B03", contents["B03"], 1.0, 2.0)  # the network rack
    other = built("superpod-h100-4su")  # 8-GPU servers: no system, nothing added
    assert not [
        b for d in racks.elevation_diagrams(other) for b in d.boxes if "nvswitch" in b.label or "cooled" in b.label
    ]
    svg = racks.elevation_svg(build, "t", [("A01", contents["A01"], costing(build).racks[0])]).decode()
    assert svg.count(">nvswitch-tray") == 9 and "power-shelf8 power shelf" in svg and "liquid-cooled" in svg


def test_nvl72_parts_without_room_are_counted() -> None:
    from fabric.render.outputs.diagrams import racks

    build = _nvl72_variant("rack_units: 48", "rack_units: 30")
    a01 = [d for d in build.topology.devices.values() if d.rack == "A01"]
    drawn, missing = racks._units(build, a01)
    assert len(drawn) == 30 and missing == 18 + 9 + 8 + 2 - 30
    assert racks._system_lines(build, a01, missing)[-1] == f"{missing} parts not drawn (no free U)"


def test_floor_plan_marks_liquid_cooled_racks() -> None:
    from fabric.render.outputs.diagrams import racks

    label = racks.floor_diagram(built("gb200-nvl72-1su")).boxes[0].label
    assert label.count("liquid-cooled") == 8  # the 8 NVL72 racks, not the network racks
    assert "cooled" not in racks.floor_diagram(built("superpod-h100-4su")).boxes[0].label


@pytest.mark.real
def test_nvl72_elevation_in_headless_chromium(tmp_path: Path) -> None:
    """The dot-drawn elevation as a browser shows it: every label inside its rack, no two labels overlapping."""
    require_tool("dot", DOT_HINT)
    chromium = require_tool("chromium", "Debian: apt-get install chromium")
    driver_path = require_tool("chromedriver", "Debian: apt-get install chromium-driver")

    files = render_all(built("gb200-nvl72-1su"))
    page = tmp_path / "row-A.svg"
    page.write_bytes(files["diagrams/racks/row-A.svg"])
    driver = _chrome(chromium, driver_path, "2000,1200")
    try:
        driver.get(page.as_uri())
        boxes = driver.execute_script(
            "return [...document.querySelectorAll('g.node')].map(g => { const r = g.getBBox();"
            " return [g.querySelector('title').textContent, [r.x, r.y, r.width, r.height],"
            " [...g.querySelectorAll('text')].map(t => { const b = t.getBBox();"
            " return [t.textContent, b.x, b.y, b.width, b.height]; })]; })"
        )
    finally:
        driver.quit()
    assert len(boxes) == 7  # NVL72 racks A01-A07 (the eighth, the storage and control racks in row B)
    for name, (x, y, w, h), texts in boxes:
        shown = [t[0] for t in texts]
        assert sum(1 for t in shown if t.startswith("nvswitch-tray")) == 9, name
        assert sum(1 for t in shown if t.startswith("power-shelf")) == 8 and "liquid-cooled" in " ".join(shown)
        rects = [(tx, ty, tw, th) for _, tx, ty, tw, th in texts if tw > 0]
        for tx, ty, tw, th in rects:
            assert x - 0.5 <= tx and tx + tw <= x + w + 0.5 and y - 0.5 <= ty and ty + th <= y + h + 0.5, name
        overlaps = [
            (a, b)
            for i, a in enumerate(rects)
            for b in rects[i + 1 :]
            if a[0] < b[0] + b[2] - 0.5
            and b[0] < a[0] + a[2] - 0.5
            and a[1] < b[1] + b[3] - 0.5
            and b[1] < a[1] + a[3] - 0.5
        ]
        assert overlaps == [], (name, overlaps[:3])


# --------------------------------------------------------------------------------------------- readable pictures


def test_topology_switches_are_kept_in_name_order() -> None:
    from fabric.render.outputs.diagrams.dot import to_dot
    from fabric.render.outputs.diagrams.topology import natural_key

    build = built("superpod-h100-4su")
    diagram = topology_diagram(build, "inband", True)
    title = {b.id: b.label.split("\n")[0] for b in diagram.boxes}
    spines, leaves = ([title[i] for i in order] for order in diagram.orders)
    assert leaves == [f"inband-leaf{i:02d}" for i in range(1, 9)] and spines == ["inband-spine01", "inband-spine02"]
    assert sorted(["leaf10", "leaf9", "leaf1"], key=natural_key) == ["leaf1", "leaf9", "leaf10"]
    source = to_dot(diagram)
    assert source.count("[style=invis]") == 7 + 1
    first, second = (source.index(f"{i} [style=invis]") for i in diagram.orders[1][1:3])
    assert first < second
    assert "[style=invis]" not in to_dot(Diagram("x", "t", diagram.boxes, diagram.edges))  # no orders, no chains
    planes = topology_diagram(built("gb300-nvl72-dual-plane"), "compute", True)
    assert len(planes.orders) == 4  # leaves and spines of each plane apart: no chain joins the planes
    plane_of = {b.id: b.label.split("\n")[0][:2] for b in planes.boxes}
    assert all(len({plane_of[i] for i in order}) == 1 for order in planes.orders)


@pytest.mark.real
def test_topology_pictures_in_headless_chromium(tmp_path: Path) -> None:
    """As a browser shows them: leaves left to right in name order, no two edge labels overlapping, and in the
    report one title per drawn picture (its own, not a caption repeating it)."""
    require_tool("dot", DOT_HINT)
    chromium = require_tool("chromium", "Debian: apt-get install chromium")
    driver_path = require_tool("chromedriver", "Debian: apt-get install chromium-driver")
    from selenium.webdriver.common.by import By

    build = built("superpod-h100-4su")
    files = render_all(build)
    out = Path(write_outputs(files, tmp_path / "out", build.name))
    driver = _chrome(chromium, driver_path, "1600,1200")
    script = (
        "const box = e => { const b = e.getBBox(); return [b.x, b.y, b.width, b.height]; };"
        "return [[...document.querySelectorAll('g.node')].map(g => [g.querySelector('text').textContent, box(g)]),"
        " [...document.querySelectorAll('g.edge text')].map(t => [t.textContent, box(t)])];"
    )
    try:
        for view in ("inband", "oob", "storage"):
            driver.get((out / "diagrams" / f"topology-{view}.svg").as_uri())
            nodes, labels = driver.execute_script(script)
            leaves = [(b[0], name) for name, b in nodes if "leaf" in name]
            assert len(leaves) >= 2 and [n for _, n in sorted(leaves)] == sorted(n for _, n in leaves), view
            assert len(labels) > 4
            hits = [
                (a[0], b[0])
                for i, a in enumerate(labels)
                for b in labels[i + 1 :]
                if a[1][0] < b[1][0] + b[1][2]
                and b[1][0] < a[1][0] + a[1][2]
                and a[1][1] < b[1][1] + b[1][3]
                and b[1][1] < a[1][1] + a[1][3]
            ]
            assert hits == [], (view, hits[:3])
        driver.get((out / "report.html").as_uri())
        figures = driver.find_elements(By.CSS_SELECTOR, "figure.diagram")
        assert len(figures) > 8
        for figure in figures:
            caption = figure.find_element(By.TAG_NAME, "figcaption").text
            own = figure.find_elements(By.CSS_SELECTOR, "svg > g > text")
            assert own and own[0].text and own[0].text not in caption, caption
    finally:
        driver.quit()


# --------------------------------------------------------------------------------------------- wide pictures fold


def test_wide_detailed_picture_draws_its_switches_in_runs() -> None:
    """The storage fabric of the 1,016-GPU SuperPOD: 12 switches (detailed), but one box each is ~3,500 pt wide;
    drawn in runs of consecutive leaves and spines it fits the report's width, every link still counted."""
    from fabric.render.outputs.diagrams.topology import estimated_width

    build = built("superpod-h100-4su")
    width = build.design.spec.diagrams.width_pt
    [d] = [d for d in diagrams(build, ("topology",)) if d.name == "topology-storage"]
    titles = [b.label.split("\n")[0] for b in d.boxes]
    assert titles[:4] == [
        "storage-spine01–storage-spine02 (2)",
        "storage-spine03–storage-spine04 (2)",
        "storage-leaf01–storage-leaf04 (4)",
        "storage-leaf05–storage-leaf08 (4)",
    ]
    assert d.title.endswith("· detailed, runs of ≤ 4 switches")
    assert "56 × 400G = 22.4T" in edge_labels(d)  # spine01–02 to leaf01–04: 2 × 4 × 7 links
    total = sum(int(m.group(1).replace(",", "")) for m in (re.match(r"([\d,]+) × ", x) for x in edge_labels(d)) if m)
    assert total == len(build.topology.fabrics["storage"].links)
    nodes = {b.label.split("\n")[2] for b in d.boxes if b.label.startswith("gpu")}
    assert nodes == {"dgx001–dgx072", "dgx073–dgx127"}  # grouped by the runs they land on
    assert estimated_width(d) <= width < estimated_width(topology_diagram(build, "storage", True))
    listed_titles = {item.name: item.title for item in listed(build)}
    assert listed_titles["topology-storage"] == d.title  # report.md names the picture as drawn


def test_narrow_detailed_picture_keeps_a_box_per_switch() -> None:
    build = built("lab")
    [d] = [d for d in diagrams(build, ("topology",)) if d.name == "topology-compute"]
    names = [b.label.split("\n")[0] for b in d.boxes if "–" not in b.label.split("\n")[0]]
    assert {"spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4"} <= set(names)
    assert d.title.endswith("· detailed") and not any("(" in n for n in names)


def test_asked_for_detailed_is_never_folded() -> None:
    build = built("superpod-h100-4su")
    spec = build.design.spec
    asked = spec.model_copy(update={"diagrams": spec.diagrams.model_copy(update={"topology": "detailed"})})
    from dataclasses import replace

    build2 = replace(build, design=replace(build.design, spec=asked))
    [d] = [d for d in diagrams(build2, ("topology",)) if d.name == "topology-storage"]
    assert len([b for b in d.boxes if b.label.startswith("storage-")]) == 12 and d.title.endswith("· detailed")


@pytest.mark.real
def test_wide_pictures_fit_the_report_width_as_dot_lays_them_out() -> None:
    require_tool("dot", DOT_HINT)
    from fabric.render.outputs.diagrams.dot import layout, to_dot

    def width_pt(diagram: Diagram) -> int:
        svg = layout(to_dot(diagram), "svg")
        return int(re.search(rb'<svg width="(\d+)pt"', svg).group(1))  # type: ignore[union-attr]

    build = built("superpod-h100-4su")
    limit = build.design.spec.diagrams.width_pt
    drawn = {d.name: d for d in diagrams(build, ("topology",))}
    for key in ("storage", "inband", "oob"):
        assert width_pt(drawn[f"topology-{key}"]) <= limit, key
    assert width_pt(topology_diagram(build, "storage", True)) > 3 * limit  # a box per switch: 3,505 pt


def test_row_elevations_wrap_into_lines_that_fit_the_width() -> None:
    from fabric.costing import costing
    from fabric.render.outputs.diagrams import racks

    build = built("superpod-h100-4su")
    [row_a] = [d for d in diagrams(build, ("racks",)) if d.name == "racks/row-A"]
    assert [len(line) for line in row_a.ranks] == [5, 5]  # 10 racks of 211 pt: 5 a line of 1,100 pt
    assert [i for line in row_a.ranks for i in line] == [b.id for b in row_a.boxes]  # in rack order
    assert len(row_a.edges) == 1 and row_a.edges[0].attrs == {"style": "invis"}  # the second line below the first
    [lab] = [d for d in diagrams(built("lab"), ("racks",)) if d.name == "racks/row-A"]
    assert len(lab.ranks) == 1 and not lab.edges and not lab.orders  # two racks: one line, as before
    contents = racks._by_rack(build)
    power = {r.rack: r for r in costing(build).racks}
    page = [(n, contents.get(n, []), power[n]) for n in build_racks("superpod-h100-4su")[:10]]

    def size(svg: bytes) -> tuple[int, int]:
        w, h = re.search(rb'width="(\d+)pt" height="(\d+)pt"', svg).groups()  # type: ignore[union-attr]
        return int(w), int(h)

    wrapped, one_line = size(racks.elevation_svg(build, "t", page, 5)), size(racks.elevation_svg(build, "t", page))
    assert wrapped[0] <= build.design.spec.diagrams.width_pt < one_line[0]
    assert wrapped[1] > one_line[1]
    text = racks.elevation_svg(build, "t", page, 5).decode()
    assert all(f"<title>{name}</title>" in text for name, _, _ in page)


@pytest.mark.real
def test_row_elevations_fit_the_width_as_dot_lays_them_out() -> None:
    require_tool("dot", DOT_HINT)
    from fabric.render.outputs.diagrams.dot import layout, to_dot

    for design in ("superpod-h100-4su", "gb200-nvl72-1su"):
        build = built(design)
        limit = build.design.spec.diagrams.width_pt
        pages = diagrams(build, ("racks",))
        assert len(pages) >= 2
        for page in pages:
            svg = layout(to_dot(page), "svg")
            width = int(re.search(rb'<svg width="(\d+)pt"', svg).group(1))  # type: ignore[union-attr]
            assert width <= limit, (design, page.name, width)
    one_line = diagrams(built("superpod-h100-4su"), ("racks",))[0]
    flat = Diagram(one_line.name, one_line.title, one_line.boxes, ranks=(tuple(b.id for b in one_line.boxes),))
    assert int(re.search(rb'<svg width="(\d+)pt"', layout(to_dot(flat), "svg")).group(1)) > 2000  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------------- BOM: rack systems


def test_bom_lists_an_nvl72_rack_as_one_system_with_its_parts() -> None:
    build = built("gb200-nvl72-1su")
    lines = costing(build).lines
    categories = [line.category for line in lines]
    at = categories.index("system")
    assert categories[at - 1 : at + 4] == ["node", "system", "system-part", "system-part", "system-part"]
    node, system, *parts = lines[at - 1 : at + 4]
    assert (node.model, node.count) == ("dgx-gb200-tray", 144)
    assert (system.model, system.count, system.total_usd) == ("DGX GB200 NVL72", 8, 0.0)  # 8 racks, in the trays
    assert "18 × dgx-gb200-tray" in system.detail and "132 kW [unverified]" in system.detail
    assert [(p.model, p.count) for p in parts] == [("nvlink-switch-tray", 72), ("power-shelf", 64), ("sn2201", 16)]
    assert "[unverified]" in parts[1].description and all(p.total_usd == 0 for p in parts)
    text = render_all(build)["bom.csv"].decode()
    assert text.splitlines()[0].startswith("category,model,fabric,count,unit_price_usd,total_price_usd,detail")
    assert "\nsystem,DGX GB200 NVL72,,8,0.00,0.00," in text
    assert not {"system", "system-part"} & {line.category for line in costing(built("superpod-h100-4su")).lines}


def test_alike_planes_are_drawn_once() -> None:
    """A GB200 NVL72 SU's four compute planes are built the same: the aggregated picture draws plane 1 and says
    so (the four side by side were 3,300 pt wide). The negative case: one leaf–spine link of plane 2 gone, the
    planes differ and all four are drawn."""
    import dataclasses

    from fabric.render.outputs.diagrams.topology import planes_alike, topology_title

    build = built("gb200-nvl72-1su")
    ft = build.topology.fabrics["compute"]
    assert ft.planes == 4 and planes_alike(ft)
    picture = topology_diagram(build, "compute", False)
    assert [c.label for c in picture.clusters] == ["plane 1 (and 3 more, the same)"]
    spines = [b for b in picture.boxes if "spines" in b.label]
    assert [b.label for b in spines] == ["P1 spines\n6 × qm9700"]
    assert sum(int(e.label.split(" ×")[0]) for e in picture.edges if e.a == spines[0].id) == 144  # one plane's uplinks
    assert "plane 1 drawn (the 3 others are the same)" in topology_title(build, "compute", False)

    gone = next(i for i, lk in enumerate(ft.links) if ft.devices[lk.b].layer == "spine" and ft.devices[lk.b].plane == 2)
    changed = dataclasses.replace(ft, links=ft.links[:gone] + ft.links[gone + 1 :])
    object.__setattr__(changed, "devices", ft.devices)
    assert not planes_alike(changed)
    fabrics = {**build.topology.fabrics, "compute": changed}
    other = dataclasses.replace(build, topology=dataclasses.replace(build.topology, fabrics=fabrics))
    drawn = topology_diagram(other, "compute", False)
    assert sorted(c.label for c in drawn.clusters) == ["plane 1", "plane 2", "plane 3", "plane 4"]
    assert "drawn" not in topology_title(other, "compute", False)


def test_planes_with_their_own_gpus_share_one_rails_table() -> None:
    """GB200 NVL72: GPU p of a tray is on plane p, so the rails picture is one table with a column per GPU
    headed by its plane (four tables repeated the SUs and nodes). The negative case: sonic-th5-512's two planes
    carry the same eight GPU indices, so each keeps its own table."""
    from fabric.render.outputs.diagrams.rails import rails_diagram

    one = rails_diagram(built("gb200-nvl72-1su"), "compute")
    assert one is not None
    tables = [b for b in one.boxes if b.html]
    assert [t.id for t in tables] == ["rails"]
    assert [tables[0].label.count(f"plane {p}") for p in (1, 2, 3, 4)] == [1, 1, 1, 1]
    assert sorted(e.b for e in one.edges) == [f"rails:r{r}:n" for r in range(4)]
    two = rails_diagram(built("sonic-th5-512"), "compute")
    assert two is not None
    assert [b.id for b in two.boxes if b.html] == ["rails1", "rails2"]
