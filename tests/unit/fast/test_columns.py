"""fabric/fast/columns.py: IndexRows gives the rows a list of every row gives after a stable sort by (first item,
number), and as many."""

from __future__ import annotations

import random

import pytest

from fabric.fast.columns import IndexRows, Row


def _both(seed: int) -> tuple[IndexRows, list[Row]]:
    rng = random.Random(seed)
    rows, plain = IndexRows(), list[Row]()
    spanned: list[int] = []
    for i in range(300):
        pick = rng.random()
        if pick < 0.3:
            rows.plain()
            plain.append(((i,), 0, 1, None, None))
        elif pick < 0.7:
            n, a, b = rng.choice([1, 1, 2, 4]), rng.choice(["sr8", None]), rng.choice(["dr8", None])
            rows.numbered(n, a, b)
            plain.extend(((i,), k, n, a, b) for k in range(1, n + 1))
        else:
            rows.spanned()
            spanned.append(i)
    rng.shuffle(spanned)
    while spanned:  # spans of one to three items, given in any order, as the counts give them after the loop
        items = tuple(sorted(spanned[: rng.choice([1, 2, 3])]))
        del spanned[: len(items)]
        row = (items, 0, 1, rng.choice(["aoc", None]), None)
        rows.span(row)
        plain.append(row)
    plain.sort(key=lambda r: (r[0][0], r[1]))
    return rows, plain


@pytest.mark.parametrize("seed", range(20))
def test_the_rows_are_the_sorted_lists(seed: int) -> None:
    rows, plain = _both(seed)
    assert list(rows) == plain
    assert len(rows) == len(plain)
    assert list(rows) == plain  # read twice: the same rows


def test_a_numbered_item_has_a_row() -> None:
    with pytest.raises(ValueError):
        IndexRows().numbered(0, None, None)
    assert list(IndexRows()) == []
