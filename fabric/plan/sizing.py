"""A candidate's switch counts and rack rows in closed form: what its topology will hold, without building it.

`switch_counts` follows topology/clos.py for the narrow spec `fabric plan` writes (one node group of one type,
every node's compute ports attached, no lock, no reserved slots, the leaf model on every tier, `spines`,
`cores`, `downlinks` and `uplinks` unset): leaves per plane from the scalable units and rails (rail-optimized)
or from the groups of leaves a node's ports spread over (not), then spines and cores as the generator sizes
them. `racks` follows topology/racks.py's sequential placement: the node racks, then the switch racks, filled
row by row. Where the generator would refuse the candidate (its radix, port budget), the counts are None.
tests/unit/plan/test_sizing.py holds both equal to built topologies over every candidate of several sizes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabric.plan.candidates import Candidate
from fabric.spec.catalog import Catalog, NodeType, SwitchModel, SwitchPort, best_speed, switch_ports
from fabric.spec.schema.racks import RackLayout
from fabric.topology.leaves import smallest_divisor_at_least, split_leaf_ports


@dataclass(frozen=True, slots=True)
class Plane:
    """One plane of the candidate's compute fabric: its switches (made in this order: leaves, spines, cores) and
    how they are wired (topology/clos.py)."""

    node_ports: int  # ports each node brings to this plane
    rails: int  # rail-optimized: rails per plane (a scalable unit's leaves, in rail order); 0: not
    per_rail: int  # a node's ports on one rail leaf
    su: int  # rail-optimized: nodes per scalable unit; else nodes per group of `node_ports` leaves
    leaves: int
    spines: int
    cores: int
    uplinks: int  # per leaf, every one used: 2 tiers uplinks / spines to each spine; 3 tiers one to each of its pod's
    leaf_up_gbps: int
    per_pod: int  # 3 tiers: leaves per pod (a pod's spines are `uplinks` in a row); 2 tiers: every leaf
    spine_uplinks: int  # per spine (3 tiers), every one used: spine j of a pod to the cores of group j
    spine_up_gbps: int
    per_group: int  # cores per group (3 tiers)

    @property
    def switches(self) -> int:
        return self.leaves + self.spines + self.cores


@dataclass(frozen=True, slots=True)
class Sizes:
    """Switches of the candidate's compute fabric: each plane's, in the order the generator makes them."""

    planes: tuple[Plane, ...]

    @property
    def leaves(self) -> int:
        return sum(p.leaves for p in self.planes)

    @property
    def spines(self) -> int:
        return sum(p.spines for p in self.planes)

    @property
    def cores(self) -> int:
        return sum(p.cores for p in self.planes)

    @property
    def switches(self) -> int:
        return sum(p.switches for p in self.planes)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why the generator refuses the candidate: its finding's code, and the reason in the plan's words."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Racks:
    """The sequential placement: `node_racks` racks of up to `nodes_per_rack` nodes, then `switch_racks` of up to
    `switches_per_rack` switches, in rows of `per_row` racks (slot i: row i // per_row, position i % per_row)."""

    nodes_per_rack: int
    node_racks: int
    switches_per_rack: int
    switch_racks: int
    per_row: int

    @property
    def total(self) -> int:
        return self.node_racks + self.switch_racks


def _layout(model: SwitchModel, speed: int) -> list[SwitchPort]:
    return [p for p in switch_ports(model, speed, model.platform) if p.speed_gbps == speed]


def switch_counts(candidate: Candidate, node: NodeType, nodes: int, catalog: Catalog) -> Sizes | Refusal | None:
    """The switches the generator makes for the candidate (topology/clos.py), why it refuses it, or None where the
    closed form does not apply."""
    model = catalog.switches[candidate.switch]
    layout = switch_ports(model, best_speed(model, candidate.speed_gbps), model.platform)
    down, up, problem = split_leaf_ports(layout, candidate.oversubscription, None, None)
    if problem:
        return Refusal("port-budget", f"leaf `{candidate.switch}` {problem}")
    if not down or not up:
        return None
    ports = node.ports["compute"].port_list()
    planes = candidate.planes
    # every plane's leaves first, then each plane's upper tiers, as the generator makes (and refuses) them
    lower: list[tuple[int, int, int, int, int]] = []  # (node ports, rails, a node's ports per rail leaf, group, leaves)
    for plane in range(planes):
        mine = ports[plane::planes]
        if not mine:
            return None
        if candidate.rail_optimized:  # `_rail_leaves`: a leaf per rail and scalable unit
            named = sorted({p.rail for p in mine if p.rail is not None})
            if not named or any(p.rail is None for p in mine):
                return None  # non-rail ports beside rail ones: placed by `_fill_free`, not counted here
            per_rail = max(sum(1 for p in mine if p.rail == r) for r in named)
            su = candidate.scalable_unit or 1
            if su * per_rail > len(down):
                return Refusal(
                    "port-budget",
                    f"a scalable unit of {su} nodes needs {su * per_rail} down ports per rail leaf; the leaf has "
                    f"{len(down)}",
                )
            lower.append((len(mine), len(named), per_rail, su, math.ceil(nodes / su) * len(named)))
        else:  # `_group_leaves`: groups of as many leaves as a node has ports, filled evenly
            width = len(mine)
            if width > len(down):
                return Refusal("port-budget", f"a node brings {width} ports; a leaf has {len(down)} down ports")
            groups = math.ceil(nodes * width / (len(down) * width))
            lower.append((width, 0, 1, math.ceil(nodes / groups), groups * width))
    out: list[Plane] = []
    for node_ports, rails, per_rail, group, n in lower:
        upper = _upper(candidate, model, len(up), up[0].speed_gbps, n, rails, len(down))
        if not isinstance(upper, tuple):
            return upper
        spines, cores, per_pod, spine_up, per_group = upper
        spine_up_gbps = spine_up[0].speed_gbps if spine_up else 0
        out.append(
            Plane(
                node_ports,
                rails,
                per_rail,
                group,
                n,
                spines,
                cores,
                len(up),
                up[0].speed_gbps,
                per_pod,
                len(spine_up),
                spine_up_gbps,
                per_group,
            )
        )
    return Sizes(tuple(out))


def _upper(
    candidate: Candidate, model: SwitchModel, u: int, up_speed: int, n: int, rails: int, d: int
) -> tuple[int, int, int, list[SwitchPort], int] | Refusal | None:
    """(spines, cores, leaves per pod, a spine's up ports, cores per group) of one plane of `n` leaves with `u`
    uplinks each (clos.py `_upper_tiers`, `_build_three_tier`), or why the generator refuses them."""
    spine_speed = best_speed(model, up_speed)
    spine_layout = _layout(model, spine_speed)
    k_s = len(spine_layout)
    if not k_s:
        return None
    if candidate.tiers == 2:
        m = smallest_divisor_at_least(u, math.ceil(n * u / k_s))
        if m is None:
            return Refusal(
                "radix",
                f"2 tiers of {candidate.switch} ({k_s} ports at {spine_speed}G) join at most {k_s} leaves "
                f"({k_s * d:,} leaf down ports); this fabric needs {n} leaves per plane",
            )
        return m, 0, n, [], 0
    s_down, s_up, problem = split_leaf_ports(spine_layout, candidate.oversubscription, None, None)
    if problem:
        return Refusal("port-budget", f"spine `{candidate.switch}` {problem}")
    if not s_up:
        return None
    per_pod = len(s_down)  # a spine per leaf uplink in a pod (`spines` unset): one link from each leaf
    if rails:
        per_pod = per_pod // rails * rails
    if per_pod < 1:
        return Refusal("radix", "a pod cannot hold one scalable unit's leaves")
    pods = math.ceil(n / per_pod)
    u_s = len(s_up)
    k_c = len(_layout(model, best_speed(model, s_up[0].speed_gbps)))
    per_group = smallest_divisor_at_least(u_s, math.ceil(pods * u_s / k_c)) if k_c else None
    if per_group is None:
        return Refusal(
            "radix",
            f"{pods} pods exceed what 3 tiers of {candidate.switch} can join ({k_c} pods of {per_pod} leaves, "
            f"{per_pod * d * k_c:,} leaf down ports per plane); this fabric needs {n} leaves per plane",
        )
    return pods * u, u * per_group, per_pod, s_up, per_group


def racks(node: NodeType, nodes: int, switches: int, model: SwitchModel, layout: RackLayout) -> Racks:
    """Where topology/racks.py places the candidate's nodes and switches (every rack of the plan's spec)."""
    usable = layout.rack_units - layout.reserved_u
    budget_w = layout.power_kw * 1000
    system = node.rack_system
    per_node_rack = min(
        usable // node.u if node.u else nodes,
        int(budget_w // node.power_w) if node.power_w else nodes,
        system.trays if system is not None else nodes,
    )
    per_switch_rack = min(
        usable // model.u if model.u else switches, int(budget_w // model.power_w) if model.power_w else switches
    )
    node_racks = math.ceil(nodes / per_node_rack) if per_node_rack > 0 else 0
    switch_racks = math.ceil(switches / per_switch_rack) if per_switch_rack > 0 else 0
    total = node_racks + switch_racks
    per_row = layout.per_row or max(1, math.ceil(total / len(layout.rows)))
    return Racks(per_node_rack, node_racks, per_switch_rack, switch_racks, per_row)
