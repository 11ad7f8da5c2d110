"""Stage 5: render every output in memory. RENDERERS maps an output file to the function that makes it."""

from __future__ import annotations

from collections.abc import Callable

from fabric.pipeline import Build
from fabric.render import cabling_md, tables
from fabric.render.summary_json import summary_json

Renderer = Callable[[Build], str]

RENDERERS: dict[str, Renderer] = {
    "cabling.csv": tables.cabling_csv,
    "cabling.md": cabling_md.cabling_md,
    "ip-plan.csv": tables.ip_plan_csv,
    "asn-plan.csv": tables.asn_plan_csv,
    "inventory.csv": tables.inventory_csv,
    "summary.json": summary_json,
}


def render_all(build: Build) -> dict[str, bytes]:
    """Every output file, path relative to the output directory → bytes."""
    return {path: render(build).encode("utf-8") for path, render in RENDERERS.items()}


__all__ = ["RENDERERS", "render_all"]
