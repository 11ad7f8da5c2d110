"""JSON text as `json.dumps(value, indent=4, sort_keys=True)` writes it, several times faster.

With an indent the standard library encodes in Python, one generator step per token; SONiC's config_db.json of
a 128-port switch is ~40,000 tokens, most of it QoS and buffer tables. This writes the same bytes (dicts with
text keys, lists, text, numbers, booleans, null) by joining strings; scalars go through the json module's own
C escaping. Two more kinds of value stand for dicts, so that big documents need not be built as dicts first:

- `Rows`: a table {key: {field: value}} given as one tuple of text values per key (SONiC's per-port tables):
  each row is written through a pattern made once per field set and depth, not a dict per row.
- `Shared`: `fn(*args)`, a value many documents of a build hold the same (the QoS tables of every switch
  with the same ports and profile): written once per depth and reused while cached.

`table` and `shared` make them; `plain` turns either back into dicts. tests/unit/fast/test_jsontext.py checks all
of it against json.dumps.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from json import encoder
from json.encoder import encode_basestring as _utf8
from operator import itemgetter
from typing import Any

from fabric.fast import bulk

_INDENT = "    "
_text: Callable[[Any], str] = encoder.encode_basestring_ascii  # TypeError for anything but text
_SHARED_MAX = 256  # cached texts of Shared values (a few per distinct port set and QoS profile of a build)


@dataclass(frozen=True, slots=True)
class Rows:
    """{key: {field: value}}: `rows` maps each key to its values, in `fields` order; None leaves a field out."""

    fields: tuple[str, ...]
    rows: Mapping[str, tuple[str | None, ...]]


@dataclass(frozen=True, slots=True)
class Shared:
    """`fn(*args)`, written once per depth and reused. `fn` must be pure: (fn, args) is the cache key."""

    fn: Callable[..., Any]
    args: tuple[Hashable, ...]


def table(fields: tuple[str, ...], rows: Mapping[str, tuple[str | None, ...]]) -> Rows:
    """The object {key: {field: value}} given as one tuple of text values per key, in `fields` order (None
    leaves a field out; no fields: every key maps to {}). `dumps` writes it as it would the dict."""
    return Rows(fields, rows)


def shared(fn: Callable[..., Any], *args: Hashable) -> Shared:
    """`fn(*args)`, a value many documents of a build hold alike: `dumps` writes it once and reuses the text.
    `fn` must be pure: (fn, args) is the cache key."""
    return Shared(fn, args)


_shared: dict[tuple[Callable[..., Any], tuple[Hashable, ...], str], str] = {}
_patterns: dict[tuple[tuple[str, ...], str], str] = {}
_percent: dict[tuple[tuple[str, ...], str], tuple[str, tuple[int, ...]]] = {}  # Rows: fields → % pattern, order
_line_patterns: dict[tuple[Any, ...], str] = {}  # line(): the keys of a key set, as a str.format pattern


def dumps(value: Any) -> str:
    """`json.dumps(plain(value), indent=4, sort_keys=True)`."""
    return _value(value, "\n")


def plain(value: Any) -> Any:
    """`value` with every Rows and Shared in it made dicts (what dumps writes them as)."""
    if isinstance(value, Rows):
        fields = value.fields
        return {k: {f: v for f, v in zip(fields, vs, strict=True) if v is not None} for k, vs in value.rows.items()}
    if isinstance(value, Shared):
        return plain(value.fn(*value.args))
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


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
                return json.dumps(plain(value), indent=4, sort_keys=True).replace("\n", newline)
        return "{" + inner + ("," + inner).join(items) + newline + "}"
    if isinstance(value, Rows):
        return _rows(value, newline)
    if isinstance(value, Shared):
        return _shared_text(value, newline)
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        inner = newline + _INDENT
        return "[" + inner + ("," + inner).join(_value(v, inner) for v in value) + newline + "]"
    return json.dumps(value)  # numbers, booleans, null: as the json module writes them


def line(value: dict[str, Any]) -> str:
    """`json.dumps(value, ensure_ascii=False)` of a dict, several times faster when its values are text and
    whole numbers (a lock entry: a million of them at 100k GPUs); other values go to the json module. The keys
    are written once per key set, as a pattern."""
    keys = tuple(value)
    pattern = _line_patterns.get(keys)
    if pattern is None:
        try:
            pattern = "{{" + ", ".join(_utf8(k).replace("{", "{{").replace("}", "}}") + ": {}" for k in keys) + "}}"
        except TypeError:  # a key that is not text: the json module's rules (numbers as keys, …)
            return json.dumps(value, ensure_ascii=False)
        if len(_line_patterns) > 1_000:
            _line_patterns.clear()
        _line_patterns[keys] = pattern
    return pattern.format(
        *[_utf8(v) if v.__class__ is str else (str(v) if v.__class__ is int else _other(v)) for v in value.values()]
    )


def lines(keys: tuple[str, ...], columns: Sequence[Sequence[Any]], indent: str = "", sep: str = "\n") -> list[str]:
    """Pieces whose `sep.join` is that of `indent + line(dict(zip(keys, row)))` for each row of `columns`, in bulk
    (the lock's million entries): a column of text that needs no escaping goes in between quotes as it is,
    other text through the json module's escaping once per cell, whole numbers as text; the rows then through
    one `%` pattern each (render/bulk.py). A column of anything else: row by row through line()."""
    if len({len(c) for c in columns}) > 1 or len(keys) != len(columns) or len(set(keys)) != len(keys):
        raise ValueError(f"columns of {keys}: not one per key, or of different lengths")
    places: list[str] = []
    cells: list[Sequence[Any]] = []
    for column in columns:
        kinds = set(map(type, column))
        if kinds <= {str}:
            joined = "".join(column)
            if len(_utf8(joined)) == len(joined) + 2:  # nothing in it is escaped
                places.append('"%s"')
                cells.append(column)
            else:
                places.append("%s")
                cells.append(list(map(_utf8, column)))
        elif kinds == {int}:  # (not bool, which json writes as true/false)
            places.append("%s")
            cells.append(column)
        else:
            return _by_row(keys, columns, indent)
    try:
        names = [_utf8(k).replace("%", "%%") for k in keys]
    except TypeError:  # a key that is not text: the json module's rules
        return _by_row(keys, columns, indent)
    pattern = indent.replace("%", "%%") + "{" + ", ".join(f"{n}: {p}" for n, p in zip(names, places, strict=True)) + "}"
    return bulk.formatted(pattern, zip(*cells, strict=True), len(columns[0]) if columns else 0, len(cells), sep)


def _by_row(keys: tuple[str, ...], columns: Sequence[Sequence[Any]], indent: str) -> list[str]:
    return [indent + line(dict(zip(keys, row, strict=True))) for row in zip(*columns, strict=True)]


def _other(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _rows(table: Rows, newline: str) -> str:
    if not table.rows:
        return "{}"
    inner = newline + _INDENT
    if set(map(len, table.rows.values())) != {len(table.fields)}:
        raise ValueError(f"a row of {table.fields} has not one value per field")
    names = sorted(table.rows)  # (text keys: faster sorted alone than as pairs)
    if not table.fields:  # keys alone (SONiC's `Ethernet0|10.0.0.1/31: {}`)
        return "{" + inner + (": {}," + inner).join(map(_text, names)) + ": {}" + newline + "}"
    try:  # every value text: one % pattern for all rows, every cell escaped by one C loop
        pattern, order = _percent.get((table.fields, inner)) or _percent_pattern(table.fields, inner)
        width = len(order)
        values = map(table.rows.__getitem__, names)
        if order != tuple(range(width)):  # the values in the pattern's order (fields by name)
            values = map(itemgetter(*order), values) if width > 1 else values
        cells = map(_text, chain.from_iterable(values))
        keys = map(_text, names)
        items = list(map(pattern.__mod__, zip(keys, *[cells] * width, strict=False)))
    except TypeError:  # a key or field that is not text, a field left out (None): row by row
        items = [_row(key, table.fields, table.rows[key], inner) for key in sorted(table.rows)]
    return "{" + inner + ("," + inner).join(items) + newline + "}"


def _row(key: str, fields: tuple[str, ...], values: tuple[str | None, ...], newline: str) -> str:
    present = tuple(f for f, v in zip(fields, values, strict=True) if v is not None)
    values = tuple(v for v in values if v is not None)
    try:
        pattern = _patterns.get((present, newline)) or _pattern(present, newline)
        return pattern.format(_text(key), *map(_text, values))
    except TypeError:  # a value that is not text: as a dict
        return _text(key) + ": " + _value(dict(zip(present, values, strict=True)), newline)


def _pattern(fields: tuple[str, ...], newline: str) -> str:
    """A key and its row of `fields` at `newline`'s depth, as str.format text: place 0 the key's text, place
    i the text of field i - 1 (fields written in name order, as sort_keys does)."""
    if len(set(fields)) != len(fields):
        raise ValueError(f"a field is named twice in {fields}")
    if not fields:
        pattern = "{0}: {{}}"
    else:
        inner = newline + _INDENT
        places = [
            _text(f).replace("{", "{{").replace("}", "}}") + ": {" + str(i + 1) + "}"
            for f, i in sorted((f, i) for i, f in enumerate(fields))
        ]
        pattern = "{0}: {{" + inner + ("," + inner).join(places) + newline + "}}"
    _patterns[(fields, newline)] = pattern
    return pattern


def _percent_pattern(fields: tuple[str, ...], newline: str) -> tuple[str, tuple[int, ...]]:
    """`_pattern` as % text: the key's text, then the fields' in name order; and that order (indices into
    `fields`)."""
    if len(set(fields)) != len(fields):
        raise ValueError(f"a field is named twice in {fields}")
    inner = newline + _INDENT
    ordered = sorted((f, i) for i, f in enumerate(fields))
    places = [_text(f).replace("%", "%%") + ": %s" for f, _ in ordered]
    pattern = "%s: {" + inner + ("," + inner).join(places) + newline.replace("%", "%%") + "}"
    _percent[(fields, newline)] = found = (pattern, tuple(i for _, i in ordered))
    return found


def _shared_text(value: Shared, newline: str) -> str:
    key = (value.fn, value.args, newline)
    text = _shared.get(key)
    if text is None:
        if len(_shared) >= _SHARED_MAX:
            _shared.clear()
        text = _shared[key] = _value(value.fn(*value.args), newline)
    return text
