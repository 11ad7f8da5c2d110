"""How a fabric is put together: switch models per layer, oversubscription, what attaches to the leaves,
the cabling policy and switch names."""

# No `from __future__ import annotations` in the model modules: pydantic would compile each annotation string
# at import; written ones are evaluated once, by Python.
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Discriminator,
    Field,
    Tag,
    field_validator,
)

from fabric.model.kinds import MediaKind
from fabric.spec.platforms import PlatformName
from fabric.spec.schema.types import (
    MAX_NAME,
    NAME_RULE,
    Float,
    Ratio,
    RatioText,
    StrictModel,
    check_name,
    check_template,
    is_name,
)


class SwitchChoice(StrictModel):
    model: str = Field(description="Switch model from the catalog.")
    platform: PlatformName | None = Field(
        default=None,
        description="Network OS of this layer's switches. Precedence: this field → `fabrics.<f>.platform` → the "
        "catalog model's default platform.",
    )


def _switch_choice(value: Any) -> Any:
    return {"model": value} if isinstance(value, str) else value


SwitchRef = Annotated[SwitchChoice, BeforeValidator(_switch_choice, json_schema_input_type=str | SwitchChoice)]


class LayerSwitches(StrictModel):
    """Switch model per layer: a model name, or `{model, platform}`."""

    leaf: SwitchRef
    spine: SwitchRef | None = Field(default=None, description="Default: the leaf model.")
    core: SwitchRef | None = Field(default=None, description="Default: the spine model.")

    def for_layer(self, layer: str) -> SwitchChoice:
        if layer == "leaf":
            return self.leaf
        if layer == "spine":
            return self.spine or self.leaf
        return self.core or self.spine or self.leaf


class OversubscriptionByLayer(StrictModel):
    leaf: Ratio = Field(default=1.0, description="Leaf down:up bandwidth.")
    spine: Ratio = Field(default=1.0, description="Spine down:up bandwidth (3 tiers).")


def _oversub(value: Any) -> Any:
    return value if isinstance(value, dict | OversubscriptionByLayer) else {"leaf": value, "spine": value}


Oversubscription = Annotated[
    OversubscriptionByLayer,
    BeforeValidator(_oversub, json_schema_input_type=RatioText | float | OversubscriptionByLayer),
]


class NodeAttach(StrictModel):
    group: str = Field(description="Node group (`nodes[].group`).")
    ports: str = Field(description="Port group of the node type (e.g. `compute`, `storage`, `inband`, `bmc`).")

    @field_validator("group", "ports")
    @classmethod
    def _names(cls, value: str) -> str:
        return check_name(value)


class SwitchMgmtAttach(StrictModel):
    switch_mgmt: list[str] | Literal["all"] = Field(
        description="Attach the management ports of these fabrics' switches (`all`: every other fabric)."
    )

    @field_validator("switch_mgmt")
    @classmethod
    def _fabrics(cls, value: list[str] | str) -> list[str] | str:
        if isinstance(value, list):
            for name in value:
                check_name(name)
        return value


def _attach_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "switch-mgmt-attach" if "switch_mgmt" in value else "node-attach"
    return "switch-mgmt-attach" if isinstance(value, SwitchMgmtAttach) else "node-attach"


Attach = Annotated[
    Annotated[NodeAttach, Tag("node-attach")] | Annotated[SwitchMgmtAttach, Tag("switch-mgmt-attach")],
    Discriminator(_attach_tag),
]


class CablingPolicy(StrictModel):
    """How cables are chosen and sized. Precedence: `fabrics.<f>.cabling` → `cabling` → built-in default."""

    media: list[MediaKind] | None = Field(
        default=None, description="Allowed media kinds, in order of preference. Default: any, catalog order."
    )
    slack_pct: Float | None = Field(
        default=None, ge=0, le=100, description="Extra length on top of the route, %. Default 10."
    )
    service_loop_m: Float | None = Field(
        default=None, ge=0, le=1000, description="Fixed extra per cable, m. Default 1.0."
    )
    tray_height_m: Float | None = Field(
        default=None, ge=0, le=100, description="Cable tray above the racks, m. Default 0.3."
    )


class Naming(StrictModel):
    """Switch name templates. Fields: `{plane}`, `{su}`, `{pod}`, `{index}` (1-based), `{rail}` (GPU index, 0-based)."""

    prefix: str | None = Field(
        default=None,
        description="Put before every switch name. Default: none for the fabric named `compute`, else `<fabric>-`.",
    )
    leaf: str | None = Field(
        default=None, description="Default: `su{su}-rail{rail}-leaf` when rail-optimized, else `leaf{index:02d}`."
    )
    spine: str | None = Field(
        default=None, description="Default: `spine{index:02d}`; `pod{pod}-spine{index:02d}` in 3 tiers."
    )
    core: str = Field(default="core{index:02d}", description="Core switch names.")

    @field_validator("leaf", "spine", "core")
    @classmethod
    def _template(cls, value: str | None) -> str | None:
        return None if value is None else check_template(value, ("plane", "su", "rail", "pod", "index"))

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        if value is not None and value and not is_name(value + "x"):
            raise ValueError(f"a prefix {NAME_RULE} (at most {MAX_NAME - 1}, no '..')")
        return value
