"""summary.json: serialized from data, never templated."""

from __future__ import annotations

import json

from fabric.pipeline import Build
from fabric.render.registry import Output, one_file
from fabric.render.summary import summary


def summary_json(build: Build) -> str:
    return json.dumps(summary(build), indent=2, ensure_ascii=False) + "\n"


# with the report, which shows the same summary: its job bandwidth (seconds at 100k GPUs) is then made once
OUTPUTS: tuple[Output, ...] = (one_file("summary", "summary.json", summary_json, together="diagrams"),)
