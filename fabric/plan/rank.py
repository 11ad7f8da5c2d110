"""Rank the outcomes of a sweep and give them as data (`fabric plan --json` and its table).

Order: candidates that build without an error and fit the budget, then those over budget, then those that
fail (with the finding that rules them out), each by candidate order when equal. Without `--grow-to` the
first group is ranked by the metric (metrics.py; default: 5-year TCO per delivered PFLOPS), then TCO per GPU, then
capital per GPU; with it, by the capital of the grown design (everything bought by then), then by the day-one
cables the path re-cables, then the day-one capital; a candidate whose grown design fails comes after those
whose path works.

Identical candidates — the same parts, counts, costs and figures, as a rail-optimized design and a flat one
often are at a size one leaf tier holds — collapse into one row: the first in candidate order, with the others'
numbers in `identical_candidates`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fabric.costing import PLACEHOLDER_NOTE
from fabric.plan.evaluate import Outcome
from fabric.plan.metrics import DEFAULT_METRIC, delivered_fraction, metric_value, pflops, tflops_per_gpu
from fabric.spec.catalog import Catalog, builtin_catalog

OK, OVER_BUDGET, GROWTH_FAILS, FAILS = "ok", "over budget", "grown design fails", "fails"


@dataclass(frozen=True)
class Ranked:
    rank: int  # 1-based over every candidate
    status: str
    outcome: Outcome
    metric: float | None = None  # the ranking metric's figure (lower is better); None: not ranked by it
    identical: tuple[int, ...] = ()  # candidate numbers (1-based) of the identical candidates this row stands for


def _status(o: Outcome, budget: float | None, grow_to: int | None) -> str:
    if not o.ok:
        return FAILS
    if budget is not None and o.capital_usd > budget:
        return OVER_BUDGET
    if grow_to and (o.growth is None or not o.growth.ok):
        return GROWTH_FAILS
    return OK


def _signature(o: Outcome) -> tuple[Any, ...] | None:
    """What makes two built candidates the same purchase with the same figures (None: a failing one)."""
    if not o.ok:
        return None
    c = o.candidate
    return (
        c.node,
        c.technology,
        c.switch,
        c.speed_gbps,
        o.gpus,
        o.switches,
        o.optics,
        o.cables,
        round(o.capital_usd, 2),
        round(o.tco_usd, 2),
        round(o.power_kw, 3),
        o.bisection_pct,
        o.worst_failure_pct,
        o.min_ecmp_width,
        o.headroom_gpus,
        o.two_tier_max_gpus,
        # the job table's figures (its spans and failing elements are named after the design's kind: su1, leafgroup1)
        tuple((j.nodes, j.gpus, j.nic_gbps_per_gpu, j.intact_gbps_per_gpu, j.failure_gbps_per_gpu) for j in o.jobs),
        o.growth,
        o.traffic_pct,
    )


def rank(
    outcomes: Sequence[Outcome],
    budget: float | None = None,
    grow_to: int | None = None,
    metric: str = DEFAULT_METRIC,
    precision: str = "bf16",
    catalog: Catalog | None = None,
) -> list[Ranked]:
    groups = (OK, GROWTH_FAILS, OVER_BUDGET, FAILS)
    catalog = catalog or builtin_catalog()
    figures = {o.candidate.index: metric_value(o, metric, catalog, precision) if o.ok else None for o in outcomes}

    def key(o: Outcome) -> tuple[Any, ...]:
        status = _status(o, budget, grow_to)
        group = groups.index(status)
        if status in (FAILS,):
            return (group, o.candidate.index)
        if grow_to and o.growth is not None and o.growth.ok:
            return (
                group,
                round(o.growth.capital_usd, 2),
                o.growth.recabled,
                round(o.capital_usd, 2),
                o.candidate.index,
            )
        figure = figures[o.candidate.index]
        return (
            group,
            figure is None,
            round(figure, 4) if figure is not None else 0.0,
            round(o.tco_per_gpu_usd, 2),
            round(o.capital_per_gpu_usd, 2),
            o.candidate.index,
        )

    kept: dict[tuple[Any, ...], list[Outcome]] = {}
    rows: list[list[Outcome]] = []
    for o in sorted(outcomes, key=lambda o: o.candidate.index):  # the first in candidate order stands for the rest
        sig = _signature(o)
        if sig is not None and sig in kept:
            kept[sig].append(o)
            continue
        rows.append([o])
        if sig is not None:
            kept[sig] = rows[-1]
    rows.sort(key=lambda row: key(row[0]))
    return [
        Ranked(
            i,
            _status(row[0], budget, grow_to),
            row[0],
            figures[row[0].candidate.index],
            tuple(o.candidate.index + 1 for o in row[1:]),
        )
        for i, row in enumerate(rows, 1)
    ]


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def as_data(
    ranked: Sequence[Ranked],
    gpus: int,
    grow_to: int | None,
    budget: float | None,
    *,
    metric: str = DEFAULT_METRIC,
    precision: str = "bf16",
    pruned: Sequence[tuple[int, str, float]] = (),
    catalog: Catalog | None = None,
    delivered: str = "bisection",
) -> dict[str, Any]:
    """The plan as JSON-ready data (keys documented in the README). `pruned`: (candidate index, label, bound) of
    the candidates not built because their bound could not rank (metrics.py)."""
    catalog = catalog or builtin_catalog()
    rows = []
    best_of: set[str] = set()
    for r in ranked:
        o, c = r.outcome, r.outcome.candidate
        best = r.status == OK and c.node not in best_of
        if best:
            best_of.add(c.node)
        row: dict[str, Any] = {
            "rank": r.rank,
            "status": r.status,
            "candidate": c.index + 1,
            "label": c.label,
            "spec_name": o.name,
            "node": c.node,
            "technology": c.technology,
            "switch": c.switch,
            "tiers": c.tiers,
            "rail_optimized": c.rail_optimized,
            "planes": c.planes,
            "scalable_unit": c.scalable_unit,
            "oversubscription": c.oversubscription,
            "speed_gbps": c.speed_gbps,
            "ruling_finding": o.ruling or None,
            "errors": o.errors,
            "warnings": o.warnings,
            "identical_candidates": list(r.identical),
            "best_of_node": best,
            "metric_value": _round(r.metric),
        }
        row["closed_form"] = o.closed_form
        if o.ok:
            leaf, spine, core = o.switches
            row |= {
                "gpus": o.gpus,
                "nodes": o.nodes,
                "switches": {"leaf": leaf, "spine": spine, "core": core},
                "optics": o.optics,
                "cables": o.cables,
                "capital_usd": _round(o.capital_usd),
                "capital_per_gpu_usd": _round(o.capital_per_gpu_usd),
                "power_kw": _round(o.power_kw),
                "tco_usd": _round(o.tco_usd),
                "tco_years": o.tco_years,
                "bisection_pct": _round(o.bisection_pct),
                "worst_single_failure_pct": _round(o.worst_failure_pct),
                "min_ecmp_width": o.min_ecmp_width,
                "headroom_gpus": o.headroom_gpus,
                "two_tier_max_gpus": o.two_tier_max_gpus,
                "headroom_beyond": o.headroom_beyond,
                "gpu_tflops": tflops_per_gpu(catalog.nodes[c.node], precision),
                "pflops": _round(pflops(o, catalog, precision), 1),
                "delivered_fraction": _round(delivered_fraction(o), 4),
                "delivered_routing": o.traffic_routing,
                "delivered_pflops": _round(pflops(o, catalog, precision) * delivered_fraction(o), 1),
                "tco_per_gpu_usd": _round(o.tco_per_gpu_usd),
                "tco_per_pflops_usd": _round(metric_value(o, "tco-per-pflops", catalog, precision)),
                "tco_per_delivered_pflops_usd": _round(metric_value(o, "tco-per-delivered-pflops", catalog, precision)),
                "job_bandwidth": [
                    {
                        "nodes": j.nodes,
                        "gpus": j.gpus,
                        "span": j.span,
                        "nic_gbps_per_gpu": _round(j.nic_gbps_per_gpu, 1),
                        "intact_gbps_per_gpu": _round(j.intact_gbps_per_gpu, 1),
                        "worst_single_failure_gbps_per_gpu": _round(j.failure_gbps_per_gpu, 1),
                        "worst_single_failure": j.failure,
                    }
                    for j in o.jobs
                ],
            }
        if o.growth is not None:
            g = o.growth
            row["growth"] = {
                "gpus": g.gpus,
                "ok": g.ok,
                "ruling_finding": g.ruling or None,
                "capital_usd": _round(g.capital_usd),
                "now_usd": _round(o.capital_usd),
                "later_usd": _round(g.later_usd),
                "switches_added": g.switches_added,
                "recabled": g.recabled,
            }
        if o.ok and o.closed_form:  # what only a build knows (plan/closed.py)
            modelled = c.oversubscription == 1.0  # a non-blocking fat tree delivers all of its bandwidth
            row |= {
                "optics": None,
                "bisection_pct": row["bisection_pct"] if modelled else None,
                "delivered_fraction": row["delivered_fraction"] if modelled else None,
                "delivered_routing": "closed form",
            }
        rows.append(row)
    return {
        "gpus": gpus,
        "grow_to": grow_to,
        "budget_usd": budget,
        "note": PLACEHOLDER_NOTE,
        "candidates": rows,
        "metric": metric,
        "precision": precision,
        "delivered": delivered,
        "pruned": [{"candidate": i + 1, "label": label, "bound": _round(bound)} for i, label, bound in pruned],
    }
