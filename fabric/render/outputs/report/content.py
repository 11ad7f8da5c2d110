"""What the report shows, as data: summary figures, findings, diagrams, tables, BOM, power and TCO.

Large tables (cabling, IP plan) go to the HTML report as JSON that its script pages through, so a
300,000-cable design never puts 300,000 rows into the DOM at once.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from fabric.costing import PLACEHOLDER_NOTE, costing, money
from fabric.pipeline import Build
from fabric.render.engine.documents import split
from fabric.render.outputs.diagrams import Listed, drawn
from fabric.render.outputs.monitoring.planned_series import settings as monitoring_settings
from fabric.render.outputs.monitoring.runbook import alerts
from fabric.render.outputs.summary import oversubscription_shown, spec_relative, summary
from fabric.render.outputs.tables import CABLING_COLUMNS, IP_PLAN_COLUMNS

CABLE_COLUMNS = (
    "cable_id",
    "fabric",
    "tier",
    "a_rack",
    "a_u",
    "a_device",
    "a_port",
    "b_rack",
    "b_u",
    "b_device",
    "b_port",
    "speed_gbps",
    "media",
    "length_m",
    "a_label",
)
MAX_INLINE_ELEVATIONS = 24  # rack-elevation pictures drawn in the report; the rest are linked (100k GPUs: 216)
_XML_HEAD = re.compile(r"^(<\?xml[^>]*>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.S)
assert set(CABLE_COLUMNS) <= set(CABLING_COLUMNS)


def inline_svg(svg: bytes) -> str:
    """An SVG document as an element to put into HTML."""
    return _XML_HEAD.sub("", svg.decode("utf-8"), count=1)


def script_json(value: object) -> str:
    """JSON safe inside <script type="application/json"> (no `</` can close the element)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def _fabrics(data: dict[str, Any]) -> list[dict[str, str]]:
    rows = []
    for key, f in data["fabrics"].items():
        over = oversubscription_shown(f, ", ")
        failure = f["worst_single_failure_bisection_pct"]
        rows.append(
            {
                "fabric": key,
                "technology": f["technology"],
                "tiers": str(f["tiers"]) + (f" × {f['planes']} planes" if f["planes"] > 1 else ""),
                "switches": " / ".join(
                    f"{f['switches'][k]} {k}" for k in ("leaf", "spine", "core") if f["switches"][k]
                ),
                "oversubscription": over or "-",
                "bisection": f"{(f['bisection_gbps'] or 0) / 1000:,.1f} Tb/s ({f['bisection_pct']}%)",
                "ecmp": str(f["min_ecmp_width"] if f["min_ecmp_width"] is not None else "-"),
                "failure": f"{failure}% after {f['worst_single_failure']}" if failure is not None else "-",
                "cables": ", ".join(f"{n:,} {m}" for m, n in f["cables_by_media"].items()),
            }
        )
    return rows


ROUTING_TITLES = {"adaptive": "ideal (adaptive)", "ecmp": "ECMP", "sm": "SM routes"}


def _routing_title(figure: dict[str, Any]) -> str:
    title = ROUTING_TITLES.get(figure["routing"], figure["routing"])
    qps = figure["qps"]
    return title if qps is None else f"{title}, {qps} QP" + ("s" if qps > 1 else "")


def _jobs(data: dict[str, Any]) -> dict[str, Any] | None:
    """Job size against the bandwidth a GPU gets: the worst bisection of a compactly placed job, and per
    collective pattern a bar per routing (the ideal, static ECMP per QP count, the SM's routes when modelled),
    each the mean % of the NIC rate per GPU. A bar's width is that percentage (the chart's scale: 0–100 %)."""
    table = data["job_bandwidth"]
    if table is None:
        return None
    figures = [t for job in table["jobs"] for t in job["traffic"]]
    patterns = list(dict.fromkeys(t["pattern"] for t in figures))
    rows = []
    for job in table["jobs"]:
        cells = [
            [
                {
                    "routing": t["routing"],
                    "title": _routing_title(t),
                    "pct": f"{float(t['mean_pct']):g}%",
                    "width": f"{float(t['mean_pct']):.1f}",
                }
                for t in job["traffic"]
                if t["pattern"] == pattern
            ]
            for pattern in patterns
        ]
        rows.append(
            {
                "nodes": f"{job['nodes']:,}",
                "gpus": f"{job['gpus']:,}",
                "span": job["span"],
                "intact": f"{job['intact_gbps_per_gpu']:g} Gb/s ({job['intact_pct']:g}%)",
                "cells": cells,
                "text": [" / ".join(bar["pct"] for bar in bars) or "-" for bars in cells],
            }
        )
    routings = list(dict.fromkeys(_routing_title(t) for t in figures))
    return {"fabric": table["fabric"], "patterns": patterns, "routings": routings, "rows": rows}


