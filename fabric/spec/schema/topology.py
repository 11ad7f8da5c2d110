"""A fabric's `topology`: a generated Clos, switches and links given by hand, or a cabling CSV."""

# No `from __future__ import annotations` in the model modules: pydantic would compile each annotation string
# at import; written ones are evaluated once, by Python.
from typing import Annotated, Literal, Self

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from fabric.model.kinds import SwitchLayer
from fabric.spec.schema.types import (
    MAX_NAME,
    NAME_RULE,
    Bool,
    Float,
    Int,
    StrictModel,
    check_name,
    check_port,
    is_name,
)


class ClosTopology(StrictModel):
    """A generated folded Clos (fat tree / spine-leaf) of 2 or 3 tiers."""

    kind: Literal["fat-tree", "spine-leaf", "clos"] = Field(
        description="`fat-tree`, `spine-leaf` and `clos` are the same generator."
    )
    tiers: Literal["auto", 2, 3] = Field(
        default="auto",
        description="Switch tiers. `auto`: the fewest tiers that reach every endpoint at the target oversubscription.",
    )
    rail_optimized: Bool = Field(
        default=False,
        description="Port i (GPU i) of every node in a scalable unit lands on that unit's rail-i leaf.",
    )
    scalable_unit: Int | None = Field(
        default=None, ge=1, le=1_000_000, description="Nodes per scalable unit (SU). Required when `rail_optimized`."
    )
    planes: Int = Field(
        default=1,
        ge=1,
        le=8,
        description="Parallel identical fabrics. A node's attached ports are dealt over the planes in turn "
        "(port j → plane j mod planes, ports ordered by rail).",
    )
    partial_su: Literal["full", "populated"] = Field(
        default="full",
        description="`full` (NVIDIA's rule): a partly filled SU still gets all its leaves and uplinks. "
        "`populated`: the last SU's leaves get only the uplinks their connected ports need.",
    )
    reserved_slots: Int = Field(
        default=0,
        ge=0,
        le=1_000_000,
        description="Node slots at the end of the first scalable unit that the rail nodes skip, left to the "
        "non-rail ports (a SuperPOD's UFM appliances take the slot of the DGX it leaves out): a count grown by whole "
        "SUs never takes them, so growth moves nothing. Rail-optimized only.",
    )
    leaves: Int | None = Field(default=None, ge=1, le=100_000, description="At least this many leaves (per plane).")
    spines: Int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="Spines (per plane; per pod in 3 tiers). Default: the fewest that fit, spread evenly.",
    )
    cores: Int | None = Field(
        default=None, ge=1, le=100_000, description="Cores per core group (3 tiers). Default: the fewest that fit."
    )
    downlinks: Int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description="Node-facing ports per leaf. Default: from the radix and oversubscription.",
    )
    uplinks: Int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description="Spine-facing ports per leaf. Default: from the radix and oversubscription.",
    )
    spine_uplinks: Int | None = Field(default=None, ge=1, le=4096, description="Core-facing ports per spine (3 tiers).")
    spine_downlinks: Int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description="Leaf-facing ports per spine (3 tiers); with `spine_uplinks` it sets a pod's size "
        "(leaves per pod = spine_downlinks / links from a leaf to each spine). Default: the rest of the spine's ports.",
    )

    @model_validator(mode="after")
    def _su_needed(self) -> Self:
        if self.rail_optimized and self.scalable_unit is None:
            raise ValueError("rail_optimized needs scalable_unit (nodes per SU, e.g. 32)")
        if self.reserved_slots and not self.rail_optimized:
            raise ValueError("reserved_slots needs rail_optimized (slots of a scalable unit's rail leaves)")
        if self.reserved_slots and self.scalable_unit is not None and self.reserved_slots >= self.scalable_unit:
            raise ValueError("reserved_slots must leave the first scalable unit at least one node slot")
        return self


class ExplicitSwitch(StrictModel):
    name: str = Field(description="Switch name, unique in the design.")
    model: str = Field(description="Switch model from the catalog.")
    layer: SwitchLayer = Field(description="Tier of the switch.")
    rack: str | None = Field(default=None, description="Rack name (e.g. `C03`); needed for cable lengths.")
    u: Int | None = Field(default=None, ge=1, le=60, description="Lowest rack unit the switch occupies.")
    plane: Int | None = Field(default=None, ge=1, le=8, description="Plane, when the fabric has several.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_name(value)

    @field_validator("rack")
    @classmethod
    def _rack(cls, value: str | None) -> str | None:
        return None if value is None else check_name(value)


class ExplicitLink(StrictModel):
    a: str = Field(description="One end, `device:port`.")
    b: str = Field(description="Other end, `device:port`.")
    media: str | None = Field(default=None, description="Media part name; default: chosen by distance.")
    length_m: Float | None = Field(
        default=None, gt=0, le=10_000, description="Cable length; default: from rack positions."
    )

    @field_validator("a", "b")
    @classmethod
    def _end(cls, value: str) -> str:
        device, _, port = value.partition(":")
        if not device or not port:
            raise ValueError("is not `device:port`")
        if not is_name(device):
            raise ValueError(f"device {NAME_RULE} (at most {MAX_NAME}, no '..')")
        check_port(port)
        return value


class ExplicitTopology(StrictModel):
    """A topology given by hand: switches and links. All checks run on it as on a generated one."""

    kind: Literal["explicit"]
    switches: list[ExplicitSwitch] = Field(min_length=1)
    links: list[ExplicitLink] = Field(min_length=1)
    rail_optimized: Bool = Field(default=False, description="Check that every leaf carries the ports of one rail only.")


class CsvTopology(StrictModel):
    """A topology imported from a cabling CSV in fabric's own `cabling.csv` format."""

    kind: Literal["cabling-csv"]
    file: str = Field(description="CSV path, relative to the spec file.")
    rail_optimized: Bool = Field(default=False, description="Check that every leaf carries the ports of one rail only.")
    models: dict[str, str] = Field(
        default_factory=dict,
        description="Switch model per device name; default: `fabrics.<f>.switches.<layer>` by the row's `tier`.",
    )

    @field_validator("models")
    @classmethod
    def _devices(cls, value: dict[str, str]) -> dict[str, str]:
        for device in value:
            check_name(device)
        return value


TopologySpec = Annotated[
    ClosTopology | ExplicitTopology | CsvTopology,
    Field(discriminator="kind"),
]
