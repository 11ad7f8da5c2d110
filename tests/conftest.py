"""Shared test helpers: golden files (with --update-golden), cached builds of the bundled designs,
and the rule for tests that need a real external tool."""

from __future__ import annotations

import importlib
import os
import re
import shutil
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

from fabric.pipeline import Build, build_fabric

# Property tests draw the same examples on every run (no database, no randomness): a CI failure reproduces.
# FABRIC_HYPOTHESIS picks the example counts: "ci" (the default) the full ones, "dev" (`./dev test --quick`) a tenth.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("dev", settings.get_profile("ci"), max_examples=10)
HYPOTHESIS_PROFILE = os.environ.get("FABRIC_HYPOTHESIS") or "ci"
settings.load_profile(HYPOTHESIS_PROFILE)


def examples(full: int) -> int:
    """A test's example count under the loaded profile: `full` for ci, a tenth (at least 10) for dev."""
    return full if HYPOTHESIS_PROFILE != "dev" else min(full, max(10, full // 10))


REPO = Path(__file__).resolve().parents[1]
INTENT = "intent/"  # a design's intent goldens: its own set (test_intent_golden.py), beside its outputs
DESIGNS = REPO / "designs"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden files from the current output (review the diff before committing)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> object:
    """Under FABRIC_FORBID_BUILDS=1 a build while the tests are collected raises: builds and renders belong in
    tests and fixtures, where a bug fails one test instead of the whole collection (tests/unit/test_collection.py)."""
    if os.environ.get("FABRIC_FORBID_BUILDS") != "1":
        return (yield)
    import fabric.pipeline as pipeline

    real = pipeline._build

    def forbidden(*args: object, **kwargs: object) -> Build:
        raise RuntimeError("a fabric is built while the tests are collected; build inside a test or a fixture")

    pipeline._build = forbidden  # type: ignore[assignment]  # build_fabric calls it, however it was imported
    try:
        return (yield)
    finally:
        pipeline._build = real


LIVE = Path(__file__).resolve().parent / "live"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/live/ starts a real tool: marked `real`, so `-m "not real"` leaves them out.
    Real-tool tests run one at a time on one xdist worker (`--dist loadgroup`: namespaces, daemons and their
    sockets are shared names), unless marked `independent`; those run beside them on the other worker."""
    for item in items:
        if item.path.is_relative_to(LIVE):
            item.add_marker(pytest.mark.real)
        if item.get_closest_marker("real") and not item.get_closest_marker("independent"):
            item.add_marker(pytest.mark.xdist_group("real-one-at-a-time"))


def has_name(text: str, name: str) -> bool:
    """`name` (a port, `device:port`, …) occurs in `text` as a whole name: `swp1` does not match `swp10`."""
    return re.search(rf"(?<![\w/:.-]){re.escape(name)}(?![\w/.-])", text) is not None


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[Path, str], None]:
    """golden(path, actual): compare `actual` with the file, or rewrite it under --update-golden."""
    update = request.config.getoption("--update-golden")

    def check(path: Path, actual: str) -> None:
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8")
            return
        assert path.exists(), f"missing golden file {path}; run pytest --update-golden and review it"
        expected = path.read_text(encoding="utf-8")
        assert actual == expected, f"{path.relative_to(REPO)} differs; run pytest --update-golden and review the diff"

    return check


@pytest.fixture
def golden_set(request: pytest.FixtureRequest) -> Callable[[Path, Iterable[str], str], None]:
    """golden_set(directory, names, pattern): the golden files under `directory` matching `pattern` are exactly
    `names` (paths relative to it), so a file no longer rendered fails instead of silently losing its test;
    --update-golden deletes the vanished ones."""
    update = request.config.getoption("--update-golden")

    def check(directory: Path, names: Iterable[str], pattern: str = "**/*") -> None:
        wanted = set(names)
        assert wanted, f"nothing is rendered for {directory}"
        on_disk = {str(p.relative_to(directory)) for p in directory.glob(pattern) if p.is_file()}
        on_disk -= {name for name in on_disk if name.startswith(INTENT)}
        vanished = sorted(on_disk - wanted)
        if update:
            for name in vanished:
                (directory / name).unlink()
            return
        assert not vanished, f"golden files no longer produced under {directory}: {vanished}; run --update-golden"
        assert not sorted(wanted - on_disk), f"missing golden files: {sorted(wanted - on_disk)}"

    return check


@cache
def built(design: str) -> Build:
    """A bundled design (file stem under designs/), built once per test session."""
    return build_fabric(DESIGNS / f"{design}.yaml")


def require_root(why: str) -> None:
    """Skip (or fail under FABRIC_REQUIRE_REAL=1) when not root."""
    if os.geteuid() == 0:
        return
    message = f"needs root ({why})"
    if os.environ.get("FABRIC_REQUIRE_REAL") == "1":
        pytest.fail(message + "; FABRIC_REQUIRE_REAL=1 makes this a failure")
    pytest.skip(message)


def require_tool(name: str, install: str) -> str:
    """The path of a real tool; skips without it, or fails under FABRIC_REQUIRE_REAL=1 (CI)."""
    path = shutil.which(name)
    if path:
        return path
    message = f"{name} is not installed ({install})"
    if os.environ.get("FABRIC_REQUIRE_REAL") == "1":
        pytest.fail(message + "; FABRIC_REQUIRE_REAL=1 makes this a failure")
    pytest.skip(message)


def require_module(name: str, install: str) -> ModuleType:
    """A Python package the tests need beyond the runtime's; skips without it, or fails under FABRIC_REQUIRE_REAL=1."""
    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"Python package {name} is not installed ({install})"
        if os.environ.get("FABRIC_REQUIRE_REAL") == "1":
            pytest.fail(message + "; FABRIC_REQUIRE_REAL=1 makes this a failure")
        pytest.skip(message)
