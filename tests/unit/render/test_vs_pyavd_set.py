"""The benchmark against pyavd (benchmarks/vs_pyavd.py) renders the outputs of its SET by their names: each must
still be an output fabric declares (a move of one once stopped the benchmark, unnoticed)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from tests.conftest import REPO


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vs_pyavd", REPO / "benchmarks" / "vs_pyavd.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["vs_pyavd"] = module
    spec.loader.exec_module(module)
    return module


def test_every_output_of_the_set_is_declared() -> None:
    bench = _benchmark()
    assert len(bench.SET) == 8
    assert sorted(o.name for o in bench.set_outputs()) == sorted(bench.SET)


def test_an_output_no_longer_declared_stops_the_benchmark(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _benchmark()
    monkeypatch.setattr(bench, "SET", (*bench.SET, "no-such-output"))
    with pytest.raises(AssertionError, match="renamed"):
        bench.set_outputs()
