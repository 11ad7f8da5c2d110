"""The scheduler's view of a fabric: a tree of logical switches over the scheduler nodes.

Slurm's topology/tree, Kueue, Volcano and topograph all want "which nodes share a switch", level by level.
A rail-optimized SU connects every node to every rail leaf of its SU, so the physical leaves are no locality
level: the leaves that share a node are merged into one logical switch (the SU), as NVIDIA topograph's
merger does. Above that, the switches of the next layer whose children are the same logical switches are
merged (a spine group, a pod's spines, a core group). Planes are parallel copies, not a level: their leaves
share the nodes and so merge, and their spines then have the same children and merge too.

A rack-scale NVLink system (a node type with `rack_system`, DGX GB200 NVL72) makes each rack's trays of one node
group an NVLink domain: GPUs that talk over NVLink, not over this fabric. The domain is the lowest level: when
the lowest logical switches are the domains (a rail-aligned rack: its rail leaves merge into one), they take the
domains' names; when a logical switch holds several domains, the domains become a level below it. A domain
whose trays sit under several lowest switches is no level (analysis checks report it); it stays in `domains`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from fabric.model.topology import LAYER_RANK, FabricTopology, Topology
from fabric.spec.loader import Design
from fabric.spec.schema import NodeAttach


@dataclass(frozen=True)
class LogicalSwitch:
    """Physical switches merged into one level of the scheduler's tree, with its children and nodes."""

    name: str
    level: int  # 0: lowest; Slurm's Level (1 + the highest child level)
    layer: str  # physical layer of its members
    members: tuple[str, ...]  # physical switches merged into it, in generation order
    children: tuple[str, ...]  # logical switches below (level > 0), in physical order
    nodes: tuple[str, ...]  # every scheduler node below it, in node order
    speed_gbps: int  # fastest link from its members down to its children or nodes
    nvlink: str = ""  # an NVLink domain: its rack-scale system's name (`DGX GB200 NVL72`); "" for a switch


@dataclass(frozen=True)
class NvlinkDomain:
    """The trays of one node group in one rack of a rack-scale NVLink system: one NVLink domain."""

    name: str
    system: str  # the rack-scale system (`DGX GB200 NVL72`)
    rack: str
    group: str
    nodes: tuple[str, ...]  # in node order
    gpus: int
    trays: int  # the system's trays per domain: `nodes` is short of it in a partly filled rack


@dataclass(frozen=True)
class Locality:
    """A fabric's scheduler tree: logical switches per level over the scheduler nodes."""

    fabric: str
    groups: tuple[str, ...]
    nodes: tuple[str, ...]  # scheduler nodes, in design order
    levels: tuple[tuple[LogicalSwitch, ...], ...]  # levels[0] is the lowest, each in physical order
    unplaced: tuple[str, ...]  # scheduler nodes on no leaf of the fabric
    domains: tuple[NvlinkDomain, ...] = ()  # NVLink domains of the scheduler nodes, in node order
    domain_level: bool = False  # the domains are levels[0]

    @property
    def switches(self) -> tuple[LogicalSwitch, ...]:
        return tuple(s for level in self.levels for s in level)

    @property
    def by_name(self) -> Mapping[str, LogicalSwitch]:
        return {s.name: s for s in self.switches}

    def blocks(self) -> tuple[LogicalSwitch, ...]:
        """The lowest logical switches in physical order: depth-first from the roots, children in order."""
        by_name = self.by_name
        seen: dict[str, LogicalSwitch] = {}

        def walk(switch: LogicalSwitch) -> None:
            if switch.level == 0:
                seen.setdefault(switch.name, switch)
            for child in switch.children:
                walk(by_name[child])

        for root in self.roots():
            walk(root)
        for leaf in self.levels[0] if self.levels else ():
            seen.setdefault(leaf.name, leaf)
        return tuple(seen.values())

    def roots(self) -> tuple[LogicalSwitch, ...]:
        below = {c for s in self.switches for c in s.children}
        return tuple(s for s in self.switches if s.name not in below)

    def chain(self, node: str) -> tuple[str, ...]:
        """The logical switches above a node, lowest first."""
        return tuple(s.name for s in self.switches if node in s.nodes)


def scheduler_fabric(design: Design) -> str | None:
    spec = design.spec
    chosen = spec.exports.scheduler.fabric
    if chosen is not None:
        return chosen
    return next((k for k in spec.fabrics if spec.fabric_role(k) == "compute"), None)


