"""The spec: pydantic models of the YAML a user writes, one module per part of it.

Every model forbids unknown keys and is frozen. Field descriptions are the spec reference
(`docs/spec/reference.md` is generated from them by `fabric schema --markdown`), so they say
what a field means, its default and, where several places can set it, the precedence.
Cross-references (part names, node groups, fabrics) are checked by `loader.py`, which knows
the catalog; these modules check only what one field or one object can tell on its own.
This module holds the root, `Spec`, and the JSON schema; it re-exports every public name of
the section modules, so callers import from `fabric.spec.schema`.
"""

# No `from __future__ import annotations` in the model modules: pydantic would compile each annotation string
# at import; written ones are evaluated once, by Python.
from typing import Any, get_args

from pydantic import ConfigDict, Field, field_validator

from fabric.model.kinds import Role
from fabric.spec.schema.attach import (
    Attach,
    CablingPolicy,
    LayerSwitches,
    Naming,
    NodeAttach,
    Oversubscription,
    OversubscriptionByLayer,
    SwitchChoice,
    SwitchMgmtAttach,
    SwitchRef,
)
from fabric.spec.schema.ethernet import (
    Addressing,
    AsnPlan,
    QosSettings,
    RoutingSettings,
)
from fabric.spec.schema.fabrics import (
    Fabric,
)
from fabric.spec.schema.infiniband import (
    ABS_PATH_RE,
    ROUTING_ENGINES,
    IbQos,
    InfinibandSettings,
    Partition,
    SubnetManager,
)
from fabric.spec.schema.operations import (
    DURATION_RE,
    AlertThresholds,
    Duration,
    ExporterPorts,
    Management,
    MonitoringSettings,
)
from fabric.spec.schema.outputs import (
    LABEL_PRESETS,
    Costs,
    Diagrams,
    Documents,
    Exports,
    KubernetesSettings,
    NetboxSettings,
    SlurmSettings,
    TopologyLabels,
)
from fabric.spec.schema.racks import (
    NodeGroup,
    RackLayout,
)
from fabric.spec.schema.topology import (
    ClosTopology,
    CsvTopology,
    ExplicitLink,
    ExplicitSwitch,
    ExplicitTopology,
    TopologySpec,
)
from fabric.spec.schema.traffic import TrafficSettings
from fabric.spec.schema.types import (
    ENV_RE,
    FABRIC_ROLES,
    HOST_LABEL,
    LAYERS,
    MAX_NAME,
    MAX_RATIO,
    NAME_RE,
    NAME_RULE,
    PART_RE,
    PORT_RE,
    Bool,
    Float,
    Int,
    Network4,
    Network6,
    Ratio,
    RatioText,
    SecretRef,
    StrictModel,
    check_groups,
    check_host,
    check_name,
    check_port,
    check_template,
    format_ratio,
    is_name,
    no_entries,
    parse_ratio,
)


