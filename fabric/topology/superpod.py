"""The `superpod` rack layout: the order devices stand in when each unit's nodes get their own network rack.

A unit is a scalable unit of a fabric with SUs; where no fabric has SUs, the nodes one group of the compute
fabric's leaves serves. Each unit's nodes stand together, followed by a network rack with the leaves that
serve them: the SU's own leaves, and every other fabric's leaf (in-band, out-of-band, storage) in the unit most
of what it connects belongs to, so a node's BMC copper and in-band cables stay within its unit's racks (at 32,768
GPUs in the sequential layout they ran ~120 m, past 1000BASE-T's 100 m). Spines, cores, leaves that serve no
unit and the node groups outside the units (storage servers, head nodes) stand in central racks between the
first and the second half of the units. A unit's racks share a row (`Placeable.row_group`, see racks.place).
The fabrics generated after the first attach their nodes and switches unit by unit (`unit_order`), so that
an out-of-band leaf serves the BMCs and management ports of one unit's racks, not a run across the floor.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from fabric.model.draft import FabricDraft
from fabric.model.kinds import Layer, Tier
from fabric.model.topology import Link
from fabric.spec.schema import Spec
from fabric.topology.attach import Attachment
from fabric.topology.racks import Placeable


def _su_leaves(drafts: dict[str, FabricDraft]) -> dict[str, int]:
    """The leaves of a scalable unit, and its number."""
    return {
        sw.name: sw.su
        for draft in drafts.values()
        for sw in draft.switches
        if sw.su is not None and sw.layer == Layer.LEAF
    }


def _node_units(drafts: dict[str, FabricDraft], compute: str | None, leaves: set[str]) -> tuple[dict[str, int], int]:
    """Each node's unit, and the first central unit. A node's unit is the SU of its first leaf with one; else (no
    fabric has SUs) the ordinal of its first leaf in the compute fabric, numbered as the leaves first appear (a
    non-rail node's ports go to one group of leaves: its first port's leaf stands for the group). The nodes in
    none of those (storage servers, head nodes) make central units after them, one for each first leaf they
    attach to, so that the leaves serving them stand beside them in the central racks too."""
    su_of = _su_leaves(drafts)
    units: dict[str, int] = {}
    for draft in drafts.values():
        for link in draft.links:
            if link.tier == Tier.NODE_LEAF and link.b in su_of:
                units.setdefault(link.a, su_of[link.b])
    if not units and compute in drafts:
        ordinal: dict[str, int] = {}
        for link in drafts[compute].links:
            if link.tier == Tier.NODE_LEAF and link.b in leaves and link.a not in units:
                units[link.a] = ordinal.setdefault(link.b, len(ordinal) + 1)
    if not units:
        return units, 0
    central = max(units.values()) + 1
    switches = {sw.name for draft in drafts.values() for sw in draft.switches}
    first_leaf: dict[str, int] = {}
    for draft in drafts.values():
        for link in draft.links:
            if link.tier == Tier.NODE_LEAF and link.b in leaves and link.a not in units and link.a not in switches:
                units[link.a] = central + first_leaf.setdefault(link.b, len(first_leaf))
    return units, central


def _majority(links: Iterable[Link], units: dict[str, int], leaves: set[str]) -> dict[str, int]:
    """Each leaf's unit: the one most of its node-leaf links' endpoints belong to (the lowest on a tie)."""
    votes: dict[str, Counter[int]] = {}
    for link in links:
        if link.tier == Tier.NODE_LEAF and link.b in leaves:
            unit = units.get(link.a)
            if unit is not None:
                votes.setdefault(link.b, Counter())[unit] += 1
    return {leaf: min(c, key=lambda u: (-c[u], u)) for leaf, c in votes.items()}


def _units(drafts: dict[str, FabricDraft], compute: str | None) -> tuple[dict[str, int], dict[str, int], int]:
    """Each node's unit and each switch's; the first central unit. A leaf's unit is its SU, else the unit most of
    what it attaches belongs to (nodes first, then the units' switches: an out-of-band leaf serving only
    management ports). A leaf still of no unit (an out-of-band one serving spines and cores) makes a central
    unit of its own with the switches it serves, so it stands beside them."""
    leaves = {sw.name for draft in drafts.values() for sw in draft.switches if sw.layer == Layer.LEAF}
    node_unit, central = _node_units(drafts, compute, leaves)
    switch_unit: dict[str, int] = {}
    if not node_unit:
        return node_unit, switch_unit, central
    switch_unit.update(_su_leaves(drafts))
    links = [link for draft in drafts.values() for link in draft.links]
    for voters in (node_unit, switch_unit):
        switch_unit.update(_majority(links, voters, leaves - switch_unit.keys()))
    next_unit = max([*node_unit.values(), *switch_unit.values()]) + 1
    for link in links:
        if link.tier != Tier.NODE_LEAF or link.b not in leaves or link.a in node_unit or link.a in switch_unit:
            continue  # only the management ports of switches of no unit
        if link.b not in switch_unit:
            switch_unit[link.b] = next_unit
            next_unit += 1
        if switch_unit[link.b] >= central:
            switch_unit[link.a] = switch_unit[link.b]
    return node_unit, switch_unit, central


def compute_fabric(spec: Spec) -> str | None:
    """The key of the design's compute fabric, whose leaves make the units where no fabric has SUs."""
    return next((key for key in spec.fabrics if spec.fabric_role(key) == "compute"), None)


