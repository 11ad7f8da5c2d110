"""bom.csv and power.csv (prices are placeholders; both files say so in their last column)."""

from __future__ import annotations

from fabric.costing import PLACEHOLDER_NOTE, costing
from fabric.pipeline import Build
from fabric.render.engine.registry import Output, one_file
from fabric.render.outputs.tables import csv_text

BOM_COLUMNS = (
    "category",
    "model",
    "fabric",
    "count",
    "unit_price_usd",
    "total_price_usd",
    "detail",
    "description",
    "note",
)
POWER_COLUMNS = ("rack", "devices_w", "optics_w", "total_w", "budget_w", "used_pct", "heat_kw", "heat_btu_h")


def _usd(value: float) -> str:
    return f"{value:.2f}"


def bom_csv(build: Build) -> str:
    return csv_text(
        BOM_COLUMNS,
        (
            (
                line.category,
                line.model,
                line.fabric,
                line.count,
                _usd(line.unit_price_usd),
                _usd(line.total_usd),
                line.detail,
                line.description,
                PLACEHOLDER_NOTE,
            )
            for line in costing(build).lines
        ),
    )


def power_csv(build: Build) -> str:
    return csv_text(
        POWER_COLUMNS,
        (
            (
                r.rack,
                r.devices_w,
                f"{r.optics_w:g}",
                f"{r.total_w:g}",
                f"{r.budget_w:g}",
                f"{100 * r.total_w / r.budget_w:.1f}",
                f"{r.total_w / 1000:.2f}",
                f"{r.total_w * 3.412:.0f}",
            )
            for r in costing(build).racks
        ),
    )


# with the pictures and the report, which read the same costing (made once per process)
OUTPUTS: tuple[Output, ...] = (
    one_file("bom", "bom.csv", bom_csv, together="diagrams", weight=0.5),
    one_file("power", "power.csv", power_csv, together="diagrams"),
)
