"""The logical topology of each fabric, readable at any size.

Detailed (small fabrics): every switch is a box; nodes are boxes per node group and set of leaves they
land on. Aggregated (above `diagrams.aggregate_above` switches, or when asked): one box per scalable unit,
pod or tier group with its switch count, as NVIDIA draws SuperPODs; when a layer of a plane has more groups
than fit on a screen, the middle ones merge into one "… N more" box, so a 100k-GPU fabric stays one screen.
Edges carry the link count and total bandwidth; planes stand side by side, or, when every plane is built the
same (as a multi-plane rail-optimized fabric is: the same switches, each node's links alike into each), only
the first is drawn and the title says so: four identical planes drawn side by side made a GB200 NVL72 SU's
picture 3,300 pt wide and said nothing more than one of them does.

Detailed but too wide (`auto`, estimated wider than `diagrams.width_pt`): the switches of a layer are drawn
in runs of consecutive names ("leaf01–leaf04 (4)"), as few runs folded as make the picture fit; the nodes are
grouped by the runs they land on, and the title says so. The estimate leaves the title out: folding cannot
make it shorter.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from fabric.model.topology import LAYER_RANK, FabricTopology
from fabric.pipeline import Build
from fabric.render.engine.memo import per_object
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
    ft: FabricTopology, name: str, sus: dict[str, int | None], detailed: bool, runs: Mapping[str, str]
) -> tuple[str, int | None, tuple[object, ...], str]:
    graph = adjacency(ft)
    device = ft.devices[name]
    layer = graph.layers[name]
    if layer == "node":
        group = (device.group or "nodes") if device.layer == "node" else "switch mgmt ports"
        if detailed:
            leaves = tuple(sorted({runs.get(leaf, leaf) for leaf in graph.adj[name]}))
            return layer, None, ("node", group, leaves), group
        su = sus.get(name)
        return layer, None, ("node", group, su), f"SU{su} {group}" if su is not None else group
    plane = device.plane
    prefix = f"P{plane} " if plane is not None and ft.planes > 1 else ""
    if detailed:
        run = runs.get(name)
        return (layer, plane, (layer, "run", run), run) if run is not None else (layer, plane, (layer, name), name)
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


@per_object
def planes_alike(ft: FabricTopology) -> bool:
    """Whether the fabric has several planes, each built the same: per plane the same switches (by layer, SU,
    pod and model) and the same links between them and the nodes (by their ends so described, a node by its
    name, and speed)."""
    if ft.planes <= 1:
        return False
    graph = adjacency(ft)
    devices = ft.devices
    own = set(ft.switches)
    per_plane: dict[int | None, Counter[tuple[object, ...]]] = defaultdict(Counter)
    for name in ft.switches:
        d = devices[name]
        per_plane[d.plane][("switch", d.layer, d.su, d.pod, d.model)] += 1

    def end(name: str) -> tuple[object, ...]:
        d = devices[name]
        return (d.layer, d.su, d.pod, d.model) if name in own else (name,)

    for link in graph.edges():
        planes = {devices[n].plane for n in (link.a, link.b) if n in own}
        if len(planes) != 1:
            return False
        per_plane[planes.pop()][(end(link.a), end(link.b), link.speed_gbps)] += 1
    if None in per_plane or len(per_plane) < 2:
        return False
    first, *others = per_plane.values()
    return all(other == first for other in others)


def _drawn_planes(ft: FabricTopology, detailed: bool) -> int | None:
    """The one plane drawn for all (the first), when the picture is aggregated and the planes alike."""
    if detailed or not planes_alike(ft):
        return None
    return min(ft.devices[s].plane or 0 for s in ft.switches)


def topology_diagram(build: Build, key: str, detailed: bool, runs: Mapping[str, str] | None = None) -> Diagram:
    """`runs`: switch name → the title of the run it is drawn in (detailed pictures folded to fit, `fit_runs`)."""
    ft = build.topology.fabrics[key]
    graph = adjacency(ft)
    sus = node_sus(ft)
    only = _drawn_planes(ft, detailed)
    own = set(ft.switches) if only is not None else set()
    groups: dict[tuple[object, ...], _Group] = {}
    member_of: dict[str, tuple[object, ...]] = {}
    for name in graph.layers:
        if name in own and ft.devices[name].plane != only:
            continue
        layer, plane, gkey, title = _group_key(ft, name, sus, detailed, runs or {})
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
        title = f"… {len(parts)} more {layer} groups" if len(parts) > 1 else parts[0].title
        if layer == "node" or not detailed:
            detail = f"{len(members)} × {', '.join(models)}"
            if layer == "node":
                detail += f"\n{name_range(members, [ft.devices[m].index for m in members])}"
            label = f"{title}\n{detail}"
        else:
            label = f"{title}\n{', '.join(models)}"
        boxes.append(Box(ids[dkey], label, attrs={"fillcolor": LAYER_COLOURS[layer]}))

    edges_count: dict[tuple[str, str], list[int]] = {}
    for link in graph.edges():
        if link.a not in member_of or link.b not in member_of:  # a plane not drawn
            continue
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
            label = f"plane {plane}" if only is None else f"plane {plane} (and {ft.planes - 1} more, the same)"
            clusters.append(Cluster(f"plane{plane}", label, inside))
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
    title = topology_title(build, key, detailed, runs)
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


def topology_title(build: Build, key: str, detailed: bool, runs: Mapping[str, str] | None = None) -> str:
    """The picture's title (report.md lists it without drawing the picture)."""
    ft = build.topology.fabrics[key]
    view = "detailed" if detailed else "aggregated"
    if detailed and runs:
        longest = max(Counter(runs.values()).values())
        view = f"detailed, runs of ≤ {longest} switches"
    only = _drawn_planes(ft, detailed)
    if only is not None:
        view += f", plane {only} drawn (the {ft.planes - 1} others are the same)"
    switches = len(ft.switches)  # the nodes of the picture that are this fabric's switches (the rest are ends)
    return (
        f"{build.name} · fabric {key} ({ft.technology}, {ft.tiers} tiers"
        + (f", {ft.planes} planes" if ft.planes > 1 else "")
        + f") · {switches:,} switches, {len(ft.links):,} links · {view}"
    )


