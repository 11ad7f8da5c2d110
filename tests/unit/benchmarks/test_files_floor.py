"""The floor of a build's files (benchmarks/floor.py --files) makes again exactly the tree it was given: the same
directories and files of the same sizes (no timing is asserted: figures are printed, never tested)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from tests.conftest import REPO


def _floor() -> ModuleType:
    sys.path.insert(0, str(REPO / "benchmarks"))  # floor.py imports its neighbours (disk, run)
    try:
        spec = importlib.util.spec_from_file_location("floor", REPO / "benchmarks" / "floor.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(REPO / "benchmarks"))


def _listing(root: Path) -> list[tuple[str, int | None]]:
    """(relative path, size; None for a directory) of everything under root."""
    out: list[tuple[str, int | None]] = []
    for here, dirs, files in os.walk(root):
        rel = Path(here).relative_to(root)
        out += [(str(rel / d), None) for d in dirs]
        out += [(str(rel / f), (Path(here) / f).stat().st_size) for f in files]
    return sorted(out, key=lambda entry: entry[0])


def test_the_files_floor_makes_the_same_tree(tmp_path: Path) -> None:
    tree = tmp_path / "out"
    for i, (where, size) in enumerate([("configs/leaf1", 0), ("configs/leaf1", 70_000), ("hosts/n1", 3), (".", 1)]):
        (tree / where).mkdir(parents=True, exist_ok=True)
        (tree / where / f"file{i}").write_bytes(b"a" * size)
    (tree / "empty").mkdir()
    work = tmp_path / "work"
    work.mkdir()

    figures = _floor().files_floor(tree, work)

    assert (figures["files"], figures["dirs"], figures["bytes"]) == (4, 5, 70_004)
    want = _listing(tree)
    assert len(want) == 9
    assert _listing(work / "tree") == want
    (work / "tree" / "hosts" / "n1" / "file2").write_bytes(b"ab")  # (the comparison sees a size)
    assert _listing(work / "tree") != want
