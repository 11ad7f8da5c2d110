"""Every string that enters from a file is one line of printable text (the rule of fabric/model/text.py: space
separators such as the no-break space normalised to a space; controls, line and paragraph separators, zero-width
and bidi characters, surrogates refused), and not unboundedly long. Checked once, on the plain data, before any
model sees it; a violation is a finding at its path, without the text itself."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabric.model.text import first_refused, normalise
from fabric.spec.yamlio import PathKey

MAX_TEXT = 4096  # characters in one string; a description is one line


def text_problem(value: str, max_length: int = MAX_TEXT) -> str | None:
    """Why `value` (normalised) is not one line of printable text, or None."""
    if len(value) > max_length:
        return f"is longer than {max_length:,} characters"
    char = first_refused(normalise(value))
    if char is not None:
        return f"holds the character U+{ord(char):04X}; text must be one line of printable characters"
    return None


def normalise_data(data: Any) -> Any:
    """`data` with every string (keys included) normalised by the text rule; containers changed in place."""
    if isinstance(data, dict):
        if any(isinstance(k, str) and not k.isprintable() for k in data):
            items = [(normalise(k) if isinstance(k, str) else k, v) for k, v in data.items()]
            if len({k for k, _ in items}) == len(items):  # (two keys equal once normalised: left to the checks)
                data.clear()
                data.update(items)
        for key, value in data.items():
            if isinstance(value, (str, dict, list)):
                data[key] = normalise_data(value)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            if isinstance(value, (str, dict, list)):
                data[index] = normalise_data(value)
    elif isinstance(data, str):
        return normalise(data)
    return data


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
