"""Defence in depth at the renderers: no value can split or corrupt a line of a config.

The loader validates every string where it enters; this checks again what actually reaches the renderers,
whoever built it (the loader, a notebook, a test): every string of every switch intent before any platform
renders it (its JSON and YAML outputs included), and every value any template interpolates: the Jinja
environment refuses anything that is not a single line of printable text, and in the InfiniBand files,
which quote names with `"`, a `"` too. Line-based syntaxes (EOS, FRR, ifupdown2, opensm.conf) have no
quoting that could carry a line break, so such a value is refused, never escaped; JSON and YAML outputs
are serialized from data and quote what they must. Findings name the field and the offending character,
never the value (it may be a secret).
"""

from __future__ import annotations

import dataclasses
import enum
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from fabric.model.findings import FabricError, Finding, error
from fabric.model.text import first_refused

CODE = "render-unsafe-value"
HINT = (
    "names, addresses and free text are single lines of printable text; fix the value in the spec "
    "(the loader should have refused it: please report that too)"
)


class RenderRefused(FabricError):
    """Rendering refused: a value would split or corrupt a line of an output. Carries the findings."""


class UnsafeText(ValueError):
    """A template was asked to interpolate text that is not a single line of printable text."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def describe(char: str) -> str:
    """A character named without printing it (a line break, U+001B, …)."""
    names = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab", "\x00": "a NUL"}
    return names.get(char, f"U+{ord(char):04X}")


def first_unsafe(text: str, quote: str = "") -> str | None:
    """Why `text` is not one line of printable text (without `quote`), or None if it is."""
    bad = first_refused(text)  # the loader's text rule (fabric/model/text.py), without its normalising
    if quote and quote in text and (bad is None or text.index(quote) < text.index(bad)):
        bad = quote
    if bad is None:
        return None
    return f"holds {describe(bad) if bad != quote else 'a ' + repr(quote)[1:-1] + ' (the quote of its syntax)'}"


_ATOMS = (type(None), bool, int, float)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _children(value: Any) -> tuple[tuple[str, Any], ...] | None:
    """(label, child) pairs of a container value, or None for a leaf."""
    kind = type(value)
    names = _FIELDS.get(kind)
    if names is None:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            # its fields, and what it makes on first read that renderers read (`walked`: Subnet.members)
            walked = tuple(f.name for f in dataclasses.fields(value)) + getattr(kind, "walked", ())
            names = _FIELDS.setdefault(kind, walked)
        elif isinstance(value, BaseModel):
            names = _FIELDS.setdefault(kind, tuple(type(value).model_fields))
    if names is not None:
        return tuple((f".{n}", getattr(value, n)) for n in names)
    if isinstance(value, Mapping):
        return tuple(pair for k, v in value.items() for pair in ((f"[{k!r}] (key)", k), (f"[{k!r}]", v)))
    if isinstance(value, (tuple, list, set, frozenset)):
        return tuple((f"[{i}]", v) for i, v in enumerate(value))
    return None


_TEXT, _LEAF = "text", "leaf"
_WALK: dict[type, Callable[[Any], Iterable[Any]] | str] = {}  # per type: how _all_fine walks its values


def _walk(kind: type, value: Any) -> Callable[[Any], Iterable[Any]] | str:
    """How _all_fine treats values of `kind` (the rules of _children, decided once per type)."""
    if issubclass(kind, str):
        return _TEXT
    if issubclass(kind, (*_ATOMS, enum.Enum)):
        return _LEAF
    children = _children(value)
    if children is None:
        return _LEAF
    if dataclasses.is_dataclass(value) or isinstance(value, BaseModel):
        names = _FIELDS[kind]
        if len(names) == 1:
            return lambda v: (getattr(v, names[0]),)
        return operator.attrgetter(*names) if names else lambda v: ()
    if isinstance(value, Mapping):
        return lambda m: (*m.keys(), *m.values())
    return lambda v: v  # tuple, list, set, frozenset


def _all_fine(root: Any, quote: str) -> bool:
    """Fast path: is every string in `root` one line of printable text? (No paths kept: the values of each
    type are walked by a function decided once per type, a few million of them at 100k GPUs.)"""
    stack, seen = [root], set()
    walk = _WALK
    while stack:
        value = stack.pop()
        kind = type(value)
        how = walk.get(kind)
        if how is None:
            how = walk[kind] = _walk(kind, value)
        if how is _TEXT:
            if not value.isprintable() or (quote and quote in value):
                return False
        elif how is not _LEAF and id(value) not in seen:
            seen.add(id(value))
            stack.extend(how(value))  # type: ignore[operator]
    return True


def _bad_strings(root: Any, path: str, quote: str) -> Iterator[tuple[str, str]]:
    """(path, why) of every string in `root` that is not one line of printable text (the slow path)."""
    stack: list[tuple[str, Any]] = [(path, root)]
    seen: set[int] = set()
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            reason = first_unsafe(value, quote)
            if reason:
                yield where, reason
            continue
        if isinstance(value, (*_ATOMS, enum.Enum)) or id(value) in seen:
            continue
        seen.add(id(value))
        children = _children(value)
        if children:
            stack.extend((where + label, child) for label, child in reversed(children))


def unsafe_values(build: Any, *, infiniband: bool = False) -> list[Finding]:
    """An error for every string of the build's switch intents (and, with `infiniband`, its InfiniBand
    subnets, whose files also quote names with `"`) that is not a single line of printable text."""
    findings: list[Finding] = []
    for name, intent in build.intents.items():
        if not _all_fine(intent, ""):
            for path, reason in _bad_strings(intent, f"switch[{name!r}]", ""):
                findings.append(error(CODE, path, f"the value {reason}: it would split a config line", HINT))
    if infiniband:
        for subnet in build.infiniband.subnets:
            for path, reason in _bad_strings(subnet, f"infiniband[{subnet.directory!r}]", '"'):
                findings.append(error(CODE, path, f"the value {reason}: it would corrupt a subnet-manager file", HINT))
    return sorted(findings, key=lambda f: f.path)


def one_line(value: Any, quote: str = "") -> Any:
    """Jinja `finalize`: every interpolated value must be one line of printable text (without `quote`)."""
    if value.__class__ is str and value.isprintable() and not (quote and quote in value):
        return value  # the common case first: millions of calls for the big InfiniBand and cabling files
    if isinstance(value, _ATOMS):
        return value
    reason = first_unsafe(value if isinstance(value, str) else str(value), quote)
    if reason:
        raise UnsafeText(reason)
    return value
