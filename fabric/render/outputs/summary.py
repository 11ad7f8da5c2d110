"""The figures `fabric show` prints and `summary.json` holds (keys documented in the README); summary.json is
serialized from data, never templated."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from fabric.analysis.figures import LAYERS
from fabric.analysis.jobs import JobTable
from fabric.analysis.traffic.figure import TrafficFigure
from fabric.costing import PLACEHOLDER_NOTE, costing
from fabric.model.kinds import TIERS, Layer
from fabric.pipeline import Build
from fabric.render.engine.memo import per_build
from fabric.render.engine.registry import Output, one_file
from fabric.spec.schema import format_ratio

IDLE_SHOWN = 0.9  # a connected ratio under 90 % of the target is shown beside it: a tenth of the uplinks idle


def oversubscription_shown(fabric: Mapping[str, Any], sep: str) -> str:
    """`leaf 1:1` per layer (the design ratio), with the connected ratio of the layer as a whole beside it where it
    differs from the target: above it, or below by more than a tenth (uplinks the connected ports cannot fill),
    e.g. `leaf 1:1 (1:2 connected)`. Reads summary.json's figures, as `fabric show` and the report do."""
    parts = []
    for layer, value in fabric["oversubscription"].items():
        if value is None:
            continue
        text = f"{layer} {format_ratio(value)}"
        connected = fabric.get("oversubscription_tier", {}).get(layer)
        target = fabric.get("oversubscription_target", {}).get(layer)
        idle_or_over = connected is not None and target and not IDLE_SHOWN * target <= connected <= target + 1e-9
        if idle_or_over and connected is not None and format_ratio(connected) != format_ratio(value):
            text += f" ({format_ratio(connected)} connected)"
        parts.append(text)
    return sep.join(parts)


def _ratio(value: float | None, digits: int = 4) -> float | None:
    """A ratio or percentage: always a JSON number with a fraction (1.0 for 1:1); None if undefined."""
    if value is None or value == float("inf"):
        return None
    return round(float(value), digits)


def _gbps(value: float | None) -> int | float | None:
    if value is None:
        return None
    rounded = round(value, 1)
    return int(rounded) if rounded == int(rounded) else rounded


def cables_by_media(build: Build, fabric: str | None = None) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for (key, media), n in _media_counts(build).items():
        if fabric is None or key == fabric:
            counts[media] += n
    return dict(sorted(counts.items()))


@per_build  # read-only
def _media_counts(build: Build) -> Counter[tuple[str, str]]:
    """Cables per fabric and medium: one pass for every fabric's count and the total."""
    return Counter((c.link.fabric, c.media or "none") for c in build.allocation.cables)


@per_build  # report.html, report.md and summary.json show it (read-only)
def summary(build: Build) -> dict[str, Any]:
    spec = build.design.spec
    devices = build.topology.devices
    nodes = [d for d in devices.values() if d.layer == Layer.NODE]
    gpus = sum(build.design.catalog.nodes[d.model].gpus for d in nodes)
    fabrics: dict[str, Any] = {}
    for key, fig in build.figures.items():
        ft = build.topology.fabrics[key]
        targets = {"leaf": ft.target_leaf} | ({"spine": ft.target_spine} if fig.tiers == 3 else {})
        fabrics[key] = {
            "role": fig.role,
            "technology": fig.technology,
            "topology": "generated" if ft.generated else "explicit",
            "tiers": fig.tiers,
            "planes": fig.planes,
            "switches": {layer: fig.switches[layer] for layer in LAYERS},
            "links": {tier: fig.links[tier] for tier in TIERS},
            "endpoints": fig.endpoints,
            "oversubscription": {k: _ratio(v) for k, v in fig.oversubscription.items()},
            "oversubscription_connected": {k: _ratio(v) for k, v in fig.oversubscription_connected.items()},
            "oversubscription_tier": {k: _ratio(v) for k, v in fig.oversubscription_tier.items()},
            "oversubscription_target": {k: _ratio(v) for k, v in targets.items()},
            "bisection_gbps": _gbps(fig.bisection_gbps),
            "bisection_pct": _ratio(fig.bisection_pct, 2),
            "full_bisection_gbps": _gbps(fig.full_bisection_gbps),
            "bisection_analytic_gbps": _gbps(fig.bisection_analytic_gbps),
            "min_ecmp_width": fig.min_ecmp_width,
            "worst_single_failure_bisection_pct": _ratio(fig.worst_failure_pct, 2),
            "worst_single_failure": fig.worst_failure.element if fig.worst_failure else None,
            "cables_by_media": cables_by_media(build, key),
        }
    return {
        "design": spec.name,
        "description": spec.description,
        "gpus": gpus,
        "nodes": len(nodes),
        "switches": sum(1 for d in devices.values() if d.layer != Layer.NODE),
        "racks": len(build.topology.racks),
        "cables": len(build.allocation.cables),
        "cable_counting": "one row per logical link (a twin-port OSFP carries two)",
        "fabrics": fabrics,
        "cables_by_media": cables_by_media(build),
        "findings": [f.as_dict() | {"file": spec_relative(build, f.file)} for f in build.findings],
        "cost": cost_summary(build),
        "job_bandwidth": job_summary(build.jobs, build.traffic),
    }


