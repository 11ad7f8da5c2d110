"""`fabric plan`'s ranking by compute per dollar, the collapse of identical candidates, and the pruning bounds.

Hand-checked table (1,024 GPUs each; dense BF16 TFLOPS per GPU from the catalog: A100 312, H100 989, B200 2,250):

| node     | TCO    | capital | delivered | PFLOPS   | TCO/deliv. PF | TCO/PF    | TCO/GPU  | capital/GPU |
|----------|--------|---------|-----------|----------|---------------|-----------|----------|-------------|
| dgx-a100 | $40M   | $30M    | 100 %     |  319.488 | $125,200      | $125,200  | $39,063  | $29,297     |
| dgx-h100 | $60M   | $46M    | 100 %     | 1012.736 |  $59,245      |  $59,245  | $58,594  | $44,922     |
| dgx-b200 | $70M   | $60M    |  50 %     | 2304     |  $60,764      |  $30,382  | $68,359  | $58,594     |

so by delivered compute H100 < B200 < A100; by compute B200 < H100 < A100; per GPU A100 < H100 < B200.
At FP8 (H100 1,979, B200 4,500; the A100 has none and counts its BF16 312): H100 $29,608, B200 $30,382, A100
$125,200 per delivered PFLOPS.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from fabric.analysis.jobs import JobBandwidth
from fabric.plan.candidates import Candidate, Request, enumerate_candidates
from fabric.plan.evaluate import Outcome
from fabric.plan.metrics import lower_bound, metric_value
from fabric.plan.rank import Ranked, as_data, rank
from fabric.plan.sweep import pruned_sweep, sweep
from fabric.spec.catalog import builtin_catalog

CATALOG = builtin_catalog()
GPUS = 1024


def _outcome(index: int, node: str, tco: float, capital: float, delivered: float, **kw: object) -> Outcome:
    rail = bool(kw.pop("rail", True))
    candidate = Candidate(index, node, "infiniband", "qm9700", 2, rail, 1, 32 if rail else None, 1.0, 400)
    whole = JobBandwidth(128, GPUS, "su1" if rail else "leafgroup1", 400.0, 400.0 * delivered, 300.0, "spine01")
    defaults: dict[str, object] = {"gpus": GPUS, "nodes": 128, "switches": (32, 16, 0), "optics": 2048}
    return Outcome(
        candidate, f"c{index}", True, "", 0, 0, tco_usd=tco, capital_usd=capital, jobs=(whole,), **(defaults | kw)
    )


A100 = _outcome(0, "dgx-a100", 40e6, 30e6, 1.0)
H100 = _outcome(1, "dgx-h100", 60e6, 46e6, 1.0)
B200 = _outcome(2, "dgx-b200", 70e6, 60e6, 0.5)


@pytest.mark.parametrize(
    ("metric", "precision", "order", "first_figure"),
    [
        ("tco-per-delivered-pflops", "bf16", ["dgx-h100", "dgx-b200", "dgx-a100"], 59245.45),
        ("tco-per-pflops", "bf16", ["dgx-b200", "dgx-h100", "dgx-a100"], 30381.94),
        ("tco-per-gpu", "bf16", ["dgx-a100", "dgx-h100", "dgx-b200"], 39062.5),
        ("capital-per-gpu", "bf16", ["dgx-a100", "dgx-h100", "dgx-b200"], 29296.88),
        ("tco-per-delivered-pflops", "fp8", ["dgx-h100", "dgx-b200", "dgx-a100"], 29607.76),
    ],
)
def test_the_metric_orders_the_hand_checked_table(
    metric: str, precision: str, order: list[str], first_figure: float
) -> None:
    ranked = rank([A100, H100, B200], metric=metric, precision=precision)
    assert [r.outcome.candidate.node for r in ranked] == order
    assert [r.rank for r in ranked] == [1, 2, 3]
    assert ranked[0].metric == pytest.approx(first_figure, abs=0.01)
    data = as_data(ranked, GPUS, None, None, metric=metric, precision=precision)
    assert data["metric"] == metric and [row["best_of_node"] for row in data["candidates"]] == [True] * 3


def test_the_figures_beside_the_ranking() -> None:
    (row,) = as_data(rank([B200]), GPUS, None, None)["candidates"]
    assert (row["gpu_tflops"], row["pflops"], row["delivered_fraction"], row["delivered_pflops"]) == (
        2250.0,
        2304.0,
        0.5,
        1152.0,
    )
    assert row["tco_per_gpu_usd"] == 68359.38 and row["tco_per_pflops_usd"] == 30381.94
    assert row["tco_per_delivered_pflops_usd"] == row["metric_value"] == 60763.89


def test_identical_candidates_collapse_into_the_first() -> None:
    rail = _outcome(4, "dgx-h100", 60e6, 46e6, 1.0)
    flat = replace(_outcome(5, "dgx-h100", 60e6, 46e6, 1.0, rail=False))  # other spans, the same figures
    other = _outcome(6, "dgx-h100", 60e6, 46e6, 1.0, optics=2050)  # two optics more: not the same purchase
    ranked = rank([flat, other, rail, A100])
    assert [(r.outcome.candidate.index, r.identical) for r in ranked] == [(4, (6,)), (6, ()), (0, ())]
    rows = as_data(ranked, GPUS, None, None)["candidates"]
    assert [(row["candidate"], row["identical_candidates"], row["best_of_node"]) for row in rows] == [
        (5, [6], True),
        (7, [], False),
        (1, [], True),
    ]


def _best_of_each_node(ranked: list[Ranked]) -> dict[str, tuple[int, float | None]]:
    best: dict[str, tuple[int, float | None]] = {}
    for r in ranked:
        if r.status == "ok":
            best.setdefault(r.outcome.candidate.node, (r.outcome.candidate.index, r.metric))
    return best


def test_pruning_keeps_each_node_types_best_and_bounds_hold() -> None:
    # qm8700: the DGX A100's HDR ports link over fibre to HDR optics only (optics-signalling)
    switches = ("qm9700", "qm8700", "q3400", "sn5600", "edgecore-as9817-64o")
    request = Request(256, nodes=("dgx-a100", "dgx-h100"), switches=switches, tiers=(2, 3))
    candidates = enumerate_candidates(CATALOG, request)
    metric = "tco-per-delivered-pflops"
    everything = rank(sweep(candidates, 256, workers=1), metric=metric)
    built, pruned = pruned_sweep(candidates, 256, metric, "bf16", workers=1)
    best = _best_of_each_node(everything)
    assert sorted(best) == ["dgx-a100", "dgx-h100"]
    assert _best_of_each_node(rank(built, metric=metric)) == best
    assert len(pruned) > len(candidates) // 2 and len(built) + len(pruned) == len(candidates)
    checked = 0
    for r in everything:  # the analytic bound never exceeds what a build costs
        if r.status == "ok":
            figure = metric_value(r.outcome, metric, CATALOG)
            assert figure is not None and lower_bound(r.outcome.candidate, 256, metric, CATALOG) <= figure
            checked += 1
    assert checked > 10