class Spec(StrictModel):
    """A cluster design: racks, node groups and fabrics."""

    model_config = ConfigDict(defer_build=False)  # the root (see StrictModel)

    name: str = Field(description="Design name; outputs go to `output/<name>/`.")
    description: str = Field(default="", max_length=1024, description="Free text (one line).")
    catalog: list[str] = Field(
        default_factory=no_entries,
        description="Extra part files (relative to the spec), merged over the built-in catalog.",
    )
    racks: RackLayout = Field(default_factory=RackLayout.model_construct)
    nodes: list[NodeGroup] = Field(min_length=1)
    fabrics: dict[str, Fabric] = Field(min_length=1, description="Fabrics by name.")
    addressing: Addressing = Field(default_factory=Addressing.model_construct)
    asn: AsnPlan = Field(default_factory=AsnPlan.model_construct)
    cabling: CablingPolicy = Field(default_factory=CablingPolicy.model_construct)
    management: Management = Field(default_factory=Management.model_construct)
    exports: Exports = Field(default_factory=Exports.model_construct)
    costs: Costs = Field(
        default_factory=Costs.model_construct, description="Cost and TCO rates (placeholders to override)."
    )
    diagrams: Diagrams = Field(default_factory=Diagrams.model_construct)
    documents: Documents = Field(default_factory=Documents.model_construct)
    monitoring: MonitoringSettings = Field(default_factory=MonitoringSettings.model_construct)
    traffic: TrafficSettings = Field(
        default_factory=TrafficSettings.model_construct, description="Collective traffic model (fabric traffic)."
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_name(value)

    @field_validator("fabrics")
    @classmethod
    def _fabric_keys(cls, value: dict[str, Fabric]) -> dict[str, Fabric]:
        for key in value:
            check_name(key)
        return value

    def fabric_role(self, key: str) -> Role:
        fabric = self.fabrics[key]
        if fabric.role:
            return fabric.role
        return next((r for r in get_args(Role) if r == key), "compute")

    def dual_homing(self, key: str) -> str:
        """How the nodes of fabric `key` use their ports: `none`, `host_routing` or `bond` (default `none`; an
        out-of-band fabric's ports are management addresses, so it is always `none`)."""
        fabric = self.fabrics[key]
        if fabric.technology != "ethernet" or self.fabric_role(key) == "oob":
            return "none"
        return fabric.dual_homing or "none"


# pydantic leaves the bounds of an optional constrained number (`Int | None = Field(ge=1)`) as its own
# keywords in the JSON schema; editors know JSON Schema's names
_JSON_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _json_bounds(node: Any) -> Any:
    if isinstance(node, dict):
        number = node.get("type") in ("integer", "number")
        return {(_JSON_BOUNDS.get(k, k) if number else k): _json_bounds(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_json_bounds(v) for v in node]
    return node


def json_schema() -> dict[str, Any]:
    """The spec's JSON schema (`fabric schema`, docs/fabric.schema.json) for editors."""
    return dict(_json_bounds(Spec.model_json_schema()))


__all__ = [
    "ABS_PATH_RE",
    "DURATION_RE",
    "ENV_RE",
    "FABRIC_ROLES",
    "HOST_LABEL",
    "LABEL_PRESETS",
    "LAYERS",
    "MAX_NAME",
    "MAX_RATIO",
    "NAME_RE",
    "NAME_RULE",
    "PART_RE",
    "PORT_RE",
    "ROUTING_ENGINES",
    "Addressing",
    "AlertThresholds",
    "AsnPlan",
    "Attach",
    "Bool",
    "CablingPolicy",
    "ClosTopology",
    "Costs",
    "CsvTopology",
    "Diagrams",
    "Documents",
    "Duration",
    "ExplicitLink",
    "ExplicitSwitch",
    "ExplicitTopology",
    "ExporterPorts",
    "Exports",
    "Fabric",
    "Float",
    "IbQos",
    "InfinibandSettings",
    "Int",
    "KubernetesSettings",
    "LayerSwitches",
    "Management",
    "MonitoringSettings",
    "Naming",
    "NetboxSettings",
    "Network4",
    "Network6",
    "NodeAttach",
    "NodeGroup",
    "Oversubscription",
    "OversubscriptionByLayer",
    "Partition",
    "QosSettings",
    "RackLayout",
    "Ratio",
    "RatioText",
    "RoutingSettings",
    "SecretRef",
    "SlurmSettings",
    "Spec",
    "StrictModel",
    "SubnetManager",
    "SwitchChoice",
    "SwitchMgmtAttach",
    "SwitchRef",
    "TopologyLabels",
    "TopologySpec",
    "TrafficSettings",
    "check_groups",
    "check_host",
    "check_name",
    "check_port",
    "check_template",
    "format_ratio",
    "is_name",
    "json_schema",
    "no_entries",
    "parse_ratio",
]
