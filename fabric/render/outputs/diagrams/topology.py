"""The logical topology of each fabric, readable at any size.

Detailed (small fabrics): every switch is a box; nodes are boxes per node group and set of leaves they
land on. Aggregated (above `diagrams.aggregate_above` switches, or when asked): one box per scalable unit,
pod or tier group with its switch count, as NVIDIA draws SuperPODs; when a layer of a plane has more groups
than fit on a screen, the middle ones merge into one "… N more" box, so a 100k-GPU fabric stays one screen.
Edges carry the link count and total bandwidth; planes stand side by side.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from fabric.model.topology import LAYER_RANK, FabricTopology
from fabric.pipeline import Build
from fabric.render.outputs.diagrams.adjacency import adjacency
from fabric.render.outputs.diagrams.common import LAYER_COLOURS, LAYER_TITLES, bandwidth, name_range, node_sus
from fabric.render.outputs.diagrams.graph import Box, Cluster, Diagram, Edge

MAX_GROUPS = 6  # groups of one layer of one plane drawn before the middle ones merge


@dataclass
class _Group:
    key: tuple[object, ...]
    layer: str
    plane: int | None
    title: str
    members: list[str]
    models: set[str]


def _group_key(
    ft: FabricTopology, name: str, sus: dict[str, int | None], detailed: bool
) -> tuple[str, int | None, tuple[object, ...], str]:
    graph = adjacency(ft)
    device = ft.devices[name]
    layer = graph.layers[name]
    if layer == "node":
        group = (device.group or "nodes") if device.layer == "node" else "switch mgmt ports"
        if detailed:
            leaves = tuple(sorted(graph.adj[name]))
            return layer, None, ("node", group, leaves), group
        su = sus.get(name)
        return layer, None, ("node", group, su), f"SU{su} {group}" if su is not None else group
    plane = device.plane
    prefix = f"P{plane} " if plane is not None and ft.planes > 1 else ""
    if detailed:
        return layer, plane, (layer, name), name
    if layer == "leaf" and device.su is not None:
        return layer, plane, (layer, plane, "su", device.su), f"{prefix}SU{device.su} leaves"
    if layer in ("leaf", "spine") and device.pod is not None:
        return layer, plane, (layer, plane, "pod", device.pod), f"{prefix}pod {device.pod} {LAYER_TITLES[layer]}"
    return layer, plane, (layer, plane), f"{prefix}{LAYER_TITLES[layer]}"


def _merge_middle(groups: list[_Group]) -> dict[tuple[object, ...], tuple[object, ...]]:
    """Group key → drawn key: per layer and plane, groups beyond MAX_GROUPS merge (first ones and the last stay)."""
    by_lane: dict[tuple[str, int | None], list[_Group]] = defaultdict(list)
    for group in groups:
        by_lane[(group.layer, group.plane)].append(group)
    mapping: dict[tuple[object, ...], tuple[object, ...]] = {g.key: g.key for g in groups}
    for (layer, plane), lane in by_lane.items():
        if len(lane) <= MAX_GROUPS:
            continue
        middle = lane[MAX_GROUPS - 2 : -1]
        merged: tuple[object, ...] = ("more", layer, plane)
        for group in middle:
            mapping[group.key] = merged
    return mapping


def topology_diagram(build: Build, key: str, detailed: bool) -> Diagram:
    ft = build.topology.fabrics[key]
    graph = adjacency(ft)
    sus = node_sus(ft)
    groups: dict[tuple[object, ...], _Group] = {}
    member_of: dict[str, tuple[object, ...]] = {}
    for name in graph.layers:
        layer, plane, gkey, title = _group_key(ft, name, sus, detailed)
        group = groups.get(gkey)
        if group is None:
            group = groups[gkey] = _Group(gkey, layer, plane, title, [], set())
        group.members.append(name)
        group.models.add(ft.devices[name].model)
        member_of[name] = gkey
    ordered = sorted(groups.values(), key=lambda g: (-LAYER_RANK[g.layer], g.plane or 0))  # stable: keeps build order
    mapping = {g.key: g.key for g in ordered} if detailed else _merge_middle(ordered)

    drawn: dict[tuple[object, ...], list[_Group]] = defaultdict(list)
    for group in ordered:
        drawn[mapping[group.key]].append(group)
    ids = {dkey: f"g{i}" for i, dkey in enumerate(drawn)}
    boxes: list[Box] = []
    for dkey, parts in drawn.items():
        layer = parts[0].layer
        members = [m for p in parts for m in p.members]
        models = sorted({m for p in parts for m in p.models})
        if len(parts) > 1:
            title = f"… {len(parts)} more {layer} groups"
        elif detailed and layer != "node":
            title = parts[0].title
        else:
            title = parts[0].title
        if layer == "node" or not detailed:
            detail = f"{len(members)} × {', '.join(models)}"
            if layer == "node":
                detail += f"\n{name_range(members, [ft.devices[m].index for m in members])}"
            label = f"{title}\n{detail}"
        else:
            label = f"{title}\n{models[0]}"
        boxes.append(Box(ids[dkey], label, attrs={"fillcolor": LAYER_COLOURS[layer]}))

    edges_count: dict[tuple[str, str], list[int]] = {}
    for link in graph.edges():
        lower, upper = ids[mapping[member_of[link.a]]], ids[mapping[member_of[link.b]]]
        entry = edges_count.setdefault((upper, lower), [0, 0])
        entry[0] += 1
        entry[1] += link.speed_gbps
    edges = tuple(
        Edge(
            upper,
            lower,
            f"{count:,} × {bandwidth(total / count)} = {bandwidth(total)}" if count > 1 else bandwidth(total),
        )
        for (upper, lower), (count, total) in edges_count.items()
    )

    clusters: list[Cluster] = []
    ranks: list[tuple[str, ...]] = []
    if ft.planes > 1:
        for plane in sorted({g.plane for g in ordered if g.plane is not None}):
            inside = tuple(ids[d] for d, parts in drawn.items() if parts[0].plane == plane)
            clusters.append(Cluster(f"plane{plane}", f"plane {plane}", inside))
    orders: list[tuple[str, ...]] = []
    for layer in ("core", "spine", "leaf", "node"):
        same = tuple(ids[d] for d, parts in drawn.items() if parts[0].layer == layer)
        if same:
            ranks.append(same)
        if layer == "node":
            continue
        lanes: dict[int, list[tuple[tuple[object, ...], str]]] = defaultdict(list)  # switches in name order, a plane
        for d, parts in drawn.items():
            if parts[0].layer == layer:
                first = min((m for p in parts for m in p.members), key=natural_key)
                lanes[parts[0].plane or 0].append((natural_key(first), ids[d]))
        orders += [tuple(i for _, i in sorted(lane)) for _, lane in sorted(lanes.items()) if len(lane) > 1]
    title = topology_title(build, key, detailed)
    return Diagram(
        f"topology-{key}",
        title,
        tuple(boxes),
        edges,
        tuple(clusters),
        tuple(ranks),
        {"ranksep": "1.2"},
        orders=tuple(orders),
    )


def natural_key(name: str) -> tuple[object, ...]:
    """`leaf2` before `leaf10`: digit runs compare as numbers."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def topology_title(build: Build, key: str, detailed: bool) -> str:
    """The picture's title (report.md lists it without drawing the picture)."""
    ft = build.topology.fabrics[key]
    view = "detailed" if detailed else "aggregated"
    switches = len(ft.switches)  # the nodes of the picture that are this fabric's switches (the rest are ends)
    return (
        f"{build.name} · fabric {key} ({ft.technology}, {ft.tiers} tiers"
        + (f", {ft.planes} planes" if ft.planes > 1 else "")
        + f") · {switches:,} switches, {len(ft.links):,} links · {view}"
    )
