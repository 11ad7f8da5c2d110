"""The old output removed after the exchange (fabric/write/atomic.py's _rmtree): in threads, directory by
directory, never through a symlink; what the threads leave is removed by shutil.rmtree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fabric.model.rendered import Rendered
from fabric.write import atomic
from fabric.write.atomic import write_outputs


def _tree(root: Path, outside: Path, to_dir: bool = True) -> int:
    """An output-like tree: files at the top, a wide directory of small ones, nested directories, symlinks
    out of it (to a file; `to_dir`: to a directory). Returns how many entries it has."""
    (root / "configs").mkdir(parents=True)
    (root / "a.csv").write_text("a\n")
    for i in range(40):
        (root / "configs" / f"leaf{i:02}").mkdir()
        for name in ("config_db.json", "frr.conf"):
            (root / "configs" / f"leaf{i:02}" / name).write_text(f"{i}\n")
    (root / "deep" / "er" / "est").mkdir(parents=True)
    (root / "deep" / "er" / "x").write_text("x")
    (root / "deep" / "empty").mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    if to_dir:
        (root / "to-dir").symlink_to(outside)
    (root / "deep" / "er" / "est" / "to-file").symlink_to(outside / "keep.txt")
    return sum(1 for _ in root.rglob("*"))


def test_the_threads_remove_a_tree_and_nothing_a_symlink_points_to(tmp_path: Path) -> None:
    entries = _tree(tmp_path / "old", tmp_path / "outside", to_dir=False)
    atomic._remove_in_threads(tmp_path / "old")
    assert entries > 120 and not os.path.lexists(tmp_path / "old")
    assert (tmp_path / "outside" / "keep.txt").read_text() == "keep"


def test_a_symlink_to_a_directory_is_left_to_shutil_and_not_followed(tmp_path: Path) -> None:
    _tree(tmp_path / "old", tmp_path / "outside")
    with pytest.raises(OSError):  # the top is not empty: the symlink is not a directory to descend or remove
        atomic._remove_in_threads(tmp_path / "old")
    assert [p.name for p in (tmp_path / "old").iterdir()] == ["to-dir"]
    atomic._rmtree(tmp_path / "old")
    assert not os.path.lexists(tmp_path / "old") and (tmp_path / "outside" / "keep.txt").read_text() == "keep"


def test_what_the_threads_cannot_remove_shutil_removes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path / "old", tmp_path / "outside")
    removed = []

    def half(path: Path) -> None:
        removed.append(path)
        raise PermissionError("no")

    monkeypatch.setattr(atomic, "_remove_in_threads", half)
    atomic._rmtree(tmp_path / "old")
    assert removed == [tmp_path / "old"] and not os.path.lexists(tmp_path / "old")
    assert (tmp_path / "outside" / "keep.txt").exists()


def test_a_rebuild_leaves_the_new_output_and_no_other_directory(tmp_path: Path) -> None:
    files = {f"configs/leaf{i:02}/frr.conf": f"{i}\n".encode() for i in range(30)} | {"a.csv": b"a\n"}
    for n in range(2):
        write_outputs(Rendered({**files, "n.txt": str(n).encode()}, private=()), tmp_path / "out", "lab")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and (tmp_path / "out" / "n.txt").read_text() == "1"
    assert sum(1 for p in (tmp_path / "out").rglob("*") if p.is_file()) == len(files) + 3  # n.txt, marker, manifest
