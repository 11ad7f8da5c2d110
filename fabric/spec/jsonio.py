"""JSON from outside (LLDP neighbour tables) with limits: nesting depth, number length, no NaN."""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
MAX_NUMBER = 40  # characters of one number; Python refuses ints past 4,300 digits with a ValueError


class JsonLimitError(ValueError):
    """Valid JSON that fabric refuses to hold: the message says which limit, never the text."""


def _number(text: str) -> Any:
    if len(text) > MAX_NUMBER:
        raise JsonLimitError(f"a number longer than {MAX_NUMBER} characters")
    return float(text) if any(c in text for c in ".eE") else int(text)


def _constant(name: str) -> Any:
    raise JsonLimitError(f"{name} is not a JSON number")


def load_json(text: str) -> Any:
    """json.loads, or JSONDecodeError (malformed) or JsonLimitError (too deep, a huge number, NaN)."""
    try:
        data = json.loads(text, parse_int=_number, parse_float=_number, parse_constant=_constant)
    except RecursionError:
        raise JsonLimitError(f"nested deeper than {MAX_DEPTH} levels") from None
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise JsonLimitError(f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return data
