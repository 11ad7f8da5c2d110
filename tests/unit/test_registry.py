"""The registries are visible lists: every output family in `render/outputs/__init__.py`'s FAMILIES, every
platform renderer in `render/platforms/__init__.py`'s RENDERERS, each checked here against what the code holds."""

from __future__ import annotations

import ast
import importlib

from fabric.render.outputs import FAMILIES, OUTPUTS
from fabric.render.platforms import PLATFORMS, RENDERERS
from fabric.spec.platforms import platforms
from tests.conftest import REPO

OUTPUTS_DIR = REPO / "fabric" / "render"


def _declaring_modules() -> set[str]:
    """Every module under fabric/render that assigns OUTPUTS at its top level (read with ast, not imported)."""
    found: set[str] = set()
    for path in sorted(OUTPUTS_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
            if any(isinstance(t, ast.Name) and t.id == "OUTPUTS" for t in targets):
                parts = list(path.relative_to(REPO).with_suffix("").parts)
                found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def test_every_module_that_declares_outputs_belongs_to_a_listed_family() -> None:
    families = {family.__name__ for family in FAMILIES}
    declaring = _declaring_modules() - {"fabric.render.outputs"}
    assert len(families) == len(FAMILIES) == 16
    unlisted = sorted(m for m in declaring if not any(m == f or m.startswith(f + ".") for f in families))
    assert unlisted == [], f"add these modules' family to FAMILIES: {unlisted}"
    # a family package gathers its submodules' outputs: each declared output reaches OUTPUTS
    for module in sorted(declaring):
        for output in importlib.import_module(module).OUTPUTS:
            assert output in OUTPUTS, f"{module} declares {output.name}, which its family does not gather"


def test_outputs_are_in_name_order_and_named_once() -> None:
    names = [output.name for output in OUTPUTS]
    assert names == sorted(set(names))
    assert len(names) == 28  # with imex (issue 28), cabling-physical (issue 25), monitoring-dcgm-counters (26)


def test_every_platform_has_one_renderer_and_one_description() -> None:
    assert sorted(renderer.name for renderer in RENDERERS) == sorted(platforms()) == ["cumulus", "eos", "frr", "sonic"]
    assert list(PLATFORMS) == ["cumulus", "eos", "frr", "sonic"]
    described = {p.parent.name for p in (REPO / "templates").glob("*/platform.yaml")}
    assert described == set(PLATFORMS)
