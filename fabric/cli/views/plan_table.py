"""`fabric plan`'s table: the ranked candidates, a row each, and the lines of those ruled out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fabric.cli.views.console import shown

if TYPE_CHECKING:
    from rich.table import Table


def plan_table(data: Mapping[str, Any], best_only: bool = False) -> Table:
    """The candidates that build, in rank order (with the cost of growing when the plan asks for it); `best_only`:
    each node type's best candidate only, so node types compare in one short table."""
    from rich.table import Table

    grow = data["grow_to"]
    title = f"fabric plan: {data['gpus']:,} GPUs" + (f", grown to {grow:,}" if grow else "") + f" ({data['note']})"
    metric = data.get("metric", "tco-per-delivered-pflops")
    title += f"\nranked by {metric} ({data.get('precision', 'bf16').upper()} dense)"
    if data.get("delivered", "bisection") != "bisection":
        title += f", delivered = the traffic model under {data['delivered']} routing (worst standard pattern)"
    if best_only:
        title += ", the best candidate of each node type (--node: every candidate of a node type)"
    if any(row.get("closed_form") for row in data["candidates"]):
        title += (
            "\nfrom each candidate's closed form, none built: costs at least (within ~1 % of a build's), cables = links"
        )
    table = Table(title=title)
    per_pf = metric == "tco-per-pflops"  # its own column; the other metrics have theirs in every table
    columns = ["#", "cand.", "design", "TCO/deliv. PF", *(["TCO/PF"] if per_pf else []), "TCO/GPU", "PFLOPS", "deliv."]
    columns += ["GPUs", "leaf/spine/core", "optics", "cables", "capital", "$/GPU", "kW"]
    columns += ["TCO", "bisect.", "worst fail.", "ECMP", "headroom", "job GB/s/GPU"]
    columns += ["later", "re-cabled"] if grow else []
    for column in columns:
        left = column == "design"
        table.add_column(column, justify="left" if left else "right", overflow="fold", no_wrap=left)
    for row in data["candidates"]:
        first = [str(row["rank"]), str(row["candidate"]), shown(row["label"])]
        if row["status"] == "fails":  # listed under the table with the finding that rules them out
            continue
        if best_only and not row["best_of_node"] and row["status"] == "ok":
            continue
        if row["identical_candidates"]:
            first[1] += "=" + ",".join(str(n) for n in row["identical_candidates"])
        whole = row["job_bandwidth"][-1] if row["job_bandwidth"] else None
        cells = [
            _thousands(row["tco_per_delivered_pflops_usd"]),
            *([_thousands(row["tco_per_pflops_usd"])] if per_pf else []),
            f"${row['tco_per_gpu_usd']:,.0f}",
            f"{row['pflops']:,.0f}",
            f"{row['delivered_fraction'] * 100:.0f}%" if row["delivered_fraction"] is not None else "≤100%",
            f"{row['gpus']:,}",
            "/".join(str(row["switches"][k]) for k in ("leaf", "spine", "core")),
            f"{row['optics']:,}" if row["optics"] is not None else "-",
            f"{row['cables']:,}",
            f"${row['capital_usd'] / 1e6:,.2f}M",
            f"${row['capital_per_gpu_usd']:,.0f}",
            f"{row['power_kw']:,.0f}",
            f"${row['tco_usd'] / 1e6:,.1f}M",
            f"{row['bisection_pct']:g}%" if row["bisection_pct"] is not None else "-",
            f"{row['worst_single_failure_pct']:g}%" if row["worst_single_failure_pct"] is not None else "-",
            str(row["min_ecmp_width"] if row["min_ecmp_width"] is not None else "-"),
            f"{row['headroom_gpus']:,}" if row["headroom_gpus"] is not None else "-",
            f"{whole['intact_gbps_per_gpu'] / 8:g}/{whole['worst_single_failure_gbps_per_gpu'] / 8:g}"
            if whole
            else "-",
        ]
        if grow:
            g = row.get("growth") or {}
            cells += (
                [f"${g['later_usd'] / 1e6:,.2f}M", f"{g['recabled']:,}"]
                if g.get("ok")
                else [f"fails: {shown(g.get('ruling_finding') or '')}", ""]
            )
        if row["status"] != "ok":
            cells[0] = f"[yellow]{row['status']}[/yellow] {cells[0]}"
        table.add_row(*first, *cells)
    return table


def _thousands(usd: float | None) -> str:
    return f"${usd / 1e3:,.1f}k" if usd is not None else "-"


def ruled_out(data: Mapping[str, Any]) -> list[str]:
    """A line per candidate that fails, with the finding that rules it out (listed under the table)."""
    failing = [row for row in data["candidates"] if row["status"] == "fails"]
    if not failing:
        return []
    return [f"Ruled out ({len(failing)}):"] + [
        f"  #{row['rank']} candidate {row['candidate']} {shown(row['label'])}: "
        f"{shown(row['ruling_finding'] or 'invalid spec')}"
        for row in failing
    ]
