"""The graph figures of a small fabric in pure Python: the same numbers as the numpy/scipy path of figures.py,
without loading numpy and scipy (a quarter of a second, more than a small design's whole build).

Each function mirrors its namesake in figures.py or reduction.py step by step, on lists. Colour refinement
compares exact signatures (a class and the capacity into it) instead of hashing them, which gives the
partition the hashed version gives when nothing collides; flows are exact integers either way.
tests/unit/analysis/test_figures.py checks both paths against each other on every bundled design. The figures and
the job table run through cuts.py, which refines each cut from the fabric's own partition; the from-scratch
refinement, split flow and failures here are what tests/unit/analysis/test_cuts.py checks it against.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from fabric.fast.memo import per_object
from fabric.model.kinds import Tier
from fabric.model.topology import LAYER_RANK, FabricTopology

Residual = list[dict[int, int]] | Mapping[int, dict[int, int]]  # by vertex index or by vertex id


@dataclass
class Pairs:
    """An undirected capacitated graph: each pair (src < dst) once."""

    n: int
    src: list[int]
    dst: list[int]
    cap: list[int]


@dataclass
class SwitchGraph:
    """A fabric's switches as lists: rank, plane, pair capacities and endpoint links (figures._SwitchGraph's twin)."""

    names: list[str]
    rank: list[int]
    plane: list[int]
    pairs: Pairs
    counts: list[int]
    endpoints: list[tuple[int, int]]  # (leaf index, Gb/s) per endpoint link, by leaf


@dataclass
class Split:
    """A balanced split of the endpoints: per switch the Gb/s on side A and on side B."""

    name: str
    s_cap: list[int]
    t_cap: list[int]


@dataclass(frozen=True)
class GraphFigures:
    """The graph figures of a fabric: components, bisection, worst failure and ECMP width."""

    components: int
    bisection_gbps: float
    reduced_vertices: int
    worst: tuple[str, float] | None  # element, bisection without it
    notes: tuple[str, ...]
    min_ecmp_width: int | None
    ecmp_worst_pair: tuple[str, str] | None
    ecmp_short: tuple[tuple[str, str, int, int], ...]


@per_object
def switch_lists(ft: FabricTopology) -> SwitchGraph:
    """The switch graph, from the fabric's links (its networkx graph is not needed); made once per fabric for the
    figures and the job table (callers only read it)."""
    names = list(ft.switches)
    index = {n: i for i, n in enumerate(names)}
    rank = [LAYER_RANK[ft.devices[n].layer] for n in names]
    plane = [ft.devices[n].plane or 0 for n in names]
    # a switch's endpoint links grouped by endpoint in order of first appearance, as FabricTopology.graph
    # yields them: the balanced splits take endpoints in this order
    below: dict[int, dict[str, list[int]]] = {}
    agg: dict[tuple[int, int], list[int]] = {}
    # (get before set: setdefault would build its default for each of the 300,000 links at 100k GPUs)
    for link in ft.links:
        tier = link.tier
        if tier == Tier.PEER:  # an MLAG peer link is a cable, not a path of the Clos (as in the graph)
            continue
        if tier == Tier.NODE_LEAF:
            leaf = index[link.b]
            group = below.get(leaf)
            if group is None:
                group = below[leaf] = {}
            speeds = group.get(link.a)
            if speeds is None:
                group[link.a] = [link.speed_gbps]
            else:
                speeds.append(link.speed_gbps)
        else:
            a, b = index[link.a], index[link.b]
            key = (a, b) if a < b else (b, a)
            entry = agg.get(key)
            if entry is None:
                agg[key] = [link.speed_gbps, 1]
            else:
                entry[0] += link.speed_gbps
                entry[1] += 1
    endpoints = [(leaf, gbps) for leaf in sorted(below) for speeds in below[leaf].values() for gbps in speeds]
    keys = sorted(agg)
    pairs = Pairs(len(names), [k[0] for k in keys], [k[1] for k in keys], [agg[k][0] for k in keys])
    return SwitchGraph(names, rank, plane, pairs, [agg[k][1] for k in keys], endpoints)


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


def max_flow(pairs: Pairs, source: int, sink: int) -> int:
    """Maximum flow between two vertices of an undirected graph (Edmonds–Karp; each edge usable both ways)."""
    if source == sink:
        return 0
    residual: list[dict[int, int]] = [{} for _ in range(pairs.n)]
    for a, b, c in zip(pairs.src, pairs.dst, pairs.cap, strict=True):
        if c > 0:
            residual[a][b] = residual[a].get(b, 0) + c
            residual[b][a] = residual[b].get(a, 0) + c
    return augment(residual, source, sink)


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


def quotient(pairs: Pairs, colors: list[int]) -> Pairs:
    k = max(colors) + 1
    cap: dict[tuple[int, int], int] = {}
    for a, b, c in zip(pairs.src, pairs.dst, pairs.cap, strict=True):
        ca, cb = colors[a], colors[b]
        if ca != cb:
            key = (min(ca, cb), max(ca, cb))
            cap[key] = cap.get(key, 0) + c
    keys = sorted(k_ for k_, c in cap.items() if c)
    return Pairs(k, [a for a, _ in keys], [b for _, b in keys], [cap[key] for key in keys])


def reduced_max_flow(pairs: Pairs, source: int, sink: int, initial: list[int]) -> tuple[int, int]:
    colors = refine(pairs, initial)
    if colors[source] == colors[sink]:
        return max_flow(pairs, source, sink), pairs.n
    small = quotient(pairs, colors)
    return max_flow(small, colors[source], colors[sink]), small.n


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


# --------------------------------------------------------------------------------------------- bisection


def splits(sg: SwitchGraph, members: list[int]) -> list[Split]:
    return endpoint_splits(len(sg.names), sg.endpoints, members)


def endpoint_splits(n: int, endpoints: Sequence[tuple[int, int]], members: list[int]) -> list[Split]:
    """Balanced splits of the endpoints on the leaves in `members` (one plane), as per-switch Gb/s on each side;
    both engines take theirs from here."""
    inside = set(members)
    eps = [(leaf, gbps) for leaf, gbps in endpoints if leaf in inside]
    eps.sort(key=lambda e: e[0])  # leaf order; stable keeps port order
    half = sum(g for _, g in eps) / 2
    out = []
    for name in ("halves", "alternate"):
        s_cap, t_cap = [0] * n, [0] * n
        a_sum = b_sum = 0
        leaf_pos = {leaf: i for i, leaf in enumerate(dict.fromkeys(e[0] for e in eps))}
        for leaf, gbps in eps:
            if name == "halves":
                to_a = a_sum < half
            else:
                want_a = leaf_pos[leaf] % 2 == 0
                to_a = (want_a and a_sum < half) or (not want_a and b_sum >= half)
            if to_a:
                s_cap[leaf] += gbps
                a_sum += gbps
            else:
                t_cap[leaf] += gbps
                b_sum += gbps
        out.append(Split(name, s_cap, t_cap))
    return out


def split_flow(sg: SwitchGraph, pairs: Pairs, split: Split, alive: list[bool] | None = None) -> tuple[int, int]:
    n = len(sg.names)
    source, sink = n, n + 1
    s_cap, t_cap = split.s_cap, split.t_cap
    if alive is not None:
        s_cap = [c if ok else 0 for c, ok in zip(s_cap, alive, strict=True)]
        t_cap = [c if ok else 0 for c, ok in zip(t_cap, alive, strict=True)]
    s_nodes = [i for i, c in enumerate(s_cap) if c]
    t_nodes = [i for i, c in enumerate(t_cap) if c]
    src = [*pairs.src, *s_nodes, *t_nodes]
    dst = [*pairs.dst, *([source] * len(s_nodes)), *([sink] * len(t_nodes))]
    cap = [*pairs.cap, *(s_cap[i] for i in s_nodes), *(t_cap[i] for i in t_nodes)]
    keep = [j for j, c in enumerate(cap) if c > 0]
    graph = Pairs(n + 2, [src[j] for j in keep], [dst[j] for j in keep], [cap[j] for j in keep])
    init = row_ids([*sg.rank, 10, 11], [*s_cap, 0, 0], [*t_cap, 0, 0])
    return reduced_max_flow(graph, source, sink, init)


def failures(sg: SwitchGraph, split: Split, inside: list[bool]) -> list[tuple[str, Pairs, list[bool] | None]]:
    colors = refine(sg.pairs, row_ids(sg.rank, split.s_cap, split.t_cap))
    pairs = sg.pairs
    out: list[tuple[str, Pairs, list[bool] | None]] = []
    seen: set[int] = set()
    for i in (i for i, yes in enumerate(inside) if yes):
        if sg.rank[i] >= 2 and colors[i] not in seen:
            seen.add(colors[i])
            keep = [j for j in range(len(pairs.src)) if pairs.src[j] != i and pairs.dst[j] != i]
            alive = [True] * len(sg.names)
            alive[i] = False
            damaged = Pairs(
                pairs.n, [pairs.src[j] for j in keep], [pairs.dst[j] for j in keep], [pairs.cap[j] for j in keep]
            )
            out.append((f"switch {sg.names[i]}", damaged, alive))
    seen_links: set[tuple[int, int, int]] = set()
    for j in (j for j, a in enumerate(pairs.src) if inside[a]):
        a, b = pairs.src[j], pairs.dst[j]
        key = (colors[a], colors[b], pairs.cap[j] // sg.counts[j])
        key = key if key[0] <= key[1] else (key[1], key[0], key[2])
        if key in seen_links:
            continue
        seen_links.add(key)
        cap = list(pairs.cap)
        cap[j] -= pairs.cap[j] // sg.counts[j]
        lo, hi = (a, b) if sg.rank[a] <= sg.rank[b] else (b, a)
        out.append((f"link {sg.names[lo]} — {sg.names[hi]}", Pairs(pairs.n, pairs.src, pairs.dst, cap), None))
    return out


# --------------------------------------------------------------------------------------------- ECMP


def ecmp(sg: SwitchGraph) -> tuple[int | None, tuple[str, str] | None, list[tuple[str, str, int, int]]]:
    """As figures._ecmp: per leaf, the width to every other leaf of its plane over shortest up-down paths."""
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


# --------------------------------------------------------------------------------------------- all


Members = TypeVar("Members")
Inside = TypeVar("Inside")
SplitT = TypeVar("SplitT", bound="Split | _ArraySplit")
Graph = TypeVar("Graph")
Alive = TypeVar("Alive")


class _ArraySplit(Protocol):
    """figures._Split: the same fields as Split, as numpy arrays."""

    @property
    def s_cap(self) -> Any: ...
    @property
    def t_cap(self) -> Any: ...


@dataclass(frozen=True)
class Flow:
    """A maximum flow's value and the size of the graph it was computed on."""

    value: int
    size: int


