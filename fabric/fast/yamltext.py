"""YAML text as PyYAML's safe dumper writes it (block style, keys in their order), several times faster.

PyYAML builds a node per value in Python before libyaml emits it; a 100k-GPU fabric's Prometheus targets,
Kubernetes objects and EOS structured configs are millions of nodes. The data these outputs hold are
mappings and sequences of text, numbers, booleans and null, so this writes the block layout itself and asks
PyYAML how to write each distinct scalar once (plain, quoted or escaped: its own choice, remembered).
Whatever it cannot vouch for — another type, a scalar PyYAML would spread over lines, a line long enough
that PyYAML might have folded it — goes to PyYAML whole. tests/unit/fast/test_yamltext.py compares the two.

`form` writes many documents of one shape (a RoCE server's netplan: 12,500 at 100k GPUs, alike but for names,
addresses and numbers): the shape's text once, each document's scalars put in its slots.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import chain
from typing import Any

import yaml

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_OPTIONS: dict[str, Any] = {"Dumper": _DUMPER, "sort_keys": False, "default_flow_style": False}
_FOLD_MARGIN = 20  # a document whose lines all stay this far inside the width cannot have been folded
_SIMPLE_KEY = 128  # PyYAML writes a key of this length or more as a complex key
_MEMO = 100_000  # distinct scalars remembered (of either kind) before starting over

# text PyYAML writes as it is (plain): no indicator, space or special character where its analysis looks for
# one, and (checked below) none of the dumper's implicit resolvers (bool, int, float, null, …) claims it
_PLAIN = re.compile(r"(?!.*: )[A-Za-z0-9_/][A-Za-z0-9_./: -]*(?<![ :])\Z")
_RESOLVERS = _DUMPER.yaml_implicit_resolvers
_SCALARS: dict[Any, str] = {}  # value (a str) or (type, value) → as PyYAML writes it after `key: `
_KEYS: dict[Any, str] = {}  # the same for keys, written before `: `
_ATOMS = (int, bool, float, type(None))
# ints, booleans and null as PyYAML writes them, a memo per type (True == 1, but they are written differently),
# looked up inline as text is: a call of _scalar each was a tenth of an EOS structured config's time
_TYPED: dict[type, dict[Any, str]] = {int: {}, bool: {}, type(None): {}}


class _NotPlain(Exception):
    """A value the fast path leaves to PyYAML."""


def dump(data: Any, width: int = 80, as_text: tuple[type, ...] = ()) -> str:
    """`yaml.dump(data, Dumper=CSafeDumper, sort_keys=False, default_flow_style=False, width=width)`.

    With `as_text`, values of those types (addresses, …) are written as their `str()` and tuples as lists:
    the document PyYAML writes of `plain(data, as_text)`."""
    out: list[str] = []
    try:
        if type(data) is dict and data:
            _mapping(data, "", "", out, {id(data)}, as_text)
        elif type(data) is list and data:
            _sequence(data, "", "", out, {id(data)}, as_text)
        else:
            raise _NotPlain
        if max(map(len, out)) > width - _FOLD_MARGIN:
            raise _NotPlain
    except _NotPlain:
        return str(yaml.dump(plain(data, as_text) if as_text else data, width=width, **_OPTIONS))
    return "".join(out)


def plain(data: Any, as_text: tuple[type, ...]) -> Any:
    """`data` with values of the `as_text` types as text and tuples as lists (what PyYAML is then given)."""
    if isinstance(data, dict):
        return {plain(k, as_text): plain(v, as_text) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [plain(v, as_text) for v in data]
    if isinstance(data, as_text):
        return str(data)
    return data


def dump_all(documents: list[Any], width: int = 80) -> str:
    """`yaml.dump_all(documents, …, explicit_start=True)` with the options of `dump`."""
    return "".join("---\n" + dump(d, width) if _block(d) else _one(d, width) for d in documents)


def _block(document: Any) -> bool:
    return type(document) in (dict, list) and bool(document)


def _one(document: Any, width: int) -> str:
    return str(yaml.dump_all([document], width=width, explicit_start=True, **_OPTIONS))


def _scalar(value: Any, cache: dict[Any, str], key: bool, as_text: tuple[type, ...]) -> str:
    """One scalar as PyYAML writes it, remembered per distinct value."""
    kind = type(value)
    if kind is not str and kind not in _ATOMS:
        if not (as_text and isinstance(value, as_text)):
            raise _NotPlain
        value, kind = str(value), str
    if kind is float:
        return _written(value, key)  # not remembered: -0.0 == 0.0, but they are written differently
    typed = _TYPED.get(kind) if not key else None
    if typed is not None:
        cache, memo = typed, value
    else:
        memo = value if kind is str else (kind, value)  # True == 1, but they are written differently
    found = cache.get(memo)
    if found is None:
        found = _written(value, key)
        if len(cache) >= _MEMO:
            cache.clear()
        cache[memo] = found
    return found


def _new_text(value: str) -> str:
    """A text value met for the first time (no memo holds it: `_scalar` without its checks), then remembered."""
    found = _written(value, False)
    if len(_SCALARS) >= _MEMO:
        _SCALARS.clear()
    _SCALARS[value] = found
    return found


def _written(value: Any, key: bool) -> str:
    """Plain text as it is; anything else as PyYAML writes it, so the style (plain, quoted, escaped) is its own."""
    if key and type(value) is str and len(value) >= _SIMPLE_KEY:
        raise _NotPlain  # PyYAML writes it as a complex key, `? …`
    if type(value) is str and _PLAIN.match(value):
        for _, claims in _RESOLVERS.get(value[0], ()):
            if claims.match(value):
                break
        else:
            return value
    text = yaml.dump({value: 0} if key else {"k": value}, width=10_000, **_OPTIONS)
    found = text[: -len(": 0\n")] if key else text[len("k: ") : -1]
    if "\n" in found or (key and (found.startswith("?") or not text.endswith(": 0\n"))):
        raise _NotPlain
    return found


def _mapping(
    data: dict[Any, Any], lead: str, pad: str, out: list[str], seen: set[int], as_text: tuple[type, ...]
) -> None:
    """A block mapping: its first line starts with `lead`, the others with `pad`. A container met twice PyYAML
    writes as an anchor and an alias, so it gets the document (`seen`). Written inline, one string a line: this
    loop runs for every node."""
    keys, scalars, atoms = _KEYS, _SCALARS, _TYPED
    inner = pad + "  "
    for k, v in data.items():
        name = keys.get(k) if type(k) is str else None
        if name is None:
            name = _scalar(k, keys, True, as_text)
        kind = type(v)
        if kind is str:
            text = scalars.get(v)
            out.append(f"{lead}{name}: {_new_text(v) if text is None else text}\n")
        elif kind is dict or kind is list or (kind is tuple and as_text):
            if id(v) in seen:
                raise _NotPlain
            seen.add(id(v))
            if not v:
                out.append(f"{lead}{name}: {{}}\n" if kind is dict else f"{lead}{name}: []\n")
            elif kind is dict:
                out.append(f"{lead}{name}:\n")
                _mapping(v, inner, inner, out, seen, as_text)
            else:
                out.append(f"{lead}{name}:\n")
                _sequence(v, pad, pad, out, seen, as_text)  # PyYAML does not indent a sequence in a mapping
        else:
            typed = atoms.get(kind)
            text = typed.get(v) if typed is not None else None
            out.append(f"{lead}{name}: {_scalar(v, scalars, False, as_text) if text is None else text}\n")
        lead = pad


def _sequence(
    items: list[Any] | tuple[Any, ...], lead: str, pad: str, out: list[str], seen: set[int], as_text: tuple[type, ...]
) -> None:
    scalars = _SCALARS
    inner = pad + "  "
    for v in items:
        kind = type(v)
        if kind is str:
            text = scalars.get(v)
            out.append(f"{lead}- {_new_text(v) if text is None else text}\n")
        elif kind is dict or kind is list or (kind is tuple and as_text):
            if id(v) in seen:
                raise _NotPlain
            seen.add(id(v))
            if not v:
                out.append(f"{lead}- {{}}\n" if kind is dict else f"{lead}- []\n")
            elif kind is dict:
                _mapping(v, lead + "- ", inner, out, seen, as_text)
            else:
                _sequence(v, lead + "- ", inner, out, seen, as_text)
        else:
            out.append(f"{lead}- {_scalar(v, scalars, False, as_text)}\n")
        lead = pad


class Form:
    """The text of documents alike but for some scalars: the shape's text made once, each document's scalars put
    in its slots (`form`). `fill` writes what `dump` writes of the document whose scalars they are."""

    def __init__(self, pieces: tuple[str, ...], keys: tuple[bool, ...], width: int) -> None:
        self.pieces, self.keys, self.width = pieces, keys, width

    def fill(self, values: list[Any], document: Callable[[], Any]) -> str:
        """The text of the shape with `values` in its slots, in order; `document()` makes the whole document, for
        `dump` when a value is one the slots cannot vouch for (another type, a scalar PyYAML spreads over lines, a
        line long enough that PyYAML might fold it)."""
        if len(values) != len(self.keys):
            raise ValueError(f"{len(values)} values for {len(self.keys)} slots")
        scalars, ints = _SCALARS, _TYPED[int]
        texts: list[str] = []
        try:
            for v, key in zip(values, self.keys, strict=True):  # (text and ints inline, as _mapping writes them)
                kind = type(v)
                found = None if key else scalars.get(v) if kind is str else ints.get(v) if kind is int else None
                if found is None:
                    found = _scalar(v, _KEYS, True, ()) if key else _scalar(v, scalars, False, ())
                texts.append(found)
        except _NotPlain:
            return dump(document(), self.width)
        text = "".join(chain.from_iterable(zip(self.pieces, texts, strict=False))) + self.pieces[-1]
        if max(map(len, text.split("\n"))) + 1 > self.width - _FOLD_MARGIN:  # (as dump: a line and its newline)
            return dump(document(), self.width)
        return text


def slot(index: int) -> str:
    """What stands in a shape for the scalar `index` of each document (`form`)."""
    return f"yamltextslot{index}z"


def form(shape: Any, slots: int, width: int = 80) -> Form | None:
    """A Form of `shape`, a document whose scalars `slot(0)` … `slot(slots - 1)` (keys of mappings, or values of
    mappings and sequences, each once) stand for each document's own; None if the fast path would not write the
    shape, or a slot is elsewhere (inside a longer scalar, twice)."""
    out: list[str] = []
    try:
        if type(shape) is not dict or not shape:
            return None
        _mapping(shape, "", "", out, {id(shape)}, ())
    except _NotPlain:
        return None
    text = "".join(out)
    pieces: list[str] = []
    keys: list[bool] = []
    rest = text
    for index in range(slots):
        name = slot(index)
        before, found, after = rest.partition(name)
        if not found or name in after or name in "".join(pieces):
            return None
        line = before.rpartition("\n")[2]  # what the slot's line holds before it
        if after.startswith((": ", ":\n")) and not line.replace("- ", "").strip(" "):
            keys.append(True)
        elif after.startswith("\n") and line.endswith((": ", "- ")):
            keys.append(False)
        else:
            return None
        pieces.append(before)
        rest = after
    pieces.append(rest)
    if "yamltextslot" in "".join(pieces):
        return None  # a slot out of order, or one more than `slots`
    return Form(tuple(pieces), tuple(keys), width)
