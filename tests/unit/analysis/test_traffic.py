"""The traffic model (fabric/analysis/traffic) against closed forms: k connections hashed onto k equal uplinks,
Q queue pairs per connection, rail-aligned rings, non-blocking fat trees under adaptive routing; and properties
(more QPs never lower the mean; another spine never lowers the adaptive figure)."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabric
from fabric.analysis.jobs import placement
from fabric.analysis.locality import locality
from fabric.analysis.traffic.fairness import max_min
from fabric.analysis.traffic.model import port_rates, traffic
from fabric.analysis.traffic.net import Net, fabric_net, frontier_distances
from tests.conftest import built, examples

PROPERTY = settings(max_examples=examples(20), deadline=None)


def _two_leaves(k: int) -> Net:
    """Leaves 0 and 1 with k ports each, k spines (2 … k+1), one link from each leaf to each spine; all of rate 1."""
    pairs = [(leaf, 2 + s, 1.0) for leaf in (0, 1) for s in range(k)]
    return Net([f"sw{i}" for i in range(k + 2)], pairs, [(0, 1.0)] * k + [(1, 1.0)] * k)


def _edge(net: Net, a: int, b: int) -> int:
    return int(np.nonzero((net.src == a) & (net.dst == b))[0][0])


def _exact(k: int, q: int) -> tuple[float, float]:
    """Mean and variance (over hash outcomes) of the mean per-connection share of k connections of q QPs each,
    leaf 0 to leaf 1 over k spines: every outcome of the QPs' spines, each through max_min."""
    net = _two_leaves(k)
    qps = k * q
    owner = np.repeat(np.arange(k), q)
    means = []
    for spines in itertools.product(range(k), repeat=qps):
        rows, cols = [], []
        for i, s in enumerate(spines):
            path = [net.up(owner[i]), _edge(net, 0, 2 + s), _edge(net, 2 + s, 1), net.down(k + owner[i])]
            rows += [i] * 4
            cols += [int(x) for x in path]
        rate = max_min(np.asarray(rows), np.asarray(cols), np.ones(len(rows)), net.capacity, np.full(qps, 1.0 / q))
        means.append(float(np.bincount(owner, weights=rate).mean()))
    return float(np.mean(means)), float(np.var(means))


def _binomial(k: int, q: int) -> float:
    """E[min(1, q / (1 + B))], B ~ Binomial(kq − 1, 1/k): a QP shares its spine with B others, each QP asks 1/q."""
    n = k * q - 1
    return sum(math.comb(n, b) * (1 / k) ** b * (1 - 1 / k) ** (n - b) * min(1.0, q / (1 + b)) for b in range(n + 1))


@pytest.mark.parametrize("k", [2, 3, 4])
def test_k_flows_on_k_uplinks_exactly(k: int) -> None:
    mean, _ = _exact(k, 1)
    assert mean == pytest.approx(1 - (1 - 1 / k) ** k, abs=1e-12)
    assert mean < 1  # collisions cost: the figure is not the ideal


@pytest.mark.parametrize(("k", "q"), [(2, 2), (2, 3), (3, 2)])
def test_queue_pairs_exactly_binomial(k: int, q: int) -> None:
    mean, _ = _exact(k, q)
    assert mean == pytest.approx(_binomial(k, q), abs=1e-12)
    assert mean > _binomial(k, 1)  # more QPs: more of the uplinks used


@pytest.mark.parametrize(("k", "q"), [(3, 1), (2, 2)])
def test_ecmp_sampler_matches_the_exact_mean(k: int, q: int) -> None:
    """The seeded hash draws: the mean over S seeds within 4 standard errors of the exact mean."""
    mean, var = _exact(k, q)
    net = _two_leaves(k)
    src = np.arange(k)
    dst = k + np.arange(k)
    seeds = 400
    got = [port_rates(net, src, dst, np.ones(k), "ecmp", q, s)[0, :k].mean() for s in range(seeds)]
    assert abs(float(np.mean(got)) - mean) <= 4 * math.sqrt(var / seeds)
    assert len(set(np.round(got, 9))) > 1  # the seeds differ


