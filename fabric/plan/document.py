"""A candidate as a spec: plain data for the loader, and the same data as a commented YAML document.

The YAML is serialized from the data (section by section, so each gets its comment) and parses back to
exactly that data: `fabric plan --write` writes the text that was built.
"""

from __future__ import annotations

import math
from typing import Any

import yaml

from fabric.plan.candidates import Candidate, node_count
from fabric.spec.catalog import Catalog
from fabric.spec.schema import format_ratio

# Pools large enough for 100k GPUs on Ethernet (the RoCE sizes of benchmarks/run.py); InfiniBand uses `mgmt` only.
ADDRESSING = {
    "loopback": "10.0.0.0/18",
    "p2p": "10.16.0.0/12",
    "servers": "10.32.0.0/12",
    "mgmt": "10.128.0.0/14",
}
ASN = {"scheme": "rfc7938", "spine": 4200000000, "leaf_start": 4200100000}  # 4-byte private: any leaf count


def spec_name(candidate: Candidate, gpus: int) -> str:
    rail = "rail" if candidate.rail_optimized else "flat"
    ratio = format_ratio(candidate.oversubscription).replace(":", "to").replace(".", "p")
    planes = f"-{candidate.planes}p" if candidate.planes > 1 else ""
    su = f"{candidate.scalable_unit}" if candidate.scalable_unit else ""
    name = f"plan{gpus}-{candidate.node}-{candidate.switch}-{candidate.tiers}t-{rail}{su}{planes}-{ratio}"
    return name[:64].rstrip("-._")


# the rest of a cluster, as the bundled SuperPOD designs size it (designs/superpod-h100-4su.yaml: 127 DGX, 16 storage
# servers, 4 head nodes; storage at "near 4:3"; in-band 3:1 on SN4600C; out-of-band SN2201 leaves under 2 spines)
NODES_PER_STORAGE_SERVER = 8
HEAD_NODES = 4
STORAGE_RATIO = "4:3"
INBAND = {"leaf": "sn4600c", "spine": "sn4600c", "oversubscription": "3:1"}
OOB = {"leaf": "sn2201", "spine": "sn4600c", "spines": 2}
MANAGEMENT_SERVICE = "10.128.0.1"  # NTP, syslog and DNS: the first address of the mgmt pool (placeholder)


def _storage_switch(candidate: Candidate, catalog: Catalog, technology: str, speed: int) -> str | None:
    """The compute fabric's switch when it serves the storage ports, else the first catalog switch that does."""
    from fabric.plan.candidates import _serves

    models = [candidate.switch, *(m for m in catalog.switches if m != candidate.switch)]
    return next((m for m in models if _serves(catalog.switches[m], technology, speed)), None)


