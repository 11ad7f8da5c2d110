"""The numpy/scipy engine, on arrays: the same figures and job cuts as the lists engine, for fabrics too large for
pure Python. Its flows run on the graph reduced by its symmetry (reduction.py), which a regular Clos of 100k
endpoints collapses to a few dozen classes; for a regular Clos the bisection is the exact worst case, for an
irregular graph an upper bound of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from fabric.analysis.flow.bisection import endpoint_splits, lower_bound, plane_bisection
from fabric.analysis.flow.graph import GraphFigures, SwitchGraph
from fabric.analysis.flow.reduction import FlowGraph, ReducedFlow, reduced_flow, refine, row_ids
from fabric.fast.memo import per_object
from fabric.model.topology import FabricTopology

# --------------------------------------------------------------------------------------------- switch graph


@dataclass
class ArrayGraph:
    """A fabric's switches as arrays: rank, plane, aggregated pair capacities and endpoint links."""

    names: list[str]
    rank: np.ndarray  # 1 leaf, 2 spine, 3 core
    plane: np.ndarray  # declared plane (0 when the fabric has one)
    pairs: FlowGraph  # aggregated switch-to-switch capacity
    counts: np.ndarray  # links per pair
    endpoints: list[tuple[int, int]]  # (leaf index, Gb/s) per endpoint link, in link order


def array_graph(lists: SwitchGraph) -> ArrayGraph:
    def array(values: list[int]) -> np.ndarray:
        return np.array(values, dtype=np.int64)

    pairs = lists.pairs
    return ArrayGraph(
        lists.names,
        array(lists.rank),
        array(lists.plane),
        FlowGraph(pairs.n, array(pairs.src), array(pairs.dst), array(pairs.cap)),
        array(lists.counts),
        lists.endpoints,
    )


def components(sg: ArrayGraph) -> np.ndarray:
    n = len(sg.names)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    matrix = csr_matrix((np.ones(len(sg.pairs.src)), (sg.pairs.src, sg.pairs.dst)), shape=(n, n))
    _, labels = connected_components(matrix, directed=False)
    return labels.astype(np.int64)


# --------------------------------------------------------------------------------------------- bisection


@dataclass
class ArraySplit:
    """A balanced split of the endpoints, as arrays: per switch the Gb/s on side A and on side B."""

    name: str
    s_cap: np.ndarray  # per switch: endpoint Gb/s on side A
    t_cap: np.ndarray  # per switch: endpoint Gb/s on side B


def splits(sg: ArrayGraph, members: np.ndarray) -> list[ArraySplit]:
    """Balanced splits of the endpoints on the leaves in `members` (one plane), as arrays."""
    return [
        ArraySplit(split.name, np.array(split.s_cap, dtype=np.int64), np.array(split.t_cap, dtype=np.int64))
        for split in endpoint_splits(len(sg.names), sg.endpoints, members.tolist())
    ]


def split_reduced(
    sg: ArrayGraph, pairs: FlowGraph, split: ArraySplit, alive: np.ndarray | None = None, base: np.ndarray | None = None
) -> ReducedFlow:
    """Max flow from side A's endpoints to side B's, on the switch graph plus a source and a sink, with what it
    carries where (for the failures' lower bounds). `base`: classes of the switches to refine from instead of the
    ranks (the job table's many cuts). From an equitable partition of the ranks (coarser than any cut's classes) an
    intact cut's classes are the same; a damaged graph's flow is the same from any start (refinement ends
    equitable, and any equitable partition keeps the flow)."""

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


def split_classes(sg: ArrayGraph, split: ArraySplit) -> np.ndarray:
    return refine(sg.pairs, row_ids(sg.rank, split.s_cap, split.t_cap))


Bound = Callable[[Any], float]  # a lower bound of a failure's flow, from the intact flow (a ReducedFlow)


def failures(
    sg: ArrayGraph, split: ArraySplit, inside: np.ndarray, colors: np.ndarray | None = None
) -> list[tuple[str, Callable[[], FlowGraph], np.ndarray | None, Bound]]:
    """One damaged graph (made when asked for) per class of spine/core switch and per class of switch-to-switch link
    (`inside`: the switches of the plane under study), each with a lower bound of its flow: the intact flow less
    what passes the lost switch, or the lost capacity if less than what the link carries (so a failure whose
    bound is no worse than the worst found so far need not be computed). `colors`: the split's classes when known
    (those of its reduced flow)."""

    if colors is None:
        colors = split_classes(sg, split)
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
    return lower_bound(intact.value, intact.through(switch))


def _without_capacity(a: int, b: int, cap: int, lost: int, intact: ReducedFlow) -> float:
    return lower_bound(intact.value, min(intact.on_pair(a, b, cap), lost))


# --------------------------------------------------------------------------------------------- ECMP