def _less(value: int, lost: float) -> float:
    """value - lost, a hair lower when anything is lost (the spread is in floats: a bound a hair low never skips
    a failure it should not; nothing lost is exact)."""
    return value - lost - 1e-9 * max(1, value) if lost else float(value)


def plane_bisection(
    planes: Sequence[tuple[Members, Inside]],
    splits_of: Callable[[Members], Sequence[SplitT]],
    flow: Callable[[Graph, SplitT, Alive | None], Any],
    failures_of: Callable[
        [SplitT, Inside], Sequence[tuple[str, Callable[[], Graph], Alive | None, Callable[[Any], float]]]
    ],
    intact: Graph,
    failures_too: bool,
) -> tuple[float, int, tuple[str, float] | None]:
    """Bisection Gb/s, the largest reduced flow graph and the worst single failure (element, bisection after it)
    over the planes (their switches as `members` and as an `inside` mask), whichever engine's primitives run it.

    `flow` gives an object with the flow's `value` and `size`; each failure comes with a lower bound of its flow
    given the intact one: a failure whose bound is no lower than the worst so far cannot be the worst (only a
    strictly lower flow replaces it), so it is not computed."""
    reduced = 0
    per_plane_best: list[float] = []
    per_plane_worst: list[float] = []
    worst_names: list[str] = []
    for members, inside in planes:
        plane_full = 0.0
        best: float | None = None
        plane_worst: tuple[float, str] | None = None
        for split in splits_of(members):
            # Endpoints are atomic, so halves can differ by one port: judge a split against its
            # smaller side, then scale to the plane's ideal half.
            a, b = int(sum(split.s_cap)), int(sum(split.t_cap))
            plane_full = float(a + b) / 2
            side = float(min(a, b))
            if not side:  # a single endpoint: nothing to split
                best = 1.0
                continue
            whole = flow(intact, split, None)
            reduced = max(reduced, whole.size)
            best = min(best, whole.value / side) if best is not None else whole.value / side
            if failures_too:
                for element, damaged, alive, bound in failures_of(split, inside):
                    if plane_worst is not None and bound(whole) / side >= plane_worst[0]:
                        continue
                    value = flow(damaged(), split, alive).value
                    if plane_worst is None or value / side < plane_worst[0]:
                        plane_worst = (value / side, element)
        per_plane_best.append((best or 0.0) * plane_full)
        if plane_worst is not None:
            per_plane_worst.append(plane_worst[0] * plane_full)
            worst_names.append(plane_worst[1])
    bisection = sum(per_plane_best)
    worst = None
    if failures_too and per_plane_worst:
        # one failure hits one plane; the others keep their share
        drops = [b - w for b, w in zip(per_plane_best, per_plane_worst, strict=True)]
        i = drops.index(max(drops))
        worst = (worst_names[i], bisection - drops[i])
    return bisection, reduced, worst
