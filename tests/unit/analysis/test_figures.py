"""fabric/figures.py through real builds: bisection, ECMP width, worst single failure and the findings they
feed, on the 1-SU SuperPOD, on small hand-written fabrics (intact and damaged) and on a 2-plane fabric."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Collection
from pathlib import Path

import pytest

from fabric import Build, Severity, build_fabric, load_spec_text
from fabric.analysis.figures import FabricFigures, fabric_figures
from tests.conftest import DESIGNS, built


def fig_of(b: Build) -> FabricFigures:
    return b.figures["compute"]


def codes(b: Build, severity: Severity) -> set[str]:
    return {f.code for f in b.findings if f.severity == severity}


# --------------------------------------------------------------------------------------------- SuperPOD 1 SU


def test_superpod_ecmp_width_is_all_32_uplinks() -> None:
    fig = fig_of(built("superpod-h100-1su"))
    # 8 leaves × 32 uplinks, 8 to each of 4 spines: every leaf reaches every other over all 32
    assert fig.min_ecmp_width == 32
    assert fig.ecmp_short == ()


def test_superpod_bisection_is_full() -> None:
    fig = fig_of(built("superpod-h100-1su"))
    # 248 GPU ports × 400G + 4 UFM ports × 200G = 100 Tb/s of endpoints
    assert fig.endpoint_gbps == 100_000
    assert fig.full_bisection_gbps == 50_000
    assert fig.bisection_gbps == pytest.approx(50_000)
    assert fig.bisection_pct == pytest.approx(100.0)
    assert fig.bisection_analytic_gbps == pytest.approx(50_000)


def test_superpod_worst_failure_is_a_spine() -> None:
    b = built("superpod-h100-1su")
    fig = fig_of(b)
    assert fig.worst_failure is not None
    assert fig.worst_failure.element.startswith("switch spine")
    # without one spine, the 4 leaves of one half keep 4 × 24 × 400G = 38.4 Tb/s of uplink
    assert fig.worst_failure.bisection_gbps == pytest.approx(38_400)
    assert fig.worst_failure_pct == pytest.approx(76.8, abs=0.05)
    assert "failure-impact" not in codes(b, Severity.WARNING)


# --------------------------------------------------------------------------------------------- explicit fabrics


def _explicit_spec(name: str, servers: int, switches: list[str], cables: list[str]) -> str:
    """A spec whose one Ethernet fabric is given by hand: `switches` and `cables` are YAML list items."""
    lines = "\n"
    return f"""
name: {name}
nodes:
  - {{group: srv, type: linux-server, count: {servers}, name: "srv{{index}}"}}
fabrics:
  compute:
    technology: ethernet
    topology:
      kind: explicit
      switches:
{lines.join(switches)}
      links:
{lines.join(cables)}
    switches: {{leaf: sn4600c}}
    attach:
      - {{group: srv, ports: data}}
