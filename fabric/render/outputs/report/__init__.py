"""report.html and report.md from the report content (templates compute nothing)."""

from __future__ import annotations

from fabric.pipeline import Build
from fabric.render.engine.memo import per_build
from fabric.render.engine.registry import Output, one_file
from fabric.render.engine.templating import render, render_html
from fabric.render.outputs.diagrams import listed
from fabric.render.outputs.report.content import report_content as _content

report_content = per_build(_content)


def report_html(build: Build) -> str:
    return render_html("report/report.html.j2", **report_content(build))


def report_md(build: Build) -> str:
    """The Markdown report links the pictures by name and title: it needs no layout by `dot`, and no drawing of
    the rack elevations."""
    return render("report/report.md.j2", **_content(build, items=listed(build)))


# the report embeds the laid-out diagrams: one worker makes both. Either reads the job table's traffic figures,
# made once in that worker (build.traffic: ~1 s of CPU at 100k GPUs), weighed here once: as report-md, which a
# set of outputs without the pictures still renders
OUTPUTS: tuple[Output, ...] = (
    one_file("report-html", "report.html", report_html, together="diagrams", weight=0.2),
    one_file("report-md", "report.md", report_md, together="diagrams", weight=1.0),
)