def ecmp(
    sg: ArrayGraph, planes: np.ndarray
) -> tuple[int | None, tuple[str, str] | None, list[tuple[str, str, int, int]]]:
    """Min over leaf pairs of one plane of the uplinks of the first on a shortest up-down path to the second
    (0 where there is none)."""

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
    # spine → the leaves below it, and (3 tiers) spine → its cores and core → its spines, read as CSR/CSC slices: at
    # a million GPUs a matrix product per class of leaf (core → every leaf below it: 30,000,000 entries) cost 3 s
    below = (up > 0).tocsc()
    below_ptr, below_idx = below.indptr, below.indices
    core_of = None
    if len(cores):
        core_of = csr_matrix(
            (np.ones(int(sc.sum()), dtype=np.int64), (local[lo[sc]], local[hi[sc]])), shape=(len(spines), len(cores))
        )
        spines_of = core_of.tocsc()

    def leaves_below(spine_ids: np.ndarray) -> np.ndarray:
        """The leaves below these spines (each as often as the spines above it)."""
        if not len(spine_ids):
            return np.zeros(0, dtype=below_idx.dtype)
        return np.concatenate([below_idx[below_ptr[t] : below_ptr[t + 1]] for t in spine_ids])

    def reach_over(core_ids: np.ndarray) -> np.ndarray:
        """Whether each leaf is below one of these cores."""
        reach = np.zeros(len(leaves), dtype=bool)
        if len(core_ids):
            ptr, idx = spines_of.indptr, spines_of.indices
            reach[leaves_below(np.unique(np.concatenate([idx[ptr[k] : ptr[k + 1]] for k in core_ids])))] = True
        return reach

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
        # each leaf's links from this one's spines: their uplink counts summed over the spines above it
        lengths = below_ptr[s_idx + 1] - below_ptr[s_idx]
        w2 = np.bincount(leaves_below(s_idx), weights=np.repeat(c, lengths), minlength=len(leaves)).astype(np.int64)
        width = w2.copy()
        if core_of is not None and len(s_idx):
            over: dict[bytes, int] = {}  # the spines' core sets → their uplinks summed
            for s, count in zip(s_idx, c, strict=True):
                ckey = core_of.indices[core_of.indptr[s] : core_of.indptr[s + 1]].tobytes()
                over[ckey] = over.get(ckey, 0) + int(count)
                if ckey not in reach_cache:
                    reach_cache[ckey] = reach_over(core_of.indices[core_of.indptr[s] : core_of.indptr[s + 1]])
            w3 = np.zeros(len(leaves), dtype=np.int64)
            for ckey, count in over.items():
                w3 += count * reach_cache[ckey]
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


# --------------------------------------------------------------------------------------------- the figures


def graph_figures(ft: FabricTopology, sg: ArrayGraph, failures_too: bool) -> GraphFigures:
    """Components, bisection, worst failure and ECMP on arrays (lists.graph_figures is the same on lists)."""
    labels = components(sg)
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
            lambda members: splits(sg, members),
            lambda pairs, split, alive: split_reduced(sg, pairs, split, alive),
            lambda split, inside: failures(sg, split, inside),
            sg.pairs,
            failures_too,
        )
    else:
        notes.append("the switch graph falls apart into more islands than planes")
    width, pair, short = ecmp(sg, sg.plane)
    return GraphFigures(len(set(labels.tolist())), bisection, reduced, worst, tuple(notes), width, pair, tuple(short))


# --------------------------------------------------------------------------------------------- job cuts

Loss = tuple[str, Callable[[], int], float]  # element, its flow (computed when asked for), a lower bound of it


def job_cut(sg: ArrayGraph, s_cap: list[int], t_cap: list[int], failures_too: bool) -> tuple[int, list[Loss]]:
    """A job's cut: its max flow and, with `failures_too`, each loss with its flow and a lower bound."""
    arrays = ArraySplit("job", np.array(s_cap, dtype=np.int64), np.array(t_cap, dtype=np.int64))
    base = _base(sg)
    whole = split_reduced(sg, sg.pairs, arrays, base=base)
    inside = np.ones(len(sg.names), dtype=bool)
    # the cut's classes on the switches are its reduced flow's (the same refinement, source and sink aside)
    colors = whole.colors[: len(sg.names)] if whole.colors is not None else None
    start = base if colors is None else colors

    def damaged(make: Callable[[], Any], gone: Any) -> int:
        return split_reduced(sg, make(), arrays, gone, start).value

    losses: list[Loss] = [
        (name, partial(damaged, make, gone), bound(whole))
        for name, make, gone, bound in (failures(sg, arrays, inside, colors) if failures_too else [])
    ]
    return whole.value, losses


@per_object
def _base(sg: ArrayGraph) -> Any:
    """The switch graph's coarsest equitable partition of its ranks: every cut's classes refine it."""
    return refine(sg.pairs, sg.rank)
