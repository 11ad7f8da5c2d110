"""JSON text as `json.dumps(value, indent=4, sort_keys=True)` writes it, several times faster.

With an indent the standard library encodes in Python, one generator step per token; SONiC's config_db.json of
a 128-port switch is ~40,000 tokens, most of it QoS and buffer tables. This writes the same bytes (dicts with
text keys, lists, text, numbers, booleans, null) by joining strings; scalars go through the json module's own
C escaping. tests/test_jsontext.py checks it against json.dumps.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring as _utf8
from json.encoder import encode_basestring_ascii as _text
from typing import Any

_INDENT = "    "


def dumps(value: Any) -> str:
    """`json.dumps(value, indent=4, sort_keys=True)`."""
    return _value(value, "\n")


def _value(value: Any, newline: str) -> str:
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = newline + _INDENT
        pairs = sorted(value.items())  # (keys are unique: values are never compared)
        try:  # the common leaf: a row of text fields (escaping anything else raises TypeError)
            items = [f"{_text(k)}: {_text(v)}" for k, v in pairs]
        except TypeError:
            try:
                items = [f"{_text(k)}: {_value(v, inner)}" for k, v in pairs]
            except TypeError:  # numbers as keys: the json module's rules, as they are
                return json.dumps(value, indent=4, sort_keys=True).replace("\n", newline)
        return "{" + inner + ("," + inner).join(items) + newline + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        inner = newline + _INDENT
        return "[" + inner + ("," + inner).join(_value(v, inner) for v in value) + newline + "]"
    return json.dumps(value)  # numbers, booleans, null: as the json module writes them


def line(value: dict[str, Any]) -> str:
    """`json.dumps(value, ensure_ascii=False)` of a dict, several times faster when its values are text and
    whole numbers (a lock entry: a million of them at 100k GPUs); other values go to the json module."""
    try:
        items = [
            f"{_utf8(k)}: {_utf8(v) if v.__class__ is str else (str(v) if v.__class__ is int else _other(v))}"
            for k, v in value.items()
        ]
    except TypeError:  # a key that is not text: the json module's rules (numbers as keys, …)
        return json.dumps(value, ensure_ascii=False)
    return "{" + ", ".join(items) + "}"


def _other(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
