"""The figures of one fabric, computed on its graph: loads, oversubscription, bisection, ECMP width
and the worst single failure. Checks judge them; `summary.json` and `fabric show` print them.

Bisection is the smallest maximum flow over two balanced splits of the endpoints — the leaves in
order cut in two halves (across pods in 3 tiers) and alternate leaves — computed on the graph
reduced by its symmetry (see reduction.py). For a regular Clos this is the exact worst case;
for an irregular graph it is an upper bound of it. Planes are separate fabrics: their bisections add.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any, Literal

from fabric.analysis.cuts import graph_figures
from fabric.analysis.small import (
    GraphFigures,
    SwitchGraph,
    _less,
    endpoint_splits,
    plane_bisection,
    switch_lists,
)
from fabric.model.kinds import TIERS, Layer, Tier
from fabric.model.topology import LAYER_RANK, FabricTopology

if TYPE_CHECKING:  # numpy and scipy load only for a fabric larger than SMALL_SWITCHES
    import numpy as np

    from fabric.analysis.reduction import FlowGraph, ReducedFlow

# Up to this many switches the graph figures are computed in pure Python (fabric/analysis/small.py, the same
# numbers): at most ~0.1 s of CPU there (0.03 s at 260 switches, 0.26 s at 640), less than loading scipy's graph
# code (~0.2 s), which `fabric validate` and a configs-only build of such a fabric then never do.
SMALL_SWITCHES = 320

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


# --------------------------------------------------------------------------------------------- switch graph


@dataclass
class _SwitchGraph:
    """A fabric's switches as arrays: rank, plane, aggregated pair capacities and endpoint links."""

    names: list[str]
    rank: np.ndarray  # 1 leaf, 2 spine, 3 core
    plane: np.ndarray  # declared plane (0 when the fabric has one)
    pairs: FlowGraph  # aggregated switch-to-switch capacity
    counts: np.ndarray  # links per pair
    endpoints: list[tuple[int, int]]  # (leaf index, Gb/s) per endpoint link, in link order


def _switch_graph(lists: SwitchGraph) -> _SwitchGraph:
    import numpy as np

    from fabric.analysis.reduction import FlowGraph

    def array(values: list[int]) -> np.ndarray:
        return np.array(values, dtype=np.int64)

    pairs = lists.pairs
    return _SwitchGraph(
        lists.names,
        array(lists.rank),
        array(lists.plane),
        FlowGraph(pairs.n, array(pairs.src), array(pairs.dst), array(pairs.cap)),
        array(lists.counts),
        lists.endpoints,
    )


def _components(sg: _SwitchGraph) -> np.ndarray:
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(sg.names)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    matrix = csr_matrix((np.ones(len(sg.pairs.src)), (sg.pairs.src, sg.pairs.dst)), shape=(n, n))
    _, labels = connected_components(matrix, directed=False)
    return labels.astype(np.int64)


# --------------------------------------------------------------------------------------------- bisection


@dataclass
class _Split:
    """A balanced split of the endpoints, as arrays: per switch the Gb/s on side A and on side B."""

    name: str
    s_cap: np.ndarray  # per switch: endpoint Gb/s on side A
    t_cap: np.ndarray  # per switch: endpoint Gb/s on side B


def _splits(sg: _SwitchGraph, members: np.ndarray) -> list[_Split]:
    """Balanced splits of the endpoints on the leaves in `members` (one plane), as arrays."""
    import numpy as np

    return [
        _Split(split.name, np.array(split.s_cap, dtype=np.int64), np.array(split.t_cap, dtype=np.int64))
        for split in endpoint_splits(len(sg.names), sg.endpoints, members.tolist())
    ]


