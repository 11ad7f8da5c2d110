"""Slurm's view of the compute fabric, from the logical switch tree (fabric.analysis.locality).

topology.conf lists the tree (topology/tree), topology-block.conf one block per lowest logical switch
(topology/block, Slurm 23.11+), topology.yaml both (Slurm 25.05+), nodes.conf the NodeName lines so that
the names in the topology files are the nodes slurm.conf defines.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import hostlist

from fabric.analysis.locality import Locality, LogicalSwitch, locality
from fabric.fast import yamltext
from fabric.pipeline import Build
from fabric.render.engine.registry import Output
from fabric.render.engine.templating import render


def compact(names: list[str] | tuple[str, ...]) -> str:
    """A Slurm hostlist expression (`dgx[001-032]`)."""
    return _compact(tuple(names))


@lru_cache(maxsize=16384)
def _compact(names: tuple[str, ...]) -> str:  # the files name the same node sets again (a quarter of 5,000 calls)
    return str(hostlist.collect_hostlist(list(names)))


def block_sizes(blocks: tuple[LogicalSwitch, ...]) -> list[int]:
    """Slurm's rule: the base is at most the smallest block's node count; each later size is the base times
    a power of two. Sizes double up to the largest power of two of blocks (topograph's inference)."""
    base = min(len(b.nodes) for b in blocks)
    return [base << k for k in range(len(blocks).bit_length())]


def _unit(loc: Locality) -> str:
    if loc.domain_level:
        return "NVLink domain"
    names = [s.name for s in loc.levels[0]]
    return (
        "scalable unit"
        if all(n.startswith("su") and len(s.members) > 1 for n, s in zip(names, loc.levels[0], strict=True))
        else "leaf switch"
    )


def _explanation(build: Build, loc: Locality) -> list[str]:
    ft = build.topology.fabrics[loc.fabric]
    lines: list[str] = []
    if loc.domain_level:
        system = loc.levels[0][0].nvlink
        lines += [
            f"Lowest level: one NVLink domain per rack ({system}): its trays' GPUs talk over NVLink, not",
            "over this fabric. The domain is the block of topology-block.conf (one block per domain).",
        ]
    if ft.rail_optimized:
        rails = max(len(s.members) for s in loc.levels[0])
        first = "Lowest level: one logical switch per scalable unit (SU), its rail leaves merged. In a"
        if loc.domain_level:
            first = (
                "The domain's switch: its scalable unit's (SU's) rail leaves merged. In a"
                if loc.levels[0][0].members
                else "Above the domains: one logical switch per scalable unit (SU), its rail leaves merged. In a"
            )
        lines += [
            first,
            f"rail-optimized fabric every node of an SU connects to all {rails} leaves of that SU; listed",
            'one by one they would put every node under several leaf switches (Slurm logs "Multiple leaf',
            'switches contain nodes" and loses the locality). NVIDIA topograph merges them the same way.',
        ]
    else:
        lines += ["Lowest level: the leaf switches (leaves that share a node are merged into one)."]
    lines += [
        "Above: the switches of the next layer that connect the same logical switches are one (a spine",
        "group, a pod's spines, a core group), up to the top.",
    ]
    if ft.planes > 1:
        lines.append(f"The {ft.planes} planes are parallel copies, not a locality level: they form one tree.")
    if len(loc.roots()) > 1:
        lines.append("Several tops: no switch reaches every node (Slurm warns about that at start).")
    if loc.unplaced:
        lines.append(f"Not on this fabric, so in no switch: {compact(loc.unplaced)}.")
    lines.append("Members of each logical switch are named in the comment above its line.")
    return lines


def _tree(loc: Locality, link_speed: bool) -> list[dict[str, Any]]:
    out = []
    for s in loc.switches:
        kind, names = ("Nodes", s.nodes) if s.level == 0 else ("Switches", s.children)
        out.append(
            {
                "name": s.name,
                "members": compact(s.members),
                "kind": kind,
                "list": compact(names),
                "speed": s.speed_gbps if link_speed else 0,
            }
        )
    return out


def topology_conf(build: Build, loc: Locality) -> str:
    switches = _tree(loc, build.design.spec.exports.scheduler.link_speed)
    return render(
        "slurm/topology.conf.j2",
        design=build.name,
        fabric=loc.fabric,
        explanation=_explanation(build, loc),
        switches=switches,
    )


def topology_block_conf(build: Build, loc: Locality) -> str:
    blocks = loc.blocks()
    rows = [{"name": b.name, "nodes": compact(b.nodes)} for b in blocks]
    sizes = ",".join(str(n) for n in block_sizes(blocks))
    return render(
        "slurm/topology-block.conf.j2", design=build.name, fabric=loc.fabric, unit=_unit(loc), blocks=rows, sizes=sizes
    )


def topology_yaml(build: Build, loc: Locality) -> str:
    tree = [
        {"switch": s.name, "nodes": compact(s.nodes)}
        if s.level == 0
        else {"switch": s.name, "children": compact(s.children)}
        for s in loc.switches
    ]
    blocks = loc.blocks()
    data = [
        {"topology": "tree", "cluster_default": not loc.domain_level, "tree": {"switches": tree}},
        {
            "topology": "block",
            "cluster_default": loc.domain_level,
            "block": {
                "block_sizes": block_sizes(blocks),
                "blocks": [{"block": b.name, "nodes": compact(b.nodes)} for b in blocks],
            },
        },
    ]
    default = (
        "# `tree` is topology.conf's tree, `block` (the default: one block per NVLink domain, as NVIDIA schedules\n"
        "# rack-scale systems) is topology-block.conf's blocks; partitions pick"
        if loc.domain_level
        else "# `tree` (the default) is topology.conf's tree, `block` is topology-block.conf's blocks; partitions pick"
    )
    header = (
        f"# topology.yaml (Slurm 25.05 or later) for design {build.name}, fabric `{loc.fabric}`; written by fabric.\n"
        f"{default}\n"
        "# one with Topology=<name>. When this file exists Slurm ignores topology.conf and TopologyPlugin.\n"
    )
    return header + "---\n" + yamltext.dump(data)


def nodes_conf(build: Build, loc: Locality) -> str:
    devices = build.topology.devices
    types = {g.group: g.type for g in build.design.spec.nodes}
    lowest = {n: s.name for s in loc.levels[0] for n in s.nodes} if loc.levels else {}
    rows: dict[tuple[str, str, str], list[str]] = {}
    for name in loc.nodes:
        device = devices[name]
        node_type = build.design.catalog.nodes[types[device.group or ""]]
        gres = ""
        if node_type.gpus:
            gres = f"gpu:{node_type.gpu_model}:{node_type.gpus}" if node_type.gpu_model else f"gpu:{node_type.gpus}"
        features = ",".join(f for f in (lowest.get(name, ""), f"rack{device.rack}" if device.rack else "") if f)
        rows.setdefault((gres, features, device.group or ""), []).append(name)
    lines = [
        {"names": compact(names), "gres": gres, "features": features} for (gres, features, _), names in rows.items()
    ]
    return render("slurm/nodes.conf.j2", design=build.name, unit=_unit(loc), lines=lines)


def slurm_files(build: Build) -> dict[str, str]:
    loc = locality(build.design, build.topology)
    if loc is None or not loc.levels:
        return {}
    return {
        "slurm/topology.conf": topology_conf(build, loc),
        "slurm/topology-block.conf": topology_block_conf(build, loc),
        "slurm/topology.yaml": topology_yaml(build, loc),
        "slurm/nodes.conf": nodes_conf(build, loc),
    }


OUTPUTS: tuple[Output, ...] = (Output("slurm", slurm_files, weight=0.4),)
