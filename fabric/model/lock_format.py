"""The allocations lock (`allocations.lock.json`, format version 1): what a build assigned, read back so that
a build of a grown spec keeps it. This module is the format, declared once: each list's entry type, whose fields
are the entry's keys in the order a build writes them, each annotated with the rule of its values. The writer
(fabric/render/outputs/lock.py) takes its columns from here; the reader (fabric/spec/lock.py) derives from the
rules its column checks, its msgspec decoder and the pydantic models that say what is wrong where.

Format (keys are a contract: added to, never renamed; a new meaning is a new `version`):

    {"format": "fabric-allocations-lock", "version": 1, "design": "<name>",
     "spec": {"nodes": {group: count}, "fabrics": {key: {"technology", "leaf", "spine", "core", "asn"}},
              "addressing": {pool: prefix}},       # the facts a move is explained by
     "devices": [{"name", "layer", "model", "fabric", "rack", "u"}],
     "cables": [{"id", "fabric", "a_device", "a_port", "b_device", "b_port"}],
     "addresses": [{"device", "interface", "address", "purpose", "fabric", "peer_device", "peer_interface"}],
     "asns": [{"device", "fabric", "asn", "router_id"}],
     "guids": [{"node", "guid"}]}       # InfiniBand node GUIDs by NodeDescription (placeholders unless inventoried)

A key with a default may be left out of a lock; a build writes every key.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from ipaddress import IPv4Address, ip_interface
from typing import Annotated, Any, NamedTuple, get_type_hints

LOCK_FILE = "allocations.lock.json"
LOCK_FORMAT = "fabric-allocations-lock"
LOCK_VERSION = 1
MAX_ENTRIES = 8_000_000  # a million GPUs on 3 tiers hold ~3,000,000 cables and, on RoCE, ~6,000,000 addresses


# --------------------------------------------------------------------------------------------- value rules


@dataclass(frozen=True)
class Text:
    """A string that `pattern` takes whole (`optional`: or empty; `dots`: '..' allowed, else refused even where
    the pattern takes it), as a build writes it. A lock written otherwise may hold what `accepts` takes (by
    default the same); anything else is `message`. `distinct`: the column's values are mostly distinct (an id,
    an address), else few (a name, a port)."""

    pattern: str
    message: str
    optional: bool = False
    distinct: bool = False
    dots: bool = False
    accepts: Callable[[str], bool] | None = field(default=None, compare=False)

    def takes(self, value: str) -> bool:
        """What a lock may hold (empty aside)."""
        if self.accepts is not None:
            return self.accepts(value)
        return re.fullmatch(self.pattern, value) is not None and (self.dots or ".." not in value)


@dataclass(frozen=True)
class Printable:
    """A printable string of at most `limit` characters (a model name, a NodeDescription)."""

    limit: int
    message: str


@dataclass(frozen=True)
class OneOf:
    """One of a few strings."""

    choices: tuple[str, ...]


@dataclass(frozen=True)
class Whole:
    """A JSON integer (not true, not 1.0) from `low` to `high`."""

    low: int
    high: int


Rule = Text | Printable | OneOf | Whole

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"  # schema.is_name: NAME_RE, at most MAX_NAME, and no '..'
_PORT = r"[A-Za-z0-9][A-Za-z0-9._/:-]{0,63}"  # schema.PORT_RE, and no '..'
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"  # no leading zero: ipaddress refuses them
_V4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_H = r"[0-9a-f]{1,4}"
_V6 = "|".join(  # every way of writing eight groups with at most one '::' (no IPv4 tail, no zone)
    (
        # k groups after the '::', the most first: an address of a /64 block's low bits (fd00::1:0:0:1) then fails
        # fastest (the order of the alternatives changes what is tried first, not what is taken)
        *(rf"(?:{_H}:){{1,{7 - k}}}(?::{_H}){{1,{k}}}" for k in range(6, 0, -1)),
        rf"(?:{_H}:){{7}}{_H}",
        rf"(?:{_H}:){{1,7}}:",
        rf":(?::{_H}){{1,7}}",
        "::",
    )
)
_GUID = "0x[0-9a-f]{16}"


_STRICT_INTERFACE = re.compile(r"[0-9A-Fa-f.:]{2,45}/[0-9]{1,3}")  # no scope id (`%…`), no netmask, nothing after


def _is_interface(value: str) -> bool:
    """An address and a prefix length, strictly: ipaddress takes any text after a `%` (a scope id) and a netmask
    for the prefix length; a lock holds neither."""
    if _STRICT_INTERFACE.fullmatch(value) is None:
        return False
    try:
        ip_interface(value)
    except ValueError:
        return False
    return True


def _is_v4(value: str) -> bool:
    try:
        IPv4Address(value)
    except ValueError:
        return False
    return True


NAME = Text(_NAME, "must be a device name (letters, digits, '.', '_', '-')")
OPT_NAME = Text(_NAME, NAME.message, optional=True)
ID = Text(_NAME, NAME.message, distinct=True)
PORT = Text(_PORT, "must be a port name", optional=True)  # a port may be empty (a row without a peer)
ADDRESS = Text(  # an interface: address and prefix length, as str() of one
    rf"{_V4}/(?:3[0-2]|[12]?[0-9])|(?:{_V6})/(?:12[0-8]|1[01][0-9]|[1-9]?[0-9])",
    "must be an address with a prefix length",
    distinct=True,
    dots=True,  # (none of these patterns takes '..': a column of them is not searched for it)
    accepts=_is_interface,
)
ROUTER_ID = Text(_V4, "must be an IPv4 address", optional=True, distinct=True, dots=True, accepts=_is_v4)
GUID = Text(_GUID, f"String should match pattern '^{_GUID}$'", distinct=True, dots=True)
SHORT = Printable(128, "must be printable and at most 128 characters")
LAYER = OneOf(("node", "leaf", "spine", "core"))
# what an address row is for (allocation/allocate.py's AddressRow.purpose; a host that routes has its own two)
PURPOSE = OneOf(("loopback", "p2p", "server-gateway", "server", "mgmt-gateway", "mgmt", "host-loopback", "host-p2p"))
PURPOSES = PURPOSE.choices
COUNT = Whole(0, 10_000_000)
# the ASNs a spec may plan (RFC 6996: 64512–65534 and 4200000000–4294967294; allocation/allocate.py's
# PRIVATE_ASN_RANGES): a locked ASN outside them (a public one, AS_TRANS 23456, the reserved 4294967295) is refused
PRIVATE_ASNS = ((64512, 65534), (4200000000, 4294967294))
# an address's prefix length by purpose, where the purpose fixes it (allocation/allocate.py): IPv4, IPv6
PREFIX_BY_PURPOSE = {
    "loopback": (32, 128),
    "host-loopback": (32, 128),
    "p2p": (31, 127),
    "host-p2p": (31, 127),
}


# --------------------------------------------------------------------------------------------- the entries


class LockedDevice(NamedTuple):
    name: Annotated[str, ID]
    layer: Annotated[str, LAYER]
    model: Annotated[str, SHORT]
    fabric: Annotated[str, OPT_NAME] = ""
    rack: Annotated[str, OPT_NAME] = ""
    u: Annotated[int, Whole(0, 1000)] = 0


class LockedCable(NamedTuple):
    id: Annotated[str, ID]
    fabric: Annotated[str, NAME]
    a_device: Annotated[str, NAME]
    a_port: Annotated[str, PORT]
    b_device: Annotated[str, NAME]
    b_port: Annotated[str, PORT]


class LockedAddress(NamedTuple):
    device: Annotated[str, NAME]
    interface: Annotated[str, PORT]
    address: Annotated[str, ADDRESS]
    purpose: Annotated[str, PURPOSE]
    fabric: Annotated[str, OPT_NAME] = ""
    peer_device: Annotated[str, OPT_NAME] = ""
    peer_interface: Annotated[str, PORT] = ""


class LockedAsn(NamedTuple):
    device: Annotated[str, NAME]
    fabric: Annotated[str, NAME]
    asn: Annotated[int, Whole(1, 4294967295)]  # and in a private range: checked with the lock whole (spec/lock.py)
    router_id: Annotated[str, ROUTER_ID] = ""


class LockedGuid(NamedTuple):
    node: Annotated[str, SHORT]  # the NodeDescription: a switch, or `<device> <hca>`
    guid: Annotated[str, GUID]


# the lists of a lock, in the order a build writes them: their entries' type
ENTRIES: dict[str, Any] = {  # type[NamedTuple] to mypy is a function
    "devices": LockedDevice,
    "cables": LockedCable,
    "addresses": LockedAddress,
    "asns": LockedAsn,
    "guids": LockedGuid,
}


def rules(kind: Any) -> dict[str, Rule]:
    """An entry type's fields and the rule of each, in field order."""
    hints = get_type_hints(kind, include_extras=True)
    return {name: hints[name].__metadata__[0] for name in kind._fields}


def columns(key: str) -> tuple[str, ...]:
    """A list's keys, in the order a build writes them."""
    return tuple(ENTRIES[key]._fields)
