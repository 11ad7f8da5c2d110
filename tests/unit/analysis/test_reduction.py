"""Tests of fabric/analysis/flow/reduction.py: colour refinement gives an equitable partition, and the max flow on the
quotient graph equals the max flow on the whole graph, on random, Clos-like and damaged graphs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.analysis.flow.reduction import (
    FlowGraph,
    _checked_quotient,
    _refine,
    is_equitable,
    max_flow,
    quotient,
    reduced_flow,
    reduced_max_flow,
    refine,
    row_ids,
)
from tests.conftest import examples


def make_graph(n: int, edges: dict[tuple[int, int], int]) -> FlowGraph:
    """An undirected graph from {(a, b): capacity}; each pair once, stored as src < dst."""
    keys = sorted((min(a, b), max(a, b)) for a, b in edges)
    caps = {(min(a, b), max(a, b)): c for (a, b), c in edges.items()}
    return FlowGraph(
        n,
        np.array([a for a, _ in keys], dtype=np.int64),
        np.array([b for _, b in keys], dtype=np.int64),
        np.array([caps[k] for k in keys], dtype=np.int64),
    )


def singled_out(n: int, source: int, sink: int, others: np.ndarray | None = None) -> np.ndarray:
    """Initial colours: `others` (default all 0) shifted up by 2, source 0, sink 1."""
    colors = np.full(n, 2, dtype=np.int64) if others is None else np.asarray(others, dtype=np.int64) + 2
    colors[source] = 0
    colors[sink] = 1
    return colors


def edge_dict(graph: FlowGraph) -> dict[tuple[int, int], int]:
    return {(int(a), int(b)): int(c) for a, b, c in zip(graph.src, graph.dst, graph.cap, strict=True)}


# --------------------------------------------------------------------------------------------- random graphs


@st.composite
def random_graphs(draw: st.DrawFn) -> tuple[FlowGraph, int, int, np.ndarray]:
    """A random undirected capacitated graph, a source, a sink and initial colours singling them out."""
    n = draw(st.integers(min_value=2, max_value=12))
    pairs = list(itertools.combinations(range(n), 2))
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs)))
    caps = draw(st.lists(st.integers(min_value=1, max_value=6), min_size=len(chosen), max_size=len(chosen)))
    graph = make_graph(n, dict(zip(chosen, caps, strict=True)))
    source = draw(st.integers(min_value=0, max_value=n - 1))
    sink = draw(st.integers(min_value=0, max_value=n - 1).filter(lambda v: v != source))
    others = draw(st.lists(st.integers(min_value=0, max_value=2), min_size=n, max_size=n))
    return graph, source, sink, singled_out(n, source, sink, np.array(others))


@settings(max_examples=examples(300), deadline=None)
@given(random_graphs())
def test_reduced_max_flow_equals_max_flow_on_random_graphs(case: tuple[FlowGraph, int, int, np.ndarray]) -> None:
    graph, source, sink, initial = case
    flow, size = reduced_max_flow(graph, source, sink, initial)
    assert flow == max_flow(graph, source, sink)
    assert 2 <= size <= graph.n


@settings(max_examples=examples(200), deadline=None)
@given(random_graphs())
def test_refine_is_equitable_and_refines_initial(case: tuple[FlowGraph, int, int, np.ndarray]) -> None:
    graph, source, sink, initial = case
    colors = refine(graph, initial)
    assert is_equitable(graph, colors)
    assert sorted(set(colors.tolist())) == list(range(int(colors.max()) + 1))  # ids 0..k-1
    # a refinement: vertices of one class had one initial colour
    for c in set(colors.tolist()):
        assert len(set(initial[colors == c].tolist())) == 1
    assert colors[source] != colors[sink]


@settings(max_examples=examples(100), deadline=None)
@given(random_graphs())
def test_quotient_keeps_capacity_between_classes(case: tuple[FlowGraph, int, int, np.ndarray]) -> None:
    graph, _, _, initial = case
    colors = refine(graph, initial)
    small = quotient(graph, colors)
    between = colors[graph.src] != colors[graph.dst]
    assert int(small.cap.sum()) == int(graph.cap[between].sum())
    assert small.n == int(colors.max()) + 1
    assert np.all(small.src < small.dst)


@settings(max_examples=examples(200), deadline=None)
@given(random_graphs())
def test_quotient_from_refines_table_is_the_quotient(case: tuple[FlowGraph, int, int, np.ndarray]) -> None:
    # reduced_max_flow takes the check and the quotient from refine's last table: the same as computed edge by edge
    graph, _, _, initial = case
    colors, totals = _refine(graph, initial)
    assert np.array_equal(colors, refine(graph, initial))
    small = _checked_quotient(graph, colors, totals)
    assert small is not None
    whole = quotient(graph, colors)
    assert (small.n, small.src.tolist(), small.dst.tolist(), small.cap.tolist()) == (
        whole.n,
        whole.src.tolist(),
        whole.dst.tolist(),
        whole.cap.tolist(),
    )
    # any partition with its table (as a round of refine makes it): refused exactly when it is not equitable
    if len(graph.src):
        dense = row_ids(initial)
        k = int(dense.max()) + 1
        e_src, e_dst, e_cap = graph.directed()
        table = np.bincount(e_src * k + dense[e_dst], weights=e_cap.astype(np.float64), minlength=graph.n * k)
        assert (_checked_quotient(graph, dense, table) is None) == (not is_equitable(graph, dense))


@settings(max_examples=examples(200), deadline=None)
@given(random_graphs())
def test_flow_through_a_vertex_or_pair_bounds_what_its_loss_costs(case: tuple[FlowGraph, int, int, np.ndarray]) -> None:
    # the failures' lower bounds (figures.py): losing a vertex costs at most what passes it, losing capacity c of
    # an edge at most min(c, what the edge carries)
    graph, source, sink, initial = case
    # a flow avoiding the vertices of one initial colour if one of the same value does (as figures.py asks)
    avoid = initial == 2
    flow = reduced_flow(graph, source, sink, initial, avoid=(avoid,))
    assert flow.value == max_flow(graph, source, sink)
    keep = ~avoid[graph.src] & ~avoid[graph.dst]
    if max_flow(FlowGraph(graph.n, graph.src[keep], graph.dst[keep], graph.cap[keep]), source, sink) == flow.value:
        assert all(flow.through(v) == 0 for v in np.flatnonzero(avoid).tolist())
    for v in range(graph.n):
        if v in (source, sink):
            continue
        keep = (graph.src != v) & (graph.dst != v)
        without = max_flow(FlowGraph(graph.n, graph.src[keep], graph.dst[keep], graph.cap[keep]), source, sink)
        assert without >= flow.value - flow.through(v) - 1e-9
    for j in range(len(graph.src)):
        a, b, cap = int(graph.src[j]), int(graph.dst[j]), int(graph.cap[j])
        lost = 1 + cap // 2
        less = graph.cap.copy()
        less[j] -= lost
        without = max_flow(FlowGraph(graph.n, graph.src, graph.dst, less), source, sink)
        assert without >= flow.value - min(flow.on_pair(a, b, cap), lost) - 1e-9


def test_max_flow_is_undirected() -> None:
    # a path 0 - 1 - 2 stored with src < dst carries flow from 2 to 0 as well
    graph = make_graph(3, {(0, 1): 5, (1, 2): 3})
    assert max_flow(graph, 0, 2) == 3
    assert max_flow(graph, 2, 0) == 3
    assert max_flow(graph, 1, 1) == 0


def test_reduced_max_flow_without_edges_is_zero() -> None:
    graph = make_graph(4, {})
    assert reduced_max_flow(graph, 0, 3, singled_out(4, 0, 3)) == (0, 3)


# --------------------------------------------------------------------------------------------- Clos-like graphs


def clos_graph(
    leaves: int, spines: int, links: int, speed: int, hosts: int
) -> tuple[dict[tuple[int, int], int], int, int, int]:
    """Leaves 0..L-1, spines L..L+S-1, source and sink; every leaf-spine pair has `links` links; the first half
    of the leaves send (hosts × speed each) to the second half. Returns (edges, n, source, sink)."""
    n = leaves + spines + 2
    source, sink = n - 2, n - 1
    edges: dict[tuple[int, int], int] = {}
    for leaf in range(leaves):
        for s in range(spines):
            edges[(leaf, leaves + s)] = links * speed
        edges[(leaf, source) if leaf < leaves // 2 else (leaf, sink)] = hosts * speed
    return edges, n, source, sink


def clos_initial(n: int, leaves: int, source: int, sink: int, graph: FlowGraph) -> np.ndarray:
    """Rank (leaf 2 / spine 3) and side, as figures.py colours the split graph."""
    colors = np.zeros(n, dtype=np.int64)
    colors[leaves : n - 2] = 3
    colors[:leaves] = 2
    sending = set(graph.src[graph.dst == source].tolist())
    for leaf in range(leaves):
        colors[leaf] = 4 if leaf in sending else 5
    colors[source], colors[sink] = 0, 1
    return colors


CLOS_CASES = [(4, 2, 1, 100, 2), (8, 4, 8, 400, 32), (16, 8, 2, 400, 16), (32, 16, 1, 400, 16), (6, 3, 2, 100, 6)]


@pytest.mark.parametrize(("leaves", "spines", "links", "speed", "hosts"), CLOS_CASES)
def test_regular_clos_reduces_to_few_classes(leaves: int, spines: int, links: int, speed: int, hosts: int) -> None:
    edges, n, source, sink = clos_graph(leaves, spines, links, speed, hosts)
    graph = make_graph(n, edges)
    initial = clos_initial(n, leaves, source, sink, graph)
    colors = refine(graph, initial)
    # source, sink, sending leaves, receiving leaves, spines
    assert int(colors.max()) + 1 == 5
    flow, size = reduced_max_flow(graph, source, sink, initial)
    assert size == 5
    expected = min(leaves // 2 * hosts * speed, leaves // 2 * spines * links * speed)
    assert flow == expected == max_flow(graph, source, sink)


def test_large_clos_quotient_is_much_smaller() -> None:
    edges, n, source, sink = clos_graph(64, 32, 1, 400, 32)
    graph = make_graph(n, edges)
    flow, size = reduced_max_flow(graph, source, sink, clos_initial(n, 64, source, sink, graph))
    assert size == 5  # of 98 vertices
    assert flow == 32 * 32 * 400 == max_flow(graph, source, sink)


@pytest.mark.parametrize(("leaves", "spines", "links", "speed", "hosts"), CLOS_CASES)
def test_clos_with_a_removed_edge(leaves: int, spines: int, links: int, speed: int, hosts: int) -> None:
    edges, n, source, sink = clos_graph(leaves, spines, links, speed, hosts)
    intact = make_graph(n, edges)
    del edges[(0, leaves)]  # leaf 0 loses all its links to spine 0
    graph = make_graph(n, edges)
    initial = clos_initial(n, leaves, source, sink, graph)
    colors = refine(graph, initial)
    assert is_equitable(graph, colors)
    assert colors[0] != colors[1]  # the damaged leaf is no longer like its neighbours
    assert colors[leaves] != colors[leaves + 1]  # nor is the spine it lost
    flow, size = reduced_max_flow(graph, source, sink, initial)
    assert flow == max_flow(graph, source, sink)
    assert flow <= max_flow(intact, source, sink)
    assert size > 5


@pytest.mark.parametrize(("leaves", "spines", "links", "speed", "hosts"), CLOS_CASES)
def test_clos_with_a_lowered_capacity(leaves: int, spines: int, links: int, speed: int, hosts: int) -> None:
    edges, n, source, sink = clos_graph(leaves, spines, links, speed, hosts)
    edges[(leaves - 1, leaves + spines - 1)] = max(1, (links * speed) // 2)  # a receiving leaf's link halved
    graph = make_graph(n, edges)
    flow, size = reduced_max_flow(graph, source, sink, clos_initial(n, leaves, source, sink, graph))
    assert flow == max_flow(graph, source, sink)
    assert size > 5


def test_damage_that_lowers_the_flow_is_seen_by_the_reduction() -> None:
    # 2 sending and 2 receiving leaves, 2 spines, 1 × 100G per pair, 2 × 100G hosts per leaf: exactly full
    edges, n, source, sink = clos_graph(4, 2, 1, 100, 2)
    graph = make_graph(n, edges)
    assert reduced_max_flow(graph, source, sink, clos_initial(n, 4, source, sink, graph))[0] == 400
    del edges[(0, 4)]  # sending leaf 0 keeps one 100G uplink
    damaged = make_graph(n, edges)
    assert reduced_max_flow(damaged, source, sink, clos_initial(n, 4, source, sink, damaged))[0] == 300
    edges[(3, 5)] = 50  # and receiving leaf 3 has a 50G link to spine 1
    damaged = make_graph(n, edges)
    assert reduced_max_flow(damaged, source, sink, clos_initial(n, 4, source, sink, damaged))[0] == 250


@settings(max_examples=examples(60), deadline=None)
@given(
    st.integers(min_value=2, max_value=10),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=1, max_value=4),
    st.integers(min_value=1, max_value=8),
    st.data(),
)
def test_randomly_damaged_clos(leaves: int, spines: int, links: int, hosts: int, data: st.DataObject) -> None:
    edges, n, source, sink = clos_graph(leaves, spines, links, 100, hosts)
    fabric_edges = [e for e in edges if source not in e and sink not in e]
    hits = data.draw(st.lists(st.sampled_from(fabric_edges), unique=True, max_size=3))
    for edge in hits:
        edges[edge] = data.draw(st.integers(min_value=0, max_value=links * 100 - 1))
    edges = {e: c for e, c in edges.items() if c > 0}
    graph = make_graph(n, edges)
    initial = clos_initial(n, leaves, source, sink, graph)
    assert is_equitable(graph, refine(graph, initial))
    flow, _ = reduced_max_flow(graph, source, sink, initial)
    assert flow == max_flow(graph, source, sink)


# ---------------------------------------------------------------------------------- row_ids, is_equitable, refine


@settings(max_examples=examples(100), deadline=None)
@given(
    st.integers(min_value=0, max_value=30).flatmap(
        lambda n: st.lists(
            st.lists(st.integers(min_value=-3, max_value=3), min_size=n, max_size=n), min_size=1, max_size=3
        )
    )
)
def test_row_ids_are_dense_sorted_ids_of_distinct_rows(columns: list[list[int]]) -> None:
    arrays = [np.array(c, dtype=np.int64) for c in columns]
    ids = row_ids(*arrays)
    rows = list(zip(*columns, strict=True))
    ranking = {row: i for i, row in enumerate(sorted(set(rows)))}
    assert ids.tolist() == [ranking[row] for row in rows]


def test_is_equitable_rejects_unequal_totals() -> None:
    # a star: centre 0 with leaves 1, 2 at capacities 1 and 2; {centre}, {1, 2} is not equitable
    graph = make_graph(3, {(0, 1): 1, (0, 2): 2})
    assert not is_equitable(graph, np.array([0, 1, 1]))
    assert is_equitable(graph, np.array([0, 1, 2]))
    assert len(set(refine(graph, np.zeros(3, dtype=np.int64)).tolist())) == 3


def test_is_equitable_rejects_a_member_without_edges_into_a_class() -> None:
    # 1 and 2 share a class; 1 has an edge into class {0}, 2 has none
    graph = make_graph(4, {(0, 1): 1, (2, 3): 1})
    assert not is_equitable(graph, np.array([0, 1, 1, 2]))


def test_refine_of_a_cycle_keeps_one_class() -> None:
    n = 10
    graph = make_graph(n, {(i, (i + 1) % n): 7 for i in range(n)})
    colors = refine(graph, np.zeros(n, dtype=np.int64))
    assert set(colors.tolist()) == {0}
    assert is_equitable(graph, colors)


def test_refine_separates_by_distance_from_a_marked_vertex() -> None:
    # a path 0-1-2-3-4 with the middle marked: classes {2}, {1, 3}, {0, 4}
    graph = make_graph(5, {(0, 1): 1, (1, 2): 1, (2, 3): 1, (3, 4): 1})
    initial = np.array([0, 0, 1, 0, 0])
    colors = refine(graph, initial)
    assert colors[1] == colors[3]
    assert colors[0] == colors[4]
    assert len(set(colors.tolist())) == 3


def test_refine_is_coarsest_when_capacities_differ_per_edge() -> None:
    # bipartite 3 × 3 with capacities [[1, 2, 3], [2, 2, 2], [3, 2, 1]]: every vertex has total 6 into the other
    # side, so {rows}, {columns} is equitable and is the coarsest equitable partition (of an all-0 start)
    matrix = [[1, 2, 3], [2, 2, 2], [3, 2, 1]]
    edges = {(i, 3 + j): matrix[i][j] for i in range(3) for j in range(3)}
    graph = make_graph(6, edges)
    assert is_equitable(graph, np.array([0, 0, 0, 1, 1, 1]))
    colors = refine(graph, np.array([0, 0, 0, 1, 1, 1]))
    assert len(set(colors.tolist())) == 2
