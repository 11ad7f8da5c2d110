"""Max-flow on a fabric reduced by its symmetry.

A fabric's switch graph is partitioned by colour refinement (1-dimensional Weisfeiler-Leman) into
classes whose members see the same capacity into every class (an *equitable* partition). The
quotient graph of such a partition has the same maximum flow between two classes as the whole
graph: a quotient flow spreads back over the members in proportion to capacity and keeps
conservation, and any flow of the whole graph sums up into a quotient flow (Grohe, Kersting,
Mladenov & Selman, "Dimension reduction via colour refinement", ESA 2014). A regular Clos of
100k endpoints collapses to a few dozen classes; a damaged or irregular one keeps as many classes
as it needs, so its figures stay honest.

Refinement hashes neighbour colours with a fixed mixing function (no randomness); the result is
then checked to be equitable exactly, and if a hash collision ever made it wrong, the unreduced
graph is used instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


def _mix(color: np.ndarray, cap: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        x = color.astype(np.uint64) * _M1 + cap.astype(np.uint64) * _M2 + np.uint64(1)
        x ^= x >> np.uint64(31)
        x *= _M3
        x ^= x >> np.uint64(29)
    return x


def row_ids(*columns: np.ndarray) -> np.ndarray:
    """Dense ids (0..k-1, in sorted order) of the distinct rows of equal-length integer columns."""
    n = len(columns[0])
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(columns[::-1])
    changed = np.zeros(n, dtype=bool)
    for column in columns:
        ordered = column[order]
        changed[1:] |= ordered[1:] != ordered[:-1]
    ids = np.empty(n, dtype=np.int64)
    ids[order] = np.cumsum(changed)
    return ids


@dataclass(frozen=True)
class FlowGraph:
    """An undirected capacitated graph as arrays; each pair (src < dst) appears once."""

    n: int
    src: np.ndarray  # int64
    dst: np.ndarray  # int64
    cap: np.ndarray  # int64

    def directed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each edge both ways (src, dst, cap); made once per graph (refinement, its check and the flow use it)."""
        return self._directed

    @cached_property
    def _directed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (
            np.concatenate([self.src, self.dst]),
            np.concatenate([self.dst, self.src]),
            np.concatenate([self.cap, self.cap]),
        )


def refine(graph: FlowGraph, initial: np.ndarray) -> np.ndarray:
    """An equitable refinement of `initial` (class ids 0..k-1, in a deterministic order).

    A vertex's signature is its class and its total capacity into each class: the coarsest such
    partition. On graphs too large for a vertex × class table it hashes edge by edge instead, which may
    split a class more finely (still equitable, so flows stay exact)."""
    return _refine(graph, initial)[0]


