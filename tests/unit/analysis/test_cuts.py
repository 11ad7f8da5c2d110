"""The flow engines' cuts against the slow reference (tests/support/flow_reference.py, refinement from scratch): on
random switch graphs each engine's flows, damaged flows and their order are the reference's, the lists engine's
partition too, and every bound is a lower bound."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.analysis.flow import arrays, lists
from tests.conftest import examples
from tests.support import flow_reference as reference

Case = tuple[reference.SwitchGraph, list[int], list[int]]  # a switch graph and a cut: Gb/s on each side per switch


def _same_partition(a: list[int], b: list[int]) -> bool:
    return len(set(a)) == len(set(b)) == len(set(zip(a, b, strict=True)))


@st.composite
def switch_graphs(draw: st.DrawFn) -> tuple[reference.SwitchGraph, list[int], list[int]]:
    """A random switch graph (ranks 1–3, bundles of equal cables) and a cut: Gb/s on each side per switch. Few
    distinct values, so that classes of several members (what the reduction and the bounds work on) are common."""
    n = draw(st.integers(min_value=2, max_value=10))
    rank = draw(st.lists(st.integers(min_value=1, max_value=3), min_size=n, max_size=n))
    chosen = draw(st.lists(st.sampled_from(list(itertools.combinations(range(n), 2))), unique=True))
    chosen.sort()
    counts = draw(st.lists(st.integers(min_value=1, max_value=3), min_size=len(chosen), max_size=len(chosen)))
    speed = draw(st.lists(st.sampled_from([1, 2, 4]), min_size=len(chosen), max_size=len(chosen)))
    pairs = reference.Pairs(
        n, [a for a, _ in chosen], [b for _, b in chosen], [c * s for c, s in zip(counts, speed, strict=True)]
    )
    s_cap = draw(st.lists(st.sampled_from([0, 0, 3, 6]), min_size=n, max_size=n))
    t_cap = draw(st.lists(st.sampled_from([0, 0, 3, 6]), min_size=n, max_size=n))
    names = [f"sw{i}" for i in range(n)]
    return reference.SwitchGraph(names, rank, [0] * n, pairs, counts, []), s_cap, t_cap


@st.composite
def circulant_clos(draw: st.DrawFn) -> tuple[reference.SwitchGraph, list[int], list[int]]:
    """m leaves and m spines, leaf i cabled to spines i + d (mod m) for d in a drawn set, maybe m cores above the
    spines the same way: classes of several switches whose members reach different neighbours (a lost switch then
    splits its neighbours' class), and a cut on the leaves."""
    m = draw(st.integers(min_value=2, max_value=6))
    ups = draw(st.sets(st.integers(min_value=0, max_value=m - 1), min_size=1))
    cables = {d: draw(st.integers(min_value=1, max_value=2)) for d in sorted(ups)}
    cores = draw(st.sets(st.integers(min_value=0, max_value=m - 1), max_size=2))
    edges: dict[tuple[int, int], tuple[int, int]] = {}
    for i in range(m):
        for d, count in cables.items():
            edges[(i, m + (i + d) % m)] = (count, 2)
        for e in cores:
            edges[(m + i, 2 * m + (i + e) % m)] = (1, 4)
    n = 3 * m if cores else 2 * m
    keys = sorted(edges)
    pairs = reference.Pairs(n, [a for a, _ in keys], [b for _, b in keys], [c * s for c, s in (edges[k] for k in keys)])
    # Gb/s on each side repeat along the leaves (every leaf, every other one) or not at all
    period = draw(st.sampled_from([1, 2, m]))
    s_side = draw(st.lists(st.sampled_from([0, 3, 6]), min_size=period, max_size=period))
    t_side = draw(st.lists(st.sampled_from([0, 3, 6]), min_size=period, max_size=period))
    s_cap = [s_side[i % period] for i in range(m)] + [0] * (n - m)
    t_cap = [t_side[i % period] for i in range(m)] + [0] * (n - m)
    rank = [1] * m + [2] * m + [3] * (n - 2 * m)
    names = [f"sw{i}" for i in range(n)]
    return reference.SwitchGraph(names, rank, [0] * n, pairs, [edges[k][0] for k in keys], []), s_cap, t_cap


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(switch_graphs(), circulant_clos()))
def test_list_cut_flows_are_those_refined_from_scratch(case: Case) -> None:
    sg, s_cap, t_cap = case
    split = reference.Split("job", s_cap, t_cap)
    cut = lists.Cut(lists.cut_graph(sg), s_cap, t_cap)
    assert cut.flow.value == reference.split_flow(sg, sg.pairs, split)[0]
    # the same classes as refining the cut's colours from scratch, so the same elements in the same order
    assert _same_partition(cut.part.colors, reference.refine(sg.pairs, reference.row_ids(sg.rank, s_cap, t_cap)))
    ours = lists.failures(sg, cut)
    theirs = reference.failures(sg, split, [True] * len(sg.names))
    assert [name for name, _, _ in ours] == [name for name, _, _ in theirs]
    for (_, computed, bound), (_, damaged, alive) in zip(ours, theirs, strict=True):
        value = computed()
        assert value == reference.split_flow(sg, damaged, split, alive)[0]
        assert bound <= value <= cut.flow.value


@settings(max_examples=examples(150), deadline=None)
@given(st.one_of(switch_graphs(), circulant_clos()))
def test_array_cut_flows_are_those_refined_from_scratch(case: Case) -> None:
    sg, s_cap, t_cap = case
    split = reference.Split("job", s_cap, t_cap)
    value, losses = arrays.job_cut(arrays.array_graph(sg), s_cap, t_cap, True)
    assert value == reference.split_flow(sg, sg.pairs, split)[0]
    theirs = reference.failures(sg, split, [True] * len(sg.names))
    assert [name for name, _, _ in losses] == [name for name, _, _ in theirs]
    for (_, computed, bound), (_, damaged, alive) in zip(losses, theirs, strict=True):
        flow = computed()
        assert flow == reference.split_flow(sg, damaged, split, alive)[0]
        assert bound <= flow <= value


def test_a_failure_that_carries_no_flow_is_bounded_by_the_intact_flow() -> None:
    # two leaves under two spines; the job on leaf 0 alone: its flow stays on the leaf, so losing either spine or
    # an uplink costs nothing, and the bounds say so without computing it
    pairs = reference.Pairs(4, [0, 0, 1, 1], [2, 3, 2, 3], [10, 10, 10, 10])
    sg = reference.SwitchGraph(["leaf0", "leaf1", "spine0", "spine1"], [1, 1, 2, 2], [0] * 4, pairs, [1] * 4, [])
    cut = lists.Cut(lists.cut_graph(sg), [5, 0, 0, 0], [5, 0, 0, 0])
    assert cut.flow.value == 5
    losses = lists.failures(sg, cut)
    assert [name for name, _, _ in losses] == ["switch spine0", "link leaf0 — spine0", "link leaf1 — spine0"]
    assert all(bound == 5 for _, _, bound in losses)
    # across the leaves every path takes a spine: a spine's loss is bounded by the half that passes it
    across = lists.Cut(lists.cut_graph(sg), [20, 0, 0, 0], [0, 20, 0, 0])
    assert across.flow.value == 20
    spine = lists.failures(sg, across)[0]
    assert spine[0] == "switch spine0" and spine[1]() == 10 and 9.99 < spine[2] <= 10
