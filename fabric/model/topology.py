"""The frozen values the pipeline passes along: devices, links and per-fabric topologies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import networkx as nx

from fabric.model.findings import Finding
from fabric.model.kinds import Layer, LayerName, Role, Technology, Tier, TierName

LAYER_RANK: Mapping[str, int] = {Layer.NODE: 0, Layer.LEAF: 1, Layer.SPINE: 2, Layer.CORE: 3}
TIER_OF_LAYER: Mapping[str, TierName] = {
    Layer.LEAF: Tier.NODE_LEAF,
    Layer.SPINE: Tier.LEAF_SPINE,
    Layer.CORE: Tier.SPINE_CORE,
}


@dataclass(frozen=True, slots=True)
class Device:
    """A node or a switch, placed in a rack. Switches belong to one fabric; nodes to none."""

    name: str
    layer: LayerName
    model: str  # catalog key (node type or switch model)
    fabric: str | None = None
    group: str | None = None  # node group, or "mgmt" for a switch's management port as an endpoint
    plane: int | None = None
    su: int | None = None
    rail: int | None = None
    pod: int | None = None
    index: int = 0  # 1-based order within its layer of its fabric (or its node group)
    platform: str | None = None
    rack: str | None = None
    u: int | None = None  # lowest rack unit occupied
    height_u: int = 1
    power_w: int = 0


@dataclass(frozen=True, slots=True)
class Link:
    """One cable. End `a` is the lower layer (node below leaf below spine below core)."""

    fabric: str
    tier: TierName
    a: str
    a_port: str
    b: str
    b_port: str
    speed_gbps: int
    plane: int | None = None
    rail: int | None = None
    media: str | None = None  # catalog medium given by an explicit topology; else chosen by distance
    length_m: float | None = None  # given by an explicit topology; else from rack positions
    source: str = ""  # where an explicit link was written (for findings)


@dataclass(frozen=True)
class ClosParams:
    """What the generator designed, per plane: the inputs of the closed-form figures."""

    tiers: int
    leaves: int
    downlinks: int
    uplinks: int
    spines: int  # per plane (all pods)
    spines_per_pod: int
    pods: int
    leaves_per_pod: int
    spine_uplinks: int
    cores: int  # per plane
    leaf_speed: int  # leaf uplink speed
    spine_speed: int  # spine uplink speed


@dataclass(frozen=True)
class FabricTopology:
    name: str
    role: Role
    technology: Technology
    generated: bool
    tiers: int
    planes: int
    switches: tuple[str, ...]  # in generation order: per plane leaves, spines, cores
    links: tuple[Link, ...]
    graph: nx.MultiGraph  # frozen; nodes carry `device`, edges carry `link`
    target_leaf: float  # oversubscription targets (down:up)
    target_spine: float
    params: ClosParams | None = None  # generated fabrics only
    rail_optimized: bool = False
    provisioned_down: Mapping[str, int] = field(default_factory=dict)  # generated: down-port Gb/s per switch


@dataclass(frozen=True)
class Rack:
    name: str
    row: str
    position: int  # 1-based within the row
    x_m: float
    y_m: float


@dataclass(frozen=True)
class Topology:
    design: str
    devices: Mapping[str, Device]
    fabrics: Mapping[str, FabricTopology]
    racks: Mapping[str, Rack]
    findings: tuple[Finding, ...] = field(default=())
