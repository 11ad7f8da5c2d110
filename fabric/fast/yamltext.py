"""YAML text as PyYAML's safe dumper writes it (block style, keys in their order), several times faster.

PyYAML builds a node per value in Python before libyaml emits it; a 100k-GPU fabric's Prometheus targets,
Kubernetes objects and EOS structured configs are millions of nodes. The data these outputs hold are
mappings and sequences of text, numbers, booleans and null, so this writes the block layout itself and asks
PyYAML how to write each distinct scalar once (plain, quoted or escaped: its own choice, remembered).
Whatever it cannot vouch for — another type, a scalar PyYAML would spread over lines, a line long enough
that PyYAML might have folded it — goes to PyYAML whole. tests/unit/fast/test_yamltext.py compares the two.
"""

from __future__ import annotations

import re
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
