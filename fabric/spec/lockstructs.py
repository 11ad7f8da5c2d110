"""The allocations lock as a build writes it, as msgspec structs: fabric/spec/lock.py decodes a lock's bytes
into them (imported on first use: a build without a lock never loads msgspec). The keys of each entry are
exactly these, none missing, no other (a key given twice: the last, as json.loads takes it); a text is a
JSON string, a number a JSON integer (not true, not 1.0), a layer or purpose one of its few (each held once,
the Literal's own string); all checked in C as the bytes are decoded. What they refuse goes to json.loads."""

# No `from __future__ import annotations`: msgspec reads the annotations as they are.
from typing import Any, Literal

import msgspec

from fabric.spec.lockschema import Purpose


class _Entry(msgspec.Struct, forbid_unknown_fields=True, gc=False):  # gc: no cycles; nothing for the collector
    pass


class Device(_Entry):
    name: str
    layer: Literal["node", "leaf", "spine", "core"]
    model: str
    fabric: str
    rack: str
    u: int


class Cable(_Entry):
    id: str
    fabric: str
    a_device: str
    a_port: str
    b_device: str
    b_port: str


class Address(_Entry):
    device: str
    interface: str
    address: str
    purpose: Purpose
    fabric: str
    peer_device: str
    peer_interface: str


class Asn(_Entry):
    device: str
    fabric: str
    asn: int
    router_id: str


class Guid(_Entry):
    node: str
    guid: str


class Lock(msgspec.Struct, forbid_unknown_fields=True):
    format: Any
    version: Any
    design: Any
    spec: Any
    devices: list[Device]
    cables: list[Cable]
    addresses: list[Address]
    asns: list[Asn]
    guids: list[Guid]


DECODER = msgspec.json.Decoder(Lock)
STRUCTS: dict[str, type[_Entry]] = {  # the lists of a lock
    "devices": Device,
    "cables": Cable,
    "addresses": Address,
    "asns": Asn,
    "guids": Guid,
}
DECODED = frozenset(("layer", "purpose"))  # fields the decoder checked whole (a Literal)
