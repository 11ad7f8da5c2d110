"""Rank the outcomes of a sweep and give them as data (`fabric plan --json` and its table).

Order: candidates that build without an error and fit the budget, then those over budget, then those that
fail (with the finding that rules them out), each by candidate order when equal. Without `--grow-to` the
first group is ranked by 5-year TCO per GPU, then capital per GPU; with it, by the capital of the grown design
(everything bought by then), then by the day-one cables the path re-cables, then the day-one capital; a
candidate whose grown design fails comes after those whose path works.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fabric.costing import PLACEHOLDER_NOTE
from fabric.plan.evaluate import Outcome

OK, OVER_BUDGET, GROWTH_FAILS, FAILS = "ok", "over budget", "grown design fails", "fails"


@dataclass(frozen=True)
class Ranked:
    rank: int  # 1-based over every candidate
    status: str
    outcome: Outcome


def _status(o: Outcome, budget: float | None, grow_to: int | None) -> str:
    if not o.ok:
        return FAILS
    if budget is not None and o.capital_usd > budget:
        return OVER_BUDGET
    if grow_to and (o.growth is None or not o.growth.ok):
        return GROWTH_FAILS
    return OK


def rank(outcomes: Sequence[Outcome], budget: float | None = None, grow_to: int | None = None) -> list[Ranked]:
    groups = (OK, GROWTH_FAILS, OVER_BUDGET, FAILS)

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
        return (group, round(o.tco_per_gpu_usd, 2), round(o.capital_per_gpu_usd, 2), o.candidate.index)

    ordered = sorted(outcomes, key=key)
    return [Ranked(i, _status(o, budget, grow_to), o) for i, o in enumerate(ordered, 1)]


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def as_data(ranked: Sequence[Ranked], gpus: int, grow_to: int | None, budget: float | None) -> dict[str, Any]:
    """The plan as JSON-ready data (keys documented in the README)."""
    rows = []
    for r in ranked:
        o, c = r.outcome, r.outcome.candidate
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
        }
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
        rows.append(row)
    return {
        "gpus": gpus,
        "grow_to": grow_to,
        "budget_usd": budget,
        "note": PLACEHOLDER_NOTE,
        "candidates": rows,
    }
