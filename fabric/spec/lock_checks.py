"""The allocations lock's checks, each derived from the format's rules (fabric/model/lock_format.py):

- column checks: a list's values key by key, as a build writes them (one compiled pattern over a whole column
  joined, a set of the few distinct values of a name or port column);
- the msgspec structs a lock's bytes decode into (keys and JSON types checked in C as they are decoded);
- the pydantic models that accept what a lock may hold and say, for anything else, what is wrong where.

The column checks take a subset of what the models take; fabric/spec/lock.py tries them first."""

# No `from __future__ import annotations`: pydantic and msgspec read the annotations as they are.
import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, StrictInt, StrictStr
from pydantic import create_model as _create_model

from fabric.model.lock_format import (
    COUNT,
    ENTRIES,
    LOCK_FORMAT,
    LOCK_VERSION,
    MAX_ENTRIES,
    NAME,
    SHORT,
    OneOf,
    Printable,
    Rule,
    Text,
    Whole,
    rules,
)
from fabric.spec.schema import StrictModel

Column = Sequence[Any]  # the values of one key of a list's entries, in entry order
Check = Callable[[Column], Column | None]  # the column (its values shared), or None: not valid so


# --------------------------------------------------------------------------------------------- by columns


def lines(pattern: str, optional: bool = False) -> re.Pattern[str]:
    """A pattern for a column joined by newlines: each line one whole value (`optional`: or empty)."""
    return re.compile(rf"^(?:{pattern}){'?' if optional else ''}$", re.MULTILINE)


def every(pattern: re.Pattern[str], values: Sequence[Any], dots: bool = False) -> bool:
    """Every value a str that `pattern` takes whole (`dots`: '..' allowed). One `sub` over the column joined: each value
    becomes NUL (which no value holds), so the result is known exactly; a value holding a newline makes an
    extra line."""
    return not values or _checked(pattern, values, dots) is not None


def _checked(pattern: re.Pattern[str], values: Sequence[Any], dots: bool) -> str | None:
    """every's column joined (for a distinct column to split again), or None when not every value is taken."""
    try:
        joined = "\n".join(values)
    except TypeError:  # not every value a str
        return None
    if "\0" in joined or (not dots and ".." in joined):  # no pattern takes NUL; '..' lies inside one value
        return None
    return joined if pattern.sub("\0", joined) == "\0\n" * (len(values) - 1) + "\0" else None


def _distinct(values: Column) -> set[Any] | None:
    try:
        return set(values)
    except TypeError:  # a list or an object
        return None


def _anew(values: Sequence[str]) -> list[str]:
    """The strings made again, one after the other: what outlives the parse then lies together, not scattered
    between the parser's freed objects (where the build's own objects would fill the gaps). For values without
    a newline."""
    return "\n".join(values).split("\n") if values else []


def _shared(values: Column, distinct: set[Any], text: bool = True) -> Column:
    """The column with one object per distinct value: a device name or port is held once, not once per row.
    Only for values of one type (1 == 1.0 == True)."""
    if len(distinct) * 2 > len(values):
        return _anew(values) if text else values
    first = list(distinct)
    canon = dict(zip(first, _anew(first) if text else first, strict=True))
    return list(map(canon.__getitem__, values))


def _few_of(pattern: re.Pattern[str], dots: bool) -> Check:
    """A column of few distinct values (names, ports): each checked once. (A value that is not a str equals no
    str: it stays in the set and fails there.)"""

    def check(values: Column) -> Column | None:
        distinct = _distinct(values)
        if distinct is None or not every(pattern, list(distinct), dots):
            return None
        return _shared(values, distinct)

    return check


def _all_of(pattern: re.Pattern[str], dots: bool) -> Check:
    """A column of (mostly) distinct values, checked whole; made anew from the joined text it checked."""

    def check(values: Column) -> Column | None:
        if not values:
            return []
        joined = _checked(pattern, values, dots)
        return joined.split("\n") if joined is not None else None

    return check


def _one_of(allowed: frozenset[str]) -> Check:
    def check(values: Column) -> Column | None:
        distinct = _distinct(values)
        if distinct is None or not all(type(v) is str for v in distinct) or not distinct <= allowed:
            return None
        return _shared(values, distinct)

    return check


def _printable(limit: int) -> Check:
    def check(values: Column) -> Column | None:
        try:
            joined = "".join(values)
        except TypeError:  # not every value a str
            return None
        if not joined.isprintable() or max(map(len, values), default=0) > limit:
            return None
        return _shared(values, set(values))

    return check


def _whole(low: int, high: int) -> Check:
    def check(values: Column) -> Column | None:
        if set(map(type, values)) != {int}:  # every value: true, 1.0 and 1 are one in a set
            return None
        distinct = set(values)
        return _shared(values, distinct, text=False) if all(low <= v <= high for v in distinct) else None

    return check


