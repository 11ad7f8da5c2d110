"""fabric/fast/runs.py: the runs' integers are distinct exactly when a set of them says so, in arrays (numpy, the
high and low 64 bits of IPv6 integers, runs cut where the low bits carry) and in a set."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric.fast import runs as runs_module
from fabric.fast.runs import runs_distinct


@dataclass(frozen=True)
class R:
    version: int
    first: int
    count: int
    step: int = 1


def _exact(runs: list[R]) -> bool:
    values = Counter((r.version, r.first + k * r.step) for r in runs for k in range(r.count))
    return all(n == 1 for n in values.values())


@pytest.fixture(params=["arrays", "set"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(runs_module, "ARRAYS_FROM", 0 if request.param == "arrays" else 10**9)
    return str(request.param)


def test_runs_of_a_plan_and_their_duplicates(engine: str) -> None:
    p2p = [R(4, 0x0A400000, 1000, 2), R(4, 0x0A400001, 1000, 2)]  # /31 ends, interleaved
    assert runs_distinct(p2p)
    assert not runs_distinct([*p2p, R(4, 0x0A400000 + 1998, 1)])  # the last link's lower end again
    assert runs_distinct([*p2p, R(6, 0x0A400000, 5)])  # an IPv6 integer may equal an IPv4 one
    # IPv6 runs across the 64-bit carry, and one that meets another only past it
    base = (0x20010DB8 << 96) + (1 << 64) - 3
    assert runs_distinct([R(6, base, 10), R(6, base + 10, 4)])
    assert not runs_distinct([R(6, base, 10), R(6, base + 9, 1)])
    assert not runs_distinct([R(6, base, 2, 0)])  # a step of 0 repeats its first
    assert runs_distinct([R(4, 7, 1, 0), R(4, 8, 0)])  # one integer, and an empty run
    assert runs_distinct([])


_runs = st.lists(
    st.builds(
        R,
        st.sampled_from([4, 6]),
        st.one_of(
            st.integers(0, 2**32 - 1),
            st.integers(2**64 - 40, 2**64 + 40),
            st.integers(0, 2**128 - 2**20),
        ),
        st.integers(0, 12),
        st.integers(0, 5),
    ),
    max_size=8,
)


@given(runs=_runs)
def test_distinct_exactly_when_a_set_says_so(runs: list[R]) -> None:
    default = runs_module.ARRAYS_FROM
    for threshold in (0, 10**9):
        runs_module.ARRAYS_FROM = threshold
        try:
            assert runs_distinct(runs) == _exact(runs), threshold
        finally:
            runs_module.ARRAYS_FROM = default
