"""Graph checks: each is a plain function from a Context (design, topology, figures) to findings; CHECKS lists
them. They look at the topology and its figures, so they judge a hand-written or imported fabric as they judge
a generated one. Later stages extend the Context (allocation/checks.py, intent/context.py).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from fabric.analysis.figures import FabricFigures, SwitchLoad, on_lists
from fabric.model.findings import Finding, error, warning
from fabric.model.kinds import Tier
from fabric.model.topology import Topology
from fabric.spec.catalog import SwitchModel
from fabric.spec.loader import Design
from fabric.spec.schema import ClosTopology, format_ratio

TOLERANCE = 1e-9


@dataclass(frozen=True)
class Context:
    """What the graph checks read: the design, its topology and the fabrics' figures."""

    design: Design
    topology: Topology
    figures: Mapping[str, FabricFigures]


Check = Callable[[Context], Iterator[Finding]]


def _list(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def check_ports(ctx: Context) -> Iterator[Finding]:
    """No device port carries two cables (across all fabrics); no switch has more links than ports."""
    owner: dict[tuple[str, str], str] = {}
    clashes: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, ft in ctx.topology.fabrics.items():
        for link in ft.links:
            if link.tier != Tier.NODE_LEAF:
                continue  # switch ports belong to one fabric; only attached endpoints can be shared
            end = (link.a, link.a_port)
            first = owner.setdefault(end, key)
            if first != key:
                clashes[(first, key)].append(f"{end[0]}:{end[1]}")
        used: Counter[str] = Counter()
        for link in ft.links:
            used[link.b] += 1
            if link.tier != Tier.NODE_LEAF:
                used[link.a] += 1
        over = []
        for name in ft.switches:
            capacity = _capacity(ctx.design.catalog.switches[ctx.topology.devices[name].model])
            if used[name] > capacity:
                over.append(f"{name} ({used[name]} links, {capacity} ports)")
        if over:
            yield error("port-budget", f"fabrics.{key}.topology", f"switches with more links than ports: {_list(over)}")
    for (first, second), ports in clashes.items():
        yield error(
            "port-budget",
            f"fabrics.{second}.attach",
            f"{len(ports)} port(s) are cabled in both fabrics `{first}` and `{second}`: {_list(ports, 3)}",
            "attach a different port group in one of them",
        )


def _capacity(model: SwitchModel) -> int:
    """The most logical ports the model can have: every cage at its widest breakout."""
    return sum(g.cages * max(m.ports for m in g.modes) for g in model.ports)


def check_oversubscription(ctx: Context) -> Iterator[Finding]:
    for key, fig in ctx.figures.items():
        ft = ctx.topology.fabrics[key]
        targets = {"leaf": ft.target_leaf, "spine": ft.target_spine}
        for layer, target in targets.items():
            loads = [ld for ld in fig.loads if ld.layer == layer and ld.ratio is not None]
            no_up = [ld.name for ld in loads if ld.up_links == 0]
            if no_up:
                yield error(
                    "oversubscription",
                    f"fabrics.{key}.topology",
                    f"{len(no_up)} {layer} switch(es) have no uplinks: {_list(no_up)}",
                    "every switch below the top tier needs uplinks",
                )
            worse = sorted(
                (ld for ld in loads if ld.up_links and ld.ratio is not None and ld.ratio > target + TOLERANCE),
                key=lambda ld: -(ld.ratio or 0),
            )
            if worse:
                yield error(
                    "oversubscription",
                    f"fabrics.{key}.oversubscription",
                    f"{len(worse)} of {len(loads)} {layer} switches exceed the {format_ratio(target)} target; worst "
                    f"{worse[0].name} at {format_ratio(worse[0].ratio or 0)} ({worse[0].down_gbps:,} Gb/s down, "
                    f"{worse[0].up_gbps:,} Gb/s up)",
                    "add uplinks (or spines), attach fewer ports per leaf, or state the intended target",
                )
            tier = fig.oversubscription_tier.get(layer)
            if tier is not None and tier > target + TOLERANCE:
                yield error(
                    "oversubscription",
                    f"fabrics.{key}.oversubscription",
                    f"the {layer} tier as a whole is at {format_ratio(tier)}, above the {format_ratio(target)} target",
                )


def check_overbuild(ctx: Context) -> Iterator[Finding]:
    """Uplinks sized above what the connected ports can send: leaves with more up than connected down bandwidth
    whose surplus uplinks add up to at least one spine (a handful of spare uplinks, e.g. the slot a SuperPOD frees
    for its UFM appliances, is not worth a warning). The uplinks a leaf needs are those that carry its connected
    down bandwidth at the target; the spines, those whose down ports take all needed uplinks (at least 2 per
    plane, as the failure check asks): an estimate, since a generated Clos also spreads uplinks evenly. Two-tier
    fabrics only: in three tiers a leaf's uplinks go to its pod's spines, one each, and what a spine fewer saves
    depends on the pods (not estimated yet)."""
    for key, fig in ctx.figures.items():
        if fig.tiers != 2:
            continue
        ft = ctx.topology.fabrics[key]
        target = ft.target_leaf
        leaves = [ld for ld in fig.loads if ld.layer == "leaf" and not ld.top and ld.up_links and ld.down_links]
        over: list[tuple[SwitchLoad, int]] = []  # (leaf, uplinks it needs)
        for ld in leaves:
            if ld.up_gbps > ld.down_gbps:
                speed = ld.up_gbps / ld.up_links
                over.append((ld, min(ld.up_links, math.ceil(ld.down_gbps / (speed * target) - TOLERANCE))))
        spines = [ld for ld in fig.loads if ld.layer == "spine"]
        if not over or not spines:
            continue
        spare = sum(ld.up_links - need for ld, need in over)
        used = sum(ld.up_links for ld in leaves) - spare  # uplinks the fabric needs
        speed = over[0][0].up_gbps / over[0][0].up_links
        per_spine = max(max(sp.provisioned_gbps, sp.down_gbps) for sp in spines) // speed
        floor = min(len(spines), 2 * fig.planes)
        needed_spines = max(floor, math.ceil(used / per_spine)) if per_spine else len(spines)
        saved = len(spines) - needed_spines
        if saved < 1:
            continue
        worst, need = min(over, key=lambda o: (o[0].down_gbps / o[0].up_gbps, o[0].name))
        ratio = format_ratio(worst.down_gbps / worst.up_gbps)
        yield warning(
            "overbuild",
            f"fabrics.{key}.topology",
            f"fabric `{key}`: {len(over)} of {len(leaves)} leaves have more uplink than connected downlink bandwidth; "
            f"worst {worst.name} at {ratio} connected ({worst.down_gbps:,} Gb/s down, {worst.up_gbps:,} Gb/s up), "
            f"needing {need} of its {worst.up_links} uplinks for the {format_ratio(target)} target: {spare:,} "
            f"uplink cables and about {saved} of the {len(spines)} spines carry nothing the nodes can send",
            _overbuild_hint(ctx.design, key, need, worst),
        )


def _overbuild_hint(design: Design, key: str, need: int, worst: SwitchLoad) -> str:
    topology = design.spec.fabrics[key].topology
    if not isinstance(topology, ClosTopology):
        return "cable fewer uplinks per leaf, or attach more ports to each leaf"
    hint = f"set `topology.uplinks: {need}` (what the connected ports need)"
    if topology.rail_optimized:
        ports = worst.provisioned_gbps * worst.down_links // worst.down_gbps if worst.down_gbps else 0
        if (topology.scalable_unit or 0) < ports:
            hint += (
                f", or fill the leaves: `scalable_unit: {ports}` uses each rail leaf's {ports} down ports (with "
                "`partial_su: populated` where the last SU is partly filled)"
            )
        else:
            hint += ", or `partial_su: populated` (a partly filled last SU keeps only the uplinks its ports need)"
    return hint + "; keep it only if the free down ports are for growth in place"


def check_bisection(ctx: Context) -> Iterator[Finding]:
    for key, fig in ctx.figures.items():
        ft = ctx.topology.fabrics[key]
        if not fig.full_bisection_gbps or fig.components > fig.planes:
            continue
        # leaf and spine ratios multiply for traffic that crosses the top tier
        promised = 100.0 * min(1.0, 1 / ft.target_leaf) * (min(1.0, 1 / ft.target_spine) if fig.tiers == 3 else 1.0)
        if fig.bisection_pct + 0.05 < promised:
            yield error(
                "bisection",
                f"fabrics.{key}",
                f"bisection is {fig.bisection_gbps:,.0f} Gb/s, {fig.bisection_pct:.1f}% of full "
                f"({fig.full_bisection_gbps:,.0f} Gb/s); the oversubscription target promises {promised:.1f}%",
                "look for missing or uneven uplinks (see the ECMP and oversubscription findings)",
            )
        analytic = fig.bisection_analytic_gbps
        if analytic is not None and fig.bisection_gbps + 0.005 * analytic < analytic:
            yield warning(
                "bisection-mismatch",
                f"fabrics.{key}",
                f"the graph gives {fig.bisection_gbps:,.0f} Gb/s of bisection; the Clos formula gives {analytic:,.0f}",
                "the generated graph is less regular than its parameters suggest",
            )


def check_ecmp(ctx: Context) -> Iterator[Finding]:
    for key, fig in ctx.figures.items():
        if fig.min_ecmp_width == 0 and fig.ecmp_worst_pair:
            a, b = fig.ecmp_worst_pair
            yield error(
                "ecmp",
                f"fabrics.{key}",
                f"no up-down path from leaf {a} to leaf {b}",
                "every leaf needs a path through a common spine or core",
            )
        if fig.ecmp_short:
            a, b, width, uplinks = fig.ecmp_short[0]
            yield warning(
                "ecmp",
                f"fabrics.{key}",
                f"{len(fig.ecmp_short)} leaf class(es) cannot use all their uplinks toward some leaf; e.g. {a} "
                f"reaches {b} over {width} of its {uplinks} uplinks",
                "connect every leaf to every spine (or every spine of its pod) with the same number of links",
            )
        ft = ctx.topology.fabrics[key]
        per_leaf: dict[str, Counter[str]] = defaultdict(Counter)
        for link in ft.links:
            if link.tier == Tier.LEAF_SPINE:
                per_leaf[link.a][link.b] += 1
        uneven = sorted(leaf for leaf, spines in per_leaf.items() if len(set(spines.values())) > 1)
        if uneven:
            example = per_leaf[uneven[0]]
            yield warning(
                "uneven-spread",
                f"fabrics.{key}",
                f"{len(uneven)} leaves spread their uplinks unevenly over spines; e.g. {uneven[0]}: "
                + ", ".join(f"{s} ×{n}" for s, n in sorted(example.items())[:4]),
                "give every leaf the same number of links to each spine",
            )


def check_failures(ctx: Context) -> Iterator[Finding]:
    for key, fig in ctx.figures.items():
        pct = fig.worst_failure_pct
        if pct is not None and fig.worst_failure is not None and pct < 50:
            yield warning(
                "failure-impact",
                f"fabrics.{key}",
                f"losing {fig.worst_failure.element} leaves {pct:.1f}% of the bisection",
                "add spines (at least 2) so that no single switch halves the fabric",
            )


def check_connectivity(ctx: Context) -> Iterator[Finding]:
    for key, fig in ctx.figures.items():
        if fig.components > fig.planes:
            yield error(
                "disconnected",
                f"fabrics.{key}",
                f"the switches fall apart into {fig.components} islands for {fig.planes} plane(s)",
                "every leaf needs a link to a spine of its plane",
            )


def check_rails(ctx: Context) -> Iterator[Finding]:
    for key, ft in ctx.topology.fabrics.items():
        if not ft.rail_optimized:
            continue
        rails: dict[str, set[int]] = defaultdict(set)
        for link in ft.links:
            if link.tier == Tier.NODE_LEAF and link.rail is not None:
                rails[link.b].add(link.rail)
        mixed = sorted(leaf for leaf, r in rails.items() if len(r) > 1)
        if mixed:
            yield warning(
                "rail-alignment",
                f"fabrics.{key}",
                f"{len(mixed)} leaves carry ports of several rails; e.g. {mixed[0]}: rails "
                + ", ".join(str(r) for r in sorted(rails[mixed[0]])),
                "GPU i of every node in a scalable unit should land on that unit's rail-i leaf",
            )


def _units(lo: int, hi: int) -> str:
    return f"U{lo}" if lo == hi else f"U{lo}-U{hi}"


def check_racks(ctx: Context) -> Iterator[Finding]:
    layout = ctx.design.spec.racks
    usable = layout.rack_units - layout.reserved_u
    units: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    power: Counter[str] = Counter()
    for dev in ctx.topology.devices.values():
        if dev.rack is None or dev.u is None:
            continue
        units[dev.rack].append((dev.u, dev.u + dev.height_u - 1, dev.name))
        power[dev.rack] += dev.power_w
    for rack, spans in units.items():
        spans.sort()
        top = max(hi for _, hi, _ in spans)
        if top > usable:
            name = max(spans, key=lambda s: s[1])[2]
            yield error(
                "rack-space",
                "racks.rack_units",
                f"rack {rack} needs {top} units ({name} reaches U{top}); {usable} are usable",
                "lower per_rack, or use taller racks",
            )
        for (lo1, hi1, n1), (lo2, hi2, n2) in itertools.pairwise(spans):
            if lo2 <= hi1:
                yield error(
                    "rack-space",
                    "racks",
                    f"{n1} ({_units(lo1, hi1)}) and {n2} ({_units(lo2, hi2)}) overlap in rack {rack}",
                    "pin them to different units",
                )
    over = sorted((-w, r) for r, w in power.items() if w > layout.power_kw * 1000 + TOLERANCE)
    if over:
        watts, rack = -over[0][0], over[0][1]
        yield error(
            "rack-power",
            "racks.power_kw",
            f"{len(over)} rack(s) exceed {layout.power_kw:g} kW; worst {rack} at {watts / 1000:.1f} kW",
            "lower nodes per_rack or raise racks.power_kw",
        )


def check_nvlink(ctx: Context) -> Iterator[Finding]:
    """Rack-scale NVLink systems: every rack holds a whole domain, and the domains nest in the scheduler's tree."""
    from fabric.analysis.locality import locality

    node_types = ctx.design.catalog.nodes
    if not any(getattr(node_types.get(g.type), "rack_system", None) for g in ctx.design.spec.nodes):
        return  # no group of a rack-scale system: no domain (nor the scheduler's tree, 0.9 s at 1M GPUs, made)
    loc = locality(ctx.design, ctx.topology)
    if loc is None or not loc.domains:
        return
    budget_kw = ctx.design.spec.racks.power_kw
    # the rack the room cannot feed: an NVL72's trays cannot be spread over racks (its NVLink spine is the rack's
    # back), so a budget below the full rack is an error of its own, not only the partial racks it leads to
    fed: set[str] = set()
    for group in ctx.design.spec.nodes:
        node_type = ctx.design.catalog.nodes.get(group.type)
        system = node_type.rack_system if node_type is not None else None
        if system is None or node_type is None or system.name in fed:
            continue
        fed.add(system.name)
        need_kw = system.trays * node_type.power_w / 1000
        if need_kw > budget_kw + TOLERANCE:
            yield error(
                "rack-power",
                "racks.power_kw",
                f"a {system.name} rack draws {need_kw:.1f} kW ({system.trays} trays of {node_type.power_w:,} W, "
                f"group `{group.group}`); racks of {budget_kw:g} kW cannot feed it",
                f"raise racks.power_kw to at least {math.ceil(need_kw)} (the room must feed whole racks of "
                f"{system.name}), or choose 8-GPU servers",
            )
    short = [d for d in loc.domains if len(d.nodes) != d.trays]
    if short:
        d = short[0]
        tray_w = ctx.topology.devices[d.nodes[0]].power_w
        need_kw = d.trays * tray_w / 1000
        hint = f"set per_rack: {d.trays} and a count that is a multiple of {d.trays}"
        if need_kw > budget_kw + TOLERANCE:
            hint = f"a full rack draws {need_kw:.1f} kW (rack-power): {hint} once racks.power_kw allows it"
        yield warning(
            "nvlink-domain-partial",
            f"nodes[group={d.group}].per_rack",
            f"{len(short)} rack(s) of {d.system} hold a different number of trays than the system's {d.trays}; "
            f"first: rack {d.rack} with {len(d.nodes)} of group `{d.group}`",
            hint,
        )
    if loc.levels and not loc.domain_level:
        lowest = {n: s.name for s in loc.levels[0] for n in s.nodes}
        split = [d for d in loc.domains if len({lowest.get(n) for n in d.nodes}) > 1]
        if split:
            d = split[0]
            yield warning(
                "nvlink-domain-split",
                f"fabrics.{loc.fabric}.topology",
                f"{len(split)} NVLink domain(s) span several lowest switch groups of fabric `{loc.fabric}`, so the "
                f"scheduler exports have no domain level; first: {d.name} ({len(d.nodes)} trays)",
                f"set scalable_unit to {d.trays} (or a multiple) so that a rack's trays share their leaves",
            )


def check_traffic(ctx: Context) -> Iterator[Finding]:
    """Static ECMP against adaptive routing for the whole cluster's training collectives (analysis/traffic). The
    model runs on numpy: on a design whose fabrics all take the pure-Python analysis (figures.on_lists) it runs only
    when the spec sets traffic.ecmp_warning_pct, so that validating a small design loads no numpy."""
    settings = ctx.design.spec.traffic
    if settings.ecmp_warning_pct <= 0:
        return
    small = all(on_lists(len(ft.switches)) for ft in ctx.topology.fabrics.values())
    if small and "ecmp_warning_pct" not in settings.model_fields_set:
        return
    from fabric.analysis.traffic.advice import shortfalls  # numpy loads here

    yield from shortfalls(ctx.design, ctx.topology)


CHECKS: dict[str, Check] = {
    "ports": check_ports,
    "oversubscription": check_oversubscription,
    "overbuild": check_overbuild,
    "bisection": check_bisection,
    "ecmp": check_ecmp,
    "failures": check_failures,
    "connectivity": check_connectivity,
    "rails": check_rails,
    "racks": check_racks,
    "nvlink": check_nvlink,
    "traffic": check_traffic,
}


def run_checks(ctx: Context) -> list[Finding]:
    findings: list[Finding] = []
    for check in CHECKS.values():
        findings.extend(check(ctx))
    return findings
