"""Growth headroom of a generated fabric: how many more nodes (GPUs) it takes before anything is re-cabled.

Defined on the built graph, per plane (planes are copies, so plane 1 speaks for all):

- **free slots**: node slots of the leaves already there (the rest of a partly filled SU, free down ports);
- **new leaves on free ports**: in 2 tiers, as many new leaves (whole SUs when rail-optimized) as every spine
  still has free ports for a leaf's share of uplinks; in 3 tiers, new leaves in each pod on its spines' free down
  ports (a spine keeps its core-facing ports), and new pods of the first pod's size on the cores' free ports.

`headroom_nodes` is the sum: what can be added by cabling only new devices to free ports, with no existing cable
moved, no new tier and no new plane. Beyond it, 2 tiers grow by adding spines and re-spreading every leaf's
uplinks over them (spine re-cabling) up to `two_tier_max_nodes` (the spine radix in leaves: one uplink per spine
each), and then need a third tier; 3 tiers need more core ports (re-cabling) or a new plane.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from fabric.model.kinds import Tier
from fabric.model.topology import Topology
from fabric.spec.catalog import Catalog, switch_ports
from fabric.spec.loader import Design
from fabric.spec.schema import ClosTopology, NodeAttach


@dataclass(frozen=True, slots=True)
class Headroom:
    """How far a fabric can grow: nodes and GPUs on its free ports and what growth beyond needs."""

    fabric: str
    nodes: int  # more nodes on free ports only
    gpus: int
    free_slots: int  # of `nodes`: slots on the leaves already there
    two_tier_max_nodes: int | None  # 2 tiers: nodes before a third tier is needed; None in 3 tiers
    beyond: str  # what growth past `nodes` needs


def _ports(catalog: Catalog, topology: Topology, switch: str, speed: int) -> int:
    device = topology.devices[switch]
    model = catalog.switches[device.model]
    return sum(1 for p in switch_ports(model, speed, device.platform) if p.speed_gbps == speed)


def headroom(design: Design, topology: Topology, key: str) -> Headroom | None:
    """The headroom of generated fabric `key`; None for an explicit or failed one."""
    ft = topology.fabrics.get(key)
    fabric = design.spec.fabrics.get(key)
    if ft is None or fabric is None or not ft.generated or ft.params is None:
        return None
    assert isinstance(fabric.topology, ClosTopology)
    topo = fabric.topology
    devices = topology.devices
    in_plane = {s for s in ft.switches if (devices[s].plane or 1) == 1}
    pair: Counter[tuple[str, str]] = Counter()
    down_used: Counter[str] = Counter()
    node_ports: Counter[str] = Counter()
    speed: dict[str, int] = {}
    for link in ft.links:
        if link.b not in in_plane:
            continue
        down_used[link.b] += 1
        if link.tier == Tier.NODE_LEAF:
            node_ports[link.a] += 1
        else:
            pair[(link.a, link.b)] += 1
            speed[link.b] = link.speed_gbps
    leaves = [s for s in ft.switches if s in in_plane and devices[s].layer == "leaf"]
    spines = [s for s in ft.switches if s in in_plane and devices[s].layer == "spine"]
    cores = [s for s in ft.switches if s in in_plane and devices[s].layer == "core"]
    if not leaves or not spines or not node_ports:
        return None
    p = ft.params
    cap = {s: _ports(design.catalog, topology, s, speed[s]) for s in [*spines, *cores] if s in speed}

    def leaves_fitting(uppers: list[str], leaf: str, reserve: int) -> int:
        shares = [(u, pair[(leaf, u)]) for u in uppers if pair[(leaf, u)]]

        def room(u: str) -> int:  # a spine's free leaf-facing ports: `spine_downlinks` caps them when given
            free = cap.get(u, 0) - reserve - down_used[u]
            if topo.spine_downlinks is None or reserve == 0:
                return free
            return min(free, topo.spine_downlinks - down_used[u])

        return min((room(u) // a for u, a in shares), default=0)

    units: list[int] = []  # new leaves per place they can go: a pod, or the whole 2-tier fabric
    if ft.tiers == 2:
        units.append(max(0, leaves_fitting(spines, leaves[0], 0)))
    else:
        pods = sorted({devices[s].pod or 0 for s in spines})
        first_pod_spines = [s for s in spines if (devices[s].pod or 0) == pods[0]]
        for pod in pods:
            pod_spines = [s for s in spines if (devices[s].pod or 0) == pod]
            leaf = next(x for x in leaves if (devices[x].pod or 0) == pod)
            units.append(max(0, leaves_fitting(pod_spines, leaf, p.spine_uplinks)))
        pod_size = sum(1 for x in leaves if (devices[x].pod or 0) == pods[0]) + units[0]
        per_core = Counter(c for (s, c) in pair if s in first_pod_spines for _ in range(pair[(s, c)]))
        new_pods = min(((cap.get(c, 0) - down_used[c]) // n for c, n in per_core.items()), default=0)
        units += [pod_size] * max(0, new_pods)

    width = max(node_ports.values())
    if topo.rail_optimized and topo.scalable_unit:
        su = topo.scalable_unit
        rails = len({devices[x].rail for x in leaves})
        per_rail = max(1, width // rails)
        by_su: dict[int, list[int]] = {}
        for x in leaves:
            by_su.setdefault(devices[x].su or 0, []).append(max(0, p.downlinks - down_used[x]) // per_rail)
        free = sum(min(slots) for slots in by_su.values())
        added = free + sum(u // rails for u in units) * su
        two_tier = (_ports_of_spine(cap, spines) // rails) * su if ft.tiers == 2 else None
    else:
        free = sum(max(0, p.downlinks - down_used[x]) for x in leaves) // width
        added = free + sum(u // width for u in units) * p.downlinks
        two_tier = (_ports_of_spine(cap, spines) // width) * p.downlinks if ft.tiers == 2 else None
    gpus = _gpus_per_node(design, key)
    beyond = (
        "more spines with every leaf's uplinks re-spread over them (spine re-cabling), then a third tier"
        if ft.tiers == 2
        else "more core ports (core re-cabling) or a new plane"
    )
    return Headroom(key, added, added * gpus, free, two_tier, beyond)


def _ports_of_spine(cap: dict[str, int], spines: list[str]) -> int:
    return min((cap.get(s, 0) for s in spines), default=0)


def _gpus_per_node(design: Design, key: str) -> int:
    types = {g.group: g.type for g in design.spec.nodes}
    for entry in design.spec.fabrics[key].attach:
        if isinstance(entry, NodeAttach) and design.catalog.nodes[types[entry.group]].gpus:
            return design.catalog.nodes[types[entry.group]].gpus
    return 0