"""


def explicit_spec(
    *,
    leaves: int = 4,
    spines: int = 2,
    links: int = 2,
    hosts: int = 4,
    drop: Collection[tuple[int, int, int]] = (),
    no_uplinks: Collection[int] = (),
) -> str:
    """Leaves with `hosts` 100G servers each and `links` 100G links to every spine (SN4600C, swp1..swp64).
    `drop`: (leaf, spine, t) links to leave out; `no_uplinks`: leaves with no spine links at all."""
    switches = [f"      - {{name: spine{s}, model: sn4600c, layer: spine}}" for s in range(1, spines + 1)]
    switches += [f"      - {{name: leaf{i}, model: sn4600c, layer: leaf}}" for i in range(1, leaves + 1)]
    cables = []
    for leaf in range(1, leaves + 1):
        for h in range(1, hosts + 1):
            cables.append(f"      - {{a: 'srv{(leaf - 1) * hosts + h}:eth1', b: 'leaf{leaf}:swp{h}'}}")
        if leaf in no_uplinks:
            continue
        port = hosts
        for s in range(1, spines + 1):
            for t in range(links):
                port += 1
                if (leaf, s, t) not in drop:
                    cables.append(
                        f"      - {{a: 'leaf{leaf}:swp{port}', b: 'spine{s}:swp{(leaf - 1) * links + t + 1}'}}"
                    )
    return _explicit_spec("explicit-test", leaves * hosts, switches, cables)


def build_explicit(
    *,
    leaves: int = 4,
    spines: int = 2,
    links: int = 2,
    hosts: int = 4,
    drop: Collection[tuple[int, int, int]] = (),
    no_uplinks: Collection[int] = (),
) -> Build:
    spec = explicit_spec(leaves=leaves, spines=spines, links=links, hosts=hosts, drop=drop, no_uplinks=no_uplinks)
    return build_fabric(load_spec_text(spec))


def test_explicit_intact_fabric() -> None:
    # 2 spines × 4 leaves, 2 × 100G per leaf-spine pair, 4 × 100G servers per leaf: non-blocking
    b = build_explicit()
    fig = fig_of(b)
    assert fig.switches == {"leaf": 4, "spine": 2, "core": 0}
    assert fig.links == {"node-leaf": 16, "leaf-spine": 16, "spine-core": 0}
    assert fig.full_bisection_gbps == 800
    assert fig.bisection_gbps == pytest.approx(800)
    assert fig.bisection_pct == pytest.approx(100.0)
    assert fig.min_ecmp_width == 2 * 2  # spines × links per pair
    assert fig.ecmp_short == ()
    assert fig.oversubscription == {"leaf": 1.0}
    assert fig.bisection_analytic_gbps is None  # not generated: no formula to compare with
    assert fig.components == 1
    assert not codes(b, Severity.ERROR)
    assert not codes(b, Severity.WARNING)


def test_explicit_intact_fabric_survives_a_spine_at_half() -> None:
    b = build_explicit()
    fig = fig_of(b)
    assert fig.worst_failure is not None
    assert fig.worst_failure.element.startswith("switch spine")
    # the sending half keeps 2 leaves × 2 links × 100G
    assert fig.worst_failure.bisection_gbps == pytest.approx(400)
    assert fig.worst_failure_pct == pytest.approx(50.0)
    assert "failure-impact" not in codes(b, Severity.WARNING)  # warned below 50%


def test_explicit_missing_link_lowers_ecmp_and_bisection() -> None:
    # leaf1 loses one of its two links to spine1: 3 uplinks (300G) under 4 servers (400G)
    b = build_explicit(drop={(1, 1, 0)})
    fig = fig_of(b)
    assert fig.links["leaf-spine"] == 15
    # leaf1 reaches any other leaf over 1 + 2 uplinks; the others still use 2 + 2
    assert fig.min_ecmp_width == 3
    assert fig.ecmp_worst_pair is not None and fig.ecmp_worst_pair[0] == "leaf1"
    # both splits put leaf1 with one intact leaf: 300G + 400G of uplinks leave that half
    assert fig.bisection_gbps == pytest.approx(700)
    assert fig.bisection_pct == pytest.approx(87.5)
    assert fig.oversubscription["leaf"] == pytest.approx(4 / 3)


def test_explicit_missing_link_findings() -> None:
    b = build_explicit(drop={(1, 1, 0)})
    assert "uneven-spread" in codes(b, Severity.WARNING)
    assert "bisection" in codes(b, Severity.ERROR)
    bisection = next(f for f in b.findings if f.code == "bisection")
    assert "700 Gb/s" in bisection.message and "87.5%" in bisection.message
    uneven = next(f for f in b.findings if f.code == "uneven-spread")
    assert "leaf1" in uneven.message


def test_explicit_missing_link_worst_failure() -> None:
    fig = fig_of(build_explicit(drop={(1, 1, 0)}))
    # losing spine2 leaves spine1 with leaf1 ×1, the others ×2: a half holding leaf1 sends 100G + 200G
    assert fig.worst_failure is not None
    assert fig.worst_failure.element == "switch spine2"
    assert fig.worst_failure.bisection_gbps == pytest.approx(300)
    assert fig.worst_failure_pct == pytest.approx(300 / 700 * 100)


def test_explicit_leaf_losing_a_spine_gets_an_ecmp_warning() -> None:
    # one link per pair; leaf1 has no link to spine1, so leaf2 reaches leaf1 over 1 of its 2 uplinks
    b = build_explicit(links=1, hosts=2, drop={(1, 1, 0)})
    fig = fig_of(b)
    assert fig.min_ecmp_width == 1
    assert any(width == 1 and uplinks == 2 for _, _, width, uplinks in fig.ecmp_short)
    assert "ecmp" in codes(b, Severity.WARNING)
    # a half with leaf1 sends 100G + 200G of the 400G it holds
    assert fig.bisection_gbps == pytest.approx(300)


def test_explicit_leaf_without_uplinks_is_disconnected() -> None:
    b = build_explicit(no_uplinks={4})
    fig = fig_of(b)
    assert fig.components == 2
    assert "disconnected" in codes(b, Severity.ERROR)
    assert fig.bisection_gbps == 0.0  # no flow is promised across islands
    assert fig.worst_failure is None


def test_explicit_leaf_without_uplinks_has_ecmp_width_zero() -> None:
    b = build_explicit(no_uplinks={4})
    fig = fig_of(b)
    # leaf4 is in the fabric's only plane but has no up-down path to any other leaf
    assert fig.min_ecmp_width == 0
    assert "ecmp" in codes(b, Severity.ERROR)


def test_single_spine_worst_failure_is_total() -> None:
    b = build_explicit(leaves=2, spines=1, links=2, hosts=2)
    fig = fig_of(b)
    assert fig.bisection_pct == pytest.approx(100.0)
    assert fig.min_ecmp_width == 2
    assert fig.worst_failure is not None
    assert fig.worst_failure.element == "switch spine1"
    assert fig.worst_failure.bisection_gbps == 0.0
    assert fig.worst_failure_pct == 0.0
    assert "failure-impact" in codes(b, Severity.WARNING)
    assert not codes(b, Severity.ERROR)


def three_tier_spec(*, drop_core_link: bool = False, no_core: bool = False) -> str:
    """2 pods of 2 leaves (2 × 100G servers each) and 2 spines; spine j of each pod has 2 links to core j.
    Every switch is 1:1. `drop_core_link`: pod 1's spine 1 keeps one link to core 1; `no_core`: none."""
    switches = [
        "      - {name: core1, model: sn4600c, layer: core}",
        "      - {name: core2, model: sn4600c, layer: core}",
    ]
    cables = []
    core_port = {1: 0, 2: 0}
    for pod in (1, 2):
        for j in (1, 2):
            switches.append(f"      - {{name: p{pod}-spine{j}, model: sn4600c, layer: spine}}")
            for t in (1, 2):
                core_port[j] += 1
                if not (drop_core_link and (pod, j, t) == (1, 1, 1)) and not (no_core and (pod, j) == (1, 1)):
                    cables.append(f"      - {{a: 'p{pod}-spine{j}:swp{2 + t}', b: 'core{j}:swp{core_port[j]}'}}")
        for i in (1, 2):
            leaf = f"p{pod}-leaf{i}"
            switches.append(f"      - {{name: {leaf}, model: sn4600c, layer: leaf}}")
            for h in (1, 2):
                cables.append(f"      - {{a: 'srv{(pod - 1) * 4 + (i - 1) * 2 + h}:eth1', b: '{leaf}:swp{h}'}}")
            for j in (1, 2):
                cables.append(f"      - {{a: '{leaf}:swp{2 + j}', b: 'p{pod}-spine{j}:swp{i}'}}")
    return _explicit_spec("three-tier-test", 8, switches, cables)


