"""summary.json: serialized from data, never templated."""

from __future__ import annotations

import json

from fabric.pipeline import Build
from fabric.summary import summary


def summary_json(build: Build) -> str:
    return json.dumps(summary(build), indent=2, ensure_ascii=False) + "\n"
