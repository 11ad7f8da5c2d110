"""`fabric verify` refuses to pass on no evidence, and never prints discovered text raw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli import app
from fabric.tools.verify import End, ObservedCable, compare
from tests.conftest import DESIGNS, built
from tests.unit.tools.test_verify import PLAN, _lab_lldp

LAB = str(DESIGNS / "lab.yaml")
HEADER = "local_device,local_port,remote_device,remote_port\n"


def _verify(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", LAB, *args])
    return result.exit_code, result.output


def test_a_header_only_csv_is_no_evidence(tmp_path: Path) -> None:
    (tmp_path / "n.csv").write_text(HEADER)
    planned = sum(1 for c in built("lab").allocation.cables)
    code, output = _verify("--lldp", str(tmp_path / "n.csv"))
    assert code == 1
    assert f"NOT VERIFIED: 0 of {planned} planned cable(s) checked, at least 1 must be" in output
    assert output.endswith("nothing was verified\n") and "everything matches" not in output
    code, output = _verify("--lldp", str(tmp_path / "n.csv"), "--json")
    data = json.loads(output)
    assert code == 1 and data["ok"] is False and data["enough_evidence"] is False
    assert data["planned_cables"] == 0 and data["unchecked"] == planned and data["min_checked"] == 1


def test_no_evidence_fails_and_the_threshold_is_the_callers() -> None:
    nothing = compare("d", "s", "src", PLAN, [], checkable=lambda p: False)
    assert not nothing.ok and nothing.exit_code == 1 and nothing.problems == () and nothing.unchecked == 4
    assert "NOT VERIFIED: 0 of 4 planned cable(s) checked" in nothing.text()
    assert compare("d", "s", "src", PLAN, [], checkable=lambda p: False, min_checked=0).ok
    half = [ObservedCable(p.a, p.b) for p in PLAN[:2]]
    leaf1 = compare("d", "s", "src", PLAN, half, checkable=lambda p: p.a.device == "leaf1")
    assert leaf1.ok and leaf1.planned == 2 and leaf1.unchecked == 2
    every = compare("d", "s", "src", PLAN, half, checkable=lambda p: p.a.device == "leaf1", min_checked=None)
    assert not every.ok and every.min_checked == 4 and "NOT VERIFIED: 2 of 4" in every.text()
    many = compare("d", "s", "src", PLAN, [ObservedCable(p.a, p.b) for p in PLAN], min_checked=100)
    assert many.ok and many.min_checked == 4  # at most the whole plan
    assert not compare("d", "s", "src", [], []).ok  # a plan of no cables verifies nothing either


def test_min_checked_on_the_command_line(tmp_path: Path) -> None:
    where = _lab_lldp(tmp_path, skip={"leaf4", "spine2"})
    code, output = _verify("--lldp", str(where))
    assert code == 0 and "everything matches the plan" in output and "3 not checked" in output
    code, output = _verify("--lldp", str(where), "--min-checked", "all")
    assert code == 1 and "NOT VERIFIED: 13 of 16 planned cable(s) checked, at least 16 must be" in output
    assert _verify("--lldp", str(where), "--min-checked", "13")[0] == 0
    assert _verify("--lldp", str(where), "--min-checked", "14")[0] == 1
    code, output = _verify("--lldp", str(where), "--min-checked", "-1")
    assert code == 2 and "--min-checked takes a number of cables or `all`" in output


HOSTILE = "\x1b]0;pwned\x07\x1b[2J\nMISSING fake"


def test_discovered_names_are_escaped_in_the_report() -> None:
    stranger = End(HOSTILE, "p\x1b[31m9", known=False)
    report = compare("d", "s", "src\x1b[0m", PLAN, [ObservedCable(End("leaf1", "p1"), stranger)])
    text = report.text()
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\nMISSING fake (not in the plan) p\\x1b[31m9" in text
    assert not any(line.startswith("MISSING fake") for line in text.splitlines())
    data = json.dumps(report.as_dict())
    assert "\x1b" not in data and "\n" not in data  # JSON escapes control characters in strings
    assert json.loads(data)["problems"][-1]["found"][1]["device"] == HOSTILE  # JSON escapes, the value survives


def test_discovered_text_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    """Whether the reader refuses the names (a finding) or reports them (an unexpected cable): escaped."""
    lines = HEADER + '"leaf1","swp1","\x1b[2Jevil\x07","eth0"\n' + '"leaf1","swp2\nMISSING","spine1","swp9"\n'
    (tmp_path / "n.csv").write_text(lines)
    for extra in ((), ("--json",)):
        code, output = _verify("--lldp", str(tmp_path / "n.csv"), *extra)
        assert code in (1, 2) and "\x1b" not in output and "\x07" not in output
        assert not any(line.startswith("MISSING") and "evil" in line for line in output.splitlines())


@pytest.mark.parametrize("kind", ["ibnetdiscover"])
def test_empty_ibnetdiscover_is_not_a_match(tmp_path: Path, kind: str) -> None:
    (tmp_path / "empty.net").write_text("#\n# Topology file: generated\n#\n")
    result = CliRunner().invoke(app, ["verify", str(DESIGNS / "lab-ib.yaml"), f"--{kind}", str(tmp_path / "empty.net")])
    assert result.exit_code in (1, 2) and "everything matches" not in result.output
