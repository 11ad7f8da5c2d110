"""jsontext.dumps writes what json.dumps(indent=4, sort_keys=True) writes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fabric.render import jsontext
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


@pytest.mark.parametrize("value", CASES)
def test_same_text_as_json_dumps(value: Any) -> None:
    assert jsontext.dumps(value) == json.dumps(value, indent=4, sort_keys=True)


def test_same_text_for_sonic_config_db() -> None:
    build = built("sonic-th5-512")
    sonic = PLATFORMS["sonic"]
    checked = 0
    for intent in list(build.intents.values())[:8]:
        db = sonic.config_db(intent)  # type: ignore[attr-defined]
        assert jsontext.dumps(db) == json.dumps(db, indent=4, sort_keys=True)
        checked += 1
    assert checked == 8


LINES: list[dict[Any, Any]] = [
    {},
    {"device": "leaf1", "u": 7, "rack": "", "x": None, "ok": True, "f": 2.5, "big": 10**20, "neg": -3},
    {"é": 'ü\u2028"\\/\x01', "nested": {"a": [1, {"b": "c"}]}, "list": [], "lone": "\ud800"},
    {1: "number key", "b": 2},
]


@pytest.mark.parametrize("value", LINES)
def test_line_is_json_dumps_without_ascii(value: dict[str, Any]) -> None:
    assert jsontext.line(value) == json.dumps(value, ensure_ascii=False)
