"""Property tests: for random valid Clos parameters, the generator's switch and link counts, oversubscription
and bisection agree with the closed-form Clos formulas (shared/reference/gpu-fabrics.md §3).

Every fabric here is a plain (not rail-optimized) spine-leaf of one switch model of radix k at 400G, with
single-port 400G hosts, so one host port = one leaf down port and N hosts = N endpoints.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import Build, Severity, build_fabric, load_spec_text
from fabric.analysis.figures import FabricFigures
from tests.conftest import examples

RATE = 400  # Gb/s of every port

PROPERTY = settings(max_examples=examples(30), deadline=None)


def _parts(k: int, twin: bool) -> str:
    """A switch of radix k at 400G (k/2 twin-port cages, or k single-port cages) and a one-port host. Every port
    runs 4 lanes of 100G-PAM4, as the hosts' single-port OSFP cages do (a single-port cage of 8 lanes would run
    50G lanes, which no module links to the hosts' 100G: `optics-signalling`)."""
    if twin:
        assert k % 2 == 0
        cages, lanes, mode = k // 2, 8, '{ports: 2, speed_gbps: 400, name: "p{cage}s{sub}"}'
    else:
        cages, lanes, mode = k, 4, '{ports: 1, speed_gbps: 400, name: "p{cage}"}'
    return f"""
switches:
  radix-sw:
    description: test switch of radix {k} at 400G
    technology: ethernet
    u: 1
    power_w: 100
    platform: sonic
    ports:
      - group: main
        cages: {cages}
        connector: osfp
        lanes: {lanes}
        modes:
          - {mode}
nodes:
  host:
    description: test host with one 400G port
    u: 1
    power_w: 100
    ports:
      data: {{speed_gbps: 400, connector: osfp, count: 1, name: "eth{{n}}"}}
  host2:
    description: test host with two 400G ports
    u: 1
    power_w: 100
    ports:
      data: {{speed_gbps: 400, connector: osfp, count: 2, name: "eth{{n}}"}}
  host4:
    description: test host with four 400G ports
    u: 1
    power_w: 100
    ports:
      data: {{speed_gbps: 400, connector: osfp, count: 4, name: "eth{{n}}"}}
"""


def _spec(n: int, tiers: str | int, oversubscription: str, planes: int) -> str:
    host = {1: "host", 2: "host2", 4: "host4"}[planes]
    return f"""
name: prop
catalog: [parts.yaml]
nodes:
  - {{group: h, type: {host}, count: {n}}}
fabrics:
  compute:
    technology: ethernet
    topology: {{kind: spine-leaf, tiers: {tiers}, planes: {planes}}}
    switches: {{leaf: radix-sw}}
    oversubscription: "{oversubscription}"
    attach:
      - {{group: h, ports: data}}
addressing: {{loopback: 10.0.0.0/14, p2p: 10.16.0.0/12, servers: 10.128.0.0/9, mgmt: 172.16.0.0/12}}
asn: {{leaf_start: 4200000000}}   # thousands of leaves need the 4-byte private range
"""


