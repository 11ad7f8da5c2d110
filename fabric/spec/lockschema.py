"""The allocations lock's schema (fabric/spec/lock.py has the format): pydantic models that say, for a lock that
is not what a build writes, what is wrong where. A lock as a build wrote it is checked faster by lock.py's
column checks, which accept only what these accept; these models are then never built."""

# No `from __future__ import annotations`: pydantic would compile each annotation string (see fabric/spec/schema/).
from ipaddress import IPv4Address, ip_interface
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, ConfigDict, Field, StrictInt, StrictStr

from fabric.spec.schema import PORT_RE, StrictModel, is_name

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
# what an address row is for (allocation/allocate.py's AddressRow.purpose; a host that routes has its own two)
Purpose = Literal["loopback", "p2p", "server-gateway", "server", "mgmt-gateway", "mgmt", "host-loopback", "host-p2p"]
PURPOSES: tuple[str, ...] = get_args(Purpose)


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
    purpose: Purpose
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