def test_explicit_three_tier_intact() -> None:
    b = build_fabric(load_spec_text(three_tier_spec()))
    fig = fig_of(b)
    assert fig.tiers == 3
    assert fig.links == {"node-leaf": 8, "leaf-spine": 8, "spine-core": 8}
    # the halves are the two pods: 2 spines × 2 × 100G leave each
    assert fig.bisection_gbps == pytest.approx(400)
    assert fig.bisection_pct == pytest.approx(100.0)
    # within a pod over both spines; across pods over both spines and their cores
    assert fig.min_ecmp_width == 2
    assert fig.ecmp_short == ()
    assert fig.worst_failure is not None
    assert fig.worst_failure.element.startswith("switch core")
    assert fig.worst_failure.bisection_gbps == pytest.approx(200)
    assert not codes(b, Severity.ERROR)


def test_explicit_three_tier_lost_core_link() -> None:
    b = build_fabric(load_spec_text(three_tier_spec(drop_core_link=True)))
    fig = fig_of(b)
    # pod 1 leaves over 1 + 2 core links
    assert fig.bisection_gbps == pytest.approx(300)
    assert fig.bisection_pct == pytest.approx(75.0)
    assert fig.oversubscription["spine"] == pytest.approx(2.0)
    assert fig.min_ecmp_width == 2  # every leaf still reaches every other over both its uplinks
    # then losing core2 leaves core1 with 1 link from pod 1
    assert fig.worst_failure is not None
    assert fig.worst_failure.element == "switch core2"
    assert fig.worst_failure.bisection_gbps == pytest.approx(100)
    assert {"bisection", "oversubscription"} <= codes(b, Severity.ERROR)
    assert "failure-impact" in codes(b, Severity.WARNING)