def _split_reduced(
    sg: _SwitchGraph, pairs: FlowGraph, split: _Split, alive: np.ndarray | None = None, base: np.ndarray | None = None
) -> ReducedFlow:
    """Max flow from side A's endpoints to side B's, on the switch graph plus a source and a sink, with what it
    carries where (for the failures' lower bounds). `base`: classes of the switches to refine from instead of the
    ranks (the job table's many cuts). From an equitable partition of the ranks (coarser than any cut's classes) an
    intact cut's classes are the same; a damaged graph's flow is the same from any start (refinement ends
    equitable, and any equitable partition keeps the flow)."""
    import numpy as np

    from fabric.analysis.reduction import FlowGraph, reduced_flow, row_ids

    n = len(sg.names)
    source, sink = n, n + 1
    s_cap, t_cap = split.s_cap, split.t_cap
    if alive is not None:
        s_cap = np.where(alive, s_cap, 0)
        t_cap = np.where(alive, t_cap, 0)
    s_nodes = np.flatnonzero(s_cap)
    t_nodes = np.flatnonzero(t_cap)
    graph = FlowGraph(
        n + 2,
        np.concatenate([pairs.src, s_nodes, t_nodes]),
        np.concatenate([pairs.dst, np.full(len(s_nodes), source), np.full(len(t_nodes), sink)]),
        np.concatenate([pairs.cap, s_cap[s_nodes], t_cap[t_nodes]]),
    )
    keep = graph.cap > 0
    graph = FlowGraph(graph.n, graph.src[keep], graph.dst[keep], graph.cap[keep])
    ranks = np.r_[sg.rank, 0, 0]
    start, top = (sg.rank, 10) if base is None else (base, int(base.max(initial=0)) + 1)
    init = row_ids(np.r_[start, top, top + 1], np.r_[s_cap, 0, 0], np.r_[t_cap, 0, 0])
    # bounds read from a flow that stays below the spines, else below the cores, if one does (jobs within a leaf
    # or a pod then lose nothing to an upper switch's failure, and it is known without computing it)
    return reduced_flow(graph, source, sink, init, avoid=(ranks >= 2, ranks >= 3))


def _split_classes(sg: _SwitchGraph, split: _Split) -> np.ndarray:
    from fabric.analysis.reduction import refine, row_ids

    return refine(sg.pairs, row_ids(sg.rank, split.s_cap, split.t_cap))


Bound = Callable[[Any], float]  # a lower bound of a failure's flow, from the intact flow (a ReducedFlow)