def scheduler_groups(design: Design, fabric: str) -> tuple[str, ...]:
    spec = design.spec
    if spec.exports.scheduler.groups is not None:
        return tuple(spec.exports.scheduler.groups)
    attached = [a.group for a in spec.fabrics[fabric].attach if isinstance(a, NodeAttach)]
    types = {g.group: g.type for g in spec.nodes}
    with_gpus = [g for g in attached if design.catalog.nodes[types[g]].gpus > 0]
    return tuple(dict.fromkeys(with_gpus or attached))


def locality(design: Design, topology: Topology) -> Locality | None:
    """The logical switch tree of the scheduler fabric, or None when the design has no such fabric."""
    key = scheduler_fabric(design)
    if key is None or key not in topology.fabrics:
        return None
    groups = scheduler_groups(design, key)
    nodes = tuple(d.name for d in topology.devices.values() if d.layer == "node" and d.group in groups)
    ft = topology.fabrics[key]
    levels = _levels(topology, ft, set(nodes), nodes)
    placed = {n for s in levels[0] for n in s.nodes} if levels else set()
    domains = nvlink_domains(design, topology, nodes)
    levels, domain_level = _with_domains(levels, domains)
    return Locality(key, groups, nodes, levels, tuple(n for n in nodes if n not in placed), domains, domain_level)


def nvlink_domains(design: Design, topology: Topology, nodes: tuple[str, ...]) -> tuple[NvlinkDomain, ...]:
    """The NVLink domains among `nodes`: per node group and rack, the trays of a rack-scale system."""
    node_types = design.catalog.nodes
    types = {g.group: g.type for g in design.spec.nodes}
    devices = topology.devices
    found: dict[tuple[str, str], list[str]] = {}
    for name in nodes:
        device = devices[name]
        group = device.group or ""
        if device.rack is None or group not in types or node_types[types[group]].rack_system is None:
            continue
        found.setdefault((group, device.rack), []).append(name)
    several = len({g for g, _ in found}) > 1
    out = []
    for (group, rack), members in found.items():
        node_type = node_types[types[group]]
        system = node_type.rack_system
        assert system is not None
        name = f"nvl-{group}-{rack}" if several else f"nvl-{rack}"
        out.append(
            NvlinkDomain(
                name.lower(), system.name, rack, group, tuple(members), node_type.gpus * len(members), system.trays
            )
        )
    return tuple(out)


def _with_domains(
    levels: tuple[tuple[LogicalSwitch, ...], ...], domains: tuple[NvlinkDomain, ...]
) -> tuple[tuple[tuple[LogicalSwitch, ...], ...], bool]:
    """The levels with the NVLink domains as the lowest, when they nest in the lowest logical switches."""
    if not levels or not domains:
        return levels, False
    lowest = levels[0]
    home: dict[str, str] = {n: s.name for s in lowest for n in s.nodes}
    inside: dict[str, list[NvlinkDomain]] = {}
    for d in domains:
        owners = {home.get(n) for n in d.nodes}
        if len(owners) != 1 or None in owners:
            return levels, False  # a domain across switches (or off the fabric): no level
        inside.setdefault(owners.pop() or "", []).append(d)
    covered = {n for d in domains for n in d.nodes}
    same = all(len(inside.get(s.name, ())) == 1 and set(s.nodes) <= covered for s in lowest)
    if same:  # the lowest switches are the domains: they take the domains' names
        renamed = {s.name: inside[s.name][0] for s in lowest}
        level0 = tuple(
            replace(s, name=renamed[s.name].name, nodes=renamed[s.name].nodes, nvlink=renamed[s.name].system)
            for s in lowest
        )
        upper = tuple(
            tuple(replace(s, children=tuple(renamed[c].name if c in renamed else c for c in s.children)) for s in level)
            for level in levels[1:]
        )
        return (level0, *upper), True
    # a level below: each lowest switch over its domains and the nodes it holds outside any domain
    if any(n not in covered for s in lowest for n in s.nodes):
        return levels, False  # a switch with loose nodes and domains: Slurm's tree wants one or the other
    level0 = tuple(
        LogicalSwitch(d.name, 0, "nvlink", (), (), d.nodes, s.speed_gbps, d.system)  # its nodes' links: the switch's
        for s in lowest
        for d in inside.get(s.name, ())
    )
    shifted = tuple(
        tuple(
            replace(
                s, level=s.level + 1, children=tuple(d.name for d in inside.get(s.name, ())) if i == 0 else s.children
            )
            for s in level
        )
        for i, level in enumerate(levels)
    )
    return (level0, *shifted), True