# --------------------------------------------------------------------------------------------- planes

PARTS = """
nodes:
  dual400:
    description: test node with two 400G ports
    u: 1
    power_w: 500
    ports:
      data: {speed_gbps: 400, connector: osfp, ports: [{name: p1}, {name: p2}]}
  single400:
    description: test node with one 400G port
    u: 1
    power_w: 500
    ports:
      data: {speed_gbps: 400, connector: osfp, ports: [{name: p1}]}
"""


def plane_spec(node_type: str, count: int, planes: int) -> str:
    # QM9700 at 2:1: 22 uplinks and 42 downlinks per leaf (42:22 ≈ 1.91)
    return f"""
name: planes-test
catalog: [parts.yaml]
nodes:
  - {{group: n, type: {node_type}, count: {count}}}
fabrics:
  compute:
    technology: infiniband
    topology: {{kind: fat-tree, planes: {planes}}}
    switches: {{leaf: qm9700}}
    oversubscription: "2:1"
    attach:
      - {{group: n, ports: data}}
"""


def build_planes(tmp: Path, node_type: str, count: int, planes: int) -> Build:
    (tmp / "parts.yaml").write_text(PARTS, encoding="utf-8")
    return build_fabric(load_spec_text(plane_spec(node_type, count, planes), base_dir=tmp))


def test_two_planes_sum_their_bisections(tmp_path: Path) -> None:
    # 168 nodes × 2 ports: per plane 168 endpoints on 4 full leaves (42 down, 22 up) and 2 spines
    two = build_planes(tmp_path, "dual400", 168, planes=2)
    one = build_planes(tmp_path, "single400", 168, planes=1)
    fig2, fig1 = fig_of(two), fig_of(one)
    assert fig2.planes == 2
    assert fig2.switches == {"leaf": 8, "spine": 4, "core": 0}
    assert fig1.switches == {"leaf": 4, "spine": 2, "core": 0}
    # one plane: the 2 leaves of a half send over 2 × 22 × 400G
    assert fig1.bisection_gbps == pytest.approx(17_600)
    assert fig2.full_bisection_gbps == 2 * fig1.full_bisection_gbps == 67_200
    assert fig2.bisection_gbps == pytest.approx(2 * fig1.bisection_gbps)
    assert fig2.bisection_pct == pytest.approx(fig1.bisection_pct) == pytest.approx(100 * 22 / 42)
    assert fig2.bisection_analytic_gbps == pytest.approx(35_200)
    assert "bisection-mismatch" not in codes(two, Severity.WARNING)


def test_two_planes_one_failure_hits_one_plane(tmp_path: Path) -> None:
    fig = fig_of(build_planes(tmp_path, "dual400", 168, planes=2))
    assert fig.worst_failure is not None
    assert fig.worst_failure.element.startswith("switch p")
    # a spine of one plane halves that plane (17.6 → 8.8 Tb/s); the other plane keeps 17.6
    assert fig.worst_failure.bisection_gbps == pytest.approx(17_600 + 8_800)
    assert fig.worst_failure_pct == pytest.approx(75.0)


def test_two_planes_ecmp_stays_within_a_plane(tmp_path: Path) -> None:
    fig = fig_of(build_planes(tmp_path, "dual400", 168, planes=2))
    # leaves of different planes share no spine; within a plane every leaf uses its 22 uplinks
    assert fig.components == 2
    assert fig.min_ecmp_width == 22
    assert fig.ecmp_short == ()


