"""The figures of one fabric, computed on its graph: loads, oversubscription, bisection, ECMP width
and the worst single failure. Checks judge them; `summary.json` and `fabric show` print them.

Bisection is the smallest maximum flow over two balanced splits of the endpoints — the leaves in
order cut in two halves (across pods in 3 tiers) and alternate leaves — computed on the graph
reduced by its symmetry (flow/reduction.py). For a regular Clos this is the exact worst case;
for an irregular graph it is an upper bound of it. Planes are separate fabrics: their bisections add.

This module is the one figures interface: the graph figures come from one of the two flow engines of
`analysis/flow/` (lists or arrays, the same numbers), chosen here by size (`on_lists`), for the job table too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from typing import Literal

from fabric.analysis.flow import lists
from fabric.analysis.flow.graph import GraphFigures, SwitchGraph, switch_lists
from fabric.model.kinds import TIERS, Layer, Tier
from fabric.model.topology import LAYER_RANK, FabricTopology

Engine = Literal["auto", "python", "numpy"]  # the flow engine: flow/lists.py, flow/arrays.py, or chosen by size

# Up to this many switches the graph figures and the job table are computed on lists in pure Python (the same
# numbers): there that takes less time than loading numpy and scipy's graph code, which `fabric validate` and a
# configs-only build of such a fabric then never do (docs/dev/performance.md, "A pure-Python analysis").
SMALL_SWITCHES = 320


def on_lists(switches: int, engine: Engine = "auto") -> bool:
    """Whether a switch graph of `switches` switches takes the lists engine (else the arrays engine)."""
    return engine == "python" or (engine == "auto" and switches <= SMALL_SWITCHES)


LAYERS = (Layer.LEAF, Layer.SPINE, Layer.CORE)


@dataclass(frozen=True, slots=True)
class SwitchLoad:
    """A switch's down and up Gb/s and links, and whether it is in the top tier."""

    name: str
    layer: str
    down_gbps: int
    up_gbps: int
    down_links: int
    up_links: int
    top: bool  # in the fabric's top tier: nothing above it
    provisioned_gbps: int  # down-port bandwidth it was designed with (generated), else what is cabled

    @property
    def ratio(self) -> float | None:
        """Connected down:up bandwidth; None for a top-tier switch."""
        if self.top:
            return None
        return self.down_gbps / self.up_gbps if self.up_gbps else float("inf")

    @property
    def design_ratio(self) -> float | None:
        """Down-port capacity (free node slots included) : up bandwidth, as vendors state oversubscription."""
        if self.top:
            return None
        return self.provisioned_gbps / self.up_gbps if self.up_gbps else float("inf")


@dataclass(frozen=True)
class Failure:
    """A failed switch or link and the bisection bandwidth left without it."""

    element: str  # "switch spine03" or "link su1-rail0-leaf:sw17p1 — spine01:sw1p1"
    bisection_gbps: float


@dataclass(frozen=True)
class FabricFigures:
    """A fabric's counts, oversubscription, bisection, failure and ECMP figures (the report and checks read them)."""

    name: str
    technology: str
    role: str
    tiers: int
    planes: int
    switches: dict[str, int]
    links: dict[str, int]
    endpoints: int
    endpoint_gbps: int
    loads: tuple[SwitchLoad, ...]
    oversubscription: dict[str, float]  # worst switch's design ratio per layer that has uplinks
    oversubscription_connected: dict[str, float]  # worst switch's connected ratio
    oversubscription_tier: dict[str, float]  # layer totals, connected
    full_bisection_gbps: float
    bisection_gbps: float
    bisection_analytic_gbps: float | None
    components: int
    min_ecmp_width: int | None
    ecmp_worst_pair: tuple[str, str] | None
    ecmp_short: tuple[tuple[str, str, int, int], ...]  # (leaf, other leaf, width, uplinks) where width < uplinks
    worst_failure: Failure | None
    reduced_vertices: int = 0
    graph_vertices: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def bisection_pct(self) -> float:
        return 100.0 * self.bisection_gbps / self.full_bisection_gbps if self.full_bisection_gbps else 0.0

    @property
    def worst_failure_pct(self) -> float | None:
        if self.worst_failure is None or not self.bisection_gbps:
            return None
        return 100.0 * self.worst_failure.bisection_gbps / self.bisection_gbps


# --------------------------------------------------------------------------------------------- all figures


