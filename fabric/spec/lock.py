"""The allocations lock (`allocations.lock.json`, format version 1): what a build assigned, read back so that
a build of a grown spec keeps it. Written by fabric/render/lock.py; read here, bounded, validated by kind.

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
"""

# No `from __future__ import annotations`: pydantic would compile each annotation string (see schema.py).
import json
from dataclasses import dataclass
from ipaddress import IPv4Address, ip_interface
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from fabric.model.findings import FabricError, Finding, Severity
from fabric.spec.jsonio import JsonLimitError, load_json
from fabric.spec.reading import ReadError, read_text
from fabric.spec.schema import PORT_RE, StrictModel, is_name

LOCK_FILE = "allocations.lock.json"
LOCK_FORMAT = "fabric-allocations-lock"
LOCK_VERSION = 1
MAX_ENTRIES = 2_000_000  # far above any real fabric (100k GPUs hold ~400k cables), far below memory trouble


def _name(value: str) -> str:
    if not is_name(value):
        raise ValueError("must be a device name (letters, digits, '.', '_', '-')")
    return value


def _port(value: str) -> str:
    if value and (not PORT_RE.match(value) or ".." in value):
        raise ValueError("must be a port name")
    return value


def _short(value: str) -> str:
    if len(value) > 128 or not value.isprintable():
        raise ValueError("must be printable and at most 128 characters")
    return value


def _address(value: str) -> str:
    try:
        ip_interface(value)
    except ValueError:
        raise ValueError("must be an address with a prefix length") from None
    return value


def _router_id(value: str) -> str:
    if value:
        try:
            IPv4Address(value)
        except ValueError:
            raise ValueError("must be an IPv4 address") from None
    return value


Name = Annotated[StrictStr, AfterValidator(_name)]
OptName = Annotated[StrictStr, AfterValidator(lambda v: _name(v) if v else v)]
Port = Annotated[StrictStr, AfterValidator(_port)]
Short = Annotated[StrictStr, AfterValidator(_short)]
Address = Annotated[StrictStr, AfterValidator(_address)]
RouterId = Annotated[StrictStr, AfterValidator(_router_id)]
Count = Annotated[StrictInt, Field(ge=0, le=10_000_000)]


class _Locked(StrictModel):
    # built when a lock is first read: a build without one (the first into a directory) never pays for it
    model_config = ConfigDict(defer_build=True)


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


class LockedDevice(_Locked):
    name: Name
    layer: Literal["node", "leaf", "spine", "core"]
    model: Short
    fabric: OptName = ""
    rack: OptName = ""
    u: Annotated[StrictInt, Field(ge=0, le=1000)] = 0


class LockedCable(_Locked):
    id: Name
    fabric: Name
    a_device: Name
    a_port: Port
    b_device: Name
    b_port: Port


class LockedAddress(_Locked):
    device: Name
    interface: Port
    address: Address
    purpose: Literal["loopback", "p2p", "server-gateway", "server", "mgmt-gateway", "mgmt"]
    fabric: OptName = ""
    peer_device: OptName = ""
    peer_interface: Annotated[StrictStr, AfterValidator(_port)] = ""


class LockedAsn(_Locked):
    device: Name
    fabric: Name
    asn: Annotated[StrictInt, Field(ge=1, le=4294967295)]
    router_id: RouterId = ""


class LockedGuid(_Locked):
    node: Short  # the NodeDescription: a switch, or `<device> <hca>`
    guid: Annotated[StrictStr, Field(pattern=r"^0x[0-9a-f]{16}$")]


class Lock(_Locked):
    format: Literal["fabric-allocations-lock"]
    version: Literal[1]
    design: Name
    spec: LockedSpec
    devices: Annotated[list[LockedDevice], Field(max_length=MAX_ENTRIES)]
    cables: Annotated[list[LockedCable], Field(max_length=MAX_ENTRIES)]
    addresses: Annotated[list[LockedAddress], Field(max_length=MAX_ENTRIES)]
    asns: Annotated[list[LockedAsn], Field(max_length=MAX_ENTRIES)]
    guids: Annotated[list[LockedGuid], Field(max_length=MAX_ENTRIES)]


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


def parse_lock(text: str, file: str) -> Lock:
    """A lock from JSON text, or FabricError with `lock-invalid` findings (where and what, never the text)."""
    try:
        data = load_json(text)
    except json.JSONDecodeError as exc:
        raise FabricError([_invalid(file, f"is not JSON (line {exc.lineno})")], spec_invalid=True) from None
    except JsonLimitError as exc:
        raise FabricError([_invalid(file, f"is refused: {exc}")], spec_invalid=True) from None
    try:
        return Lock.model_validate(data)
    except ValidationError as exc:
        findings = []
        for err in exc.errors(include_url=False)[:MAX_LOCK_FINDINGS]:
            # a key of the file is shown only when it is a name: the path never quotes hostile text
            where = ".".join(str(p) if isinstance(p, int) or is_name(p) else "<key>" for p in err["loc"])
            message = "missing" if err["type"] == "missing" else str(err["msg"]).removeprefix("Value error, ")
            findings.append(_invalid(file, f"not a valid lock: {message}", f"lock.{where}" if where else "lock"))
        raise FabricError(findings, spec_invalid=True) from None


def read_lock(path: Path, display: str | None = None) -> Lock:
    """The lock in a file (bounded read), or FabricError with `lock-invalid` findings."""
    name = display or str(path)
    try:
        text = read_text(path, "lock", name)
    except ReadError as exc:
        raise FabricError([_invalid(name, exc.message)], spec_invalid=True) from None
    return parse_lock(text, name)
