"""jsontext.dumps writes what json.dumps(indent=4, sort_keys=True) writes (of its Rows and Shared: of the dicts they
stand for)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fabric.fast import jsontext
from fabric.render.platforms import PLATFORMS
from tests.conftest import built

CASES: list[Any] = [
    {},
    [],
    "",
    {"b": {"x": "1", "a": ""}, "a": {}, "c": [1, 2.5, True, None, 'é\u2028"\\/\x01'], "d": {"e": []}},
    {"n": {2: "two", 10: "ten"}, "deep": [{"k": [[], {}]}, [{"z": {"y": "x"}}]], "f": -0.0, "big": 10**20},
    [{"ü": {"\ud800": "lone surrogate"}}],
]


def _table(kind: str) -> dict[str, Any]:
    return {"kind": {"b": "2", "a": "1"}, "rows": {"r1": {"x": kind}, "r0": {}}}


ROWS: list[Any] = [
    {"T": jsontext.Rows(("b", "a"), {"k2": ("2", "1"), "k1": ("\u00e9", '"')}), "S": {"x": {}}},
    {"T": jsontext.Rows((), {"z": (), "a|10.0.0.1/31": ()}), "E": jsontext.Rows(("x",), {})},
    {"T": jsontext.Rows(("name", "local"), {"p1": ("a", None), "p0": ("b", "c"), "p2": (None, None)})},
    {"T": jsontext.Rows(("n", "{x}"), {"p": ("1", "2")}), "U": jsontext.Rows(("n",), {"q": (None,)})},
    {"T": jsontext.Rows(("z%s", "a%", "m"), {"k%d": ("%s", "100%", "\u00e9"), "j": ("", "x", "y")})},
    [{"deep": jsontext.Rows(("v",), {"k": ("1",)})}, jsontext.Shared(_table, ("lossless",))],
    {"A": jsontext.Shared(_table, ("one",)), "B": {"C": jsontext.Shared(_table, ("one",))}},
    {"T": jsontext.table(("b", "a"), {"k": ("2", None)}), "S": jsontext.shared(_table, "made")},
]


@pytest.mark.parametrize("value", ROWS)
def test_rows_and_shared_as_the_dicts_they_stand_for(value: Any) -> None:
    text = jsontext.dumps(value)
    assert text == json.dumps(jsontext.plain(value), indent=4, sort_keys=True)
    assert jsontext.dumps(value) == text  # again, from the cached texts
    assert "Rows(" not in text and "Shared(" not in text


def test_a_shared_value_is_made_once_per_depth() -> None:
    made: list[str] = []

    def table(kind: str) -> dict[str, str]:
        made.append(kind)
        return {"k": kind}

    shared = jsontext.Shared(table, ("x",))
    value = {"a": shared, "b": jsontext.Shared(table, ("x",)), "c": [shared]}
    text = jsontext.dumps(value)
    assert made == ["x", "x"]  # once at the tables' depth (a, b) and once in the list (c)
    assert text == json.dumps(jsontext.plain(value), indent=4, sort_keys=True)


def test_rows_refuse_a_row_of_another_width() -> None:
    with pytest.raises(ValueError, match="one value per field"):
        jsontext.dumps({"T": jsontext.Rows(("a", "b"), {"k": ("1",)})})


@pytest.mark.parametrize("value", CASES)
def test_same_text_as_json_dumps(value: Any) -> None:
    assert jsontext.dumps(value) == json.dumps(value, indent=4, sort_keys=True)


def test_same_text_for_sonic_config_db() -> None:
    build = built("sonic-th5-512")
    sonic = PLATFORMS["sonic"]
    checked = 0
    for intent in list(build.intents.values())[:8]:
        db = sonic.config_db(intent)  # type: ignore[attr-defined]
        assert jsontext.dumps(db) == json.dumps(jsontext.plain(db), indent=4, sort_keys=True)
        checked += 1
    assert checked == 8


LINES: list[dict[Any, Any]] = [
    {},
    {"device": "leaf1", "u": 7, "rack": "", "x": None, "ok": True, "f": 2.5, "big": 10**20, "neg": -3},
    {"é": 'ü\u2028"\\/\x01', "nested": {"a": [1, {"b": "c"}]}, "list": [], "lone": "\ud800"},
    {1: "number key", "b": 2},
    {"{a}": "}{", "b{}": "{0}", "c": 1},  # braces: the key pattern is a format string
    {"device": "leaf2", "u": 7, "rack": "", "x": None, "ok": True, "f": 2.5, "big": 10**20, "neg": -3},  # again
]


@pytest.mark.parametrize("value", LINES)
def test_line_is_json_dumps_without_ascii(value: dict[str, Any]) -> None:
    assert jsontext.line(value) == json.dumps(value, ensure_ascii=False)


LINE_COLUMNS: list[tuple[tuple[str, ...], list[list[Any]]]] = [
    (("device", "n"), [["a", "b\u00e9"], [1, 20]]),
    (("k", "%s{x}"), [['q"uote\\', "\x01"], ["50%", "{}"]]),
    (("flag", "v"), [[True, False], [None, 2.5]]),  # not text or whole numbers: row by row
    (("a",), [[]]),
    (("i", "s"), [list(range(600)), [f"r{i}" for i in range(600)]]),  # more rows than bulk.CHUNK
]


@pytest.mark.parametrize(("keys", "columns"), LINE_COLUMNS)
def test_lines_are_line_of_each_row(keys: tuple[str, ...], columns: list[list[Any]]) -> None:
    expected = [
        "  " + json.dumps(dict(zip(keys, row, strict=True)), ensure_ascii=False) for row in zip(*columns, strict=True)
    ]
    assert ",\n".join(jsontext.lines(keys, columns, "  ", ",\n")) == ",\n".join(expected)
    assert len(expected) == len(columns[0])


def test_lines_refuse_columns_that_do_not_fit_the_keys() -> None:
    with pytest.raises(ValueError):
        jsontext.lines(("a", "b"), [["1"], []])
    with pytest.raises(ValueError):
        jsontext.lines(("a", "a"), [["1"], ["2"]])