def column_check(rule: Rule) -> Check:
    """The check of a column of values under `rule`: the column with its values shared, or None."""
    if isinstance(rule, Text):
        pattern = lines(rule.pattern, rule.optional)
        return _all_of(pattern, rule.dots) if rule.distinct else _few_of(pattern, rule.dots)
    if isinstance(rule, Printable):
        return _printable(rule.limit)
    if isinstance(rule, OneOf):
        return _one_of(frozenset(rule.choices))
    return _whole(rule.low, rule.high)


# each list's column checks, in its entries' field order
COLUMNS: dict[str, tuple[Check, ...]] = {
    key: tuple(map(column_check, rules(kind).values())) for key, kind in ENTRIES.items()
}
# fields a msgspec decoder checks whole (a Literal)
DECODED = frozenset(f for kind in ENTRIES.values() for f, rule in rules(kind).items() if isinstance(rule, OneOf))


# --------------------------------------------------------------------------------------------- by structs


@cache
def decoder() -> Any:
    """A msgspec decoder of a lock as a build writes it: every key of each entry, none other (a key given twice:
    the last, as json.loads takes it); a text a JSON string, a number a JSON integer, a layer or purpose one of
    its few (each held once, the Literal's own string). msgspec loads here: only when a lock is read."""
    import msgspec

    def struct(kind: Any) -> Any:
        fields = [(name, _decoded_type(rule)) for name, rule in rules(kind).items()]
        # gc: an entry holds no cycles; nothing for the collector
        return msgspec.defstruct(kind.__name__, fields, forbid_unknown_fields=True, gc=False)

    head: list[Any] = [("format", Any), ("version", Any), ("design", Any), ("spec", Any)]
    lists = [(key, list[struct(kind)]) for key, kind in ENTRIES.items()]  # type: ignore[misc]
    return msgspec.json.Decoder(msgspec.defstruct("Lock", head + lists, forbid_unknown_fields=True))


def _decoded_type(rule: Rule) -> Any:
    if isinstance(rule, OneOf):
        return Literal[rule.choices]
    return int if isinstance(rule, Whole) else str


# --------------------------------------------------------------------------------------------- by the schema


def _text(rule: Text) -> Callable[[str], str]:
    def check(value: str) -> str:
        if (value or not rule.optional) and not rule.takes(value):
            raise ValueError(rule.message)
        return value

    return check


def _printable_text(rule: Printable) -> Callable[[str], str]:
    def check(value: str) -> str:
        if len(value) > rule.limit or not value.isprintable():
            raise ValueError(rule.message)
        return value

    return check


def annotation(rule: Rule) -> Any:
    """The pydantic type of a value under `rule` (its messages are the findings' text)."""
    if isinstance(rule, Text):
        return Annotated[StrictStr, AfterValidator(_text(rule))]
    if isinstance(rule, Printable):
        return Annotated[StrictStr, AfterValidator(_printable_text(rule))]
    if isinstance(rule, OneOf):
        return Literal[rule.choices]
    return Annotated[StrictInt, Field(ge=rule.low, le=rule.high)]


class _Locked(StrictModel):
    # built when a lock is first read: a build without one (the first into a directory) never pays for it
    model_config = ConfigDict(defer_build=True)


# the spec facts' values, under the entries' rules (as annotation() gives them: aliases, for the type checker)
Name = Annotated[StrictStr, AfterValidator(_text(NAME))]
Short = Annotated[StrictStr, AfterValidator(_printable_text(SHORT))]
Count = Annotated[StrictInt, Field(ge=COUNT.low, le=COUNT.high)]


class LockedFabric(_Locked):
    technology: Literal["infiniband", "ethernet"]
    leaf: Count
    spine: Count
    core: Count
    asn: Short = ""


class LockedSpec(_Locked):
    nodes: dict[Name, Count]
    fabrics: dict[Name, LockedFabric]
    addressing: dict[Name, Short]


_create: Any = _create_model  # fields given as data, which the type checker cannot follow


def _model(kind: Any) -> Any:
    defaults = kind._field_defaults
    fields = {name: (annotation(rule), defaults.get(name, ...)) for name, rule in rules(kind).items()}
    return _create(kind.__name__, __base__=_Locked, **fields)


def _lock_model() -> Any:
    lists = {
        key: (Annotated[list[_model(kind)], Field(max_length=MAX_ENTRIES)], ...)  # type: ignore[misc]
        for key, kind in ENTRIES.items()
    }
    return _create(
        "Lock",
        __base__=_Locked,
        format=(Literal[LOCK_FORMAT], ...),
        version=(Literal[LOCK_VERSION], ...),
        design=(Name, ...),
        spec=(LockedSpec, ...),
        **lists,
    )


LockModel = _lock_model()
