"""Every string that enters from a file is one line of printable text: no control characters (newline, ESC,
NUL), no lone surrogates, no line or paragraph separators, and not unboundedly long. Checked once, on the
plain data, before any model sees it; a violation is a finding at its path, without the text itself."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any

from fabric.spec.yamlio import PathKey

MAX_TEXT = 4096  # characters in one string; a description is one line
_BAD_CATEGORIES = {"Cc", "Cs", "Zl", "Zp", "Co", "Cn"}
_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")  # reorder what a terminal shows


def text_problem(value: str, max_length: int = MAX_TEXT) -> str | None:
    """Why `value` is not one line of printable text, or None."""
    if len(value) > max_length:
        return f"is longer than {max_length:,} characters"
    for char in value:
        if (
            unicodedata.category(char) in _BAD_CATEGORIES
            or char in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
        ):
            return f"holds the character U+{ord(char):04X}; text must be one line of printable characters"
    return None


def text_problems(data: Any, path: PathKey = ()) -> Iterator[tuple[PathKey, bool, str]]:
    """(path, is_key, problem) for every bad string in `data`, keys included."""
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(key, str) and (problem := text_problem(key, 256)):
                yield path, True, problem
                continue
            yield from text_problems(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from text_problems(value, (*path, index))
    elif isinstance(data, str) and (problem := text_problem(data)):
        yield path, False, problem