def _refine(graph: FlowGraph, initial: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """refine's colours, and the vertex × class capacity table of its last round when it made one (the
    dense path): that round changed nothing, so the table is the one of the colours returned."""
    colors = row_ids(initial.astype(np.int64))
    e_src, e_dst, e_cap = graph.directed()
    weights = e_cap.astype(np.float64)
    by_source: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None  # the sparse path's order
    count = int(colors.max()) + 1 if len(colors) else 0
    while True:
        signature = np.zeros(graph.n, dtype=np.uint64)
        totals: np.ndarray | None = None
        if len(e_src) and graph.n * count <= DENSE_LIMIT:
            totals = np.bincount(e_src * count + colors[e_dst], weights=weights, minlength=graph.n * count)
            cells = np.flatnonzero(totals)  # ascending, so each vertex's cells are one run
            with np.errstate(over="ignore"):
                hashed = _mix(cells % count, totals[cells].astype(np.int64))
                owners = cells // count
                if len(owners):  # the sum (mod 2**64) of each run: np.add.at's, without its per-element cost
                    starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
                    signature[owners[starts]] = np.add.reduceat(hashed, starts)
        elif len(e_src):
            if by_source is None:
                order = np.argsort(e_src, kind="stable")
                s_src = e_src[order]
                starts = np.flatnonzero(np.r_[True, s_src[1:] != s_src[:-1]])
                by_source = (s_src[starts], starts, e_dst[order], e_cap[order])
            owners, starts, s_dst, s_cap = by_source
            with np.errstate(over="ignore"):
                signature[owners] = np.add.reduceat(_mix(colors[s_dst], s_cap), starts)
        new = row_ids(colors, signature)
        new_count = int(new.max()) + 1 if len(new) else 0
        if new_count == count:  # no class split: the ids are the same (dense, in the order of the old ones)
            return new, totals
        colors = new
        count = new_count


DENSE_LIMIT = 5_000_000  # vertex × class table cells; beyond this a reduction would not pay off


def is_equitable(graph: FlowGraph, colors: np.ndarray) -> bool:
    """Every member of a class has the same total capacity into every class."""
    e_src, e_dst, e_cap = graph.directed()
    k = int(colors.max()) + 1 if len(colors) else 0
    if not len(e_src):
        return True
    if graph.n * k > DENSE_LIMIT:
        return False
    totals = np.bincount(e_src * k + colors[e_dst], weights=e_cap.astype(np.float64), minlength=graph.n * k)
    totals = totals.reshape(graph.n, k)
    first = np.full(k, -1, dtype=np.int64)
    first[colors[::-1]] = np.arange(graph.n - 1, -1, -1)  # the first member of each class
    return bool(np.array_equal(totals, totals[first[colors]]))


def max_flow(graph: FlowGraph, source: int, sink: int) -> int:
    """Maximum flow between two vertices of an undirected graph (each edge usable both ways)."""
    return _max_flow(graph, source, sink)[0]


def _max_flow(graph: FlowGraph, source: int, sink: int) -> tuple[int, Any]:
    """(max flow, scipy's net flow matrix: [u, v] = -[v, u]), the matrix None when source is sink."""
    if source == sink:
        return 0, None
    e_src, e_dst, e_cap = graph.directed()
    keep = e_cap > 0
    matrix = csr_matrix((e_cap[keep].astype(np.int32), (e_src[keep], e_dst[keep])), shape=(graph.n, graph.n))
    matrix.sum_duplicates()
    result = maximum_flow(matrix, source, sink, method="dinic")
    return int(result.flow_value), result.flow


def quotient(graph: FlowGraph, colors: np.ndarray) -> FlowGraph:
    """The graph of classes; capacity between two classes is the total capacity between their members."""
    a, b = colors[graph.src], colors[graph.dst]
    keep = a != b
    lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    k = int(colors.max()) + 1
    cap = np.bincount(lo * k + hi, weights=graph.cap[keep].astype(np.float64), minlength=k * k).astype(np.int64)
    key = np.flatnonzero(cap)
    return FlowGraph(k, key // k, key % k, cap[key])


def _checked_quotient(graph: FlowGraph, colors: np.ndarray, totals: np.ndarray | None) -> FlowGraph | None:
    """The quotient by `colors` if they are equitable, else None. With refine's last table, both come from it:
    members of an equitable class have the same row, so a class's capacity into another is its first member's
    times its size (the same integers as quotient() sums edge by edge)."""
    if totals is None:
        return quotient(graph, colors) if is_equitable(graph, colors) else None
    k = int(colors.max()) + 1
    table = totals.reshape(graph.n, k)
    first = np.full(k, -1, dtype=np.int64)
    first[colors[::-1]] = np.arange(graph.n - 1, -1, -1)  # the first member of each class
    if not np.array_equal(table, table[first[colors]]):
        return None
    between = np.triu(table[first] * np.bincount(colors, minlength=k)[:, None], 1).astype(np.int64).ravel()
    key = np.flatnonzero(between)
    return FlowGraph(k, key // k, key % k, between[key])


def reduced_max_flow(graph: FlowGraph, source: int, sink: int, initial: np.ndarray) -> tuple[int, int]:
    """(max flow, vertices of the graph it was computed on). `initial` must single out source and sink."""
    flow = reduced_flow(graph, source, sink, initial)
    return flow.value, flow.size


@dataclass(frozen=True)
class ReducedFlow:
    """A maximum flow, and what it carries through a vertex or a pair of the whole graph: read from the quotient's
    flow spread back over the members of each class in proportion to capacity (the spread that keeps
    conservation), so removing a vertex or some capacity costs at most that much of the flow."""

    value: int
    size: int  # vertices of the graph it was computed on
    colors: np.ndarray | None = None  # each vertex's class; None: not reduced (no spread is known)
    inflow: np.ndarray | None = None  # per class: what flows into each of its members
    net: Any = None  # the quotient's net flow matrix (sparse)
    between: Any = None  # the quotient's capacity matrix (sparse, both ways)

    def through(self, vertex: int) -> float:
        """The flow into `vertex` (what passes it); inf when not known."""
        if self.colors is None or self.inflow is None:
            return float("inf")
        return float(self.inflow[self.colors[vertex]])

    def on_pair(self, a: int, b: int, cap: int) -> float:
        """The flow on the edge a–b of capacity `cap` (either way); inf when not known."""
        if self.colors is None:
            return float("inf")
        x, y = int(self.colors[a]), int(self.colors[b])
        if x == y or self.net is None:  # the spread uses no edge inside a class
            return 0.0
        return abs(float(self.net[x, y])) * cap / float(self.between[x, y])


def reduced_flow(
    graph: FlowGraph, source: int, sink: int, initial: np.ndarray, avoid: tuple[np.ndarray, ...] = ()
) -> ReducedFlow:
    """reduced_max_flow's flow, with what it carries where (ReducedFlow). `avoid`: vertex masks, widest first;
    the spread is of a maximum flow that passes none of the first mask's vertices if there is one, else none of
    the next's, … (the less a flow passes, the tighter the bounds read from it)."""
    colors, totals = _refine(graph, initial)
    small = _checked_quotient(graph, colors, totals) if colors[source] != colors[sink] else None
    if small is None:
        return ReducedFlow(max_flow(graph, source, sink), graph.n)
    s, t = int(colors[source]), int(colors[sink])
    value, net = _max_flow(small, s, t)
    if net is None:
        return ReducedFlow(value, small.n)
    for mask in avoid:
        dropped = np.zeros(small.n, dtype=bool)
        dropped[colors[mask]] = True  # a class partly in the mask is avoided whole (still a valid flow)
        if dropped[s] or dropped[t]:
            continue
        keep = ~dropped[small.src] & ~dropped[small.dst]
        narrow, narrow_net = _max_flow(FlowGraph(small.n, small.src[keep], small.dst[keep], small.cap[keep]), s, t)
        if narrow == value:
            net = narrow_net
            break
    members = np.bincount(colors, minlength=small.n)
    inflow = np.asarray(net.maximum(0).sum(axis=0)).ravel() / members
    s_src, s_dst, s_cap = small.directed()
    between = csr_matrix((s_cap.astype(np.float64), (s_src, s_dst)), shape=(small.n, small.n))
    return ReducedFlow(value, small.n, colors, inflow, net, between)
