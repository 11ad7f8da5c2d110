"""allocations.lock.json: every assignment of a build (names, rack positions, cable ids and ends, addresses,
ASNs, InfiniBand node GUIDs) and the spec facts that explain them, serialized from data; read back by
fabric/spec/lock.py, whose docstring is the format (version 1, keys kept)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from operator import attrgetter
from typing import Any

from fabric.allocation.lock import spec_facts
from fabric.intent.infiniband.guids import format_guid
from fabric.pipeline import Build
from fabric.render import iptext, jsontext
from fabric.render.registry import Output, one_file
from fabric.spec.lock import LOCK_FILE, LOCK_FORMAT, LOCK_VERSION


def _sections(build: Build) -> dict[str, Any]:
    """The lock's keys in order: values, or (for the lists) functions giving their entries one at a time, so
    that lock.json never holds a million entry dicts at once (100k GPUs on RoCE)."""
    topo, plan = build.topology, build.plan

    def devices() -> Iterator[dict[str, Any]]:
        for d in topo.devices.values():
            yield {
                "name": d.name,
                "layer": d.layer,
                "model": d.model,
                "fabric": d.fabric or "",
                "rack": d.rack or "",
                "u": d.u or 0,
            }

    def cables() -> Iterator[dict[str, Any]]:
        for c in plan.cables:
            link = c.link
            yield {
                "id": c.cable_id,
                "fabric": link.fabric,
                "a_device": link.a,
                "a_port": link.a_port,
                "b_device": link.b,
                "b_port": link.b_port,
            }

    def addresses() -> Iterator[dict[str, Any]]:
        for r, address in zip(plan.addresses, iptext.plan_texts(build), strict=True):
            yield {
                "device": r.device,
                "interface": r.interface,
                "address": address,
                "purpose": r.purpose,
                "fabric": r.fabric,
                "peer_device": r.peer_device,
                "peer_interface": r.peer_interface,
            }

    def asns() -> Iterator[dict[str, Any]]:
        for r in plan.asns:
            yield {"device": r.device, "fabric": r.fabric, "asn": r.asn, "router_id": r.router_id}

    def guids() -> Iterator[dict[str, Any]]:
        found = {n.key: n.guid for s in build.infiniband.subnets for n in s.nodes}
        for k, g in sorted(found.items()):
            yield {"node": k, "guid": format_guid(g)}

    return {
        "format": LOCK_FORMAT,
        "version": LOCK_VERSION,
        "design": build.name,
        "spec": spec_facts(build.design, build.topology),
        "devices": devices,
        "cables": cables,
        "addresses": addresses,
        "asns": asns,
        "guids": guids,
    }


def lock_data(build: Build) -> dict[str, Any]:
    """The lock as data (what lock.json holds)."""
    return {k: list(v()) if callable(v) else v for k, v in _sections(build).items()}


def _text_only(*columns: Iterable[str]) -> bool:
    """Every value of these columns is text the json module writes as it is, between quotes: one test of each
    joined column, in C (a value of another type makes the join fail)."""
    try:
        texts = ["".join(column) for column in columns]
    except TypeError:
        return False
    return all(t.isprintable() and '"' not in t and "\\" not in t for t in texts)


def _cable_entries(build: Build) -> list[str] | None:
    """The cables' entries as jsontext.line writes them, one f-string an entry (300k at 100k GPUs); None when a
    value is not plain text."""
    cables = build.plan.cables
    links = list(map(attrgetter("link"), cables))
    fields = [list(map(attrgetter(k), links)) for k in ("fabric", "a", "a_port", "b", "b_port")]
    ids = list(map(attrgetter("cable_id"), cables))
    if not _text_only(ids, *fields):
        return None
    return [
        f'  {{"id": "{i}", "fabric": "{f}", "a_device": "{a}", "a_port": "{ap}", "b_device": "{b}", "b_port": "{bp}"}}'
        for i, f, a, ap, b, bp in zip(ids, *fields, strict=True)
    ]


def _address_entries(build: Build) -> list[str] | None:
    """The addresses' entries as jsontext.line writes them (600k at 100k GPUs); None when a value is not plain
    text."""
    rows = build.plan.addresses
    keys = ("device", "interface", "purpose", "fabric", "peer_device", "peer_interface")
    device, interface, purpose, fabric, peer_device, peer_interface = (list(map(attrgetter(k), rows)) for k in keys)
    addresses = iptext.plan_texts(build)
    if not _text_only(device, interface, addresses, purpose, fabric, peer_device, peer_interface):
        return None
    return [
        f'  {{"device": "{d}", "interface": "{i}", "address": "{a}", "purpose": "{p}", "fabric": "{f}", '
        f'"peer_device": "{pd}", "peer_interface": "{pi}"}}'
        for d, i, a, p, f, pd, pi in zip(
            device, interface, addresses, purpose, fabric, peer_device, peer_interface, strict=True
        )
    ]


FAST: dict[str, Callable[[Build], list[str] | None]] = {"cables": _cable_entries, "addresses": _address_entries}


def lock_json(build: Build) -> str:
    """JSON with one entry of each list per line, so that two locks diff line by line."""
    parts = []
    for key, value in _sections(build).items():
        if callable(value):
            fast = FAST[key](build) if key in FAST else None
            lines = fast if fast is not None else ["  " + jsontext.line(v) for v in value()]
            entries = ",\n".join(lines)
            parts.append(f"{json.dumps(key)}: [\n{entries}\n ]" if entries else f"{json.dumps(key)}: []")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n " + ",\n ".join(parts) + "\n}\n"


OUTPUTS: tuple[Output, ...] = (one_file("lock", LOCK_FILE, lock_json, together=iptext.PLAN_ADDRESSES),)
