"""Settings of what a build writes besides switch configs: scheduler and NetBox exports, costs, diagrams and
documents."""

# No `from __future__ import annotations` in the model modules: pydantic would compile each annotation string
# at import; written ones are evaluated once, by Python.
import re
from typing import Literal

from pydantic import (
    Field,
    field_validator,
)

from fabric.spec.schema.types import (
    Bool,
    Float,
    Int,
    StrictModel,
    check_groups,
)

LABEL_PRESETS = ("topograph", "topograph-legacy", "kueue", "gke")
_LABEL_KEY_RE = re.compile(
    r"^(?:(?=.{1,253}/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)


def _label_key(value: str | None) -> str | None:
    if value is not None and not _LABEL_KEY_RE.match(value):
        raise ValueError(f"{value!r} is not a Kubernetes label key (`[prefix/]name`, name ≤ 63 characters)")
    return value


class SlurmSettings(StrictModel):
    """Which nodes the scheduler exports (Slurm and Kubernetes) cover, and from which fabric."""

    fabric: str | None = Field(
        default=None, description="Fabric whose locality the schedulers see. Default: the first `compute` fabric."
    )
    groups: list[str] | None = Field(
        default=None,
        description="Node groups that are scheduler nodes. Default: the groups attached to that fabric whose node "
        "type has GPUs (all attached groups when none has).",
    )
    link_speed: Bool = Field(
        default=True, description="Write `LinkSpeed=<Gb/s>` (the links below each switch) into topology.conf."
    )

    @field_validator("groups")
    @classmethod
    def _groups(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else check_groups(value)


class TopologyLabels(StrictModel):
    """Node label keys per locality level, set one by one; a level without a key is not labelled.

    `tier0` is the lowest logical switch (a scalable unit's merged rail leaves, or a leaf), `tier1` the one
    above (spine group or pod), `tier2` the next (core group), `host` the node itself.
    """

    tier0: str | None = Field(default=None, description="Key of the lowest switch level.")
    tier1: str | None = Field(default=None, description="Key of the level above `tier0`.")
    tier2: str | None = Field(default=None, description="Key of the level above `tier1`.")
    tier3: str | None = Field(default=None, description="Key of the level above `tier2`.")
    host: str | None = Field(
        default=None,
        description="Extra per-host key (e.g. GKE's `gce-topology-host`); `kubernetes.io/hostname` "
        "is always the last Kueue level.",
    )

    @field_validator("tier0", "tier1", "tier2", "tier3", "host")
    @classmethod
    def _key(cls, value: str | None) -> str | None:
        return _label_key(value)


class KubernetesSettings(StrictModel):
    """Topology labels and objects for Kueue, Volcano and NVIDIA topograph (`k8s/`)."""

    preset: Literal["topograph", "topograph-legacy", "kueue", "gke"] = Field(
        default="topograph",
        description="Label keys: `topograph` (`fabric.topograph.run/tier-N`, topograph 1.0+), `topograph-legacy` "
        "(`network.topology.nvidia.com/leaf|spine|core`, topograph 0.3–0.5), `kueue` (Kueue's example keys "
        "`cloud.provider.com/topology-rack|block`), `gke` (`cloud.google.com/gce-topology-subblock|block|host`).",
    )
    labels: TopologyLabels = Field(
        default_factory=TopologyLabels.model_construct, description="Keys set one by one; each wins over the preset's."
    )
    group_label: str = Field(
        default="fabric.topology/node-group",
        description="Label holding a node's group; the Kueue ResourceFlavor selects the nodes by it.",
    )
    topology_name: str = Field(default="fabric", description="Name of the Kueue Topology and ResourceFlavor.")
    nvlink_label: str | None = Field(
        default="fabric.topology/nvlink-domain",
        description="Label holding a node's NVLink domain (a rack-scale system's rack, e.g. `nvl-a01`), on nodes in "
        "one; `null`: none. NVIDIA's GPU feature discovery sets `nvidia.com/gpu.clique` from the running GPUs.",
    )
    volcano_members: Literal["exact", "label"] = Field(
        default="exact",
        description="Volcano HyperNode members of the lowest tier: nodes by exact name, or by the tier-0 label.",
    )

    @field_validator("group_label")
    @classmethod
    def _group_key(cls, value: str) -> str:
        return _label_key(value) or value

    @field_validator("nvlink_label")
    @classmethod
    def _nvlink_key(cls, value: str | None) -> str | None:
        return _label_key(value)

    @field_validator("topology_name")
    @classmethod
    def _object_name(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", value):
            raise ValueError("must be a DNS label: lower-case letters, digits and '-', at most 63 characters")
        return value


class NetboxSettings(StrictModel):
    """NetBox bulk-import files (`netbox/`)."""

    site: str | None = Field(default=None, description="Site name. Default: the design name.")
    status: Literal["planned", "staged", "active"] = Field(
        default="planned", description="Status of the imported devices (sites, racks and cables follow it)."
    )


class Exports(StrictModel):
    """Cluster-side exports: scheduler topology (Slurm, Kubernetes) and the NetBox import."""

    scheduler: SlurmSettings = Field(default_factory=SlurmSettings.model_construct)
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings.model_construct)
    netbox: NetboxSettings = Field(default_factory=NetboxSettings.model_construct)


class Costs(StrictModel):
    """Cost and total-cost-of-ownership settings. Every default is a PLACEHOLDER: put your own rates here.

    Capital cost is the bill of materials (catalog prices, themselves placeholders); energy is the design's
    power × `load_pct` × `pue` × `energy_usd_per_kwh` × 8,760 h a year; space is racks × `space_usd_per_rack_month`
    × 12; support is `support_pct_per_year` of the capital cost every year.
    """

    years: Int = Field(default=5, ge=1, le=10, description="Years of the total cost of ownership (3–5 is usual).")
    energy_usd_per_kwh: Float = Field(default=0.10, ge=0, description="Price of energy, USD per kWh (placeholder).")
    pue: Float = Field(
        default=1.3, ge=1, le=3, description="Power usage effectiveness of the datacenter (placeholder)."
    )
    load_pct: Float = Field(
        default=80,
        gt=0,
        le=100,
        description="Average draw as a percentage of the catalog's maximum power (placeholder).",
    )
    space_usd_per_rack_month: Float = Field(
        default=1500, ge=0, description="Datacenter space and cooling per rack and month, USD (placeholder)."
    )
    support_pct_per_year: Float = Field(
        default=8, ge=0, le=100, description="Hardware support per year, percent of the capital cost (placeholder)."
    )
    rack: str = Field(default="rack-48u", description="Rack enclosure from the catalog's `racks`, one per rack used.")
    pdu: str = Field(default="pdu-3ph-17kw", description="Rack PDU from the catalog's `pdus`.")
    pdus_per_rack: Int | None = Field(
        default=None,
        ge=0,
        description="PDUs per rack. Default: enough PDUs to carry the rack's power budget (`racks.power_kw`), "
        "twice over (A and B feeds).",
    )


class Diagrams(StrictModel):
    """How the pictures are drawn."""

    topology: Literal["auto", "detailed", "aggregated"] = Field(
        default="auto",
        description="Topology diagrams: `detailed` draws every switch, `aggregated` one box per scalable unit, pod "
        "or tier group; `auto` aggregates a fabric of more than `aggregate_above` switches.",
    )
    aggregate_above: Int = Field(default=32, ge=1, description="`auto`: switches above which a fabric is aggregated.")
    width_pt: Int = Field(
        default=1100,
        ge=200,
        description="`auto`: a detailed topology picture estimated wider than this (points; 1,100 pt is about "
        "1,470 px, what the report shows at a 1,600-px window without shrinking the text) draws its switches "
        "in runs of consecutive names (`leaf01–leaf04 (4)`) with the runs' link totals; rack elevations wrap "
        "their racks into lines of this width.",
    )


class Documents(StrictModel):
    """The documents for people at scale. `cabling.csv` (and the other machine-readable plans) always hold every
    cable; above `split_above` cables, `cabling.md` becomes an index of one file per rack (`cabling/<rack>.md`),
    `cabling.xlsx` an index of those (or, with `row_workbooks`, of one workbook per row of racks,
    `cabling/row-<row>.xlsx`), and `report.html` links the cable and address tables instead of embedding them."""

    split_above: Int = Field(
        default=10_000,
        ge=1,
        description="Cables above which the cabling documents are written per rack (Markdown) and per row of racks "
        "(workbooks) with an index, and the report links its cable and address tables.",
    )
    row_workbooks: Bool = Field(
        default=False,
        description="Above `split_above`, also write one workbook per row of racks (`cabling/row-<row>.xlsx`). "
        "Off by default: at 300,000 cables they are 9.6 million cells, some 40 s of CPU; cabling.csv holds every "
        "cable and cabling.xlsx lists the per-rack documents.",
    )
