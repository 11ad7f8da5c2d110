"""The allocations lock (`allocations.lock.json`, format version 1): what a build assigned, read back so that
a build of a grown spec keeps it. Written by fabric/render/outputs/lock.py; read here, bounded, validated by kind.

Format (keys are a contract: added to, never renamed; a new meaning is a new `version`):

    {"format": "fabric-allocations-lock", "version": 1, "design": "<name>",
     "spec": {"nodes": {group: count}, "fabrics": {key: {"technology", "leaf", "spine", "core", "asn"}},
              "addressing": {pool: prefix}},       # the facts a move is explained by
     "devices": [{"name", "layer", "model", "fabric", "rack", "u"}],
     "cables": [{"id", "fabric", "a_device", "a_port", "b_device", "b_port"}],
     "addresses": [{"device", "interface", "address", "purpose", "fabric", "peer_device", "peer_interface"}],
     "asns": [{"device", "fabric", "asn", "router_id"}],
     "guids": [{"node", "guid"}]}       # InfiniBand node GUIDs by NodeDescription (placeholders unless inventoried)

A lock that cannot be read or is not a valid lock is a `lock-invalid` finding that says what is wrong where,
never what the file holds.

A lock is checked in two ways that accept the same locks. As a build writes it (every key of every entry, each
value in the form fabric writes: an address as `str()` of an interface), by columns: one compiled pattern over
a whole column joined, a set of the few distinct values of a name or port column. Anything else — a value of
another kind, a missing or extra key, an address written otherwise, a number too long, nesting too deep — goes
to the pydantic models of lockschema.py, which accept what they always accepted and say what is wrong where.
The columns come from lockstructs.py's msgspec structs, decoded from the bytes (keys and JSON types checked in
C as they are decoded), else from json.loads. A rebuild of 100k GPUs on RoCE reads a million addresses: ~2.9 s
CPU so (4.3 s from json.loads' dicts), where the models made a pydantic instance of each (~600 bytes and
several µs apiece).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, NamedTuple, cast

from pydantic import ValidationError

from fabric.fast.collector import gc_paused
from fabric.model.findings import FabricError, Finding, Severity
from fabric.spec import lockschema as schema
from fabric.spec.jsonio import JsonLimitError, load_json
from fabric.spec.lockschema import MAX_ENTRIES, LockedFabric, LockedSpec
from fabric.spec.reading import ReadError, decode, read_bytes
from fabric.spec.schema import is_name

__all__ = ["LockedFabric", "LockedSpec"]

LOCK_FILE = "allocations.lock.json"
LOCK_FORMAT = "fabric-allocations-lock"
LOCK_VERSION = 1

Column = Sequence[Any]  # the values of one key of a list's entries, in entry order


class LockedDevice(NamedTuple):
    name: str
    layer: str
    model: str
    fabric: str = ""
    rack: str = ""
    u: int = 0


class LockedCable(NamedTuple):
    id: str
    fabric: str
    a_device: str
    a_port: str
    b_device: str
    b_port: str


class LockedAddress(NamedTuple):
    device: str
    interface: str
    address: str  # an interface: address and prefix length
    purpose: str
    fabric: str = ""
    peer_device: str = ""
    peer_interface: str = ""


class LockedAsn(NamedTuple):
    device: str
    fabric: str
    asn: int
    router_id: str = ""


class LockedGuid(NamedTuple):
    node: str  # the NodeDescription: a switch, or `<device> <hca>`
    guid: str


# the lists of a lock: their entries' type (whose fields are the entry's keys, in the order a build writes them)
ENTRIES: dict[str, Any] = {  # type[NamedTuple] to mypy is a function
    "devices": LockedDevice,
    "cables": LockedCable,
    "addresses": LockedAddress,
    "asns": LockedAsn,
    "guids": LockedGuid,
}


@dataclass(frozen=True)
class Lock:
    """A valid lock: each list as its columns (in its entries' field order; a name or port held once), its entries
    made on first use. keep_locked compares a million addresses (100k GPUs on RoCE) column by column with the
    plan's; the entries, ~130 bytes each, are made only when something is not kept as it is."""

    design: str
    spec: LockedSpec
    columns: Mapping[str, tuple[Column, ...]]

    def _entries(self, key: str) -> tuple[Any, ...]:
        make = cast(Callable[[type, tuple[Any, ...]], Any], tuple.__new__)
        return tuple(map(make, repeat(ENTRIES[key]), zip(*self.columns[key], strict=True)))

    @cached_property
    def devices(self) -> tuple[LockedDevice, ...]:
        return self._entries("devices")

    @cached_property
    def cables(self) -> tuple[LockedCable, ...]:
        return self._entries("cables")

    @cached_property
    def addresses(self) -> tuple[LockedAddress, ...]:
        return self._entries("addresses")

    @cached_property
    def asns(self) -> tuple[LockedAsn, ...]:
        return self._entries("asns")

    @cached_property
    def guids(self) -> tuple[LockedGuid, ...]:
        return self._entries("guids")

    def as_data(self) -> dict[str, Any]:
        """The lock as JSON data, as fabric/render/outputs/lock.py's lock_data gives it."""
        lists = {key: [entry._asdict() for entry in getattr(self, key)] for key in ENTRIES}
        head = {"format": LOCK_FORMAT, "version": LOCK_VERSION, "design": self.design}
        return {**head, "spec": self.spec.model_dump(mode="json"), **lists}


@dataclass(frozen=True)
class LockInput:
    """A lock given to a build, read and validated; `allow_moves` turns moves from errors into warnings."""

    lock: Lock
    file: str
    allow_moves: bool = False


def _invalid(file: str, message: str, path: str = "") -> Finding:
    return Finding(
        Severity.ERROR,
        "lock-invalid",
        path,
        message,
        "give the allocations.lock.json a build wrote (--lock FILE), or build without one (--no-lock)",
        file,
        0,
    )


MAX_LOCK_FINDINGS = 20


# --------------------------------------------------------------------------------------------- by columns

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"  # schema.is_name: NAME_RE, at most MAX_NAME, and no '..' (apart)
_PORT = r"[A-Za-z0-9][A-Za-z0-9._/:-]{0,63}"  # schema.PORT_RE, and no '..' (apart)
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"  # no leading zero: ipaddress refuses them
_V4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_H = r"[0-9a-f]{1,4}"
_V6 = "|".join(  # every way of writing eight groups with at most one '::' (no IPv4 tail, no zone)
    (
        # k groups after the '::', the most first: an address of a /64 block's low bits (fd00::1:0:0:1) then fails
        # fastest (the order of the alternatives changes what is tried first, not what is taken: 0.4 -> 0.2 s for
        # the half million of 100k GPUs on RoCE)
        *(rf"(?:{_H}:){{1,{7 - k}}}(?::{_H}){{1,{k}}}" for k in range(6, 0, -1)),
        rf"(?:{_H}:){{7}}{_H}",
        rf"(?:{_H}:){{1,7}}:",
        rf":(?::{_H}){{1,7}}",
        "::",
    )
)
_V4_INTERFACE = rf"{_V4}/(?:3[0-2]|[12]?[0-9])"
_V6_INTERFACE = rf"(?:{_V6})/(?:12[0-8]|1[01][0-9]|[1-9]?[0-9])"


def _lines(pattern: str, optional: bool = False) -> re.Pattern[str]:
    """A pattern for a column joined by newlines: each line one whole value (`optional`: or empty)."""
    return re.compile(rf"^(?:{pattern}){'?' if optional else ''}$", re.MULTILINE)


NAME, OPT_NAME = _lines(_NAME), _lines(_NAME, optional=True)
PORT = _lines(_PORT, optional=True)  # a port may be empty (a row without a peer)
ADDRESS = _lines(f"{_V4_INTERFACE}|{_V6_INTERFACE}")
ROUTER_ID = _lines(_V4, optional=True)
GUID = _lines("0x[0-9a-f]{16}")


def _every(pattern: re.Pattern[str], values: Sequence[Any], dots: bool = True) -> bool:
    """Every value a str that `pattern` takes whole (`dots`: '..' allowed). One `sub` over the column joined: each
    value becomes NUL (which no value holds), so the result is known exactly; a value holding a newline makes an
    extra line."""
    return not values or _checked(pattern, values, dots) is not None


def _checked(pattern: re.Pattern[str], values: Sequence[Any], dots: bool) -> str | None:
    """_every's column joined (for _all to split again), or None when not every value is taken."""
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
    between the parser's freed objects (where the build's own objects would fill the gaps; a 100k-GPU build
    renders ~0.5 s slower so). For values without a newline."""
    return "\n".join(values).split("\n") if values else []


def _shared(values: Column, distinct: set[Any], text: bool = True) -> Column:
    """The column with one object per distinct value: a device name or port is held once, not once per row (a
    million rows at 100k GPUs on RoCE: ~350 MB less). Only for values of one type (1 == 1.0 == True)."""
    if len(distinct) * 2 > len(values):
        return _anew(values) if text else values
    first = list(distinct)
    canon = dict(zip(first, _anew(first) if text else first, strict=True))
    return list(map(canon.__getitem__, values))


def _few(pattern: re.Pattern[str], values: Column, dots: bool = False) -> Column | None:
    """As _every, for a column of few distinct values (names, ports): each checked once. (A value that is not a
    str equals no str: it stays in the set and fails there.)"""
    distinct = _distinct(values)
    if distinct is None or not _every(pattern, list(distinct), dots):
        return None
    return _shared(values, distinct)


def _one_of(allowed: frozenset[str], values: Column) -> Column | None:
    distinct = _distinct(values)
    if distinct is None or not all(type(v) is str for v in distinct) or not distinct <= allowed:
        return None
    return _shared(values, distinct)


def _short(values: Column) -> Column | None:
    """schema.Short: printable (each character, so the column joined), at most 128 characters."""
    try:
        joined = "".join(values)
    except TypeError:  # not every value a str
        return None
    if not joined.isprintable() or max(map(len, values), default=0) > 128:
        return None
    return _shared(values, set(values))


def _ints(low: int, high: int) -> Callable[[Column], Column | None]:
    def check(values: Column) -> Column | None:
        if set(map(type, values)) != {int}:  # every value: true, 1.0 and 1 are one in a set
            return None
        distinct = set(values)
        return _shared(values, distinct, text=False) if all(low <= v <= high for v in distinct) else None

    return check


def _all(pattern: re.Pattern[str], dots: bool = True) -> Callable[[Column], Column | None]:
    """A column of (mostly) distinct values, checked whole; made anew from the joined text it checked."""

    def check(values: Column) -> Column | None:
        if not values:
            return []
        joined = _checked(pattern, values, dots)
        return joined.split("\n") if joined is not None else None

    return check


def _some(pattern: re.Pattern[str]) -> Callable[[Column], Column | None]:
    return lambda values: _few(pattern, values)


LAYERS = frozenset(("node", "leaf", "spine", "core"))
PURPOSES = frozenset(schema.PURPOSES)

# each list's columns, in ENTRIES' field order: the check of the column (as the schema's field accepts a subset)
Check = Callable[[Column], Column | None]  # the column (its values shared), or None: not valid so
COLUMNS: dict[str, tuple[Check, ...]] = {
    "devices": (
        _all(NAME, dots=False),
        lambda v: _one_of(LAYERS, v),
        _short,
        _some(OPT_NAME),
        _some(OPT_NAME),
        _ints(0, 1000),
    ),
    "cables": (_all(NAME, dots=False), _some(NAME), _some(NAME), _some(PORT), _some(NAME), _some(PORT)),
    "addresses": (
        _some(NAME),
        _some(PORT),
        _all(ADDRESS),
        lambda v: _one_of(PURPOSES, v),
        _some(OPT_NAME),
        _some(OPT_NAME),
        _some(PORT),
    ),
    "asns": (_some(NAME), _some(NAME), _ints(1, 4294967295), _all(ROUTER_ID)),
    "guids": (_short, _all(GUID)),
}


def _entries(kind: Any, checks: tuple[Check, ...], data: Any) -> list[Column] | None:
    """The list's columns, when every entry holds exactly its keys and every column passes its check; else
    None."""
    keys = kind._fields
    if type(data) is not list or len(data) > MAX_ENTRIES:
        return None
    if not data:
        return [[] for _ in keys]
    try:
        if set(map(len, data)) != {len(keys)}:
            return None
        columns = [list(map(itemgetter(key), data)) for key in keys]  # KeyError: a key missing; TypeError: no object
    except (KeyError, TypeError):
        return None
    checked = []
    for check, column in zip(checks, columns, strict=True):
        values = check(column)
        if values is None:
            return None
        checked.append(values)
    return checked


HEAD = frozenset(("format", "version", "design", "spec", *ENTRIES))
Columns = tuple[str, LockedSpec, dict[str, list[Column]]]


def _head(form: Any, version: Any, design: Any, spec: Any) -> LockedSpec | None:
    """The lock's spec facts, when its format, version and design name are a build's; else None."""
    if form != LOCK_FORMAT or type(version) is not int or version != LOCK_VERSION:
        return None
    if type(design) is not str or not is_name(design):
        return None
    try:
        return LockedSpec.model_validate(spec)
    except (ValueError, RecursionError):  # invalid (a ValidationError is a ValueError) or too deep: the schema says
        return None


def _by_columns(data: Any) -> Columns | None:
    """The lock's columns, when it is in the form a build writes and valid; None for the schema to judge."""
    if type(data) is not dict or data.keys() != HEAD:
        return None
    design = data["design"]
    spec = _head(data["format"], data["version"], design, data["spec"])
    if spec is None:
        return None
    lists: dict[str, list[Column]] = {}
    for key, kind in ENTRIES.items():
        columns = _entries(kind, COLUMNS[key], data[key])
        if columns is None:
            return None
        lists[key] = columns
    return design, spec, lists


