"""The allocations lock read back (the format is fabric/model/lock_format.py): bounded, validated by kind.

A lock that cannot be read or is not a valid lock is a `lock-invalid` finding that says what is wrong where,
never what the file holds.

A lock is checked in two ways that accept the same locks, both derived from the format's rules
(fabric/spec/lock_checks.py). As a build writes it (every key of every entry, each value in the form fabric
writes: an address as `str()` of an interface), by columns: decoded into msgspec structs, else from json.loads,
then one check per column. Anything else — a value of another kind, a missing or extra key, an address written
otherwise, a number too long, nesting too deep — goes to the pydantic models, which accept what they always
accepted and say what is wrong where (docs/dev/performance.md: why by columns).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from fabric.fast.collector import gc_paused
from fabric.model.findings import FabricError, Finding, Severity
from fabric.model.lock_format import (
    ENTRIES,
    LOCK_FILE,
    LOCK_FORMAT,
    LOCK_VERSION,
    MAX_ENTRIES,
    PREFIX_BY_PURPOSE,
    PRIVATE_ASNS,
    LockedAddress,
    LockedAsn,
    LockedCable,
    LockedDevice,
    LockedGuid,
)
from fabric.spec import lock_checks
from fabric.spec.jsonio import JsonLimitError, load_json
from fabric.spec.lock_checks import COLUMNS, DECODED, Check, Column, LockedFabric, LockedSpec
from fabric.spec.reading import ReadError, decode, read_bytes
from fabric.spec.schema import is_name

__all__ = ["LOCK_FILE", "LockedFabric", "LockedSpec"]


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
    the format's msgspec structs (faster than json.loads making a dict per entry), then the column checks."""

    try:
        lock = lock_checks.decoder().decode(data)
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
            checked = values if field in DECODED or not values else check(values)
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
        model = lock_checks.LockModel.model_validate(data)
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


# --------------------------------------------------------------------------------------------- the lock whole


def _problems(lock: Lock) -> list[tuple[str, str]]:
    """(path, what) for what no single value shows: an ASN outside the private ranges, a prefix length its
    purpose does not have, an id, device name, router id or GUID given twice, a device or fabric an entry names
    that the lock does not hold. Never the values themselves (the path says which entry)."""
    out: list[tuple[str, str]] = []

    def once(key: str, field: str, values: Column, what: str, skip_empty: bool = False) -> None:
        distinct = set(values)
        if skip_empty and "" in distinct:
            if len(distinct) - 1 == len(values) - values.count(""):
                return
        elif len(distinct) == len(values):
            return
        first: dict[Any, int] = {}
        for i, value in enumerate(values):
            if skip_empty and value == "":
                continue
            if value in first:
                out.append((f"lock.{key}.{i}.{field}", f"{what} given twice (as in entry {first[value]})"))
            else:
                first[value] = i

    cables, devices, asns, guids = (lock.columns[k] for k in ("cables", "devices", "asns", "guids"))
    once("devices", "name", devices[0], "the device name is")
    once("cables", "id", cables[0], "the cable id is")
    once("asns", "device", asns[0], "the device's ASN is")
    once("asns", "router_id", asns[3], "the router id is", skip_empty=True)
    once("guids", "guid", guids[1], "the GUID is")
    once("guids", "node", guids[0], "the node's GUID is")
    if not all(any(lo <= asn <= hi for lo, hi in PRIVATE_ASNS) for asn in set(asns[2])):
        for i, asn in enumerate(asns[2]):
            if not any(lo <= asn <= hi for lo, hi in PRIVATE_ASNS):
                out.append((f"lock.asns.{i}.asn", "is not a private ASN (64512–65534, 4200000000–4294967294)"))
    address, purpose = lock.columns["addresses"][2], lock.columns["addresses"][3]
    # each purpose with its addresses' last four characters, which hold the '/' (a prefix length is at most three
    # digits): a few distinct pairs, made in C (a million addresses at 100k GPUs)
    pairs = set(zip(purpose, map(_TAIL, address), strict=True))
    if any(p in PREFIX_BY_PURPOSE and _length(tail) not in PREFIX_BY_PURPOSE[p] for p, tail in pairs):
        for i, (p, text) in enumerate(zip(purpose, address, strict=True)):
            if p in PREFIX_BY_PURPOSE and _length(text) not in PREFIX_BY_PURPOSE[p]:
                wanted = " or ".join(f"/{x}" for x in PREFIX_BY_PURPOSE[p])
                out.append((f"lock.addresses.{i}.address", f"a {p} address has the prefix length {wanted}"))
    names = set(devices[0])
    fabrics = set(lock.spec.fabrics)
    named = (
        ("devices", ((3, "fabric"),)),
        ("cables", ((1, "fabric"), (2, "a_device"), (4, "b_device"))),
        ("addresses", ((0, "device"), (4, "fabric"), (5, "peer_device"))),
        ("asns", ((0, "device"), (1, "fabric"))),
    )
    for key, fields in named:
        for index, field in fields:
            values = lock.columns[key][index]
            known = fabrics if field == "fabric" else names
            if set(values) - {""} <= known:
                continue
            kind = "fabric" if field == "fabric" else "device"
            where = "lock.spec.fabrics" if field == "fabric" else "lock.devices"
            for i, value in enumerate(values):
                if value and value not in known:
                    out.append((f"lock.{key}.{i}.{field}", f"names a {kind} that {where} does not hold"))
    return out


_TAIL = itemgetter(slice(-4, None))


def _length(text: str) -> int:
    """The prefix length of an address as the lock holds it (digits after its '/')."""
    return int(text.rpartition("/")[2])


def _checked(lock: Lock, file: str) -> Lock:
    """The lock, or FabricError with a `lock-invalid` finding for each of its problems (at most
    MAX_LOCK_FINDINGS)."""
    problems = _problems(lock)
    if problems:
        findings = [_invalid(file, f"not a valid lock: {what}", path) for path, what in problems[:MAX_LOCK_FINDINGS]]
        raise FabricError(findings, spec_invalid=True)
    return lock


def validate_lock(data: Any, file: str) -> Lock:
    """A lock from JSON data, or FabricError with `lock-invalid` findings."""
    with gc_paused():  # a million entries: each automatic collection would walk them again
        found = _by_columns(data)
        if found is not None:
            return _checked(_lock(found), file)
    return _checked(_by_schema(data, file), file)


def parse_lock(text: str, file: str) -> Lock:
    """A lock from JSON text, or FabricError with `lock-invalid` findings (where and what, never the text)."""
    with gc_paused():
        found = _by_structs(text)
    return _checked(_lock(found) if found is not None else _parse(text, file), file)


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
            return _checked(_lock(found), name)
        text = decode(data, name)
    except ReadError as exc:
        raise FabricError([_invalid(name, exc.message)], spec_invalid=True) from None
    del data
    return _checked(_parse(text, name), name)
