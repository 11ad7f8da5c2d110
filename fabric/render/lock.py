"""allocations.lock.json: every assignment of a build (names, rack positions, cable ids and ends, addresses,
ASNs, InfiniBand node GUIDs) and the spec facts that explain them, serialized from data; read back by
fabric/spec/lock.py, whose docstring is the format (version 1, keys kept)."""

from __future__ import annotations

import json
from typing import Any

from fabric.allocation.lock import spec_facts
from fabric.intent.infiniband.guids import format_guid
from fabric.pipeline import Build
from fabric.render import iptext, jsontext
from fabric.render.registry import Output, one_file
from fabric.spec.lock import LOCK_FILE, LOCK_FORMAT, LOCK_VERSION


def lock_data(build: Build) -> dict[str, Any]:
    topo, plan = build.topology, build.plan
    devices = [
        {
            "name": d.name,
            "layer": d.layer,
            "model": d.model,
            "fabric": d.fabric or "",
            "rack": d.rack or "",
            "u": d.u or 0,
        }
        for d in topo.devices.values()
    ]
    cables = [
        {
            "id": c.cable_id,
            "fabric": c.link.fabric,
            "a_device": c.link.a,
            "a_port": c.link.a_port,
            "b_device": c.link.b,
            "b_port": c.link.b_port,
        }
        for c in plan.cables
    ]
    addresses = [
        {
            "device": r.device,
            "interface": r.interface,
            "address": address,
            "purpose": r.purpose,
            "fabric": r.fabric,
            "peer_device": r.peer_device,
            "peer_interface": r.peer_interface,
        }
        for r, address in zip(plan.addresses, iptext.plan_texts(build), strict=True)
    ]
    asns = [{"device": r.device, "fabric": r.fabric, "asn": r.asn, "router_id": r.router_id} for r in plan.asns]
    guids = {n.key: n.guid for s in build.infiniband.subnets for n in s.nodes}
    return {
        "format": LOCK_FORMAT,
        "version": LOCK_VERSION,
        "design": build.name,
        "spec": spec_facts(build.design, build.topology),
        "devices": devices,
        "cables": cables,
        "addresses": addresses,
        "asns": asns,
        "guids": [{"node": k, "guid": format_guid(g)} for k, g in sorted(guids.items())],
    }


def lock_json(build: Build) -> str:
    """JSON with one entry of each list per line, so that two locks diff line by line."""
    data = lock_data(build)
    parts = []
    for key, value in data.items():
        if isinstance(value, list):
            entries = ",\n".join(["  " + jsontext.line(v) for v in value])
            parts.append(f"{json.dumps(key)}: [\n{entries}\n ]" if value else f"{json.dumps(key)}: []")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n " + ",\n ".join(parts) + "\n}\n"


OUTPUTS: tuple[Output, ...] = (one_file("lock", LOCK_FILE, lock_json, together=iptext.PLAN_ADDRESSES),)