def job_summary(
    table: JobTable | None, traffic: Mapping[int, tuple[TrafficFigure, ...]] | None = None
) -> dict[str, Any] | None:
    """Per-GPU bandwidth guaranteed across a compactly placed job's worst bisection (analysis/jobs.py), with what
    collectives get of it under the fabric's routing (analysis/traffic)."""
    if table is None:
        return None
    out: dict[str, Any] = {
        "fabric": table.fabric,
        "placement": "compact, in the order of the scheduler topology (first SU first)",
        "jobs": [
            {
                "nodes": r.nodes,
                "gpus": r.gpus,
                "span": r.span,
                "nic_gbps_per_gpu": _gbps(r.nic_gbps_per_gpu),
                "intact_gbps_per_gpu": _gbps(r.intact_gbps_per_gpu),
                "intact_pct": _ratio(r.intact_pct, 2),
                "worst_single_failure_gbps_per_gpu": _gbps(r.failure_gbps_per_gpu),
                "worst_single_failure_pct": _ratio(r.failure_pct, 2),
                "worst_single_failure": r.failure,
                **({"within_nvlink_domain": r.nvlink} if table.nvlink_system else {}),
                "traffic": [traffic_row(f) for f in (traffic or {}).get(r.nodes, ())],
            }
            for r in table.rows
        ],
    }
    if table.nvlink_system:  # only designs with rack-scale NVLink systems: the others' summary stays as it was
        out["nvlink_domain"] = {
            "system": table.nvlink_system,
            "gpus": table.nvlink_domain_gpus,
            "note": "a job within one NVLink domain talks over NVLink: its traffic does not touch this fabric",
        }
    return out


def traffic_row(f: TrafficFigure) -> dict[str, Any]:
    """One traffic figure: its pattern under its routing, % of the NIC rate per GPU (the `fabric traffic` keys)."""
    row: dict[str, Any] = {
        "pattern": f.pattern,
        "routing": f.routing,
        "qps": f.qps,
        "mean_pct": f.mean_pct,
        "p50_pct": f.p50_pct,
        "p5_pct": f.p5_pct,
        "seeds": f.seeds,
    }
    if f.distance is not None:
        row["distance"] = f.distance
    if f.pxn is not None:
        row["pxn"] = f.pxn
    return row


def _usd(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def cost_summary(build: Build) -> dict[str, Any]:
    """Capital cost, power and the TCO per year (every price and rate a placeholder)."""
    c = costing(build)
    costs = build.design.spec.costs
    return {
        "note": PLACEHOLDER_NOTE,
        "capital_usd": _usd(c.capital_usd),
        "capital_by_fabric_usd": {k: _usd(v) for k, v in c.fabric_totals().items()},
        "capital_per_gpu_usd": _usd(c.per_gpu_usd),
        "power_kw": round(c.power_w / 1000, 2),
        "heat_kw": round(c.power_w / 1000, 2),
        "rates": costs.model_dump(),
        "tco_years": [
            {
                "year": y.year,
                "capital_usd": _usd(y.capital_usd),
                "energy_usd": _usd(y.energy_usd),
                "space_usd": _usd(y.space_usd),
                "support_usd": _usd(y.support_usd),
                "total_usd": _usd(y.total_usd),
                "cumulative_usd": _usd(y.cumulative_usd),
            }
            for y in c.years
        ],
        "tco_usd": _usd(c.tco_usd),
        "tco_per_gpu_usd": _usd(c.tco_per_gpu_usd),
        "tco_per_gpu_hour_usd": None if c.tco_per_gpu_hour_usd is None else round(c.tco_per_gpu_hour_usd, 4),
    }


def spec_relative(build: Build, file: str) -> str:
    """A finding's file as seen from the spec's own directory (the spec by its file name), so that the
    output does not depend on where the build ran."""
    if not file:
        return file
    if file == build.design.doc.file:
        return PurePath(file).name
    return os.path.relpath(os.path.abspath(file), os.path.abspath(build.design.base_dir))


def summary_json(build: Build) -> str:
    return json.dumps(summary(build), indent=2, ensure_ascii=False) + "\n"


# with the report, which shows the same summary: its job bandwidth (seconds at 100k GPUs) is then made once
OUTPUTS: tuple[Output, ...] = (one_file("summary", "summary.json", summary_json, together="diagrams"),)
