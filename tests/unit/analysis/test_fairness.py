"""max_min gives the max-min fair allocation, checked by its definition rather than by a second implementation:
every flow's rate fits its demand and every link its capacity, and a flow below its demand has a bottleneck, a
full link on which no flow rises higher (Bertsekas and Gallager, Data Networks, 2nd ed., section 6.5.2: the
allocation with these properties is unique)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.analysis.traffic.fairness import first_alive, max_min
from tests.conftest import examples

TOL = 1e-7


def _instance(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Random flows over random links: weights below one (spraying), demands from a few values (many flows reach
    theirs in the same round, as the table's do) and some unbounded."""
    rng = np.random.default_rng(seed)
    links = int(rng.integers(2, 30))
    flows = int(rng.integers(1, 200))
    rows, cols, weights = [], [], []
    for f in range(flows):
        for link in rng.choice(links, size=int(rng.integers(1, min(links, 6) + 1)), replace=False):
            rows.append(f)
            cols.append(int(link))
            weights.append(float(rng.choice([0.25, 0.5, 1.0])))
    capacity = rng.choice([100.0, 200.0, 400.0], size=links)
    demand = rng.choice([5.0, 12.5, 50.0, 100.0, np.inf], size=flows)
    return np.asarray(rows), np.asarray(cols), np.asarray(weights), capacity, demand


def _is_max_min_fair(rows, cols, weights, capacity, demand, rate) -> int:  # type: ignore[no-untyped-def]
    """Asserts the definition; returns how many flows a bottleneck link holds (the rest reach their demand)."""
    assert np.all(rate >= 0) and np.all(rate <= demand * (1 + TOL))
    load = np.bincount(cols, weights=weights * rate[rows], minlength=len(capacity))
    assert np.all(load <= capacity * (1 + TOL))
    full = load >= capacity * (1 - TOL)
    top = np.zeros(len(capacity))
    np.maximum.at(top, cols, rate[rows])  # the highest rate on each link
    held = 0
    for f in np.flatnonzero(rate < demand * (1 - TOL)):
        mine = cols[rows == f]
        assert np.any(full[mine] & (rate[f] >= top[mine] * (1 - TOL))), f"flow {f} has no bottleneck"
        held += 1
    return held


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_max_min_is_max_min_fair(seed: int) -> None:
    rows, cols, weights, capacity, demand = _instance(seed)
    rate = max_min(rows, cols, weights, capacity, demand)
    _is_max_min_fair(rows, cols, weights, capacity, demand, rate)


def test_the_definition_holds_flows_to_both_limits() -> None:
    """The check sees both kinds of flow over these instances, and fails an allocation that is not fair."""
    held = reached = 0
    for seed in range(30):
        rows, cols, weights, capacity, demand = _instance(seed)
        rate = max_min(rows, cols, weights, capacity, demand)
        bottlenecked = _is_max_min_fair(rows, cols, weights, capacity, demand, rate)
        held += bottlenecked
        reached += len(rate) - bottlenecked
    assert held > 100 and reached > 100
    # negative: a flow held below what its bottleneck gives it (half its fair rate) fails the check
    rows, cols, weights, capacity, demand = _instance(3)
    rate = max_min(rows, cols, weights, capacity, demand)
    worse = rate.copy()
    worse[0] /= 2
    with pytest.raises(AssertionError):
        _is_max_min_fair(rows, cols, weights, capacity, demand, worse)


def test_first_alive_skips_the_frozen() -> None:
    alive = np.ones(1000, dtype=bool)
    order = np.arange(1000)[::-1].copy()
    alive[order[:700]] = False  # the first 700 in order are frozen: blocks of 64, 128, 256 and 512
    assert first_alive(alive, order, 0) == 700
    assert first_alive(alive, order, 700) == 700
    alive[order[700:999]] = False
    assert first_alive(alive, order, 3) == 999
    alive[order[999]] = False
    with pytest.raises(ValueError):
        first_alive(alive, order, 0)  # none alive: an error, not a loop past the end
