"""Rows in item order kept as columns (docs/dev/performance.md, "The physical sheet as columns"): the physical
sheet has a row per cable (per fibre of a link on several), 3,000,000 at a million GPUs; as tuples, each with its
one-item tuple of cable indices, they took ~470 MB and a sort. Most items' rows follow from three values (how
many, and the two ends' parts), kept here in lists of shared references; rows that span several items are kept
as they are and come out at their first item."""

from __future__ import annotations

from collections.abc import Iterator

# (item indices, number among the item's rows (0: its only row, unnumbered), how many, a end's part, b end's part)
Row = tuple[tuple[int, ...], int, int, "str | None", "str | None"]

_PLAIN = -1  # an item with one unnumbered row and no parts
_SPANNED = 0  # an item with no row of its own: a row spanning several items carries it


class IndexRows:
    """The rows of items 0, 1, 2… given in that order, one call per item: `plain` (`((i,), 0, 1, None, None)`),
    `numbered` (`((i,), k, n, a, b)` for k = 1…n) or `spanned` (its rows are others' `span`s). Iterating gives the
    rows sorted by (first item, number), as a list of every row would after a stable sort."""

    __slots__ = ("_a", "_b", "_count", "_spans")

    def __init__(self) -> None:
        self._count: list[int] = []
        self._a: list[str | None] = []
        self._b: list[str | None] = []
        self._spans: list[Row] = []

    def plain(self) -> None:
        self._count.append(_PLAIN)
        self._a.append(None)
        self._b.append(None)

    def numbered(self, n: int, a: str | None, b: str | None) -> None:
        if n < 1:
            raise ValueError(f"an item's numbered rows are at least one, not {n}")
        self._count.append(n)
        self._a.append(a)
        self._b.append(b)

    def spanned(self) -> None:
        self._count.append(_SPANNED)
        self._a.append(None)
        self._b.append(None)

    def span(self, row: Row) -> None:
        """A row carrying several items (each given as `spanned`), at its first item."""
        self._spans.append(row)

    def __len__(self) -> int:
        return sum(1 if n == _PLAIN else n for n in self._count if n != _SPANNED) + len(self._spans)

    def __iter__(self) -> Iterator[Row]:
        spans = sorted(self._spans, key=_order)
        k = 0
        a, b = self._a, self._b
        for i, n in enumerate(self._count):
            if n == _SPANNED:
                while k < len(spans) and spans[k][0][0] <= i:
                    yield spans[k]
                    k += 1
            elif n == _PLAIN:
                yield ((i,), 0, 1, None, None)
            else:
                items = (i,)
                for number in range(1, n + 1):
                    yield (items, number, n, a[i], b[i])
        yield from spans[k:]


def _order(row: Row) -> tuple[int, int]:
    return row[0][0], row[1]
