"""Collecting the tests builds nothing: golden cases are listed from files on disk and builds happen in tests and
fixtures, so a build or render bug fails its tests instead of the whole collection (conftest's
FABRIC_FORBID_BUILDS guard makes a build during collection raise)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_collecting_every_test_builds_no_fabric() -> None:
    env = {**os.environ, "FABRIC_FORBID_BUILDS": "1", "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " tests collected" in result.stdout.splitlines()[-1]
