"""Golden findings: every bad input (tests/errors/) and every broken design (tests/broken/) must print
exactly its .txt file through `fabric validate`. One test id per case; `pytest --update-golden`
rewrites them (review the diff)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli import app
from tests.conftest import REPO

ERRORS = sorted((REPO / "tests" / "errors").glob("*.yaml"))
BROKEN = sorted((REPO / "tests" / "broken").glob("*.yaml"))
WARNING_ONLY = {"failure-impact", "speeds", "platform-capability"}

# Every kind of design problem has a broken design that shows it.
EXPECTED_CODES = {
    "address-pool",
    "asn-range",
    "bisection",
    "cable-reach",
    "disconnected",
    "duplicate-address",
    "duplicate-guid",
    "duplicate-asn",
    "duplicate-name",
    "ecmp",
    "empty-fabric",
    "failure-impact",
    "ftree-admissible",
    "inventory-guid",
    "inventory-unknown",
    "mgmt-cycle",
    "oversubscription",
    "placeholder-guids",
    "port-budget",
    "rack-power",
    "rack-space",
    "radix",
    "rail-alignment",
    "speed-mismatch",
    "unconnected",
    "uneven-spread",
    "unknown-rack",
    "secret-missing",
    "platform-capability",
}


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
    assert code == (0 if case.stem in WARNING_ONLY else 1)


@pytest.mark.parametrize("case", [c for c in BROKEN if c.stem in WARNING_ONLY], ids=lambda p: p.stem)
def test_strict_turns_warnings_into_errors(case: Path) -> None:
    code, output = _validate(case, "--strict")
    assert code == 1
    assert "WARNING" not in output and "ERROR" in output


def test_every_problem_kind_has_a_broken_design() -> None:
    seen = set()
    for case in BROKEN:
        for line in case.with_suffix(".txt").read_text().splitlines():
            parts = line.split()
            if parts and parts[0] in ("ERROR", "WARNING"):
                seen.add(parts[1])
    assert seen >= EXPECTED_CODES, f"no broken design shows {sorted(EXPECTED_CODES - seen)}"


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
