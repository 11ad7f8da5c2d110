"""One parser for a count of processes (fabric/fast/parallel.py's parse_workers): `--workers N` and
$FABRIC_WORKERS take the same counts (ASCII digits, 1 to 4 per usable core) and refuse the rest with the same
text (exit 2), never an internal error and never silently."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli import app
from fabric.fast import parallel
from fabric.fast.parallel import WorkersError, max_workers, parse_workers
from tests.conftest import REPO

LAB = str(REPO / "designs" / "lab.yaml")
BAD = ["0", "-1", "abc", "¹", "٣", "1.5", "+2", "1e3", "0x2", "9" * 30]


@pytest.fixture
def cores(monkeypatch: pytest.MonkeyPatch) -> int:
    """A machine of 2 usable cores: 8 workers at most."""
    monkeypatch.setattr(parallel, "usable_cores", lambda: 2)
    return 2


def test_counts_in_ascii_digits_up_to_four_per_core_are_taken(cores: int) -> None:
    assert max_workers() == 4 * cores == 8
    assert [parse_workers(t, "--workers") for t in ("1", " 2 ", "08", "8")] == [1, 2, 8, 8]


@pytest.mark.parametrize("text", [*BAD, "9"])
def test_anything_else_is_refused_without_quoting_it(text: str, cores: int) -> None:
    with pytest.raises(WorkersError) as refused:
        parse_workers(text, "FABRIC_WORKERS")
    assert str(refused.value) == (
        "FABRIC_WORKERS must be a count of processes from 1 to 8 (4 per usable core, 2 here), in the digits 0-9"
    )


@pytest.mark.parametrize("text", [*BAD, "9"])
def test_the_option_and_the_environment_are_refused_alike(
    text: str, cores: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("FABRIC_WORKERS", raising=False)
    by_option = CliRunner().invoke(app, ["build", LAB, "-o", str(tmp_path / "a"), f"--workers={text}"])
    monkeypatch.setenv("FABRIC_WORKERS", text)
    by_env = CliRunner().invoke(app, ["build", LAB, "-o", str(tmp_path / "b")])
    validate = CliRunner().invoke(app, ["validate", LAB])
    assert by_option.exit_code == by_env.exit_code == validate.exit_code == 2, (by_option.output, by_env.output)
    assert by_option.output.replace("--workers", "FABRIC_WORKERS") == by_env.output == validate.output
    assert by_env.output.startswith("error: FABRIC_WORKERS must be a count of processes from 1 to 8")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_blank_environment_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_WORKERS", " ")
    assert parallel.env_workers() is None and parallel.cores(None) == parallel.usable_cores()
    assert CliRunner().invoke(app, ["validate", LAB]).exit_code == 0


def test_plan_takes_the_same_option(cores: int) -> None:
    result = CliRunner().invoke(app, ["plan", "--gpus", "64", "--workers", "¹"])
    assert result.exit_code == 2 and "--workers must be a count of processes from 1 to 8" in result.output