def build(
    k: int, n: int, *, tiers: str | int = "auto", oversubscription: str = "1:1", twin: bool = True, planes: int = 1
) -> Build:
    """N hosts on a fabric of radix-k switches; with p planes, hosts have p ports (one per plane)."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "parts.yaml").write_text(_parts(k, twin), encoding="utf-8")
        return build_fabric(load_spec_text(_spec(n, tiers, oversubscription, planes), base_dir=tmp))


def figures(b: Build) -> FabricFigures:
    return b.figures["compute"]


def error_codes(b: Build) -> set[str]:
    return {f.code for f in b.findings if f.severity == Severity.ERROR}


def smallest_divisor_at_least(n: int, low: int) -> int:
    return min(m for m in range(1, n + 1) if n % m == 0 and m >= low)


def leaf_uplinks(b: Build) -> list[int]:
    return [ld.up_links for ld in figures(b).loads if ld.layer == "leaf"]


# radix (even) and whether the switch is built of twin-port cages
radixes = st.sampled_from([4, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64])
twins = st.booleans()


@st.composite
def two_tier(draw: st.DrawFn) -> tuple[int, int, bool]:
    """(k, N, twin) with 1 ≤ N ≤ k²/2: a fabric that fits in 2 tiers at 1:1."""
    k = draw(radixes)
    n = draw(st.integers(min_value=1, max_value=k * k // 2))
    return k, n, draw(twins)


@st.composite
def three_tier(draw: st.DrawFn) -> tuple[int, int]:
    """(k, N) with k²/2 < N ≤ k³/4: a fabric that needs 3 tiers at 1:1."""
    k = draw(st.sampled_from([4, 6, 8, 10, 12]))
    n = draw(st.integers(min_value=k * k // 2 + 1, max_value=k**3 // 4))
    return k, n


# --------------------------------------------------------------------------------------------- 2 tiers


@PROPERTY
@given(two_tier())
def test_two_tier_switch_counts(case: tuple[int, int, bool]) -> None:
    k, n, twin = case
    b = build(k, n, twin=twin)
    fig = figures(b)
    half = k // 2
    leaves = math.ceil(n / half)
    spines = smallest_divisor_at_least(half, math.ceil(leaves * half / k))
    assert not error_codes(b)
    assert fig.tiers == 2
    assert fig.switches == {"leaf": leaves, "spine": spines, "core": 0}
    # full leaves, and ⌈N/k⌉ divides the k/2 uplinks of a leaf: the textbook ⌈N/k⌉ spines
    if n % half == 0 and half % math.ceil(n / k) == 0:
        assert fig.switches["spine"] == math.ceil(n / k)


@PROPERTY
@given(two_tier())
def test_two_tier_links_and_uplinks(case: tuple[int, int, bool]) -> None:
    k, n, twin = case
    b = build(k, n, twin=twin)
    fig = figures(b)
    leaves = math.ceil(n / (k // 2))
    assert fig.links == {"node-leaf": n, "leaf-spine": leaves * k // 2, "spine-core": 0}
    assert leaf_uplinks(b) == [k // 2] * leaves
    assert fig.endpoints == n
    # every leaf has the same number of links to every spine
    ft = b.topology.fabrics["compute"]
    per_pair: dict[tuple[str, str], int] = {}
    for link in ft.links:
        if link.tier == "leaf-spine":
            per_pair[(link.a, link.b)] = per_pair.get((link.a, link.b), 0) + 1
    assert len(per_pair) == leaves * fig.switches["spine"]
    assert set(per_pair.values()) == {(k // 2) // fig.switches["spine"]}


@PROPERTY
@given(two_tier())
def test_two_tier_full_bisection(case: tuple[int, int, bool]) -> None:
    k, n, twin = case
    fig = figures(build(k, n, twin=twin))
    assert fig.full_bisection_gbps == n / 2 * RATE
    assert fig.bisection_gbps == pytest.approx(n / 2 * RATE)
    assert fig.bisection_pct == pytest.approx(100.0)
    assert fig.oversubscription["leaf"] <= 1.0
    # ECMP: a leaf reaches every other leaf over all its k/2 uplinks
    if fig.switches["leaf"] > 1:
        assert fig.min_ecmp_width == k // 2


@PROPERTY
@given(radixes, twins)
def test_largest_two_tier_fabric_is_k_squared_over_2(k: int, twin: bool) -> None:
    n = k * k // 2
    b = build(k, n, twin=twin)
    fig = figures(b)
    assert not error_codes(b)
    assert fig.tiers == 2
    assert fig.switches == {"leaf": k, "spine": k // 2, "core": 0}
    assert fig.bisection_pct == pytest.approx(100.0)


@settings(max_examples=examples(10), deadline=None)
@given(st.sampled_from([4, 6, 8, 10, 12, 16]))
def test_one_more_endpoint_needs_three_tiers(k: int) -> None:
    n = k * k // 2 + 1
    auto = build(k, n)
    assert not error_codes(auto)
    assert figures(auto).tiers == 3
    assert figures(auto).switches["core"] > 0
    forced = build(k, n, tiers=2)
    assert "radix" in error_codes(forced)
    assert figures(forced).switches == {"leaf": 0, "spine": 0, "core": 0}


# --------------------------------------------------------------------------------------------- 3 tiers


@pytest.mark.parametrize("k", [4, 6, 8])
def test_full_three_tier_fabric_is_k_cubed_over_4(k: int) -> None:
    n = k**3 // 4
    b = build(k, n)
    fig = figures(b)
    assert not error_codes(b)
    assert fig.tiers == 3
    # = Al-Fares' k-ary fat tree: k pods of k/2 leaves and k/2 spines, (k/2)² cores
    assert fig.switches == {"leaf": n // (k // 2), "spine": n // (k // 2), "core": n // k}
    params = b.topology.fabrics["compute"].params
    assert params is not None and params.pods == k
    assert fig.links == {"node-leaf": n, "leaf-spine": n, "spine-core": n}
    assert fig.bisection_gbps == pytest.approx(n / 2 * RATE)


@pytest.mark.parametrize("tiers", ["auto", 3])
@pytest.mark.parametrize("k", [4, 6, 8])
def test_one_more_than_k_cubed_over_4_is_a_radix_error(k: int, tiers: str | int) -> None:
    b = build(k, k**3 // 4 + 1, tiers=tiers)
    assert "radix" in error_codes(b)
    assert figures(b).switches == {"leaf": 0, "spine": 0, "core": 0}


@settings(max_examples=examples(25), deadline=None)
@given(three_tier())
def test_three_tier_switch_counts(case: tuple[int, int]) -> None:
    k, n = case
    b = build(k, n)
    fig = figures(b)
    half = k // 2
    leaves = math.ceil(n / half)
    pods = math.ceil(leaves / half)  # k/2 leaves per pod, one link from each to each of the k/2 pod spines
    per_group = smallest_divisor_at_least(half, math.ceil(pods * half / k))
    assert not error_codes(b)
    assert fig.tiers == 3
    assert fig.switches == {"leaf": leaves, "spine": pods * half, "core": half * per_group}
    assert fig.links == {"node-leaf": n, "leaf-spine": leaves * half, "spine-core": pods * half * half}
    assert leaf_uplinks(b) == [half] * leaves


@settings(max_examples=examples(25), deadline=None)
@given(three_tier())
def test_three_tier_full_bisection(case: tuple[int, int]) -> None:
    k, n = case
    fig = figures(build(k, n))
    assert fig.bisection_gbps == pytest.approx(n / 2 * RATE)
    assert fig.bisection_pct == pytest.approx(100.0)
    assert fig.oversubscription["leaf"] <= 1.0
    assert fig.oversubscription["spine"] <= 1.0
    assert fig.min_ecmp_width == k // 2


# --------------------------------------------------------------------------------------------- oversubscription


@st.composite
def oversubscribed(draw: st.DrawFn) -> tuple[int, int, str, int, int]:
    """(k, N, ratio, up, down): a 2-tier fabric of full leaves at a target ratio r:1."""
    k = draw(st.sampled_from([8, 10, 12, 16, 20, 24, 32]))
    down_up = draw(st.sampled_from([(2, 1), (3, 1), (4, 1), (3, 2), (4, 3), (5, 1)]))
    r = down_up[0] / down_up[1]
    up = math.ceil(k / (1 + r))
    down = k - up
    leaves = draw(st.integers(min_value=1, max_value=k))  # 2 tiers join at most k leaves
    return k, leaves * down, f"{down_up[0]}:{down_up[1]}", up, down


@PROPERTY
@given(oversubscribed())
def test_oversubscribed_leaf_ratio_meets_target(case: tuple[int, int, str, int, int]) -> None:
    k, n, ratio, up, down = case
    b = build(k, n, oversubscription=ratio)
    fig = figures(b)
    num, den = (int(x) for x in ratio.split(":"))
    assert not error_codes(b)
    assert fig.tiers == 2
    assert fig.oversubscription["leaf"] == pytest.approx(down / up)
    assert fig.oversubscription["leaf"] <= num / den + 1e-9
    assert leaf_uplinks(b) == [up] * (n // down)
    assert fig.switches["spine"] == smallest_divisor_at_least(up, math.ceil((n // down) * up / k))


@PROPERTY
@given(oversubscribed())
def test_oversubscribed_bisection_matches_formula(case: tuple[int, int, str, int, int]) -> None:
    k, n, ratio, up, down = case
    fig = figures(build(k, n, oversubscription=ratio))
    leaves = n // down
    expected = n / 2 * RATE * min(1.0, up / down)
    assert fig.bisection_analytic_gbps == pytest.approx(expected)
    if leaves % 2 == 0:  # half the leaves on each side: the uplinks of one half carry everything
        assert fig.bisection_gbps == pytest.approx(fig.bisection_analytic_gbps, rel=0.005)
        assert fig.bisection_pct == pytest.approx(100.0 * min(1.0, up / down))
    else:  # a leaf split across the halves switches its share locally: the formula is a lower bound
        assert fig.bisection_gbps >= expected - 1e-6
        assert fig.bisection_pct <= 100.0 + 1e-9


@st.composite
def oversubscribed_pods(draw: st.DrawFn) -> tuple[int, int, str, int, int, int]:
    """(k, N, ratio, up, down, pods): a 3-tier fabric of an even number of full pods at r:1 on leaves and spines.

    Leaf and spine are the same model at the same ratio: u = ⌈k/(1+r)⌉ up and d = k − u down ports on both, so
    a pod is u spines over d leaves of d hosts, and leaves the pod over u × u spine uplinks."""
    k = draw(st.sampled_from([6, 8, 10, 12]))
    num, den = draw(st.sampled_from([(2, 1), (3, 1), (3, 2), (5, 3)]))
    up = math.ceil(k / (1 + num / den))
    down = k - up
    pods = draw(st.sampled_from([2, 4]))
    return k, pods * down * down, f"{num}:{den}", up, down, pods


@settings(max_examples=examples(20), deadline=None)
@given(oversubscribed_pods())
def test_three_tier_oversubscription_compounds(case: tuple[int, int, str, int, int, int]) -> None:
    k, n, ratio, up, down, pods = case
    b = build(k, n, tiers=3, oversubscription=ratio)
    fig = figures(b)
    params = b.topology.fabrics["compute"].params
    assert params is not None
    assert (params.pods, params.leaves_per_pod, params.spines_per_pod, params.spine_uplinks) == (pods, down, up, up)
    assert fig.oversubscription["leaf"] == pytest.approx(down / up)
    assert fig.oversubscription["spine"] == pytest.approx(down / up)
    # halves of whole pods: what leaves a pod is (u/d) of its leaves' uplinks, which are (u/d) of its hosts
    assert fig.bisection_gbps == pytest.approx(n / 2 * RATE * (up / down) ** 2)


@settings(max_examples=examples(10), deadline=None)
@given(oversubscribed_pods())
def test_three_tier_oversubscribed_fabric_meets_its_own_check(case: tuple[int, int, str, int, int, int]) -> None:
    k, n, ratio, up, down, _ = case
    b = build(k, n, tiers=3, oversubscription=ratio)
    fig = figures(b)
    assert fig.bisection_analytic_gbps == pytest.approx(n / 2 * RATE * (up / down) ** 2)
    assert "bisection" not in error_codes(b)
    assert "bisection-mismatch" not in {f.code for f in b.findings}


# --------------------------------------------------------------------------------------------- planes


@settings(max_examples=examples(20), deadline=None)
@given(st.sampled_from([2, 4]), st.sampled_from([4, 6, 8, 12, 16]), st.data())
def test_planes_are_identical_copies(planes: int, k: int, data: st.DataObject) -> None:
    # N hosts with p ports on p planes: p copies of the one-plane fabric of N one-port hosts
    n = data.draw(st.integers(min_value=2, max_value=k**3 // 4), label="n")
    single = figures(build(k, n))
    b = build(k, n, planes=planes)
    multi = figures(b)
    assert not error_codes(b)
    assert multi.planes == planes
    assert multi.tiers == single.tiers
    assert multi.switches == {layer: planes * count for layer, count in single.switches.items()}
    assert multi.links == {tier: planes * count for tier, count in single.links.items()}
    assert multi.components == planes
    assert multi.full_bisection_gbps == planes * single.full_bisection_gbps
    assert multi.bisection_gbps == pytest.approx(planes * single.bisection_gbps)
    assert multi.min_ecmp_width == single.min_ecmp_width
