"""The pure-Python engine, on adjacency lists: the same figures and job cuts as the arrays engine (numpy and scipy),
without loading numpy and scipy (which costs more than a small design's whole build).

Colour refinement compares exact signatures (a class and the capacity into it) instead of hashing them, which
gives the partition the hashed version gives when nothing collides; flows are exact integers either way.

Each cut of a switch graph (a balanced split of the figures, a job's cut) is refined from the fabric's own
equitable partition instead of from scratch. The coarsest equitable refinement of a cut's colours (rank, Gb/s on
each side) is also the coarsest one of the fabric's partition (`base`, made once per graph) split by those Gb/s:
every equitable refinement of the ranks is finer than `base`, so starting there loses nothing, and only the
classes the cut split need to be looked at (worklist refinement: a class whose members differ in capacity into a
new class splits, and its pieces go on the list). A damaged graph starts from the intact cut's partition with the
lost switch (or the lost cable's ends) on their own: a partition that is equitable there has the same maximum flow
(reduction.py), finer or not. tests/unit/analysis/test_cuts.py compares the cuts with
tests/support/flow_reference.py's refinement from scratch on random graphs, tests/unit/analysis/test_figures.py
and tests/unit/analysis/test_jobs.py the figures and job tables of both engines.

As in the arrays engine, the intact flow is spread back over the members of each class (the spread that keeps
conservation), which bounds what a loss can cost: a loss whose bound is no lower than the worst so far is not
computed (only a strictly lower flow may replace the worst).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from fabric.analysis.flow.bisection import Flow, Split, endpoint_splits, lower_bound, plane_bisection
from fabric.analysis.flow.graph import GraphFigures, Pairs, SwitchGraph
from fabric.fast.memo import per_object
from fabric.model.topology import FabricTopology

Residual = list[dict[int, int]] | Mapping[int, dict[int, int]]  # by vertex index or by vertex id
Adjacency = list[list[tuple[int, int]]]  # per switch: (neighbour, Gb/s), each pair of the switch graph both ways


# --------------------------------------------------------------------------------------------- primitives


def row_ids(*columns: list[int] | list[tuple[tuple[int, int], ...]]) -> list[int]:
    """Dense ids (0..k-1, in sorted order) of the distinct rows of equal-length columns."""
    rows = list(zip(*columns, strict=True))
    ids = {row: i for i, row in enumerate(sorted(set(rows)))}
    return [ids[row] for row in rows]


def _neighbours(pairs: Pairs) -> list[list[tuple[int, int]]]:
    out: list[list[tuple[int, int]]] = [[] for _ in range(pairs.n)]
    for a, b, c in zip(pairs.src, pairs.dst, pairs.cap, strict=True):
        out[a].append((b, c))
        out[b].append((a, c))
    return out


def refine(pairs: Pairs, initial: list[int]) -> list[int]:
    """The coarsest equitable refinement of `initial` (see reduction.refine)."""
    colors = row_ids(initial)
    count = len(set(colors))
    adjacent = _neighbours(pairs)
    while True:
        signatures: list[tuple[tuple[int, int], ...]] = []
        for edges in adjacent:
            totals: dict[int, int] = {}
            for b, c in edges:
                totals[colors[b]] = totals.get(colors[b], 0) + c
            signatures.append(tuple(sorted((k, v) for k, v in totals.items() if v)))
        colors = row_ids(colors, signatures)
        new_count = len(set(colors))
        if new_count == count:
            return colors
        count = new_count


def augment(residual: Residual, source: int, sink: int) -> int:
    """Edmonds–Karp on a residual graph (vertex → neighbour → capacity left), changed in place: the flow pushed
    from `source` to `sink` along shortest augmenting paths until none is left."""
    flow = 0
    while True:
        parent = {source: source}
        queue = deque([source])
        while queue and sink not in parent:
            v = queue.popleft()
            for w, c in residual[v].items():
                if c > 0 and w not in parent:
                    parent[w] = v
                    queue.append(w)
        if sink not in parent:
            return flow
        push, w = None, sink
        while w != source:
            v = parent[w]
            push = residual[v][w] if push is None else min(push, residual[v][w])
            w = v
        assert push is not None
        w = sink
        while w != source:
            v = parent[w]
            residual[v][w] -= push
            residual[w][v] = residual[w].get(v, 0) + push
            w = v
        flow += push


def components(sg: SwitchGraph) -> list[int]:
    """Component labels, numbered in order of each component's first vertex (as scipy numbers them)."""
    labels = [-1] * len(sg.names)
    adjacent = _neighbours(sg.pairs)
    label = 0
    for start in range(len(labels)):
        if labels[start] >= 0:
            continue
        labels[start] = label
        stack = [start]
        while stack:
            v = stack.pop()
            for w, _ in adjacent[v]:
                if labels[w] < 0:
                    labels[w] = label
                    stack.append(w)
        label += 1
    return labels


