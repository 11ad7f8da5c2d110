"""`fabric show`'s tables: the design in a line, its fabrics, cables by media, cost of ownership, job bandwidth.

Each function takes the summary output's data (fabric.render.outputs.summary), and returns what the console
prints: a line of rich markup or a table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fabric.cli.views.console import shown
from fabric.model.kinds import Tier

if TYPE_CHECKING:
    from rich.table import Table


def headline(data: Mapping[str, Any]) -> str:
    return (
        f"[bold]{shown(data['design'])}[/bold]: {data['gpus']:,} GPUs, {data['nodes']:,} nodes, "
        f"{data['switches']:,} switches, {data['racks']} racks, {data['cables']:,} cables"
    )


def fabrics_table(data: Mapping[str, Any]) -> Table:
    """A row per fabric: switches and links per tier, oversubscription, bisection, ECMP, worst single failure."""
    from rich.table import Table

    from fabric.render.outputs.summary import oversubscription_shown

    table = Table(title="Fabrics", show_lines=False)
    for column, justify in (
        ("fabric", "left"),
        ("tech", "left"),
        ("tiers", "right"),
        ("leaf", "right"),
        ("spine", "right"),
        ("core", "right"),
        (Tier.NODE_LEAF, "right"),
        (Tier.LEAF_SPINE, "right"),
        (Tier.SPINE_CORE, "right"),
        ("oversub.", "right"),
        ("bisection", "right"),
        ("ECMP", "right"),
        ("worst failure", "right"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for key, f in data["fabrics"].items():
        over = oversubscription_shown(f, " / ")
        failure = f["worst_single_failure_bisection_pct"]
        table.add_row(
            shown(key),
            f["technology"],
            str(f["tiers"]),
            *(str(f["switches"][k]) for k in ("leaf", "spine", "core")),
            *(str(f["links"][k]) for k in (Tier.NODE_LEAF, Tier.LEAF_SPINE, Tier.SPINE_CORE)),
            over or "-",
            f"{(f['bisection_gbps'] or 0) / 1000:,.1f} Tb/s ({f['bisection_pct']}%)",
            str(f["min_ecmp_width"] if f["min_ecmp_width"] is not None else "-"),
            f"{failure}% ({shown(f['worst_single_failure'])})" if failure is not None else "-",
        )
    return table


NARROW_FABRICS = 28  # a fabric's column in the narrow Fabrics table (longer values fold)


def fabrics_tables(data: Mapping[str, Any], width: int) -> list[Table]:
    """The Fabrics table as wide as the terminal allows: a row per fabric when that fits `width`; else a column per
    fabric and a row per figure, as many fabrics a table as fit (an 80-column terminal shows each value whole)."""
    from rich.console import Console

    from fabric.render.outputs.summary import oversubscription_shown

    wide = fabrics_table(data)
    if Console(width=10_000).measure(wide).maximum <= width:
        return [wide]
    from rich.table import Table

    def values(f: Mapping[str, Any]) -> dict[str, str]:
        failure = f["worst_single_failure_bisection_pct"]
        return {
            "tech": f["technology"],
            "tiers": str(f["tiers"]),
            "leaf/spine/core": " / ".join(str(f["switches"][k]) for k in ("leaf", "spine", "core")),
            Tier.NODE_LEAF: str(f["links"][Tier.NODE_LEAF]),
            Tier.LEAF_SPINE: str(f["links"][Tier.LEAF_SPINE]),
            Tier.SPINE_CORE: str(f["links"][Tier.SPINE_CORE]),
            "oversub.": oversubscription_shown(f, " / ") or "-",
            "bisection": f"{(f['bisection_gbps'] or 0) / 1000:,.1f} Tb/s ({f['bisection_pct']}%)",
            "ECMP": str(f["min_ecmp_width"] if f["min_ecmp_width"] is not None else "-"),
            "worst failure": f"{failure}% ({shown(f['worst_single_failure'])})" if failure is not None else "-",
        }

    def narrow(keys: list[str], title: str | None) -> Table:
        table = Table(title=title, show_lines=False)
        table.add_column("")
        for key in keys:
            table.add_column(shown(key), justify="right", overflow="fold", max_width=NARROW_FABRICS)
        columns = [values(data["fabrics"][key]) for key in keys]
        for name in columns[0]:
            table.add_row(str(name), *(c[name] for c in columns))
        return table

    measure = Console(width=10_000).measure
    tables: list[Table] = []
    chunk: list[str] = []
    for key in data["fabrics"]:  # as many fabrics a table as fit
        if chunk and measure(narrow([*chunk, key], None)).maximum > width:
            tables.append(narrow(chunk, None if tables else "Fabrics"))
            chunk = []
        chunk.append(key)
    if chunk:
        tables.append(narrow(chunk, None if tables else "Fabrics"))
    return tables


def media_table(totals: Mapping[str, int], per_fabric: Mapping[str, Mapping[str, int]]) -> Table:
    """Cables per medium: a column per fabric (`per_fabric`: fabric → medium → count), then the total."""
    from rich.table import Table

    media = Table(title="Cables by media")
    media.add_column("media")
    for key in per_fabric:
        media.add_column(shown(key), justify="right")
    media.add_column("total", justify="right")
    for name, total in totals.items():
        media.add_row(shown(name), *(str(counts.get(name, 0)) for counts in per_fabric.values()), str(total))
    return media


def tco_table(cost: Mapping[str, Any], width: int | None = None) -> Table:
    """The total cost of ownership year by year; narrower than `width` columns in millions of USD."""
    from rich.console import Console
    from rich.table import Table

    keys = ("capital_usd", "energy_usd", "space_usd", "support_usd", "total_usd", "cumulative_usd")

    def table(unit: str, money: Any) -> Table:
        tco = Table(title=f"Total cost of ownership, {len(cost['tco_years'])} years ({unit}; {cost['note']})")
        for column in ("year", "capital", "energy", "space", "support", "total", "cumulative"):
            tco.add_column(column, justify="right")
        for y in cost["tco_years"]:
            tco.add_row(str(y["year"]), *(money(y[k]) for k in keys))
        return tco

    whole = table("USD", lambda v: f"{v:,.0f}")
    if width is None or Console(width=10_000).measure(whole).maximum <= width:
        return whole
    return table("million USD", lambda v: f"{v / 1e6:,.2f}")


def cost_line(cost: Mapping[str, Any]) -> str:
    per_gpu = cost["capital_per_gpu_usd"]
    return (
        f"capital ${cost['capital_usd']:,.0f}"
        + (f" (${per_gpu:,.0f} per GPU)" if per_gpu is not None else "")
        + f", power {cost['power_kw']:,.1f} kW (heat {cost['heat_kw']:,.1f} kW), TCO ${cost['tco_usd']:,.0f}"
        + (f" = ${cost['tco_per_gpu_hour_usd']:.2f} per GPU-hour" if cost["tco_per_gpu_hour_usd"] is not None else "")
    )


def job_table(jobs: Mapping[str, Any]) -> Table:
    """Gb/s per GPU of compact jobs of growing size, intact and after the worst single failure."""
    from rich.table import Table

    title = f"Job bandwidth on {shown(jobs['fabric'])}: Gb/s per GPU across a compact job's worst bisection"
    table = Table(title=title)
    for column in ("nodes", "GPUs", "within", "NIC", "intact", "worst failure"):
        table.add_column(column, justify="left" if column == "within" else "right", overflow="fold")
    for job in jobs["jobs"]:
        element = job["worst_single_failure"]
        table.add_row(
            f"{job['nodes']:,}",
            f"{job['gpus']:,}",
            shown(job["span"] or "-"),
            f"{job['nic_gbps_per_gpu']:g}",
            f"{job['intact_gbps_per_gpu']:g} ({job['intact_pct']:g}%)",
            f"{job['worst_single_failure_gbps_per_gpu']:g}" + (f" ({shown(element)})" if element else ""),
        )
    domain = jobs.get("nvlink_domain")
    if domain:
        table.caption = (
            f"NVLink domains of {domain['gpus']} GPUs ({shown(domain['system'])}): a job within one (`within` "
            "names it) talks over NVLink, its traffic does not touch this fabric"
        )
    return table


def _routing_label(row: Mapping[str, Any]) -> str:
    if row["routing"] == "ecmp":
        return f"ECMP, {row['qps']} QP" + ("s" if row["qps"] != 1 else "")
    if row["routing"] == "sm":
        return "SM routes"
    return str(row["routing"])


def _pattern_label(row: Mapping[str, Any]) -> str:
    label = str(row["pattern"])
    if row.get("distance") is not None:
        label += f" +{row['distance']}"
    if row.get("pxn") is False:
        label += " (no PXN)"
    return label


def traffic_table(data: Mapping[str, Any]) -> Table:
    """`fabric traffic`: a row per pattern and routing, % of the NIC rate per GPU (mean, median, 5th percentile)."""
    from rich.table import Table

    title = (
        f"Traffic on {shown(data['fabric'])}, {data['nodes']:,} nodes: delivered % of the NIC rate per GPU "
        "(max-min fair fluid model)"
    )
    table = Table(title=title)
    for column in ("pattern", "routing", "seeds", "mean", "median", "5th pct"):
        table.add_column(column, justify="left" if column in ("pattern", "routing") else "right")
    for row in data["traffic"]:
        table.add_row(
            _pattern_label(row),
            _routing_label(row),
            f"{row['seeds']}",
            f"{row['mean_pct']:g}%",
            f"{row['p50_pct']:g}%",
            f"{row['p5_pct']:g}%",
        )
    return table


def job_traffic_table(jobs: Mapping[str, Any]) -> Table | None:
    """Per job size, each pattern's mean % of the NIC rate per GPU under each routing; None without figures."""
    from rich.table import Table

    rows = [job for job in jobs["jobs"] if job.get("traffic")]
    if not rows:
        return None
    patterns = list(dict.fromkeys((f["pattern"], f.get("pxn")) for f in rows[0]["traffic"]))
    routings = list(dict.fromkeys(_routing_label(f) for f in rows[0]["traffic"]))
    table = Table(
        title=f"Collectives on {shown(jobs['fabric'])}: mean % of the NIC rate per GPU ({' / '.join(routings)})"
    )
    table.add_column("nodes", justify="right")
    for pattern, pxn in patterns:
        table.add_column(pattern + (" (no PXN)" if pxn is False else ""), justify="right")
    for job in rows:
        cells = []
        for pattern, pxn in patterns:
            got = [f for f in job["traffic"] if (f["pattern"], f.get("pxn")) == (pattern, pxn)]
            cells.append(" / ".join(f"{f['mean_pct']:g}" for f in got))
        table.add_row(f"{job['nodes']:,}", *cells)
    return table
