"""The report's job chart (fabric/render/outputs/report/content.py `_jobs`): per job size the worst bisection and,
per collective pattern, a bar per routing whose width is the mean % of the NIC rate per GPU, from the same
summary.json `traffic` rows `fabric traffic` prints. The negative case: a design with no job table has no chart."""

from __future__ import annotations

from fabric.render.outputs.report.content import _jobs, report_content
from fabric.render.outputs.summary import summary
from tests.conftest import built


def test_the_superpods_chart_shows_ecmp_below_the_ideal_for_shift() -> None:
    build = built("superpod-h100-4su")
    jobs = report_content(build, items=[])["jobs"]
    table = summary(build)["job_bandwidth"]
    assert jobs["fabric"] == "compute"
    assert jobs["patterns"] == ["all-reduce", "all-to-all", "shift"]
    assert jobs["routings"] == ["ECMP, 1 QP", "ECMP, 4 QPs", "ideal (adaptive)"]
    assert [r["nodes"] for r in jobs["rows"]] == [f"{j['nodes']:,}" for j in table["jobs"]]
    last = jobs["rows"][-1]
    assert last["gpus"] == "1,016"
    shift = last["cells"][2]
    expected = [t for t in table["jobs"][-1]["traffic"] if t["pattern"] == "shift"]
    assert len(shift) == len(expected) == 3
    assert [b["width"] for b in shift] == [f"{t['mean_pct']:.1f}" for t in expected]
    assert float(shift[0]["width"]) < 60 < 99 < float(shift[2]["width"])  # ECMP 1 QP well below the ideal
    assert jobs["rows"][0]["text"] == ["-", "-", "-"]  # one node: no traffic on the fabric


def test_no_job_table_no_chart() -> None:
    """A design with no scheduler fabric has no job table: no chart, and neither report has the section."""
    from fabric.render.engine.templating import render, render_html

    assert _jobs({"job_bandwidth": None}) is None
    content = report_content(built("superpod-h100-4su"), items=[])
    assert render("report/report.md.j2", **content).count("## Job bandwidth on compute") == 1
    assert render_html("report/report.html.j2", **content).count('id="jobs-chart"') == 1
    content["jobs"] = None
    assert "Job bandwidth" not in render("report/report.md.j2", **content)
    assert 'id="jobs-chart"' not in render_html("report/report.html.j2", **content)