def _lock(found: Columns) -> Lock:
    design, spec, lists = found
    return Lock(design, spec, {key: tuple(map(tuple, columns)) for key, columns in lists.items()})


# --------------------------------------------------------------------------------------------- by structs


def _by_structs(data: bytes | str) -> Columns | None:
    """The lock's columns, when `data` is a lock in the form a build writes and valid; else None. Decoded into
    lockstructs.py's structs (~3x faster than json.loads making a dict per entry), then the column checks."""
    from fabric.spec import lockstructs  # (here: msgspec loads only for a lock)

    try:
        lock = lockstructs.DECODER.decode(data)
    except (ValueError, RecursionError):  # msgspec's errors are ValueErrors (not JSON, another form, a huge number)
        return None
    spec = _head(lock.format, lock.version, lock.design, lock.spec)
    if spec is None:
        return None
    lists: dict[str, list[Column]] = {}
    for key, kind in ENTRIES.items():
        entries = getattr(lock, key)
        if len(entries) > MAX_ENTRIES:
            return None
        columns = []
        for field, check in zip(kind._fields, COLUMNS[key], strict=True):
            values = list(map(attrgetter(field), entries))
            checked = values if field in lockstructs.DECODED or not values else check(values)
            if checked is None:
                return None
            columns.append(checked)
        lists[key] = columns
        setattr(lock, key, [])  # each list's structs freed once its columns are made
    return lock.design, spec, lists


