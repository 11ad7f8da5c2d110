"""The slow reference the flow engines are tested against: each cut's partition refined from scratch (not from the
fabric's own partition, as fabric/analysis/flow/lists.py does), the plain Edmonds–Karp flow on the quotient, and
every damaged graph built whole. Only tests use it (tests/unit/analysis/test_cuts.py)."""

from __future__ import annotations

from fabric.analysis.flow.bisection import Split
from fabric.analysis.flow.graph import Pairs, SwitchGraph
from fabric.analysis.flow.lists import augment, refine, row_ids

__all__ = ["Pairs", "Split", "SwitchGraph", "failures", "max_flow", "refine", "row_ids", "split_flow"]


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
