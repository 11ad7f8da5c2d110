"""CSV text as `csv.writer(out, lineterminator="\\n")` writes it, from columns, several times faster.

The big tables (a million rows at 100k GPUs on RoCE) are mostly text that needs no quoting. A column is
checked whole (one join, substring tests in C); when no cell of any column holds a comma, a quote or a line
break, the rows go through one `%` pattern each (render/bulk.py: no Python frame per row). Anything else — a
cell that needs quoting, a value that is not text, a single column (whose empty cell csv quotes) — goes to the
csv module as it is. tests/unit/fast/test_csvtext.py compares the two. Rows given as tuples of any values (cabling.csv)
go through `joined`, which judges its text instead (tests/unit/render/test_pictures.py).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from itertools import chain
from operator import itemgetter

from fabric.fast import bulk

_QUOTED = (",", '"', "\r", "\n")  # what makes csv.writer quote a cell (QUOTE_MINIMAL, the default dialect)


def _plain(column: Iterable[object]) -> bool:
    """Every cell is text that csv.writer writes as it is."""
    try:
        joined = "".join(column)  # type: ignore[arg-type]  # TypeError: a cell that is not text
    except TypeError:
        return False
    return not any(c in joined for c in _QUOTED)


def table(header: Sequence[str], columns: Sequence[Sequence[object]]) -> str:
    """The header line, then one line per row of `columns` (all of one length)."""
    if len({len(c) for c in columns}) > 1:
        raise ValueError(f"columns of {header} differ in length")
    if len(columns) > 1 and all(map(_plain, columns)):
        return _bulk(header, zip(*columns, strict=True), len(columns[0]), len(columns))
    return written(header, zip(*columns, strict=True))


def rows(header: Sequence[str], rows: Sequence[tuple[object, ...]]) -> str:
    """The header line, then one line per row (each of one value per column)."""
    width = len(header)
    same = width > 1 and set(map(len, rows)) <= {width} and set(map(type, rows)) <= {tuple}
    if same and _plain(chain.from_iterable(rows)):
        return _bulk(header, rows, len(rows), width)
    return written(header, rows)


def _bulk(header: Sequence[str], rows: Iterable[tuple[object, ...]], count: int, width: int) -> str:
    pattern = ",".join(["%s"] * width) + "\n"
    return "".join([written(header, ()), *bulk.formatted(pattern, rows, count, width, "")])


def joined(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str | None:
    """The table with its cells joined by commas in C, if that is what csv.writer writes (2.5x faster): every row a
    tuple of one cell per column, none None (csv writes "") or holding a quote, comma or line break (csv quotes
    those). Known from the text: no `None`, `"` or CR in it, one line break per row, a comma between cells; else
    None (the caller writes the table cell by cell)."""
    done = joined_rows(header, rows)
    return None if done is None else done[0]


def joined_rows(header: Sequence[str], rows: Iterable[Sequence[object]]) -> tuple[str, str] | None:
    """`joined`'s text, and the first character of each row (a quote-free text's row starts: a row's first cell
    starts there, found without a scan of the whole text for a line break before it)."""
    if len(header) < 2:  # csv writes a row of one empty cell as ""
        return None
    line = ",".join(["%s"] * len(header)) + "\n"
    try:
        lines = list(map(line.__mod__, rows))  # type: ignore[arg-type]  # a tuple each, else TypeError
    except TypeError:
        return None
    head = written(header, ())
    text = "".join([head, *lines])  # the header joined in: no copy of the whole text to put it in front
    if "None" in text or '"' in text or "\r" in text:  # (a header holding one only makes this say no)
        return None
    commas = len(lines) * (len(header) - 1) + head.count(",")
    if text.count("\n") != len(lines) + head.count("\n") or text.count(",") != commas:
        return None
    return text, "".join(map(itemgetter(0), lines))  # (a line holds its "\n" at least)


def written(header: Sequence[str], rows: Iterable[Iterable[object]]) -> str:
    """What the csv module writes: the header line, then the rows."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()