def _loads(ft: FabricTopology) -> tuple[SwitchLoad, ...]:
    down: dict[str, list[int]] = {s: [0, 0] for s in ft.switches}
    upl: dict[str, list[int]] = {s: [0, 0] for s in ft.switches}
    for link in ft.links:
        if link.tier == Tier.PEER:  # not a path of the Clos (as in the graph)
            continue
        if link.b in down:
            down[link.b][0] += link.speed_gbps
            down[link.b][1] += 1
        if link.tier != Tier.NODE_LEAF and link.a in upl:
            upl[link.a][0] += link.speed_gbps
            upl[link.a][1] += 1
    layer = {s: ft.devices[s].layer for s in ft.switches}
    top = max((LAYER_RANK[layer[s]] for s in ft.switches), default=1)
    return tuple(
        SwitchLoad(
            s,
            layer[s],
            down[s][0],
            upl[s][0],
            down[s][1],
            upl[s][1],
            LAYER_RANK[layer[s]] == top and top > 1,
            max(down[s][0], ft.provisioned_down.get(s, 0)),
        )
        for s in ft.switches
    )


def _analytic(ft: FabricTopology, endpoint_gbps: int) -> float | None:
    p = ft.params
    if p is None or not ft.generated:
        return None
    # Traffic that leaves a pod passes the leaf tier and then the spine tier: the ratios multiply.
    factor = min(1.0, p.uplinks / p.downlinks) if p.downlinks else 1.0
    if p.tiers == 3 and p.spine_uplinks:
        spine_down = p.leaves_per_pod * (p.uplinks // p.spines_per_pod)
        factor *= min(1.0, p.spine_uplinks * p.spine_speed / (spine_down * p.leaf_speed))
    return endpoint_gbps / 2 * factor


_TIER, _GBPS = attrgetter("tier"), itemgetter(1)  # a link's tier; an endpoint's (leaf, Gb/s) Gb/s


def fabric_figures(ft: FabricTopology, *, failures: bool = True, engine: Engine = "auto") -> FabricFigures:
    """`engine`: numpy/scipy or pure Python for the graph figures (same results); auto picks by size."""
    sg = switch_lists(ft)
    loads = _loads(ft)
    switches = {layer: sum(1 for ld in loads if ld.layer == layer) for layer in LAYERS}
    links: dict[str, int] = dict.fromkeys(TIERS, 0)
    for tier, count in Counter(map(_TIER, ft.links)).items():  # (counted in C, in the order the tiers come)
        links[tier] = links.get(tier, 0) + count  # leaf-leaf (MLAG peer links) only where there are any
    endpoint_gbps = sum(map(_GBPS, sg.endpoints))
    over: dict[str, float] = {}
    over_connected: dict[str, float] = {}
    over_tier: dict[str, float] = {}
    for layer in ("leaf", "spine"):
        rated = [ld for ld in loads if ld.layer == layer and not ld.top]
        if rated and any(ld.up_links for ld in rated):
            over[layer] = max(ld.design_ratio or 0.0 for ld in rated)
            over_connected[layer] = max(ld.ratio or 0.0 for ld in rated)
            up = sum(ld.up_gbps for ld in rated)
            over_tier[layer] = sum(ld.down_gbps for ld in rated) / up if up else float("inf")
    graph = _graph_figures(ft, sg, failures, engine)
    return FabricFigures(
        name=ft.name,
        technology=ft.technology,
        role=ft.role,
        tiers=ft.tiers,
        planes=max(ft.planes, 1),
        switches=switches,
        links=links,
        endpoints=len(sg.endpoints),
        endpoint_gbps=endpoint_gbps,
        loads=loads,
        oversubscription=over,
        oversubscription_connected=over_connected,
        oversubscription_tier=over_tier,
        full_bisection_gbps=endpoint_gbps / 2,
        bisection_gbps=graph.bisection_gbps,
        bisection_analytic_gbps=_analytic(ft, endpoint_gbps),
        components=graph.components,
        min_ecmp_width=graph.min_ecmp_width,
        ecmp_worst_pair=graph.ecmp_worst_pair,
        ecmp_short=graph.ecmp_short,
        worst_failure=Failure(*graph.worst) if graph.worst else None,
        reduced_vertices=graph.reduced_vertices,
        graph_vertices=len(sg.names) + 2,
        notes=graph.notes,
    )


def _graph_figures(ft: FabricTopology, sg: SwitchGraph, failures: bool, engine: Engine) -> GraphFigures:
    if on_lists(len(sg.names), engine):
        return lists.graph_figures(ft, sg, failures)
    from fabric.analysis.flow import arrays  # numpy and scipy load here, for a large fabric only

    return arrays.graph_figures(ft, arrays.array_graph(sg), failures)
