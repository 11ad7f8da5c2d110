"""allocations.lock.json: every assignment of a build (names, rack positions, cable ids and ends, addresses,
ASNs, InfiniBand node GUIDs) and the spec facts that explain them, serialized from data; the format (version 1,
keys kept) and each list's keys are fabric/model/lock_format.py's, read back by fabric/spec/lock.py."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fabric.allocation.lock import spec_facts
from fabric.fast import jsontext
from fabric.intent.infiniband.guids import format_guid
from fabric.model.lock_format import ENTRIES, LOCK_FILE, LOCK_FORMAT, LOCK_VERSION, columns
from fabric.pipeline import Build
from fabric.render.engine import iptext
from fabric.render.engine.registry import Output, one_file


def _sections(build: Build) -> dict[str, Any]:
    """The lock's keys in order: values, or (for the lists) their keys and a function giving their entries as
    columns, so that lock.json never holds a million entry dicts (100k GPUs on RoCE)."""
    topo, plan = build.topology, build.allocation

    def devices() -> Sequence[Sequence[Any]]:
        ds = list(topo.devices.values())
        return (
            [d.name for d in ds],
            [d.layer for d in ds],
            [d.model for d in ds],
            [d.fabric or "" for d in ds],
            [d.rack or "" for d in ds],
            [d.u or 0 for d in ds],
        )

    def cables() -> Sequence[Sequence[Any]]:
        links = [c.link for c in plan.cables]
        return (
            [c.cable_id for c in plan.cables],
            [k.fabric for k in links],
            [k.a for k in links],
            [k.a_port for k in links],
            [k.b for k in links],
            [k.b_port for k in links],
        )

    def addresses() -> Sequence[Sequence[Any]]:
        c = iptext.plan_columns(build)
        return (c.device, c.interface, c.address, c.purpose, c.fabric, c.peer_device, c.peer_interface)

    def asns() -> Sequence[Sequence[Any]]:
        rows = plan.asns
        return ([r.device for r in rows], [r.fabric for r in rows], [r.asn for r in rows], [r.router_id for r in rows])

    def guids() -> Sequence[Sequence[Any]]:
        found = sorted({n.key: n.guid for s in build.infiniband.subnets for n in s.nodes}.items())
        return ([k for k, _ in found], [format_guid(g) for _, g in found])

    return {
        "format": LOCK_FORMAT,
        "version": LOCK_VERSION,
        "design": build.name,
        "spec": spec_facts(build.design, build.topology),
        "devices": (columns("devices"), devices),
        "cables": (columns("cables"), cables),
        "addresses": (columns("addresses"), addresses),
        "asns": (columns("asns"), asns),
        "guids": (columns("guids"), guids),
    }


_LISTS = tuple(ENTRIES)


def lock_data(build: Build) -> dict[str, Any]:
    """The lock as data (what lock.json holds)."""
    data = _sections(build)
    for key in _LISTS:
        keys, columns = data[key]
        data[key] = [dict(zip(keys, row, strict=True)) for row in zip(*columns(), strict=True)]
    return data


def lock_json(build: Build) -> str:
    """JSON with one entry of each list per line, so that two locks diff line by line (joined once: the lock of
    100k GPUs on RoCE is 250 MB)."""
    pieces = ["{\n "]
    for i, (key, value) in enumerate(_sections(build).items()):
        pieces.append((",\n " if i else "") + json.dumps(key) + ": ")
        if key in _LISTS:
            keys, columns = value
            entries = jsontext.lines(keys, columns(), "  ", ",\n")
            if not entries:
                pieces.append("[]")
                continue
            pieces.append("[\n")
            for k, entry in enumerate(entries):
                pieces.extend((",\n", entry) if k else (entry,))
            pieces.append("\n ]")
        else:
            pieces.append(json.dumps(value, ensure_ascii=False))
    pieces.append("\n}\n")
    return "".join(pieces)


OUTPUTS: tuple[Output, ...] = (one_file("lock", LOCK_FILE, lock_json, together=iptext.PLAN_ADDRESSES, weight=2.0),)
