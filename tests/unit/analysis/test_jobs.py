"""Job bandwidth (fabric/analysis/jobs.py) against closed forms on regular Clos fabrics: at 1:1 every job gets its
full NIC rate; at 2:1 on the leaves a job that stays under one leaf (one SU when rail-optimized) keeps the full
rate and a job of whole leaves (SUs) that crosses them gets half."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import build_fabric, load_spec_text
from fabric.analysis.jobs import JobTable, job_bandwidth, job_sizes
from fabric.render import render_all
from tests.conftest import DESIGNS, built, examples

PROPERTY = settings(max_examples=examples(12), deadline=None)


def _table(text: str, sizes: list[int]) -> JobTable:
    build = build_fabric(load_spec_text(text))
    assert not build.errors, [f.message for f in build.errors]
    table = job_bandwidth(build.design, build.topology, sizes=sizes)
    assert table is not None
    return table


def _plain(leaves: int, down: int, ratio: int, spines: int = 0) -> str:
    """`leaves` leaves of `down` one-port 100G servers each, `down / ratio` uplinks per leaf."""
    fixed = f", spines: {spines}" if spines else ""
    return f"""
name: jobs-plain
nodes: [{{group: srv, type: linux-server, count: {leaves * down}}}]
fabrics:
  compute:
    technology: ethernet
    topology: {{kind: spine-leaf, tiers: 2, downlinks: {down}, uplinks: {down // ratio}{fixed}}}
    switches: {{leaf: sn4600c}}
    oversubscription: "{ratio}:1"
    attach: [{{group: srv, ports: data}}]
"""


def _rail(sus: int, su: int, ratio: int) -> str:
    """`sus` rail-optimized SUs of `su` 8-GPU servers (8 x 400G), `su / ratio` uplinks per rail leaf."""
    return f"""
name: jobs-rail
nodes: [{{group: gpu, type: hgx-8gpu, count: {sus * su}}}]
fabrics:
  compute:
    technology: ethernet
    topology: {{kind: spine-leaf, tiers: 2, rail_optimized: true, scalable_unit: {su}, downlinks: {su},
                uplinks: {su // ratio}}}
    switches: {{leaf: sn5600}}
    speed_gbps: 400
    oversubscription: "{ratio}:1"
    attach: [{{group: gpu, ports: compute}}]
"""


@PROPERTY
@given(leaves=st.sampled_from([2, 4, 6]), down=st.sampled_from([4, 8]), ratio=st.sampled_from([1, 2]))
def test_plain_clos_jobs_get_the_closed_form(leaves: int, down: int, ratio: int) -> None:
    inside = [1, down // 2, down]  # jobs under one leaf
    crossing = [2 * down * k for k in range(1, leaves // 2 + 1)]  # whole leaves, half on each side of the cut
    table = _table(_plain(leaves, down, ratio), inside + crossing)
    assert len(table.rows) == len(inside) + len(crossing)
    for row in table.rows:
        assert row.nic_gbps_per_gpu == 100.0
        crosses = row.nodes > down
        assert row.intact_gbps_per_gpu == (100.0 / ratio if crosses else 100.0), row
        assert row.failure_gbps_per_gpu <= row.intact_gbps_per_gpu
        assert row.span.startswith("leaf") != crosses, row  # a leaf, or the spine layer above them


@PROPERTY
@given(sus=st.sampled_from([2, 4]), su=st.sampled_from([2, 4]), ratio=st.sampled_from([1, 2]))
def test_rail_optimized_jobs_get_the_closed_form(sus: int, su: int, ratio: int) -> None:
    inside = [1, su]  # one SU: rail-matched traffic turns on the rail leaf
    crossing = [2 * su * k for k in range(1, sus // 2 + 1)]
    table = _table(_rail(sus, su, ratio), inside + crossing)
    for row in table.rows:
        assert row.gpus == 8 * row.nodes
        assert row.nic_gbps_per_gpu == 400.0
        expected = 400.0 / ratio if row.nodes > su else 400.0
        assert row.intact_gbps_per_gpu == expected, row
        assert row.failure_gbps_per_gpu <= expected


def test_a_spine_failure_costs_crossing_jobs_their_share() -> None:
    """2 leaves x 8 servers, 8 uplinks per leaf over 4 spines at 1:1: losing a spine leaves 6/8 of the uplinks."""
    table = _table(_plain(2, 8, 1, spines=4), [8, 16])
    under_one_leaf, crossing = table.rows
    assert (under_one_leaf.failure_gbps_per_gpu, under_one_leaf.failure) == (100.0, None)
    assert crossing.intact_gbps_per_gpu == 100.0
    assert crossing.failure_gbps_per_gpu == 75.0
    assert crossing.failure is not None and crossing.failure.startswith("switch spine")


def test_job_sizes_run_from_one_node_to_the_cluster() -> None:
    assert job_sizes(1) == [1]
    assert job_sizes(127) == [1, 2, 4, 8, 16, 32, 64, 127]
    assert job_sizes(128) == [1, 2, 4, 8, 16, 32, 64, 128]


def test_summary_json_holds_the_job_table() -> None:
    data = json.loads(render_all(built("superpod-h100-4su"))["summary.json"])["job_bandwidth"]
    assert data["fabric"] == "compute"
    jobs = data["jobs"]
    assert [j["nodes"] for j in jobs] == [1, 2, 4, 8, 16, 32, 64, 127]
    assert all(j["intact_gbps_per_gpu"] == 400 and j["intact_pct"] == 100.0 for j in jobs)
    # SU 1 holds 31 DGX (its 32nd slot is the UFM appliances', `reserved_slots: 1`): the first 32 nodes cross SUs
    assert [j["span"] for j in jobs][-3:] == ["spines"] * 3 and jobs[4]["span"] == "su1"
    # one SU turns on its rail leaves; across SUs, one of 16 spines lost is a sixteenth of the uplinks a leaf
    # carries the job's traffic on (64 nodes: 31 + 32 + 1 over three SUs' leaves)
    assert jobs[4]["worst_single_failure"] is None and jobs[5]["worst_single_failure"] is None
    assert jobs[6]["worst_single_failure_gbps_per_gpu"] == 387.5


def test_failures_skipped_by_their_bound_change_no_job_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    # a job's failures whose lower bound is no lower than its worst so far are not computed: the same table as
    # computing every one (the bounds made useless), on fabrics where failures cost something and where not
    # (both engines: arrays, and lists in flow/lists.py)
    import fabric.analysis.flow.arrays as arrays_module
    import fabric.analysis.flow.lists as lists_module

    builds = [built(name) for name in ("superpod-h100-2su", "lab-ib-3tier", "roce-512", "lab")]
    pruned = [job_bandwidth(b.design, b.topology, engine=e) for e in ("numpy", "python") for b in builds]
    monkeypatch.setattr(arrays_module, "_without_switch", lambda switch, intact: float("-inf"))
    monkeypatch.setattr(arrays_module, "_without_capacity", lambda a, b, cap, lost, intact: float("-inf"))
    monkeypatch.setattr(lists_module, "lower_bound", lambda value, lost: float("-inf"))
    every = [job_bandwidth(b.design, b.topology, engine=e) for e in ("numpy", "python") for b in builds]
    assert pruned == every
    rows = [row for table in every if table is not None for row in table.rows]
    assert len(rows) >= 20
    assert sum(1 for row in rows if row.failure is not None) >= 3


def test_python_and_numpy_engines_give_the_same_job_table() -> None:
    # small fabrics take the pure-Python path (no numpy/scipy import), as their figures do: same table
    compared = failed = 0
    for design in ("lab", "lab-ib", "superpod-h100-4su", "roce-512"):
        b = built(design)
        python = job_bandwidth(b.design, b.topology, engine="python")
        numpy = job_bandwidth(b.design, b.topology, engine="numpy")
        assert python == numpy, design
        compared += python is not None and len(python.rows) > 2
        failed += python is not None and any(r.failure for r in python.rows)
    assert compared >= 3 and failed >= 3  # the comparison covered the worst single loss too


def test_a_small_job_table_loads_no_numpy_or_scipy() -> None:
    # the design report of a small fabric computes its job table without importing them (not timed)
    code = (
        "import sys\n"
        "from fabric import build_fabric\n"
        "from fabric.analysis.jobs import job_bandwidth\n"
        "b = build_fabric(sys.argv[1])\n"
        "table = job_bandwidth(b.design, b.topology)\n"
        "print('ROWS', len(table.rows), sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'scipy'}))\n"
    )
    design = DESIGNS / "lab.yaml"
    out = subprocess.run([sys.executable, "-c", code, str(design)], capture_output=True, text=True, timeout=120)
    assert "ROWS 4 []" in out.stdout, out.stdout + out.stderr