# --------------------------------------------------------------------------------------------- cuts


@dataclass(frozen=True)
class CutGraph:
    """A switch graph's adjacency with its coarsest equitable partition, made once for every cut."""

    adjacent: Adjacency
    base: tuple[int, ...]  # the fabric's coarsest equitable partition of its ranks (class per switch)
    classes: dict[int, tuple[int, ...]]  # its members per class


@per_object
def cut_graph(sg: SwitchGraph) -> CutGraph:
    adjacent: Adjacency = [[] for _ in sg.names]
    for a, b, c in zip(sg.pairs.src, sg.pairs.dst, sg.pairs.cap, strict=True):
        adjacent[a].append((b, c))
        adjacent[b].append((a, c))
    base = refine(sg.pairs, sg.rank)
    classes: dict[int, list[int]] = {}
    for v, cid in enumerate(base):
        classes.setdefault(cid, []).append(v)
    return CutGraph(adjacent, tuple(base), {cid: tuple(group) for cid, group in classes.items()})


class _Partition:
    """Classes as member lists and a class per vertex, refined in place."""

    def __init__(self, colors: list[int], members: dict[int, list[int]]) -> None:
        self.colors = colors
        self.members = members
        self.next = max(members, default=-1) + 1
        self.queue: deque[int] = deque()
        self.pending: set[int] = set()

    def copy(self) -> _Partition:
        return _Partition(list(self.colors), {k: list(v) for k, v in self.members.items()})

    def single_out(self, vertex: int) -> None:
        old = self.colors[vertex]
        if len(self.members[old]) > 1:
            self.members[old] = [v for v in self.members[old] if v != vertex]
            self._add([vertex])

    def _add(self, group: list[int]) -> int:
        cid = self.next
        self.next += 1
        self.members[cid] = group
        for v in group:
            self.colors[v] = cid
        return cid

    def split(self, weights: dict[int, int], all_pieces: bool) -> None:
        """Split every class by `weights` (absent: 0). `all_pieces`: every piece goes on the list; else all but the
        largest (right when the partition is, or will be once the list is done, stable with respect to the class
        split: what goes into the largest piece is then the class's total less the others')."""
        groups: dict[int, dict[int, list[int]]] = {}
        for v, w in weights.items():
            by_weight = groups.get(self.colors[v])
            if by_weight is None:
                by_weight = groups[self.colors[v]] = {}
            same = by_weight.get(w)
            if same is None:
                by_weight[w] = [v]
            else:
                same.append(v)
        for cid, by_weight in groups.items():
            everyone = self.members[cid]
            touched = sum(len(g) for g in by_weight.values())
            if touched < len(everyone):
                rest = [v for v in everyone if v not in weights]
                if 0 in by_weight:
                    by_weight[0].extend(rest)
                else:
                    by_weight[0] = rest
            if len(by_weight) == 1:
                continue
            pieces = sorted(by_weight.values(), key=len, reverse=True)
            self.members[cid] = pieces[0]
            for piece in pieces[1:]:
                self._queue(self._add(piece))
            if all_pieces and cid not in self.pending:
                self._queue(cid)

    def _queue(self, cid: int) -> None:
        self.queue.append(cid)
        self.pending.add(cid)

    def settle(self, adjacent: Adjacency, gone: int) -> None:
        """Refine until every class sees the same capacity into every class (the list started with the classes
        the partition may not be stable with respect to); `gone`: a switch whose links are lost (else -1)."""
        while self.queue:
            cid = self.queue.popleft()
            self.pending.discard(cid)
            weights: dict[int, int] = {}
            for v in self.members[cid]:
                if v == gone:
                    continue
                for u, c in adjacent[v]:
                    if u != gone:
                        weights[u] = weights.get(u, 0) + c
            self.split(weights, all_pieces=True)