# --------------------------------------------------------------------------------------------- by the schema


def _by_schema(data: Any, file: str) -> Lock:
    """The lock by the pydantic models, or FabricError with `lock-invalid` findings (where and what)."""
    try:
        model = schema.Lock.model_validate(data)
    except ValidationError as exc:
        findings = []
        for err in exc.errors(include_url=False)[:MAX_LOCK_FINDINGS]:
            # a key of the file is shown only when it is a name: the path never quotes hostile text
            where = ".".join(str(p) if isinstance(p, int) or is_name(p) else "<key>" for p in err["loc"])
            message = "missing" if err["type"] == "missing" else str(err["msg"]).removeprefix("Value error, ")
            findings.append(_invalid(file, f"not a valid lock: {message}", f"lock.{where}" if where else "lock"))
        raise FabricError(findings, spec_invalid=True) from None
    lists: dict[str, list[Column]] = {
        key: [[getattr(entry, field) for entry in getattr(model, key)] for field in kind._fields]
        for key, kind in ENTRIES.items()
    }
    return _lock((model.design, model.spec, lists))


def validate_lock(data: Any, file: str) -> Lock:
    """A lock from JSON data, or FabricError with `lock-invalid` findings."""
    with gc_paused():  # a million entries: each automatic collection would walk them again
        found = _by_columns(data)
        if found is not None:
            return _lock(found)
    return _by_schema(data, file)


