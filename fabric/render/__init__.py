"""Stage 5: render every output in memory.

RENDERERS maps an output's name to the function that renders it: a Build in, {relative path: text} out
(one file for a plan, one per device for configs). Nothing is written here; see writer.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fabric.infiniband.render import render_infiniband
from fabric.pipeline import Build
from fabric.render import cabling_md, configs, tables
from fabric.render.summary_json import summary_json

Renderer = Callable[[Build], Mapping[str, str]]


def _one(path: str, render: Callable[[Build], str]) -> Renderer:
    return lambda build: {path: render(build)}


RENDERERS: dict[str, Renderer] = {
    "cabling": _one("cabling.csv", tables.cabling_csv),
    "cabling-doc": _one("cabling.md", cabling_md.cabling_md),
    "ip-plan": _one("ip-plan.csv", tables.ip_plan_csv),
    "asn-plan": _one("asn-plan.csv", tables.asn_plan_csv),
    "inventory": _one("inventory.csv", tables.inventory_csv),
    "summary": _one("summary.json", summary_json),
    "configs": configs.configs,
    "infiniband": render_infiniband,  # infiniband/<fabric>/: opensm.conf, GUID files, partitions.conf, topology.net
}


class Rendered(dict[str, bytes]):
    """Output files, path → bytes; `private` names those that carry secrets (written mode 0600)."""

    private: frozenset[str] = frozenset()


def render_all(build: Build) -> Rendered:
    """Every output file, path relative to the output directory → bytes, in path order."""
    files: dict[str, bytes] = {}
    for name, render in RENDERERS.items():
        for path, text in render(build).items():
            if path in files:
                raise AssertionError(f"renderer {name} writes {path} again")
            files[path] = text.encode("utf-8")
    out = Rendered(sorted(files.items()))
    out.private = frozenset(configs.private_configs(build))
    return out


__all__ = ["RENDERERS", "Rendered", "render_all"]