# dot's layout width, estimated without running dot (the pictures must not depend on whether it is installed):
# DejaVu Sans averages about 0.62 em a character (digits, lower case, ×, –), taken as 0.7 to err wide; boxes
# are 11 pt with 9 pt of margin each side, edge labels 10 pt; dot keeps 18 pt (nodesep 0.25 in) between
# neighbours of a rank, and lays an edge's label out as a box in the rank between its ends, so the labels of
# one gap stand side by side.
_CHAR_EM = 0.7
_SEP_PT = 18.0


def estimated_width(diagram: Diagram) -> float:
    """Points: the widest rank of boxes, or of the edge labels between two ranks."""
    rank_of = {box: i for i, rank in enumerate(diagram.ranks) for box in rank}
    by_id = {box.id: box for box in diagram.boxes}
    rows: dict[object, float] = defaultdict(float)
    for i, rank in enumerate(diagram.ranks):
        for box_id in rank:
            longest = max(len(line) for line in by_id[box_id].label.split("\n"))
            rows[i] += max(54.0, longest * 11 * _CHAR_EM + 18) + _SEP_PT
    for edge in diagram.edges:
        if edge.label:
            gap = ("gap", min(rank_of.get(edge.a, 0), rank_of.get(edge.b, 0)))
            rows[gap] += (len(edge.label) + 2) * 10 * _CHAR_EM + _SEP_PT
    return max(rows.values(), default=0.0)


def _runs(ft: FabricTopology, cap: int) -> dict[str, str]:
    """Switch → run title: each layer of each plane with more than `cap` switches in `cap` runs of consecutive
    names (the longer runs first)."""
    lanes: dict[tuple[str, int | None], list[str]] = defaultdict(list)
    for name in ft.switches:
        device = ft.devices[name]
        lanes[(device.layer, device.plane)].append(name)
    out: dict[str, str] = {}
    for lane in lanes.values():
        if len(lane) <= cap:
            continue
        lane.sort(key=natural_key)
        size, extra = divmod(len(lane), cap)
        start = 0
        for i in range(cap):
            run = lane[start : start + size + (1 if i < extra else 0)]
            start += len(run)
            if len(run) > 1:
                title = f"{name_range(run, [ft.devices[m].index for m in run])} ({len(run)})"
                out.update(dict.fromkeys(run, title))
    return out


def fit_runs(build: Build, key: str, width_pt: float) -> dict[str, str]:
    """The runs a detailed picture needs to fit `width_pt` ({} when it fits as it is): the widest lane folded
    into fewer and fewer runs until the estimate fits, down to one run a layer."""
    ft = build.topology.fabrics[key]
    if estimated_width(topology_diagram(build, key, True)) <= width_pt:
        return {}
    lanes: Counter[tuple[str, int | None]] = Counter((ft.devices[n].layer, ft.devices[n].plane) for n in ft.switches)
    runs: dict[str, str] = {}
    for cap in range(max(lanes.values(), default=1) - 1, 0, -1):
        runs = _runs(ft, cap)
        if estimated_width(topology_diagram(build, key, True, runs)) <= width_pt:
            break
    return runs
