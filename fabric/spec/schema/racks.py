"""Where racks stand (`racks`) and the servers that fill them (`nodes`)."""

# No `from __future__ import annotations` in the model modules: pydantic would compile each annotation string
# at import; written ones are evaluated once, by Python.
from typing import Literal

from pydantic import (
    Field,
    field_validator,
)

from fabric.spec.schema.types import (
    Float,
    Int,
    StrictModel,
    check_name,
    check_template,
)


class RackLayout(StrictModel):
    """Where racks stand. Racks are named `<row><position>` (A01, A02, …) and filled row by row."""

    rows: list[str] = Field(default=["A"], min_length=1, description="Row names, front to back.")
    per_row: Int | None = Field(
        default=None,
        ge=1,
        le=10_000,
        description="Racks per row. Default: as many as the design needs, spread over the rows.",
    )
    rack_units: Int = Field(default=48, ge=4, le=60, description="Usable rack units per rack.")
    reserved_u: Int = Field(
        default=0, ge=0, le=60, description="Units kept free at the top of every rack (patch panels)."
    )
    power_kw: Float = Field(default=40.0, gt=0, le=10_000, description="Power budget per rack, kW.")
    pitch_m: Float = Field(default=0.6, gt=0, le=100, description="Rack width: distance between neighbouring racks, m.")
    depth_m: Float = Field(default=1.2, gt=0, le=100, description="Rack depth, m.")
    row_gap_m: Float = Field(default=1.8, ge=0, le=100, description="Aisle between rows, m.")
    layout: Literal["sequential", "superpod"] = Field(
        default="sequential",
        description="`sequential`: each node group, then each fabric's switches, in racks of their own, one after "
        "another (a node's leaf can stand far away). `superpod`: as DGX SuperPODs stand, each unit's nodes (a scalable "
        "unit; without SUs, the nodes of one group of compute leaves) beside a network rack with the leaves that "
        "serve them, of every fabric (in-band and out-of-band leaves too, which then attach their nodes and "
        "switches unit by unit), a unit's racks in one row, every other row filled back to front; storage servers, "
        "head nodes, spines and cores in central racks between the first and the second half of the units. "
        "Cables to the leaves get short: a BMC's copper stays within its unit's racks (the sequential layout runs it "
        "past 100 m from 32,768 GPUs).",
    )

    @field_validator("rows")
    @classmethod
    def _unique_rows(cls, rows: list[str]) -> list[str]:
        for row in rows:
            check_name(row)
        if len(set(rows)) != len(rows):
            raise ValueError("row names must be unique")
        return rows


# --------------------------------------------------------------------------------------------- nodes


class NodeGroup(StrictModel):
    """A group of identical servers (GPU nodes, storage, UFM or management hosts)."""

    group: str = Field(description="Group name, referenced by `fabrics.<f>.attach[].group`.")
    type: str = Field(description="Node type from the catalog (e.g. `dgx-h100`).")
    count: Int = Field(ge=1, description="Number of nodes.")
    per_rack: Int | None = Field(
        default=None, ge=1, le=10_000, description="Nodes per rack. Default: as many as fit by rack units and power."
    )
    name: str = Field(
        default="{group}{index:03d}",
        description="Node name template; fields `{group}` and `{index}` (1-based, from `start`).",
    )
    start: Int = Field(default=1, ge=0, le=1_000_000_000, description="Index of the first node.")

    @field_validator("group")
    @classmethod
    def _group_name(cls, value: str) -> str:
        return check_name(value)

    @field_validator("name")
    @classmethod
    def _template(cls, value: str) -> str:
        return check_template(value, ("group", "index"))
