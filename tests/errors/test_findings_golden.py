"""Golden findings: every bad input (tests/errors/) and every broken design (tests/broken/) must print
exactly its .txt file through `fabric validate`. One test id per case; `pytest --update-golden`
rewrites them (review the diff). That every declared finding code is shown by one is tests/unit/model/test_codes.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli import app
from tests.conftest import REPO

ERRORS = sorted((REPO / "tests" / "errors").glob("*.yaml"))
BROKEN = sorted((REPO / "tests" / "broken").glob("*.yaml"))
# broken designs with warnings only (exit 0), as their golden files say
WARNING_ONLY = [
    c for c in BROKEN if c.with_suffix(".txt").exists() and c.with_suffix(".txt").read_text().startswith("exit 0\n")
]


def _validate(case: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["validate", *args, str(case.relative_to(REPO))])
    return result.exit_code, result.output


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # findings name files relative to the working directory


@pytest.mark.parametrize("case", ERRORS, ids=lambda p: p.stem)
def test_bad_input_golden(case: Path, golden) -> None:  # type: ignore[no-untyped-def]
    code, output = _validate(case)
    golden(case.with_suffix(".txt"), f"exit {code}\n{output}")
    assert code == 2
    assert "Traceback" not in output


@pytest.mark.parametrize("case", BROKEN, ids=lambda p: p.stem)
def test_broken_design_golden(case: Path, golden) -> None:  # type: ignore[no-untyped-def]
    code, output = _validate(case)
    golden(case.with_suffix(".txt"), f"exit {code}\n{output}")
    assert code == (0 if case in WARNING_ONLY else 1)
    assert code == 0 or "ERROR" in output


@pytest.mark.parametrize("case", WARNING_ONLY, ids=lambda p: p.stem)
def test_strict_turns_warnings_into_errors(case: Path) -> None:
    code, output = _validate(case, "--strict")
    assert code == 1
    assert "WARNING" not in output and "ERROR" in output


def test_every_golden_finding_file_has_its_case(golden_set) -> None:  # type: ignore[no-untyped-def]
    assert len(ERRORS) >= 15 and len(BROKEN) >= 20 and len(WARNING_ONLY) >= 3
    golden_set(REPO / "tests" / "errors", [c.with_suffix(".txt").name for c in ERRORS], "*.txt")
    golden_set(REPO / "tests" / "broken", [c.with_suffix(".txt").name for c in BROKEN], "*.txt")


def test_each_finding_is_reported_once() -> None:
    for case in ERRORS + BROKEN:
        text = case.with_suffix(".txt").read_text().splitlines()
        heads = [line for line in text if line.startswith(("  ERROR", "  WARNING"))]
        assert len(heads) == len(set(heads)), f"{case.name} repeats a finding"


def test_a_directory_is_a_one_line_error() -> None:
    code, output = _validate(REPO / "tests" / "errors")
    assert code == 2
    assert output == "error: tests/errors: is a directory, not a YAML file\n"


def test_a_missing_file_is_a_one_line_error() -> None:
    code, output = _validate(REPO / "tests" / "errors" / "no-such-spec.yaml")
    assert code == 2
    assert output == "error: tests/errors/no-such-spec.yaml: no such file\n"