def parse_lock(text: str, file: str) -> Lock:
    """A lock from JSON text, or FabricError with `lock-invalid` findings (where and what, never the text)."""
    with gc_paused():
        found = _by_structs(text)
    return _lock(found) if found is not None else _parse(text, file)


def _parse(text: str, file: str) -> Lock:
    """parse_lock without its decoder: json.loads and the column checks, else the schema."""
    with gc_paused():
        try:  # the text as a build writes it: parsed without a Python call per number and per node
            data = json.loads(text, parse_constant=_no_constant)
            found = _by_columns(data)
        except (ValueError, RecursionError):  # malformed, NaN, a number past 4,300 digits, too deep
            found = None
        data = None  # freed before the columns are made tuples
        if found is not None:
            return _lock(found)
    try:
        data = load_json(text)
    except json.JSONDecodeError as exc:
        raise FabricError([_invalid(file, f"is not JSON (line {exc.lineno})")], spec_invalid=True) from None
    except JsonLimitError as exc:
        raise FabricError([_invalid(file, f"is refused: {exc}")], spec_invalid=True) from None
    return _by_schema(data, file)


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def read_lock(path: Path, display: str | None = None) -> Lock:
    """The lock in a file (bounded read), or FabricError with `lock-invalid` findings."""
    name = display or str(path)
    try:
        data = read_bytes(path, "lock", name)
        with gc_paused():
            found = _by_structs(data)  # UTF-8 as a build writes it (no byte-order mark): decoded as it is read
        if found is not None:
            return _lock(found)
        text = decode(data, name)
    except ReadError as exc:
        raise FabricError([_invalid(name, exc.message)], spec_invalid=True) from None
    del data
    return _parse(text, name)