def report_content(build: Build, items: list[Listed] | None = None) -> dict[str, Any]:
    """The report's data; `items`: the pictures by name and title only (report.md links them), else drawn."""
    data = summary(build)
    c = costing(build)
    pictures = []
    elevations = 0
    if items is None:
        entries = [(d.diagram.name, d.diagram.title, d.svg) for d in drawn(build)]
    else:
        entries = [(i.name, i.title, None) for i in items]
    for name, title, svg in entries:
        is_elevation = name.startswith("racks/")
        elevations += is_elevation
        inline = svg is not None and (not is_elevation or elevations <= MAX_INLINE_ELEVATIONS)
        pictures.append(
            {
                "name": name,
                "title": title,
                "svg": inline_svg(svg) if inline and svg is not None else None,
                "linked": svg is not None and not inline,
                "file": f"diagrams/{name}.svg",
            }
        )
    linked = split(build)  # above the split the tables are linked (cabling.md, ip-plan.csv), not embedded
    cables = []
    for cable in () if linked else build.allocation.cables:
        link = cable.link
        cables.append(
            [
                cable.cable_id,
                link.fabric,
                link.tier,
                cable.a_rack,
                cable.a_u or "",
                link.a,
                link.a_port,
                cable.b_rack,
                cable.b_u or "",
                link.b,
                link.b_port,
                link.speed_gbps,
                cable.media or "",
                "" if cable.length_m is None else f"{cable.length_m:g}",
                cable.labels()[0],
            ]
        )
    ips = [
        [r.device, r.interface, str(r.address), r.peer_device, r.peer_interface, r.purpose, r.fabric]
        for r in (() if linked else build.allocation.addresses)
    ]
    bom = [
        {
            "category": line.category,
            "model": line.model,
            "fabric": line.fabric,
            "count": f"{line.count:,}",
            "detail": line.detail,
            "unit": money(line.unit_price_usd),
            "total": money(line.total_usd),
        }
        for line in c.lines
    ]
    racks = [
        {
            "rack": r.rack,
            "used": f"{r.total_w / 1000:.1f}",
            "budget": f"{r.budget_w / 1000:g}",
            "pct": f"{100 * r.total_w / r.budget_w:.0f}",
            "over": r.total_w > r.budget_w,
        }
        for r in c.racks
    ]
    tco = [
        {
            "year": y.year,
            "capital": money(y.capital_usd),
            "energy": money(y.energy_usd),
            "space": money(y.space_usd),
            "support": money(y.support_usd),
            "total": money(y.total_usd),
            "cumulative": money(y.cumulative_usd),
        }
        for y in c.years
    ]
    cost = data["cost"]
    return {
        "design": data["design"],
        "description": data["description"],
        "totals": [
            ("GPUs", f"{data['gpus']:,}"),
            ("nodes", f"{data['nodes']:,}"),
            ("switches", f"{data['switches']:,}"),
            ("racks", f"{data['racks']:,}"),
            ("cables", f"{data['cables']:,} ({data['cable_counting']})"),
            ("cables by medium", ", ".join(f"{n:,} {m}" for m, n in data["cables_by_media"].items())),
            ("capital cost", f"{money(c.capital_usd)} ({money(c.per_gpu_usd)} per GPU)"),
            ("power / heat", f"{c.power_w / 1000:,.1f} kW"),
            (
                f"TCO over {len(c.years)} years",
                f"{money(c.tco_usd)} ({money(c.tco_per_gpu_usd)} per GPU, "
                + (f"${c.tco_per_gpu_hour_usd:.2f}" if c.tco_per_gpu_hour_usd is not None else "-")
                + " per GPU-hour)",
            ),
        ],
        "fabrics": _fabrics(data),
        "jobs": _jobs(data),
        "findings": [
            {
                "severity": f.severity.label,
                "code": f.code,
                "where": " ".join(p for p in (f.path, replace(f, file=spec_relative(build, f.file)).location) if p),
                "message": f.message,
                "hint": f.hint,
            }
            for f in build.findings
        ],
        "pictures": pictures,
        "alerts": [
            {
                "name": a["name"],
                "anchor": a["anchor"],
                "severity": a["severity"],
                "duration": a["duration"] or "at once",
                "metrics": a["metrics"],
                "meaning": a["meaning"],
                "text": {k: a[k].replace("`", "") for k in ("metrics", "meaning")},  # HTML shows them plain
            }
            for a in (alerts(build) if monitoring_settings(build).enabled else [])
        ],
        "cable_columns": CABLE_COLUMNS,
        "cables_json": script_json(cables),
        "cable_count": len(build.allocation.cables),
        "ip_columns": IP_PLAN_COLUMNS,
        "ips_json": script_json(ips),
        "ip_count": len(build.allocation.addresses),
        "linked": linked,
        "split_above": f"{build.design.spec.documents.split_above:,}",
        "bom": bom,
        "fabric_totals": [(k, money(v)) for k, v in c.fabric_totals().items()],
        "capital": money(c.capital_usd),
        "per_gpu": money(c.per_gpu_usd),
        "racks": racks,
        "tco": tco,
        "rates": cost["rates"],
        "note": PLACEHOLDER_NOTE,
        "unmatched_optics": list(c.unmatched_optics),
    }