def test_same_seed_same_figure() -> None:
    net = _two_leaves(4)
    ports = [[0, 1, 2, 3], [4, 5, 6, 7]]
    one = traffic(net, ports, "all-reduce", "ecmp", seeds=8)
    assert one == traffic(net, ports, "all-reduce", "ecmp", seeds=8)
    assert one.mean_pct < 100


def test_binomial_rises_with_queue_pairs() -> None:
    for k in (2, 4, 8):
        shares = [_binomial(k, q) for q in range(1, 9)]
        assert shares == sorted(shares)
        assert shares[-1] > shares[0]


def _clos(leaves: int, per_leaf: int, spines: int) -> Net:
    """A two-tier Clos: leaves 0 … leaves−1, spines after them, one link per leaf and spine, ports of rate 1."""
    pairs = [(leaf, leaves + s, 1.0) for leaf in range(leaves) for s in range(spines)]
    names = [f"sw{i}" for i in range(leaves + spines)]
    return Net(names, pairs, [(leaf, 1.0) for leaf in range(leaves) for _ in range(per_leaf)])


@PROPERTY
@given(st.permutations(range(16)))
def test_non_blocking_fat_tree_adaptive_is_full_for_every_permutation(perm: list[int]) -> None:
    net = _clos(4, 4, 4)
    rates = port_rates(net, np.arange(16), np.asarray(perm), np.ones(16), "adaptive", 1, 0)[0]
    assert rates == pytest.approx(np.ones(16))


def test_oversubscribed_fat_tree_adaptive_is_not_full() -> None:
    net = _clos(4, 4, 2)  # 2:1
    perm = np.asarray([(i + 4) % 16 for i in range(16)])  # every port to the next leaf
    rates = port_rates(net, np.arange(16), perm, np.ones(16), "adaptive", 1, 0)[0]
    assert rates == pytest.approx(np.full(16, 0.5))


@PROPERTY
@given(st.permutations(range(16)), st.integers(1, 4))
def test_another_spine_never_lowers_adaptive(perm: list[int], spines: int) -> None:
    before = port_rates(_clos(4, 4, spines), np.arange(16), np.asarray(perm), np.ones(16), "adaptive", 1, 0)[0]
    after = port_rates(_clos(4, 4, spines + 1), np.arange(16), np.asarray(perm), np.ones(16), "adaptive", 1, 0)[0]
    assert after.sum() >= before.sum() - 1e-9