@dataclass(frozen=True)
class CutFlow:
    """A cut's maximum flow and, on the intact graph, what it carries where (spread back over the members)."""

    value: int
    colors: list[int]
    inflow: dict[int, float]  # per class: what flows into each of its members
    net: dict[tuple[int, int], int]  # quotient flow from class x to class y (x < y; negative: y to x)
    between: dict[tuple[int, int], int]  # quotient capacity between two classes (x < y)

    def through(self, vertex: int) -> float:
        return self.inflow.get(self.colors[vertex], 0.0)

    def on_pair(self, a: int, b: int, cap: int) -> float:
        x, y = self.colors[a], self.colors[b]
        if x == y:  # the spread uses no edge inside a class
            return 0.0
        key = (x, y) if x < y else (y, x)
        return abs(self.net.get(key, 0)) * cap / self.between[key]


SOURCE, SINK = -1, -2


def _flow(
    part: _Partition, adjacent: Adjacency, gone: int, s_cap: list[int], t_cap: list[int], spread: bool
) -> tuple[int, dict[int, float], dict[tuple[int, int], int], dict[tuple[int, int], int]]:
    """Max flow on the quotient by the (equitable) partition, with a source and a sink, by Edmonds–Karp: a class's
    capacity into another is its size times any member's (`gone`: as in settle, on its own)."""
    residual: dict[int, dict[int, int]] = {SOURCE: {}, SINK: {}}
    between: dict[tuple[int, int], int] = {}
    for cid, group in part.members.items():
        size = len(group)
        first = group[0]
        out: dict[int, int] = {}
        for u, c in adjacent[first] if first != gone else ():
            cu = part.colors[u]
            if cu != cid and u != gone:
                out[cu] = out.get(cu, 0) + c * size
        residual[cid] = out
        for cu, c in out.items():
            if cid < cu:
                between[(cid, cu)] = c
        if s_cap[first]:
            residual[SOURCE][cid] = s_cap[first] * size
            out[SOURCE] = 0
        if t_cap[first]:
            out[SINK] = t_cap[first] * size
            residual[SINK][cid] = 0
    sourced = dict(residual[SOURCE])
    flow = augment(residual, SOURCE, SINK)
    if not spread:
        return flow, {}, {}, {}
    # an undirected pair's net flow, x to y (x < y): both ways started at its capacity, and their sum stays twice it
    net = {(x, y): (residual[y][x] - residual[x][y]) // 2 for x, y in between}
    # through a class: what enters it net, from the source or a neighbouring class
    inflow: dict[int, int] = {}
    for (x, y), f in net.items():
        if f:
            into = y if f > 0 else x
            inflow[into] = inflow.get(into, 0) + abs(f)
    for cid, left in residual[SOURCE].items():  # (no path enters the source: its own edges only)
        if sourced[cid] > left:
            inflow[cid] = inflow.get(cid, 0) + sourced[cid] - left
    spread_in = {cid: f / len(part.members[cid]) for cid, f in inflow.items()}
    return flow, spread_in, net, between


class Cut:
    """One cut of the switch graph: its partition, flow and damaged flows."""

    def __init__(self, cg: CutGraph, s_cap: list[int], t_cap: list[int]) -> None:
        self.cg = cg
        self.s_cap, self.t_cap = s_cap, t_cap
        base = cg.base
        part = _Partition(list(base), {cid: list(group) for cid, group in cg.classes.items()})
        # the base is equitable: split by the cut's Gb/s, all pieces but the largest of each class on the list
        marks = {v: (s, t) for v, (s, t) in enumerate(zip(s_cap, t_cap, strict=True)) if s or t}
        keyed = {v: i + 1 for i, v in enumerate(sorted(set(marks.values())))}
        part.split({v: keyed[m] for v, m in marks.items()}, all_pieces=False)
        part.settle(cg.adjacent, -1)
        self.part = part
        value, inflow, net, between = _flow(part, cg.adjacent, -1, s_cap, t_cap, spread=True)
        self.flow = CutFlow(value, part.colors, inflow, net, between)

    def without_switch(self, vertex: int) -> int:
        part = self.part.copy()
        part.single_out(vertex)
        # what the others send into the rest of its class is its total less what they sent to the switch
        part.split(dict(self.cg.adjacent[vertex]), all_pieces=False)
        part.settle(self.cg.adjacent, vertex)
        s_cap, t_cap = list(self.s_cap), list(self.t_cap)
        s_cap[vertex] = t_cap[vertex] = 0
        return _flow(part, self.cg.adjacent, vertex, s_cap, t_cap, spread=False)[0]

    def without_capacity(self, a: int, b: int, lost: int) -> int:
        adjacent = list(self.cg.adjacent)
        for x, y in ((a, b), (b, a)):
            adjacent[x] = [(w, c - lost if w == y else c) for w, c in adjacent[x]]
            adjacent[x] = [(w, c) for w, c in adjacent[x] if c > 0]
        part = self.part.copy()
        part.single_out(a)
        part.single_out(b)
        for end in (a, b):  # classes newly singled out: split by what goes into them (after the loss)
            part.split(dict(adjacent[end]), all_pieces=False)
        part.settle(adjacent, -1)
        return _flow(part, adjacent, -1, self.s_cap, self.t_cap, spread=False)[0]


Loss = tuple[str, Callable[[], int], float]  # element, its flow (computed when asked for), a lower bound of it


def job_cut(sg: SwitchGraph, s_cap: list[int], t_cap: list[int], failures_too: bool) -> tuple[int, list[Loss]]:
    """A job's cut: its max flow and, with `failures_too`, each loss with its flow and a lower bound."""
    cut = Cut(cut_graph(sg), s_cap, t_cap)
    return cut.flow.value, failures(sg, cut) if failures_too else []


def failures(sg: SwitchGraph, cut: Cut, inside: list[bool] | None = None) -> list[Loss]:
    """The failures' elements in flow_reference.failures' order (one per class of spine/core switch, then per class of
    switch-to-switch link, of the switches `inside`, default all), each with its flow and a lower bound from the
    intact flow."""
    colors, whole = cut.part.colors, cut.flow
    out: list[Loss] = []
    seen: set[int] = set()
    for i, rank in enumerate(sg.rank):
        if rank >= 2 and colors[i] not in seen and (inside is None or inside[i]):
            seen.add(colors[i])
            bound = lower_bound(whole.value, whole.through(i))
            out.append((f"switch {sg.names[i]}", partial(cut.without_switch, i), bound))
    pairs = sg.pairs
    seen_links: set[tuple[int, int, int]] = set()
    for a, b, cap, count in zip(pairs.src, pairs.dst, pairs.cap, sg.counts, strict=True):
        if inside is not None and not inside[a]:
            continue
        x, y, lost = colors[a], colors[b], cap // count
        key = (x, y, lost) if x <= y else (y, x, lost)
        if key in seen_links:
            continue
        seen_links.add(key)
        lo, hi = (a, b) if sg.rank[a] <= sg.rank[b] else (b, a)
        bound = lower_bound(whole.value, min(whole.on_pair(a, b, cap), lost))
        out.append((f"link {sg.names[lo]} — {sg.names[hi]}", partial(cut.without_capacity, a, b, lost), bound))
    return out


# --------------------------------------------------------------------------------------------- ECMP


def ecmp(sg: SwitchGraph) -> tuple[int | None, tuple[str, str] | None, list[tuple[str, str, int, int]]]:
    """As arrays.ecmp: per leaf, the width to every other leaf of its plane over shortest up-down paths."""
    leaves = [i for i, r in enumerate(sg.rank) if r == 1]
    if len(leaves) < 2:
        return None, None, []
    local = {v: i for i, v in enumerate(leaves)}
    up: list[dict[int, int]] = [{} for _ in leaves]  # leaf → spine → links
    below: dict[int, set[int]] = {}  # spine → its leaves
    cores_of: dict[int, set[int]] = {}  # spine → its cores
    for a, b, count in zip(sg.pairs.src, sg.pairs.dst, sg.counts, strict=True):
        lo, hi = (a, b) if sg.rank[a] <= sg.rank[b] else (b, a)
        if sg.rank[lo] == 1 and sg.rank[hi] == 2:
            up[local[lo]][hi] = up[local[lo]].get(hi, 0) + count
            below.setdefault(hi, set()).add(local[lo])
        elif sg.rank[lo] == 2 and sg.rank[hi] == 3:
            cores_of.setdefault(lo, set()).add(hi)
    has_cores = any(r == 3 for r in sg.rank)
    core_reach: dict[int, set[int]] = {}  # core → leaves below it
    for spine, cores in cores_of.items():
        for core in cores:
            core_reach.setdefault(core, set()).update(below.get(spine, ()))
    n = len(leaves)
    leaf_plane = [sg.plane[v] for v in leaves]
    best: int | None = None
    worst_pair: tuple[str, str] | None = None
    short: list[tuple[str, str, int, int]] = []
    classes: set[tuple[tuple[int, int], ...]] = set()
    for a in range(n):
        row = tuple(sorted((s, c) for s, c in up[a].items() if c))
        if row in classes:
            continue
        classes.add(row)
        uplinks = sum(c for _, c in row)
        w2 = [0] * n
        for s, c in row:
            for b in below.get(s, ()):
                w2[b] += c
        width = w2
        if has_cores and row:
            w3 = [0] * n
            for s, c in row:
                reach: set[int] = set()
                for core in cores_of.get(s, ()):
                    reach |= core_reach.get(core, set())
                for b in reach:
                    w3[b] += c
            width = [x if x > 0 else y for x, y in zip(w2, w3, strict=True)]
        same_plane = [p == leaf_plane[a] for p in leaf_plane]
        same_plane[a] = False
        if not any(same_plane):
            continue
        huge = 2**63 - 1
        candidates = [w if ok else huge for w, ok in zip(width, same_plane, strict=True)]
        b = candidates.index(min(candidates))
        if best is None or candidates[b] < best:
            best = candidates[b]
            worst_pair = (sg.names[leaves[a]], sg.names[leaves[b]])
        reachable = [w if ok and w > 0 else huge for w, ok in zip(width, same_plane, strict=True)]
        c = reachable.index(min(reachable))
        if reachable[c] < uplinks:
            short.append((sg.names[leaves[a]], sg.names[leaves[c]], reachable[c], uplinks))
    return best, worst_pair, short


# --------------------------------------------------------------------------------------------- the figures


def graph_figures(ft: FabricTopology, sg: SwitchGraph, failures_too: bool) -> GraphFigures:
    """Components, bisection, worst failure and ECMP on lists (the arrays engine's numbers): each balanced split
    is a cut refined from the fabric's partition, its losses with their bounds."""
    labels = components(sg)
    leaves = [i for i, r in enumerate(sg.rank) if r == 1]
    planes = sorted({labels[i] for i in leaves})
    bisection = 0.0
    reduced = 0
    worst: tuple[str, float] | None = None
    notes: list[str] = []
    connected = len(set(labels)) <= max(ft.planes, 1) and len(sg.names) > 0
    if connected:
        plane_sets = []
        for plane in planes:
            inside = [label == plane for label in labels]
            plane_sets.append(([i for i, yes in enumerate(inside) if yes], inside))
        made = _Cuts(cut_graph(sg))
        bisection, reduced, worst = plane_bisection(
            plane_sets,
            lambda members: endpoint_splits(len(sg.names), sg.endpoints, members),
            made.flow,
            lambda split, inside: [
                (name, partial(_given, computed), None, partial(_given, bound))
                for name, computed, bound in failures(sg, made.cut(split), inside)
            ],
            _INTACT,
            failures_too,
        )
    else:
        notes.append("the switch graph falls apart into more islands than planes")
    width, pair, short = ecmp(sg)
    return GraphFigures(len(set(labels)), bisection, reduced, worst, tuple(notes), width, pair, tuple(short))


def _INTACT() -> int:  # a marker: the "graph" of a split's intact flow (a damaged graph is its flow)
    raise AssertionError("a marker, not a flow")


def _given(value: Any, *_: Any) -> Any:
    return value


class _Cuts:
    """Each split's cut, made once: its intact flow, then its losses."""

    def __init__(self, cg: CutGraph) -> None:
        self.cg = cg
        self.made: list[tuple[Split, Cut]] = []

    def cut(self, split: Split) -> Cut:
        for known, cut in self.made:
            if known is split:
                return cut
        cut = Cut(self.cg, split.s_cap, split.t_cap)
        self.made.append((split, cut))
        return cut

    def flow(self, graph: Callable[[], int], split: Split, alive: list[bool] | None) -> Flow:
        """The intact flow and the size of the graph it was reduced to (its classes, the source and the sink), or
        a damaged flow (its size is not asked for)."""
        if graph is _INTACT:
            cut = self.cut(split)
            return Flow(cut.flow.value, len(cut.part.members) + 2)
        return Flow(graph(), 0)