def _levels(
    topology: Topology, ft: FabricTopology, wanted: set[str], node_order: tuple[str, ...]
) -> tuple[tuple[LogicalSwitch, ...], ...]:
    order = {name: i for i, name in enumerate(ft.switches)}
    node_rank = {name: i for i, name in enumerate(node_order)}
    devices = topology.devices
    below: dict[str, set[str]] = {s: set() for s in ft.switches}  # physical switch → physical neighbours below
    speed: dict[str, int] = dict.fromkeys(ft.switches, 0)
    for link in ft.links:  # 300,000 at 100k GPUs: no calls in this loop
        tier = link.tier
        if tier == "leaf-leaf" or (tier == "node-leaf" and link.a not in wanted):  # peer links: not up
            continue
        upper = link.b
        below[upper].add(link.a)
        if link.speed_gbps > speed[upper]:
            speed[upper] = link.speed_gbps

    # Level 0: leaves that share a scheduler node are one logical switch (union-find over the leaves).
    leaves = [s for s in ft.switches if devices[s].layer == "leaf" and below[s]]
    parent = {leaf: leaf for leaf in leaves}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    owner: dict[str, str] = {}
    for leaf in leaves:
        for node in below[leaf]:
            if node in owner:
                a, b = find(owner[node]), find(leaf)
                if order[b] < order[a]:
                    a, b = b, a
                parent[b] = a  # the root: the one first in the fabric's order
            else:
                owner[node] = leaf
    components: dict[str, list[str]] = {}
    for leaf in leaves:
        components.setdefault(find(leaf), []).append(leaf)
    groups = [tuple(members) for members in components.values()]
    groups.sort(key=lambda members: order[members[0]])
    taken = set(node_order)
    level0: list[LogicalSwitch] = []
    for i, members in enumerate(groups, 1):
        nodes = sorted({n for m in members for n in below[m]}, key=node_rank.__getitem__)
        name = _name(topology, "leaf", members, len(groups) == 1 and len(leaves) > 1, i, taken)
        level0.append(LogicalSwitch(name, 0, "leaf", members, (), tuple(nodes), max(speed[m] for m in members)))
    levels: list[tuple[LogicalSwitch, ...]] = [tuple(level0)]

    # Upper levels: the next layer's switches that sit over the same logical switches are one.
    while True:
        current = levels[-1]
        logical_of = {m: s.name for s in current for m in s.members}
        rank = LAYER_RANK[current[0].layer] + 1 if current else 99
        uppers = [s for s in ft.switches if LAYER_RANK[devices[s].layer] == rank]
        merged: dict[tuple[str, ...], list[str]] = {}
        position = {s.name: i for i, s in enumerate(current)}
        for upper in uppers:
            children = tuple(sorted({logical_of[x] for x in below[upper] if x in logical_of}, key=position.__getitem__))
            if children:
                merged.setdefault(children, []).append(upper)
        if not merged:
            break
        by_name = {s.name: s for s in current}
        layer = devices[uppers[0]].layer
        whole = len(merged) == 1 and sum(len(m) for m in merged.values()) > 1
        nxt: list[LogicalSwitch] = []
        for i, (children, group) in enumerate(merged.items(), 1):
            below_it = {n for c in children for n in by_name[c].nodes}
            # over every scheduler node (the root, as a rule): they are in node order already
            under = node_order if len(below_it) == len(node_order) else sorted(below_it, key=node_rank.__getitem__)
            name = _name(topology, layer, tuple(group), whole, i, taken)
            spd = max(speed[m] for m in group)
            nxt.append(LogicalSwitch(name, len(levels), layer, tuple(group), children, tuple(under), spd))
        levels.append(tuple(nxt))
    return tuple(levels) if level0 else ()


def _name(topology: Topology, layer: str, members: tuple[str, ...], whole: bool, i: int, taken: set[str]) -> str:
    """A physical switch keeps its name; a merged group is named by what its members share."""
    devices = [topology.devices[m] for m in members]
    sus = {d.su for d in devices}
    pods = {d.pod for d in devices}
    if len(members) == 1:
        name = members[0]
    elif layer == "leaf" and len(sus) == 1 and None not in sus:
        name = f"su{devices[0].su}"
    elif layer != "leaf" and len(pods) == 1 and None not in pods:
        name = f"pod{devices[0].pod}"
    elif whole:
        name = "leaves" if layer == "leaf" else f"{layer}s"
    else:
        name = f"{layer}group{i}"
    if name in taken:
        name = f"{name}-{layer}group{i}"
    taken.add(name)
    return name
