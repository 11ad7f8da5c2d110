"""The package's layout is the pipeline: no import cycles (imports inside functions included) and no stage
imports a later one. Read from the source with ast, so a lazy import cannot hide a dependency."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

from tests.conftest import REPO

PACKAGE = REPO / "fabric"
# Stage order. `fast` is the ground floor (speed machinery: serializers, collector control, cheap constructors and
# address types) and imports nothing else of fabric; `pipeline` glues model … intent into a Build, which costing
# (prices, power), render, plan, write and tools consume; the
# package root (`fabric`, `fabric.__main__`) and the command line (`fabric.cli`) may import anything.
ORDER = (
    "fast", "model", "spec", "topology", "analysis", "allocation", "intent", "pipeline", "costing", "render", "plan",
    "write", "tools",
)  # fmt: skip
ROOT = {"fabric", "fabric.__main__"}  # and the command line, fabric.cli and what it holds


def _module(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Every fabric module `path` imports, anywhere in it, with the packages whose __init__ that runs."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__ too
                prefix = ".".join(parts[:i])
                if prefix in modules:
                    found.add(prefix)
    return found


def _graph() -> nx.DiGraph:
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for dep in _imports(path, set(modules)):
            own_packages = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
            if dep != name and dep not in own_packages:  # a module's own parent packages are already running
                graph.add_edge(name, dep)
    return graph


def _stage(module: str) -> int | None:
    parts = module.split(".")
    return ORDER.index(parts[1]) if len(parts) > 1 and parts[1] in ORDER else None


def test_the_graph_sees_the_modules() -> None:
    graph = _graph()
    assert graph.number_of_nodes() >= 60
    assert graph.number_of_edges() >= 150
    assert graph.has_edge("fabric.pipeline", "fabric.allocation.allocate")


def test_no_import_cycles() -> None:
    cycles = list(nx.simple_cycles(_graph()))
    assert cycles == [], f"import cycles: {cycles[:5]}"


def test_no_stage_imports_a_later_stage() -> None:
    wrong = []
    for a, b in _graph().edges:
        if a in ROOT or a.split(".")[:2] == ["fabric", "cli"]:
            continue
        sa, sb = _stage(a), _stage(b)
        assert sa is not None, f"{a} is in no stage folder: add it to one (or to ROOT)"
        if sb is None or sb > sa:
            wrong.append(f"{a} -> {b}")
    assert wrong == [], "later-stage imports:\n" + "\n".join(sorted(wrong))


def test_the_package_root_holds_a_handful_of_modules() -> None:
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert root == ["__init__.py", "__main__.py", "costing.py", "pipeline.py"]


def test_the_speed_package_imports_nothing_of_the_domain() -> None:
    outside = sorted(
        (a, b) for a, b in _graph().edges if a.startswith("fabric.fast") and not b.startswith("fabric.fast")
    )
    assert outside == [], f"fabric.fast must stay below every stage: {outside}"
    assert sum(m.startswith("fabric.fast.") for m in _modules()) >= 8


def test_only_the_speed_package_controls_the_garbage_collector() -> None:
    users = sorted(
        name
        for name, path in _modules().items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import) and any(alias.name == "gc" for alias in node.names)
    )
    assert users == ["fabric.fast.collector"]
