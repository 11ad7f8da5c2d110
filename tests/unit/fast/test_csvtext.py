"""csvtext writes what csv.writer(lineterminator="\\n") writes, by its fast path and by the csv module's."""

from __future__ import annotations

import csv
import io

from hypothesis import given
from hypothesis import strategies as st

from fabric.fast import csvtext

CELLS = st.one_of(st.text(alphabet='ab ,"\r\n-=é', max_size=4), st.integers(-5, 5), st.none())


def _csv(header: list[str], rows: list[tuple[object, ...]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


@given(st.integers(1, 4).flatmap(lambda n: st.lists(st.tuples(*[CELLS] * n), max_size=6)))
def test_table_and_rows_write_what_the_csv_module_writes(rows: list[tuple[object, ...]]) -> None:
    width = len(rows[0]) if rows else 2
    header = [f"c{i}" for i in range(width)]
    expected = _csv(header, rows)
    assert csvtext.rows(header, rows) == expected
    columns = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in header]
    assert csvtext.table(header, columns) == expected


def test_plain_text_takes_the_fast_path_and_odd_rows_the_csv_module() -> None:
    header = ["a", "b"]
    rows: list[tuple[object, ...]] = [("x", ""), ("", "y z")]
    assert csvtext.rows(header, rows) == "a,b\nx,\n,y z\n"
    assert csvtext.table(header, [["x", ""], ["", "y z"]]) == "a,b\nx,\n,y z\n"
    ragged: list[tuple[object, ...]] = [("x",), ("y", "z", "w")]
    assert csvtext.rows(header, ragged) == _csv(header, ragged) == "a,b\nx\ny,z,w\n"
    assert csvtext.table(["a"], [[""]]) == 'a\n""\n'  # one empty cell alone: csv quotes it


def test_columns_of_different_lengths_are_refused() -> None:
    try:
        csvtext.table(["a", "b"], [["1"], []])
    except ValueError as exc:
        assert "differ in length" in str(exc)
    else:
        raise AssertionError("no ValueError")


def test_more_rows_than_a_chunk() -> None:
    rows: list[tuple[object, ...]] = [(f"a{i}", str(i), "") for i in range(600)]
    expected = _csv(["x", "y", "z"], rows)
    assert csvtext.rows(["x", "y", "z"], rows) == expected
    assert csvtext.table(["x", "y", "z"], [list(c) for c in zip(*rows, strict=True)]) == expected
    assert expected.count("\n") == 601