def _scipy_distances(net: Net, roots: np.ndarray) -> np.ndarray:
    """The reference: scipy's unweighted shortest paths, as the large-net path of Net._bfs takes them."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    n = len(net.names)
    graph = csr_matrix((np.ones(net.edges), (net.src, net.dst)), shape=(n, n))
    dist = shortest_path(graph, method="D", directed=True, unweighted=True, indices=roots)
    dist[np.isinf(dist)] = -1
    return np.asarray(dist, dtype=np.int64)


@PROPERTY
@given(
    st.integers(1, 24).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n),
            st.lists(st.integers(0, n - 1), min_size=1, max_size=n),
        )
    )
)
def test_frontier_distances_are_scipys(graph: tuple[int, list[tuple[int, int]], list[int]]) -> None:
    # any switch graph (pieces, parallel cables, loops on a switch) and any roots, repeated ones included
    n, cables, roots = graph
    net = Net([f"sw{i}" for i in range(n)], [(a, b, 1.0) for a, b in cables], [])
    want = _scipy_distances(net, np.asarray(roots))
    assert np.array_equal(frontier_distances(net.ptr, net.dst, n, np.asarray(roots)), want)


@pytest.mark.parametrize("design", ["lab", "superpod-h100-4su", "lab-ib-3tier", "gb200-nvl72-4su", "eos-roce-1024"])
def test_a_bundled_fabrics_distances_are_scipys_from_every_switch(design: str) -> None:
    net, _ = _job(design)
    roots = np.arange(len(net.names))
    got = frontier_distances(net.ptr, net.dst, len(net.names), roots)
    assert got.shape == (len(net.names), len(net.names)) and int(got.max()) >= 2  # a Clos: leaf to leaf is 2+ hops
    assert np.array_equal(got, _scipy_distances(net, roots))
    assert not np.array_equal(got[:, ::-1], got)  # (a matrix with its columns reversed is another: it can fail)


def test_a_small_designs_traffic_table_loads_no_scipy() -> None:
    # the report of a small fabric models its collectives without importing scipy (0.13 s, more than the model)
    code = (
        "import sys\n"
        "from fabric import build_fabric\n"
        "b = build_fabric(sys.argv[1])\n"
        "figures = sum(len(f) for f in b.traffic.values())\n"
        "print('FIGURES', figures, 'scipy' in {m.split('.')[0] for m in sys.modules})\n"
    )
    design = Path(fabric.__file__).parent.parent / "designs" / "superpod-h100-4su.yaml"
    out = subprocess.run([sys.executable, "-c", code, str(design)], capture_output=True, text=True, timeout=120)
    assert "FIGURES 63 False" in out.stdout, out.stdout + out.stderr


def _job(design: str) -> tuple[Net, list[list[int]]]:
    build = built(design)
    loc = locality(build.design, build.topology)
    assert loc is not None
    nodes = placement(loc)
    net, ports = fabric_net(build.topology.fabrics[loc.fabric], nodes)
    return net, [ports[n] for n in nodes]


def test_rail_aligned_ring_in_one_rail_leaf_is_full() -> None:
    net, ports = _job("roce-512")  # one SU: rail i of every node on rail leaf i
    assert len(ports) == 64 and all(len(p) == 8 for p in ports)
    figure = traffic(net, ports, "all-reduce", "ecmp", seeds=4)
    assert (figure.mean_pct, figure.p5_pct) == (100.0, 100.0)
    # negative: rail i to rail i+1 of the next node leaves the rail leaves through the spines and collides there
    crossed = [p[1:] + p[:1] if n % 2 else p for n, p in enumerate(ports)]
    assert traffic(net, crossed, "all-reduce", "ecmp", seeds=4).mean_pct < 100


def test_more_queue_pairs_raise_the_mean_on_the_lab() -> None:
    net, ports = _job("lab")  # 2 leaves, 2 spines: a shift across the leaves collides under ECMP
    means = [traffic(net, ports, "shift", "ecmp", qps=q, seeds=64, distance=4).mean_pct for q in (1, 2, 4, 8)]
    assert means == sorted(means)
    assert means[0] < means[-1] < 100
    assert traffic(net, ports, "shift", "adaptive", distance=4).mean_pct == 100


TRAFFIC_KEYS = ["pattern", "routing", "qps", "mean_pct", "p50_pct", "p5_pct"]  # the contract, spelled out


def test_summary_rows_carry_the_traffic_figures() -> None:
    import json

    from fabric.render import render_all

    data = json.loads(render_all(built("superpod-h100-4su"))["summary.json"])["job_bandwidth"]["jobs"]
    assert data[0]["nodes"] == 1 and data[0]["traffic"] == []  # one node: NVLink, no network
    for job in data[1:]:
        assert len(job["traffic"]) == 9  # 3 patterns × (ECMP 1 QP, ECMP 4 QPs, adaptive)
        for row in job["traffic"]:
            assert list(row)[:6] == TRAFFIC_KEYS
            assert 0 < row["p5_pct"] <= row["p50_pct"] <= 100 and 0 < row["mean_pct"] <= 100
    whole = {(r["pattern"], r["routing"], r["qps"]): r for r in data[-1]["traffic"]}
    # across the SUs the half-job shift collides on the spines under ECMP; four QPs recover part; spraying all
    one, four, ideal = (whole["shift", "ecmp", 1], whole["shift", "ecmp", 4], whole["shift", "adaptive", None])
    assert one["mean_pct"] < four["mean_pct"] < ideal["mean_pct"] == 100
    assert whole["all-reduce", "ecmp", 1]["mean_pct"] == 100  # rail-aligned ring: neighbours share a rail leaf


def _shortfalls(threshold: float) -> list[str]:
    from dataclasses import replace

    from fabric.analysis.traffic.advice import shortfalls

    build = built("lab")
    spec = build.design.spec.model_copy(
        update={"traffic": build.design.spec.traffic.model_copy(update={"ecmp_warning_pct": threshold})}
    )
    return [f.message for f in shortfalls(replace(build.design, spec=spec), build.topology)]


def test_ecmp_shortfall_follows_its_threshold() -> None:
    assert _shortfalls(80) == []  # the lab's all-to-all: 93 % of the ideal under ECMP
    (warned,) = _shortfalls(99)
    assert "all-to-all" in warned and "93.11%" in warned and "4 QPs per connection" in warned
    assert _shortfalls(0) == []


def test_fabric_traffic_json_carries_the_contract_keys() -> None:
    import json

    from typer.testing import CliRunner

    from fabric.cli import app
    from tests.conftest import REPO

    lab = str(REPO / "designs" / "lab.yaml")
    result = CliRunner().invoke(app, ["traffic", lab, "--pattern", "shift", "--seeds", "4", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["fabric"], data["nodes"]) == ("compute", 8)
    assert [(r["routing"], r["qps"]) for r in data["traffic"]] == [("ecmp", 1), ("adaptive", None)]
    assert all(list(r)[:6] == TRAFFIC_KEYS and r["distance"] == 4 for r in data["traffic"])
    assert data["traffic"][0]["mean_pct"] < data["traffic"][1]["mean_pct"] == 100
    assert CliRunner().invoke(app, ["traffic", lab, "--routing", "sm"]).exit_code == 2  # Ethernet: no SM
    assert CliRunner().invoke(app, ["traffic", lab, "--fabric", "nope"]).exit_code == 2


def test_fabric_traffic_leaves_out_an_all_to_all_beyond_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """An all-to-all above ALL_TO_ALL_PORTS NIC ports is left out with the --nodes that would fit (the model's memory
    grows with it); the other patterns still run, and asked alone it exits 2.
    The negative case: within the bound (the lab's 8 nodes, 8 ports, under the real bound) it runs."""
    import json

    from typer.testing import CliRunner

    import fabric.analysis.traffic.jobs as jobs
    from fabric.cli import app
    from tests.conftest import REPO

    lab = str(REPO / "designs" / "lab.yaml")
    args = ["traffic", lab, "--seeds", "2", "--routing", "ecmp", "--json"]
    within = CliRunner().invoke(app, args)
    assert within.exit_code == 0, within.output
    assert [r["pattern"] for r in json.loads(within.stdout)["traffic"]] == ["all-reduce", "all-to-all", "shift"]

    monkeypatch.setattr(jobs, "ALL_TO_ALL_PORTS", 5)
    beyond = CliRunner().invoke(app, args)
    assert beyond.exit_code == 0, beyond.output
    assert [r["pattern"] for r in json.loads(beyond.stdout)["traffic"]] == ["all-reduce", "shift"]
    assert "an all-to-all of 8 nodes (8 NIC ports)" in beyond.stderr and "--nodes 5 or fewer" in beyond.stderr
    alone = CliRunner().invoke(app, [*args, "--pattern", "all-to-all"])
    assert alone.exit_code == 2 and "left out" in alone.stderr
    fits = CliRunner().invoke(app, [*args, "--pattern", "all-to-all", "--nodes", "5"])
    assert fits.exit_code == 0 and json.loads(fits.stdout)["nodes"] == 5


def test_fabric_traffic_out_of_memory_is_a_message_not_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    """A MemoryError inside the model (the machine's limit, not fabric's bug) exits 2 with the job's size and what to
    ask instead, not the internal-error exit 3; the same command without it runs."""
    from typer.testing import CliRunner

    import fabric.analysis.traffic.jobs as jobs
    from fabric.cli import app
    from tests.conftest import REPO

    args = ["traffic", str(REPO / "designs" / "lab.yaml"), "--seeds", "2", "--pattern", "shift", "--json"]
    assert CliRunner().invoke(app, args).exit_code == 0

    def exhausted(*_: object, **__: object) -> None:
        raise MemoryError

    monkeypatch.setattr(jobs, "traffic", exhausted)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "ran out of memory for 8 nodes (8 NIC ports), shift under ecmp, adaptive with 2 seed(s)" in result.stderr
    assert "internal error" not in result.output
