"""`fabric plan --delivered`: ranking on the traffic model's delivered bandwidth instead of the bisection figure.

The case: 256 GPUs of GB200 trays (4 NVL72 racks: 72 trays, 4 x 400G each) on QM9700 in 2 tiers, rail-optimized
(SUs of 18 trays) or flat. Both are non-blocking (bisection 100 %) and the flat one is cheaper, so by bisection it
ranks first. Under static ECMP with 1 QP per connection the worst standard pattern of the whole-cluster job (the
shift by half the job) gets 67.26 % of the NIC rate per GPU on the rail-optimized one and 59.22 % on the flat one
(measured): the rail-optimized one ranks first.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fabric import build_fabric, load_spec_text
from fabric.cli import app
from fabric.plan.candidates import Candidate, Request, enumerate_candidates
from fabric.plan.delivered import traffic_pct
from fabric.plan.document import spec_yaml
from fabric.plan.evaluate import Outcome, evaluate
from fabric.plan.metrics import delivered_fraction
from fabric.plan.rank import rank
from fabric.spec.catalog import builtin_catalog

runner = CliRunner()
CATALOG = builtin_catalog()
GPUS = 256
ARGS = ["plan", "--gpus", "256", "--node", "dgx-gb200-tray", "--switch", "qm9700", "--tiers", "2"]


def _candidates() -> tuple[Candidate, ...]:
    found = [
        c
        for c in enumerate_candidates(CATALOG, Request(GPUS, nodes=("dgx-gb200-tray",), switches=("qm9700",)))
        if c.tiers == 2
    ]
    return tuple(sorted(found, key=lambda c: not c.rail_optimized))  # rail-optimized, then flat


@pytest.fixture(scope="module")
def outcomes() -> dict[str, list[Outcome]]:
    return {d: [evaluate(c, GPUS, delivered=d) for c in _candidates()] for d in ("bisection", "ecmp")}


def test_ecmp_delivered_ranks_otherwise_than_bisection(outcomes: dict[str, list[Outcome]]) -> None:
    rail, flat = outcomes["bisection"]
    assert rail.candidate.rail_optimized and not flat.candidate.rail_optimized
    assert rail.bisection_pct == flat.bisection_pct == 100.0
    assert [r.outcome for r in rank(outcomes["bisection"])] == [flat, rail]
    rail_e, flat_e = outcomes["ecmp"]
    assert delivered_fraction(rail_e) > delivered_fraction(flat_e)
    assert delivered_fraction(rail_e) < 1.0
    assert [r.outcome for r in rank(outcomes["ecmp"])] == [rail_e, flat_e]
    # the same costs: only the delivered figure moved
    assert rail_e.tco_usd == rail.tco_usd and flat_e.tco_usd == flat.tco_usd


def test_the_default_is_the_bisection_figure(outcomes: dict[str, list[Outcome]]) -> None:
    for o in outcomes["bisection"]:
        assert o.traffic_pct is None
        whole = o.jobs[-1]
        assert delivered_fraction(o) == whole.intact_gbps_per_gpu / whole.nic_gbps_per_gpu
    assert evaluate(_candidates()[1], GPUS) == outcomes["bisection"][1]


def test_the_figure_is_the_summarys_worst_ecmp_row(outcomes: dict[str, list[Outcome]]) -> None:
    """As summary.json computes it: its largest modelled job's ECMP 1-QP rows, the worst pattern's mean."""
    rail = _candidates()[0]
    build = build_fabric(load_spec_text(spec_yaml(rail, GPUS, CATALOG)))
    largest = max(k for k, figures in build.traffic.items() if figures)
    assert largest == outcomes["ecmp"][0].nodes == 72  # the whole cluster: 4 NVL72 racks of 18 trays
    rows = [f for f in build.traffic[largest] if f.routing == "ecmp" and f.qps == 1]
    assert len(rows) == 3
    assert outcomes["ecmp"][0].traffic_pct == min(f.mean_pct for f in rows)
    assert traffic_pct(build, "adaptive") == (100.0, "adaptive")  # non-blocking: the ideal delivers everything
    assert outcomes["ecmp"][0].traffic_routing == "ecmp"
    # static: an InfiniBand candidate routed by ftree (the plan's default engines) under the SM's modelled tables,
    # as the summary's `sm` rows; an Ethernet one would take ECMP
    sm_rows = [f for f in build.traffic[largest] if f.routing == "sm"]
    assert len(sm_rows) == 3
    assert traffic_pct(build, "static") == (min(f.mean_pct for f in sm_rows), "sm")
    static = evaluate(rail, GPUS, delivered="static")
    assert (static.traffic_pct, static.traffic_routing) == (min(f.mean_pct for f in sm_rows), "sm")


def test_cli_ranks_by_the_delivered_asked() -> None:
    orders = {}
    for delivered in (None, "bisection", "ecmp"):
        extra = ["--delivered", delivered] if delivered else []
        result = runner.invoke(app, [*ARGS, *extra, "--json", "--workers", "1"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert data["delivered"] == (delivered or "bisection")
        routing = None if delivered in (None, "bisection") else delivered
        assert {r["delivered_routing"] for r in data["candidates"]} == {routing}
        orders[delivered] = [(r["label"], r["delivered_fraction"]) for r in data["candidates"]]
    assert orders[None] == orders["bisection"]
    assert [label for label, _ in orders["ecmp"]] == [label for label, _ in reversed(orders["bisection"])]
    assert all(fraction < 1 for _, fraction in orders["ecmp"])
    refused = runner.invoke(app, [*ARGS, "--delivered", "sprayed"])
    assert refused.exit_code == 2 and "--delivered 'sprayed'" in refused.output
