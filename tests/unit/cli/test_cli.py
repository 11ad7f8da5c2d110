"""The command line: exit codes, JSON, strict mode, atomic builds, the default design, show, schema."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric import render_all
from fabric.cli import app
from fabric.cli.views.console import console
from fabric.cli.views.spec_reference import spec_reference
from tests.conftest import DESIGNS, REPO, built

runner = CliRunner()
LAB = str(DESIGNS / "lab.yaml")


def test_validate_clean_design_exits_0() -> None:
    result = runner.invoke(app, ["validate", LAB])
    assert result.exit_code == 0
    assert result.output.strip().endswith("lab: 0 error(s), 0 warning(s), 0 note(s)")


def test_validate_json() -> None:
    result = runner.invoke(app, ["validate", "--json", str(REPO / "tests/broken/failure-impact.yaml")])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["design"] == "failure-impact" and data["warnings"] == 1 and data["errors"] == 0
    assert data["findings"][0]["code"] == "failure-impact"
    assert {"severity", "code", "path", "message", "hint", "file", "line"} <= set(data["findings"][0])


def test_validate_json_for_an_invalid_spec_exits_2() -> None:
    result = runner.invoke(app, ["validate", "--json", str(REPO / "tests/errors/unknown-key.yaml")])
    assert result.exit_code == 2
    data = json.loads(result.output)
    assert data["design"] is None and data["findings"][0]["code"] == "spec-unknown-key"


def test_build_writes_every_output(tmp_path: Path) -> None:
    out = tmp_path / "lab"
    result = runner.invoke(app, ["build", LAB, "-o", str(out)])
    assert result.exit_code == 0, result.output
    written = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert written == {*render_all(built("lab")), ".fabric-output", ".fabric-manifest"}  # every output, nothing else
    files = render_all(built("lab"))
    manifest = [line.split("  ", 1) for line in (out / ".fabric-manifest").read_text().splitlines()]
    assert [path for _, path in manifest] == sorted(files)
    assert all(digest == hashlib.sha1(files[path]).hexdigest() for digest, path in manifest)
    assert {"asn-plan.csv", "cabling.csv", "cabling.md", "inventory.csv", "ip-plan.csv", "summary.json"} <= written
    assert sorted(p.name for p in (out / "configs" / "leaf1").iterdir()) == ["frr.conf", "interfaces"]
    assert {"topology-compute.dot", "floor.dot", "racks"} <= {p.name for p in (out / "diagrams").iterdir()}
    assert json.loads((out / "summary.json").read_text())["design"] == "lab"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".lab.")], "staging directories left behind"


def test_build_refuses_with_errors_and_keeps_the_previous_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert runner.invoke(app, ["build", LAB, "-o", str(out)]).exit_code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    result = runner.invoke(app, ["build", str(REPO / "tests/broken/radix.yaml"), "-o", str(out)])
    assert result.exit_code == 1
    assert "nothing was written" in result.output
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_rebuild_replaces_the_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert runner.invoke(app, ["build", LAB, "-o", str(out)]).exit_code == 0
    (out / "stale.txt").write_text("from an older build")  # a file an older build wrote: in its manifest
    listed = (out / ".fabric-manifest").read_text().splitlines(keepends=True)
    stale = f"{hashlib.sha1(b'from an older build').hexdigest()}  stale.txt\n"
    (out / ".fabric-manifest").write_text("".join(sorted([*listed, stale], key=lambda line: line.split("  ", 1)[1])))
    assert runner.invoke(app, ["build", LAB, "-o", str(out)]).exit_code == 0
    assert not (out / "stale.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_rebuild_refuses_a_directory_holding_files_fabric_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert runner.invoke(app, ["build", LAB, "-o", str(out)]).exit_code == 0
    (out / "NOTES.txt").write_text("mine")
    (out / ".git" / "objects").mkdir(parents=True)
    (out / "configs" / "leaf1" / "frr.conf.orig").write_text("my copy")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    result = runner.invoke(app, ["build", LAB, "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert "output-foreign" in result.output
    for name in ("'.git'", "'NOTES.txt'", "'configs/leaf1/frr.conf.orig'"):
        assert name in result.output
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_build_never_replaces_a_foreign_directory(tmp_path: Path) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    result = runner.invoke(app, ["build", LAB, "-o", str(out)])
    assert result.exit_code == 2
    assert "was not written by fabric" in result.output
    assert (out / "thesis.tex").read_text() == "years of work"


@pytest.mark.slow
def test_default_design_builds_into_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["build"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "output/superpod-h100-4su/summary.json").read_text())
    assert summary["fabrics"]["compute"]["switches"] == {"leaf": 32, "spine": 16, "core": 0}
    assert set(summary["fabrics"]) == {"compute", "storage", "inband", "oob"}


def test_show_prints_the_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "220")
    console.cache_clear()  # the console reads COLUMNS when made: another command of this process may have made it
    result = runner.invoke(app, ["show", str(DESIGNS / "superpod-h100-1su.yaml")])
    assert result.exit_code == 0
    text = result.output
    assert "248 GPUs" in text and "12 switches" in text
    row = next(line for line in text.splitlines() if "compute" in line and "infiniband" in line)
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert cells == [
        "compute",
        "infiniband",
        "2",
        "8",
        "4",
        "0",
        "252",
        "256",
        "0",
        "leaf 1:1",
        "50.0 Tb/s (100.0%)",
        "32",
        "76.8% (switch spine01)",
    ]
    assert "mmf-400g" in text


def test_unreadable_yaml_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    result = runner.invoke(app, ["show", str(bad)])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert result.output.startswith(f"error: {bad}:")


def test_spec_reference_is_up_to_date() -> None:
    assert (REPO / "docs/spec/reference.md").read_text() == spec_reference(), (
        "docs/spec/reference.md is stale: run `./dev docs`"
    )


def test_schema_is_json() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    assert json.loads(result.output)["title"] == "Spec"


def test_help_lists_the_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("validate", "build", "show", "schema"):
        assert command in result.output


def test_python_api(tmp_path: Path) -> None:
    from fabric import build_fabric, load_spec, render_all, write_outputs

    build = build_fabric(load_spec(LAB))
    files = render_all(build)
    write_outputs(files, tmp_path / "x", build.name)
    assert (tmp_path / "x" / "cabling.csv").read_bytes() == files["cabling.csv"]
    shutil.rmtree(tmp_path / "x")


def test_diagram_writes_the_views_asked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fabric.render.outputs.diagrams as outputs
    import fabric.render.outputs.diagrams.dot as dot

    monkeypatch.setattr(outputs, "have_dot", lambda: False)  # as on a machine without graphviz
    monkeypatch.setattr(dot, "have_dot", lambda: False)
    result = runner.invoke(app, ["diagram", LAB, "--view", "floor", "--view", "topology", "-o", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == [
        ".fabric-manifest",
        ".fabric-output",
        "floor.dot",
        "topology-compute.dot",
    ]
    assert result.output.count("apt-get install graphviz") == 1
    bad = runner.invoke(app, ["diagram", LAB, "--view", "side"])
    assert bad.exit_code == 2 and "unknown view side" in bad.output


def test_show_prints_the_tco_and_build_is_quiet_off_a_terminal(tmp_path: Path) -> None:
    shown = runner.invoke(app, ["show", LAB])
    assert shown.exit_code == 0, shown.output
    assert "Total cost of ownership, 5 years" in shown.output and "placeholders" in shown.output
    assert "per GPU-hour" not in shown.output  # the lab has no GPUs
    built_ = runner.invoke(app, ["build", LAB, "-o", str(tmp_path / "o")])
    assert built_.exit_code == 0 and "rendering" not in built_.output  # no progress display off a terminal


def test_show_fits_an_80_column_terminal() -> None:
    """Each value whole on an 80-column terminal (the wide Fabrics table collapsed to `fa… te… ti…` there)."""
    import io

    from rich.console import Console

    from fabric.cli.views.summary import fabrics_table, fabrics_tables, job_table, media_table, tco_table
    from fabric.render.outputs.summary import cables_by_media, summary

    def printed(*tables: object) -> str:
        console = Console(width=80, record=True, file=io.StringIO())
        for table in tables:
            console.print(table)
        return console.export_text()

    build = built("superpod-h100-4su")
    data = summary(build)
    tables = fabrics_tables(data, 80)
    assert [len(t.columns) for t in tables] == [3, 2, 2]  # compute and storage side by side, then one a table
    per_fabric = {key: cables_by_media(build, key) for key in build.topology.fabrics}
    text = printed(*tables, media_table(data["cables_by_media"], per_fabric), tco_table(data["cost"], 80))
    assert max(map(len, text.splitlines())) <= 80 and "…" not in text
    assert "203.6 Tb/s (100.0%)" in text and "32 / 16 / 0" in text and "leaf 23:8 (2.36:1 connected)" in text
    assert "million USD" in text and "50.80" in text
    assert "…" in printed(fabrics_table(data))  # the wide table, as it was
    assert len(fabrics_tables(data, 220)) == 1 and len(fabrics_tables(data, 220)[0].columns) == 13
    assert "million" not in printed(tco_table(data["cost"], 220)) and "50,799,710" in printed(tco_table(data["cost"]))
    jobs = summary(built("gb200-nvl72-4su"))["job_bandwidth"]
    text = printed(job_table(jobs))
    assert max(map(len, text.splitlines())) <= 80 and "…" not in text and "p1-pod1-spine01" in text.replace("\n", "")