# --------------------------------------------------------------------------------------------- edge cases


def test_single_endpoint_fabric_has_no_bisection_error(tmp_path: Path) -> None:
    # one endpoint has nothing to bisect: it is not a 0% bisection
    b = build_planes(tmp_path, "single400", 1, planes=1)
    fig = fig_of(b)
    assert fig.switches == {"leaf": 1, "spine": 1, "core": 0}
    assert fig.bisection_gbps == fig.full_bisection_gbps == 200
    assert "bisection" not in codes(b, Severity.ERROR)
    assert "bisection-mismatch" not in codes(b, Severity.WARNING)


# --------------------------------------------------------------------------------------------- engines


def _engine_cases(tmp: Path) -> list[tuple[str, Build]]:
    cases = [(d.stem, built(d.stem)) for d in sorted((DESIGNS).glob("*.yaml"))]
    cases += [
        ("missing link", build_explicit(drop={(1, 1, 0)})),
        ("no uplinks", build_explicit(no_uplinks={2})),
        ("ecmp short", build_explicit(links=1, hosts=2, drop={(1, 1, 0)})),
        ("single spine", build_explicit(leaves=2, spines=1, links=2, hosts=2)),
        ("three tier, lost core link", build_fabric(load_spec_text(three_tier_spec(drop_core_link=True)))),
        ("three tier, a spine without cores", build_fabric(load_spec_text(three_tier_spec(no_core=True)))),
        ("two planes", build_planes(tmp, "dual400", 168, planes=2)),
    ]
    return cases


def test_python_and_numpy_engines_give_the_same_figures(tmp_path: Path) -> None:
    # small fabrics take the pure-Python path (no numpy/scipy import); both must give every figure alike
    compared = 0
    for name, b in _engine_cases(tmp_path):
        for key, ft in b.topology.fabrics.items():
            python = fabric_figures(ft, engine="python")
            numpy = fabric_figures(ft, engine="numpy")
            assert python == numpy, (name, key)
            compared += 1
    assert compared >= 19
    damaged = fabric_figures(build_explicit(links=1, hosts=2, drop={(1, 1, 0)}).topology.fabrics["compute"])
    assert damaged.ecmp_short and damaged.worst_failure is not None  # the comparison covered damage too


def test_small_validate_loads_no_numpy_scipy_or_renderers() -> None:
    # `fabric validate` of a small design answers without numpy, scipy, networkx or the templates (not timed)
    code = (
        "import sys\n"
        "from fabric.cli import app\n"  # (not main: `fabric validate` ends the process at once there)
        "sys.argv = ['fabric', 'validate', sys.argv[1]]\n"
        "try:\n"
        "    app()\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy', 'jinja2', 'networkx')"
        " or m.startswith('fabric.render'))\n"
        "print('HEAVY', heavy)\n"
    )
    design = DESIGNS / "lab.yaml"
    out = subprocess.run([sys.executable, "-c", code, str(design)], capture_output=True, text=True, timeout=120)
    assert "lab:" in out.stdout, out.stdout + out.stderr  # it validated
    assert "HEAVY []" in out.stdout, out.stdout


def test_failures_skipped_by_their_bound_change_no_figure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a failure whose lower bound is no lower than the worst so far is not computed: the same worst failure as
    # computing every one (the bounds made useless)
    # (both engines: arrays, and lists in flow/lists.py)
    import fabric.analysis.flow.arrays as arrays_module
    import fabric.analysis.flow.lists as lists_module

    cases = _engine_cases(tmp_path)
    fabrics = [ft for _, b in cases for ft in b.topology.fabrics.values()]
    pruned = [fabric_figures(ft, engine=e) for e in ("numpy", "python") for ft in fabrics]
    monkeypatch.setattr(arrays_module, "_without_switch", lambda switch, intact: float("-inf"))
    monkeypatch.setattr(arrays_module, "_without_capacity", lambda a, b, cap, lost, intact: float("-inf"))
    monkeypatch.setattr(lists_module, "lower_bound", lambda value, lost: float("-inf"))
    every = [fabric_figures(ft, engine=e) for e in ("numpy", "python") for ft in fabrics]
    assert pruned == every
    assert sum(1 for f in every if f.worst_failure is not None) >= 10
