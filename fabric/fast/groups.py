"""Cable ends grouped by the cage they sit in, as integer arrays (numpy), for the allocation's one-plug-per-cage pass
(allocation/allocate.py) on a large fabric: at a million GPUs 6,000,000 ends in ~3,500,000 cages, whose ends as
tuples, in a dict of lists, held 1.4 GiB at the allocation's peak (the parent's peak of a `fabric validate`) and
took ~3 s to build. Here each end is one integer (its device's number, then its cage's), the cages are found by
one sort, and a cage's cables are listed only when the pass reads them.

docs/dev/performance.md, "Cages as integer groups", says which benchmark shows it;
tests/unit/allocation/test_cage_groups.py compares the pass with the dict of lists it replaces on every bundled
design and the broken specs of cages.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np


class EndGroups:
    """The cages of cables' ends. `a`, `b`: each cable's two ends as integer cage keys (equal keys, one cage);
    `kinds`: each cable's kind of medium as a small integer. A cage is a group number; its cables are listed in
    cable order, a cable with both ends in it twice (as the pass appended them)."""

    def __init__(self, a: array[int], b: array[int], kinds: Sequence[int]) -> None:
        cables = len(a)
        ends = np.empty(2 * cables, dtype=np.int64)
        ends[0::2] = np.frombuffer(a, dtype=np.int64)  # (ends in cable order: a cable's a, then its b)
        ends[1::2] = np.frombuffer(b, dtype=np.int64)
        # one stable sort: the ends cage by cage (a cage's in cable order), a cage's number its rank among the keys
        order = np.argsort(ends, kind="stable")
        ranked = ends[order]
        del ends
        new = np.empty(len(ranked), dtype=bool)
        new[:1] = True
        np.not_equal(ranked[1:], ranked[:-1], out=new[1:])
        del ranked
        starts = np.flatnonzero(new)
        group = np.empty(len(order), dtype=np.int64)
        group[order] = np.cumsum(new) - 1
        del new
        self._group = group
        self._order = order
        self._starts = np.append(starts, len(order))
        self._counts = np.diff(self._starts)
        self._first = order[starts]  # (stable: a cage's first end in cable order)
        self._kinds = np.asarray(kinds, dtype=np.int8)

    def of(self, cable: int) -> tuple[int, int]:
        """The cages of the cable's two ends."""
        return int(self._group[2 * cable]), int(self._group[2 * cable + 1])

    def count(self, cage: int) -> int:
        """How many cable ends the cage holds."""
        return int(self._counts[cage])

    def cables(self, cage: int) -> list[int]:
        """The cables with an end in the cage, in cable order."""
        return (self._order[self._starts[cage] : self._starts[cage + 1]] // 2).tolist()  # type: ignore[no-any-return]

    def mixed(self, plain: Sequence[int]) -> list[int]:
        """The cages of more than one end whose cables are not all of one kind in `plain`, in the order the cables
        reach them first."""
        kinds = self._kinds[self._order // 2]
        starts = self._starts[:-1]
        low = np.minimum.reduceat(kinds, starts) if len(kinds) else kinds
        high = np.maximum.reduceat(kinds, starts) if len(kinds) else kinds
        alike = (low == high) & np.isin(low, np.asarray(plain, dtype=np.int8))
        wanted = np.flatnonzero((self._counts > 1) & ~alike)
        return wanted[np.argsort(self._first[wanted], kind="stable")].tolist()  # type: ignore[no-any-return]