def _floor_ranks(units: Iterable[int], central: int) -> dict[int | None, int]:
    """Where each unit stands in the order racks fill: the first half of the SUs (units below `central`), the
    central units, the devices of no unit (None), the second half."""
    su = sorted({u for u in units if u < central})
    half = (len(su) + 1) // 2
    order: list[int | None] = [*su[:half], *sorted({u for u in units if u >= central}), None, *su[half:]]
    return {unit: rank for rank, unit in enumerate(order)}


def unit_order(attached: list[Attachment], drafts: dict[str, FabricDraft], compute: str | None) -> list[Attachment]:
    """A fabric's attachments in the order their units stand on the floor (spec order within one), the units read
    from the fabrics generated before it: a leaf then serves one unit or two that stand side by side. An
    out-of-band fabric attaches each unit's BMCs and its switches' management ports together (in spec order its
    leaves would take the management ports of every unit's in-band leaves, one after another across the floor)."""
    node_unit, switch_unit, central = _units(drafts, compute)
    if not node_unit:
        return attached
    rank = _floor_ranks([*node_unit.values(), *switch_unit.values()], central)
    rest = rank[None]
    return sorted(attached, key=lambda a: rank.get(node_unit.get(a.device, switch_unit.get(a.device)), rest))


def superpod_order(items: list[Placeable], drafts: dict[str, FabricDraft], compute: str | None) -> list[Placeable]:
    """The devices in the order `place` fills racks: each unit's nodes then its network rack, the SUs' first
    half, the central units, the devices of no unit (spines, cores), the second half (`compute`: the compute
    fabric's key)."""
    node_unit, switch_unit, central = _units(drafts, compute)
    if not node_unit:
        return items
    per_unit: dict[int | None, list[Placeable]] = {None: []}
    for item in items:
        if item.name in node_unit:
            unit, kind = node_unit[item.name], "nodes"
        elif item.name in switch_unit:
            unit, kind = switch_unit[item.name], "network"
        else:
            per_unit[None].append(item)
            continue
        per_unit.setdefault(unit, []).append(replace(item, block=f"su{unit}:{kind}", row_group=f"su{unit}"))
    for key, group in per_unit.items():  # nodes first, then the unit's network rack
        if key is not None:
            group.sort(key=lambda p: p.block.endswith(":network"))
    rank = _floor_ranks([u for u in per_unit if u is not None], central)
    return [p for key in sorted(per_unit, key=rank.__getitem__) for p in per_unit[key]]