def _cluster(
    data: dict[str, Any], candidate: Candidate, count: int, catalog: Catalog, platform: str | None
) -> dict[str, Any]:
    """The candidate's spec with the rest of a cluster: head nodes, storage servers (when the GPU node has storage
    ports) on a storage fabric, an in-band and an out-of-band fabric; `platform` on every Ethernet fabric."""
    node = catalog.nodes[candidate.node]
    nodes = data["nodes"]
    nodes.append({"group": "mgmt", "type": "mgmt-host", "count": HEAD_NODES, "name": "head{index:02d}"})
    fabrics = data["fabrics"]
    groups = ["gpu", "mgmt"]
    storage_group = node.ports.get("storage")
    if storage_group is not None:
        servers = max(2, math.ceil(count / NODES_PER_STORAGE_SERVER))
        nodes.append({"group": "storage", "type": "storage-server", "count": servers, "name": "stor{index:02d}"})
        groups.append("storage")
        # the node's storage ports' own technology (a GB200 tray's BlueField-3 are Ethernet beside its InfiniBand
        # compute ports); `any` (a storage server's card) follows the compute fabric
        technology = candidate.technology if storage_group.technology == "any" else storage_group.technology
        speed = storage_group.speed_gbps
        switch = _storage_switch(candidate, catalog, technology, speed)
        if switch is not None:
            storage: dict[str, Any] = {
                "technology": technology,
                "topology": {"kind": "fat-tree" if technology == "infiniband" else "spine-leaf"},
                "switches": {"leaf": switch},
                "oversubscription": STORAGE_RATIO,
                "attach": [{"group": "gpu", "ports": "storage"}, {"group": "storage", "ports": "storage"}],
            }
            if technology == "ethernet":
                storage["speed_gbps"] = speed
            else:  # the storage servers run its subnet manager (as in the SuperPOD designs)
                storage["infiniband"] = {"subnet_prefix": "0xfe80000000000001", "sm": {"hosts": ["stor01", "stor02"]}}
            fabrics["storage"] = storage
    if candidate.technology == "infiniband":  # opensm on the first two GPU nodes: no UFM takes a compute port
        first = [nodes[0]["name"].format(index=i) for i in (1, 2)][: nodes[0]["count"]]
        fabrics["compute"]["infiniband"] = {"sm": {"hosts": first}}
    fabrics["inband"] = {
        "technology": "ethernet",
        "topology": {"kind": "spine-leaf"},
        "switches": {"leaf": INBAND["leaf"], "spine": INBAND["spine"]},
        "oversubscription": INBAND["oversubscription"],
        "attach": [{"group": g, "ports": "inband"} for g in groups],
    }
    fabrics["oob"] = {
        "technology": "ethernet",
        "topology": {"kind": "spine-leaf", "spines": OOB["spines"]},
        "switches": {"leaf": OOB["leaf"], "spine": OOB["spine"]},
        "attach": [*({"group": g, "ports": "bmc"} for g in groups), {"switch_mgmt": "all"}],
    }
    if platform is not None:
        for fabric in fabrics.values():
            if fabric["technology"] == "ethernet":
                fabric["platform"] = platform
    # each unit's nodes beside a network rack with the leaves of every fabric that serve them (a BMC's copper
    # and the in-band cables stay within the unit: sequentially, from 32,768 GPUs they ran past 100 m)
    data["racks"]["layout"] = "superpod"
    data["asn"] = dict(ASN)
    data["management"] = {"ntp": [MANAGEMENT_SERVICE], "syslog": [MANAGEMENT_SERVICE], "dns": [MANAGEMENT_SERVICE]}
    return data


def spec_data(
    candidate: Candidate, gpus: int, catalog: Catalog, whole: bool = False, platform: str | None = None
) -> dict[str, Any]:
    """The spec of a candidate for `gpus` GPUs (rounded up to whole nodes); `whole`: the whole cluster around its
    compute fabric (head nodes, storage, in-band and out-of-band fabrics), with `platform` on its Ethernet fabrics."""
    node = catalog.nodes[candidate.node]
    count = node_count(node, gpus)
    topology: dict[str, Any] = {
        "kind": "fat-tree" if candidate.technology == "infiniband" else "spine-leaf",
        "tiers": candidate.tiers,
        "rail_optimized": candidate.rail_optimized,
    }
    if candidate.scalable_unit:
        topology["scalable_unit"] = candidate.scalable_unit
    if candidate.planes > 1:
        topology["planes"] = candidate.planes
    fabric: dict[str, Any] = {
        "technology": candidate.technology,
        "topology": topology,
        "switches": {"leaf": candidate.switch},
        "oversubscription": format_ratio(candidate.oversubscription),
        "attach": [{"group": "gpu", "ports": "compute"}],
    }
    if candidate.technology == "ethernet":
        fabric["speed_gbps"] = candidate.speed_gbps
    system = node.rack_system
    # a rack-scale system's rack holds its trays (one NVLink domain) and draws the system's power
    rack_kw = float(math.ceil(system.power_kw)) if system else max(40.0, float(4 * node.power_w) / 1000)
    group: dict[str, Any] = {"group": "gpu", "type": candidate.node, "count": count}
    if system is not None:
        group["per_rack"] = system.trays
    group["name"] = "gpu{index:05d}"
    data: dict[str, Any] = {
        "name": spec_name(candidate, gpus),
        "description": f"{count * node.gpus} GPUs: {candidate.label} (fabric plan)",
        "racks": {"rows": ["A", "B", "C", "D", "E", "F", "G", "H"], "power_kw": round(rack_kw, 1)},
        "nodes": [group],
        "fabrics": {"compute": fabric},
        "addressing": dict(ADDRESSING),
    }
    if candidate.technology == "ethernet":
        data["asn"] = dict(ASN)
    return _cluster(data, candidate, count, catalog, platform) if whole else data


