"""allocations.lock.json: every assignment of a build (names, rack positions, cable ids and ends, addresses,
ASNs, InfiniBand node GUIDs) and the spec facts that explain them, serialized from data; read back by
fabric/spec/lock.py, whose docstring is the format (version 1, keys kept)."""

from __future__ import annotations

import json
from collections.abc import Iterator
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


def lock_json(build: Build) -> str:
    """JSON with one entry of each list per line, so that two locks diff line by line."""
    parts = []
    for key, value in _sections(build).items():
        if callable(value):
            entries = ",\n".join(["  " + jsontext.line(v) for v in value()])
            parts.append(f"{json.dumps(key)}: [\n{entries}\n ]" if entries else f"{json.dumps(key)}: []")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n " + ",\n ".join(parts) + "\n}\n"


OUTPUTS: tuple[Output, ...] = (one_file("lock", LOCK_FILE, lock_json, together=iptext.PLAN_ADDRESSES),)