def _failures(
    sg: _SwitchGraph, split: _Split, inside: np.ndarray, colors: np.ndarray | None = None
) -> list[tuple[str, Callable[[], FlowGraph], np.ndarray | None, Bound]]:
    """One damaged graph (made when asked for) per class of spine/core switch and per class of switch-to-switch link
    (`inside`: the switches of the plane under study), each with a lower bound of its flow: the intact flow less
    what passes the lost switch, or the lost capacity if less than what the link carries (so a failure whose
    bound is no worse than the worst found so far need not be computed). `colors`: the split's classes when known
    (those of its reduced flow)."""
    import numpy as np

    from fabric.analysis.reduction import FlowGraph, row_ids

    if colors is None:
        colors = _split_classes(sg, split)
    pairs = sg.pairs
    out: list[tuple[str, Callable[[], FlowGraph], np.ndarray | None, Bound]] = []
    # The damaged graphs hold the plane's own links only: the split's endpoints are all in it and the plane is a
    # component of its own, so the flow is the same, on half the edges of a 2-plane fabric (only the flow value
    # of a failure is used, not the size of its reduced graph).
    links = np.flatnonzero(inside[pairs.src])
    src, dst, caps = pairs.src[links], pairs.dst[links], pairs.cap[links]
    # the first switch of each class, in index order
    upper = np.flatnonzero(inside & (sg.rank >= 2))
    _, first = np.unique(colors[upper], return_index=True)

    def without_switch(i: int) -> FlowGraph:
        keep = (src != i) & (dst != i)
        return FlowGraph(pairs.n, src[keep], dst[keep], caps[keep])

    def without_cable(k: int, lost: int) -> FlowGraph:
        cap = caps.copy()
        cap[k] -= lost
        return FlowGraph(pairs.n, src, dst, cap)

    for i in upper[np.sort(first)].tolist():
        alive = np.ones(len(sg.names), dtype=bool)
        alive[i] = False
        out.append((f"switch {sg.names[i]}", partial(without_switch, i), alive, partial(_without_switch, i)))
    # the first link of each class (the classes of its ends, either way round, and the capacity of one cable)
    ca, cb = colors[src], colors[dst]
    per = caps // sg.counts[links]
    _, first = np.unique(row_ids(np.minimum(ca, cb), np.maximum(ca, cb), per), return_index=True)
    for k in np.sort(first).tolist():
        j = int(links[k])
        a, b = int(pairs.src[j]), int(pairs.dst[j])
        lost = int(pairs.cap[j] // sg.counts[j])
        lo, hi = (a, b) if sg.rank[a] <= sg.rank[b] else (b, a)
        bound = partial(_without_capacity, a, b, int(pairs.cap[j]), lost)
        out.append((f"link {sg.names[lo]} — {sg.names[hi]}", partial(without_cable, k, lost), None, bound))
    return out


def _without_switch(switch: int, intact: ReducedFlow) -> float:
    return _less(intact.value, intact.through(switch))


def _without_capacity(a: int, b: int, cap: int, lost: int, intact: ReducedFlow) -> float:
    return _less(intact.value, min(intact.on_pair(a, b, cap), lost))


# --------------------------------------------------------------------------------------------- ECMP


def _ecmp(
    sg: _SwitchGraph, planes: np.ndarray
) -> tuple[int | None, tuple[str, str] | None, list[tuple[str, str, int, int]]]:
    """Min over leaf pairs of one plane of the uplinks of the first on a shortest up-down path to the second
    (0 where there is none)."""
    import numpy as np
    from scipy.sparse import csr_matrix

    leaves = np.flatnonzero(sg.rank == 1)
    spines = np.flatnonzero(sg.rank == 2)
    cores = np.flatnonzero(sg.rank == 3)
    if len(leaves) < 2:
        return None, None, []
    local = np.full(len(sg.names), -1, dtype=np.int64)
    for group in (leaves, spines, cores):
        local[group] = np.arange(len(group))
    src, dst, counts = sg.pairs.src, sg.pairs.dst, sg.counts
    lo = np.where(sg.rank[src] <= sg.rank[dst], src, dst)
    hi = np.where(sg.rank[src] <= sg.rank[dst], dst, src)
    ls = (sg.rank[lo] == 1) & (sg.rank[hi] == 2)
    sc = (sg.rank[lo] == 2) & (sg.rank[hi] == 3)
    up = csr_matrix((counts[ls], (local[lo[ls]], local[hi[ls]])), shape=(len(leaves), len(spines)))
    up_bool = (up > 0).astype(np.int64).tocsc()
    core_reach = None
    core_of = None
    if len(cores):
        core_of = csr_matrix(
            (np.ones(int(sc.sum()), dtype=np.int64), (local[lo[sc]], local[hi[sc]])), shape=(len(spines), len(cores))
        )
        core_reach = ((core_of.T @ up_bool.T) > 0).astype(np.int64).tocsr()  # core → leaves below it
    reach_cache: dict[bytes, np.ndarray] = {}
    up_csr = up.tocsr()
    leaf_plane = planes[leaves]
    best: int | None = None
    worst_pair: tuple[str, str] | None = None
    short: list[tuple[str, str, int, int]] = []
    classes: dict[bytes, int] = {}
    # rows read straight from the CSR arrays (getrow makes a matrix per row: a few thousand leaves)
    indptr, indices, data = up_csr.indptr, up_csr.indices, up_csr.data
    for a in range(len(leaves)):
        s_idx, c = indices[indptr[a] : indptr[a + 1]], data[indptr[a] : indptr[a + 1]]
        key = s_idx.tobytes() + b"|" + c.tobytes()
        if key in classes:
            continue
        classes[key] = a
        uplinks = int(c.sum())
        w2 = up_bool[:, s_idx] @ c if len(s_idx) else np.zeros(len(leaves), dtype=np.int64)
        w2 = np.asarray(w2).reshape(-1)
        width = w2.copy()
        if core_of is not None and core_reach is not None and len(s_idx):
            w3 = np.zeros(len(leaves), dtype=np.int64)
            for s, count in zip(s_idx, c, strict=True):
                ckey = core_of.indices[core_of.indptr[s] : core_of.indptr[s + 1]].tobytes()
                reach = reach_cache.get(ckey)
                if reach is None:
                    crow = core_of.getrow(s)
                    reach = (
                        np.asarray((crow @ core_reach).todense()).reshape(-1) > 0
                        if crow.nnz
                        else np.zeros(len(leaves), bool)
                    )
                    reach_cache[ckey] = reach
                w3 += count * reach
            width = np.where(w2 > 0, w2, w3)
        same_plane = leaf_plane == leaf_plane[a]
        same_plane[a] = False
        if not same_plane.any():
            continue
        candidates = np.where(same_plane, width, np.iinfo(np.int64).max)
        b = int(np.argmin(candidates))
        value = int(candidates[b])
        if best is None or value < best:
            best = value
            worst_pair = (sg.names[leaves[a]], sg.names[leaves[b]])
        # leaves it reaches at all, but not over every uplink (unreachable ones are reported as 0 above)
        reachable = np.where(same_plane & (width > 0), width, np.iinfo(np.int64).max)
        c = int(np.argmin(reachable))
        if int(reachable[c]) < uplinks:
            short.append((sg.names[leaves[a]], sg.names[leaves[c]], int(reachable[c]), uplinks))
    return best, worst_pair, short


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


def fabric_figures(
    ft: FabricTopology, *, failures: bool = True, engine: Literal["auto", "python", "numpy"] = "auto"
) -> FabricFigures:
    """`engine`: numpy/scipy or pure Python for the graph figures (same results); auto picks by size."""
    lists = switch_lists(ft)
    loads = _loads(ft)
    switches = {layer: sum(1 for ld in loads if ld.layer == layer) for layer in LAYERS}
    links: dict[str, int] = dict.fromkeys(TIERS, 0)
    for tier, count in Counter(map(_TIER, ft.links)).items():  # (counted in C, in the order the tiers come)
        links[tier] = links.get(tier, 0) + count  # leaf-leaf (MLAG peer links) only where there are any
    endpoint_gbps = sum(map(_GBPS, lists.endpoints))
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
    if engine == "python" or (engine == "auto" and len(lists.names) <= SMALL_SWITCHES):
        graph = graph_figures(ft, lists, failures)
    else:
        graph = _graph_figures(ft, _switch_graph(lists), failures)
    return FabricFigures(
        name=ft.name,
        technology=ft.technology,
        role=ft.role,
        tiers=ft.tiers,
        planes=max(ft.planes, 1),
        switches=switches,
        links=links,
        endpoints=len(lists.endpoints),
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
        graph_vertices=len(lists.names) + 2,
        notes=graph.notes,
    )


def _graph_figures(ft: FabricTopology, sg: _SwitchGraph, failures: bool) -> GraphFigures:
    """Components, bisection, worst failure and ECMP on arrays (small.graph_figures is the same on lists)."""
    import numpy as np

    labels = _components(sg)
    leaves = np.flatnonzero(sg.rank == 1)
    planes = sorted(set(labels[leaves].tolist())) if len(leaves) else []
    bisection = 0.0
    reduced = 0
    worst: tuple[str, float] | None = None
    notes: list[str] = []
    connected = len(set(labels.tolist())) <= max(ft.planes, 1) and len(sg.names) > 0
    if connected:
        bisection, reduced, worst = plane_bisection(
            [(np.flatnonzero(labels == plane), labels == plane) for plane in planes],
            lambda members: _splits(sg, members),
            lambda pairs, split, alive: _split_reduced(sg, pairs, split, alive),
            lambda split, inside: _failures(sg, split, inside),
            sg.pairs,
            failures,
        )
    else:
        notes.append("the switch graph falls apart into more islands than planes")
    ecmp, pair, short = _ecmp(sg, sg.plane)
    return GraphFigures(
        len(set(labels.tolist())),
        bisection,
        reduced,
        worst,
        tuple(notes),
        ecmp,
        pair,
        tuple(short),
    )