# libyaml's emitter where PyYAML has it: the same text as the Python one for these documents (plain names,
# numbers, ratios and prefixes; tests/unit/plan/test_plan.py compares them), four times faster (a sweep writes a
# spec per candidate)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _dump(data: dict[str, Any], flow: bool | None = None, dumper: Any = DUMPER) -> str:
    """Block style at the top, flow style for the innermost mappings and lists (as the bundled designs)."""
    return str(
        yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=flow, width=10_000, allow_unicode=True)
    )


def spec_yaml(
    candidate: Candidate, gpus: int, catalog: Catalog, why: str = "", whole: bool = False, platform: str | None = None
) -> str:
    """The candidate's spec as a commented YAML document that builds as it is (`whole`: the whole cluster)."""
    data = spec_data(candidate, gpus, catalog, whole, platform)
    node = catalog.nodes[candidate.node]
    header = [
        f"# Written by `fabric plan --gpus {gpus}`: candidate {candidate.index + 1}, {candidate.label}.",
        *(f"# {line}" for line in why.splitlines() if line),
        "# Edit freely: `fabric build` on this file builds exactly the design that was ranked."
        if not whole
        else "# Edit freely: its compute fabric is the design that was ranked; head nodes, storage, in-band and "
        "out-of-band\n# fabrics are sized as the bundled SuperPOD designs size them "
        f"(a storage server per {NODES_PER_STORAGE_SERVER} GPU nodes,\n"
        f"# storage at {STORAGE_RATIO}, in-band {INBAND['oversubscription']} on {INBAND['leaf']}, out-of-band "
        f"{OOB['leaf']} leaves under {OOB['spines']} {OOB['spine']} spines).",
    ]
    sections = [
        ("", {k: data[k] for k in ("name", "description")}),
        (
            f"# Racks: eight rows; a rack's power budget fits one {node.rack_system.name} rack "
            f"({node.rack_system.trays} trays, one NVLink domain).",
            {"racks": data["racks"]},
        )
        if node.rack_system
        else (
            "# Racks: eight rows; a rack's power budget fits four nodes (placeholder: set your own).",
            {"racks": data["racks"]},
        ),
        (
            f"# {data['nodes'][0]['count']} x {candidate.node} ({node.gpus} GPUs each): {node.description}.",
            {"nodes": data["nodes"]},
        ),
        (
            f"# Compute fabric: {candidate.tiers} tiers of {candidate.switch}, leaf oversubscription "
            f"{format_ratio(candidate.oversubscription)}"
            + (f", rail-optimized in SUs of {candidate.scalable_unit} nodes" if candidate.rail_optimized else "")
            + (f", {candidate.planes} planes" if candidate.planes > 1 else "")
            + ". Spine and core counts: the fewest that fit.",
            {"fabrics": data["fabrics"]},
        ),
        (
            "# Address pools sized for 100k GPUs; InfiniBand fabrics use only `mgmt`.",
            {"addressing": data["addressing"]},
        ),
    ]
    if "asn" in data:
        sections.append(("# 4-byte private ASNs (RFC 7938 scheme): any number of leaves.", {"asn": data["asn"]}))
    if "management" in data:
        comment = "# Management services (placeholders: your NTP, syslog and DNS servers)."
        sections.append((comment, {"management": data["management"]}))
    if whole:
        layout = (
            "\n# Layout `superpod`: each scalable unit's nodes, then a network rack with the leaves that serve them"
            "\n# (compute, storage, in-band, out-of-band); spines, cores, storage and head nodes in central racks."
        )
        sections[1] = (sections[1][0] + layout, sections[1][1])
    body = [("\n".join(header) + "\n" + _dump(sections[0][1], flow=False))]
    body += [f"{comment}\n{_dump(part)}" for comment, part in sections[1:]]
    return "".join(body)
