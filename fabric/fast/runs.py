"""Whether the address integers of a plan's runs (allocation/allocate.py's AddressRun: first, count, step, IP
version) are all distinct, without the rows: at a million GPUs on RoCE the check that every address is assigned
once read 10,000,000 rows and put their integers in a set, 4.3 s and 0.9 GiB in the allocation checks' forked
child (each row read there is a page copied from the parent). A few thousand runs describe them; from
ARRAYS_FROM integers they are spelled out as numpy arrays (an IPv6 integer as its high and low 64 bits) and
sorted, below in a set (numpy does not load for a small design).

docs/dev/performance.md, "Addresses as runs"; tests/unit/fast/test_runs.py compares with a set of the integers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

ARRAYS_FROM = 100_000  # integers from which the runs are spelled out in arrays
_LOW = (1 << 64) - 1


class Run(Protocol):
    @property
    def version(self) -> int: ...
    @property
    def first(self) -> int: ...
    @property
    def count(self) -> int: ...
    @property
    def step(self) -> int: ...


def runs_distinct(runs: Sequence[Run]) -> bool:
    """Whether no integer comes twice among the runs of one IP version (a step of 0 repeats its first)."""
    if any(run.count > 1 and run.step == 0 for run in runs):
        return False
    if sum(run.count for run in runs) < ARRAYS_FROM:
        for version in {run.version for run in runs}:
            mine = [run for run in runs if run.version == version]
            seen: set[int] = set()
            for run in mine:
                seen.update(run.first + k * run.step for k in range(run.count))
            if len(seen) != sum(run.count for run in mine):
                return False
        return True
    return all(_distinct(_split([run for run in runs if run.version == v])) for v in {run.version for run in runs})


def _split(runs: Iterable[Run]) -> list[tuple[int, int, int, int]]:
    """The runs as (high 64 bits, low 64 bits of the first, count, step), cut where the low bits would carry."""
    out = []
    for run in runs:
        first, count, step = run.first, run.count, run.step
        while count > 0:
            low = first & _LOW
            fit = count if low + (count - 1) * step <= _LOW else (_LOW - low) // step + 1
            out.append((first >> 64, low, fit, step))
            first += fit * step
            count -= fit
    return out


def _distinct(runs: list[tuple[int, int, int, int]]) -> bool:
    import numpy as np

    if not runs:
        return True
    highs_of, lows_of, counts, steps = zip(*runs, strict=True)
    high, low, step = (np.array(column, dtype=np.uint64) for column in (highs_of, lows_of, steps))
    count = np.array(counts, dtype=np.int64)
    total = int(count.sum())
    starts = np.cumsum(count) - count
    within = (np.arange(total, dtype=np.int64) - np.repeat(starts, count)).astype(np.uint64)  # k of each run
    lows = np.repeat(low, count) + within * np.repeat(step, count)  # (no carry: _split cut the runs there)
    del within
    highs = np.repeat(high, count)
    order = _order(highs, lows)
    highs, lows = highs[order], lows[order]
    return not bool(((highs[1:] == highs[:-1]) & (lows[1:] == lows[:-1])).any())


def _order(highs: np.ndarray, lows: np.ndarray) -> np.ndarray:
    """The integers in order: by their low bits where every high part is one (an IPv4 plan), else by both."""
    import numpy as np

    if not len(highs) or bool((highs == highs[0]).all()):
        return np.argsort(lows, kind="stable")
    return np.lexsort((lows, highs))
