"""Rows of text through one `%` pattern each, many rows a call: the big tables (a million rows at 100k GPUs)
become a few thousand strings, not a string per row, and no Python frame runs per row."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain, islice

CHUNK = 256  # rows per string


def formatted(pattern: str, rows: Iterable[tuple[object, ...]], count: int, width: int, sep: str) -> list[str]:
    """Pieces whose `sep.join` is `sep.join(pattern % row for row in rows)`: `count` tuples of `width` values
    each (the caller makes sure of both: a row of another length would shift every row after it)."""
    rows = iter(rows)
    whole = count // CHUNK * CHUNK
    big = sep.join([pattern] * CHUNK)
    cells = chain.from_iterable(islice(rows, whole))
    pieces = list(map(big.__mod__, zip(*[cells] * (width * CHUNK), strict=False)))  # (whole: no partial group)
    tail = [pattern % row for row in rows]
    if tail:
        pieces.append(sep.join(tail))
    return pieces
