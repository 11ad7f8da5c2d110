"""Which earlier build's assignments `fabric build` keeps (fabric/cli/lock_choice.py), case by case, without typer."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.cli.lock_choice import LockChoice, with_lock
from fabric.model.findings import Severity
from fabric.render.outputs.lock import lock_json
from fabric.spec.loader import Design, load_spec
from fabric.spec.lock import LOCK_FILE
from tests.conftest import DESIGNS, built


@pytest.fixture(scope="module")
def lab() -> Design:
    return load_spec(DESIGNS / "lab.yaml")


def _lock_of(design: str, directory: Path) -> Path:
    """The lock a build of `design` writes, in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / LOCK_FILE
    path.write_text(lock_json(built(design)), encoding="utf-8")
    return path


def test_no_lock_keeps_nothing_even_with_a_lock_given_or_found(lab: Design, tmp_path: Path) -> None:
    given = _lock_of("lab", tmp_path)
    assert with_lock(lab, LockChoice(given, ignore=True, allow_moves=False, out=tmp_path)) is lab


def test_a_new_output_directory_keeps_nothing(lab: Design, tmp_path: Path) -> None:
    assert with_lock(lab, LockChoice(None, ignore=False, allow_moves=False, out=tmp_path / "new")).lock is None


def test_the_output_directory_s_previous_lock_is_kept(lab: Design, tmp_path: Path) -> None:
    previous = _lock_of("lab", tmp_path / "out")
    design = with_lock(lab, LockChoice(None, ignore=False, allow_moves=True, out=tmp_path / "out"))
    assert design.lock is not None
    assert design.lock.file == str(previous) and design.lock.allow_moves and design.lock.lock.design == "lab"


def test_without_out_the_default_output_directory_is_read(
    lab: Design, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _lock_of("lab", tmp_path / "output" / "lab")
    design = with_lock(lab, LockChoice(None, ignore=False, allow_moves=False, out=None))
    assert design.lock is not None and design.lock.file == str(Path("output") / "lab" / LOCK_FILE)
    assert not design.lock.allow_moves


def test_another_design_s_previous_lock_is_noted_and_not_kept(
    lab: Design, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    previous = _lock_of("lab-dual", tmp_path)
    assert with_lock(lab, LockChoice(None, ignore=False, allow_moves=False, out=tmp_path)) is lab
    assert capsys.readouterr().err == f"note: {previous} is the lock of another design; not kept\n"


@pytest.mark.parametrize("allow_moves", [False, True])
def test_a_lock_given_of_another_design_is_kept_and_said(lab: Design, tmp_path: Path, allow_moves: bool) -> None:
    given = _lock_of("lab-dual", tmp_path / "elsewhere")
    design = with_lock(lab, LockChoice(given, ignore=False, allow_moves=allow_moves, out=tmp_path / "out"))
    assert design.lock is not None and design.lock.file == str(given) and design.lock.lock.design == "lab-dual"
    (said,) = [n for n in design.notes if n.code == "lock-design"]  # an error; a warning with --allow-moves
    assert said.severity == (Severity.WARNING if allow_moves else Severity.ERROR) and "lab-dual" in said.message


def test_a_lock_given_of_this_design_says_nothing(lab: Design, tmp_path: Path) -> None:
    given = _lock_of("lab", tmp_path / "elsewhere")
    design = with_lock(lab, LockChoice(given, ignore=False, allow_moves=False, out=tmp_path / "out"))
    assert design.lock is not None and design.notes == lab.notes
