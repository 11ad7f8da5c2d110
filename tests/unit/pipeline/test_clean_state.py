"""Outputs do not depend on where the build ran: the same spec built from different directories gives the
same bytes (summary.json names files relative to the spec's own directory)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli import app
from tests.conftest import DESIGNS, REPO


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("design", ["lab-ib", "lab"])
def test_the_same_spec_from_two_directories_gives_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, design: str
) -> None:
    trees = []
    for cwd, spec in (
        (REPO, f"designs/{design}.yaml"),
        (DESIGNS, f"{design}.yaml"),
        (tmp_path, str(DESIGNS / f"{design}.yaml")),
    ):
        monkeypatch.chdir(cwd)
        out = tmp_path / f"out-{len(trees)}"
        result = CliRunner().invoke(app, ["build", spec, "-o", str(out)])
        assert result.exit_code == 0, result.output
        trees.append(_tree(out))
    assert len(trees[0]) > 10
    assert trees[0] == trees[1] == trees[2]
    findings = json.loads(trees[0]["summary.json"])["findings"]
    assert all(f["file"] in ("", f"{design}.yaml") for f in findings)
    if design == "lab-ib":
        assert [f["file"] for f in findings] == ["lab-ib.yaml"]
