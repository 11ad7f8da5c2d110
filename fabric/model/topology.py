"""The frozen values the pipeline passes along: devices, links and per-fabric topologies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from fabric.fast.frozen import maker
from fabric.model.findings import Finding
from fabric.model.kinds import Layer, LayerName, Role, Technology, Tier, TierName

if TYPE_CHECKING:
    import networkx as nx

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


new_device = maker(Device)  # Device(...) as cheaply as a plain dataclass: one per node and switch


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


new_link = maker(Link)  # Link(...) as cheaply as a plain dataclass: generators make 300,000 at 100k GPUs


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
    """One fabric as generated or given: its switches, links and the parameters that made them."""

    name: str
    role: Role
    technology: Technology
    generated: bool
    tiers: int
    planes: int
    switches: tuple[str, ...]  # in generation order: per plane leaves, spines, cores
    links: tuple[Link, ...]
    target_leaf: float  # oversubscription targets (down:up)
    target_spine: float
    params: ClosParams | None = None  # generated fabrics only
    rail_optimized: bool = False
    provisioned_down: Mapping[str, int] = field(default_factory=dict)  # generated: down-port Gb/s per switch
    devices: Mapping[str, Device] = field(default_factory=dict, repr=False, compare=False)  # the topology's

    @cached_property
    def graph(self) -> nx.MultiGraph:
        """The fabric as a frozen networkx MultiGraph, made on first use (the pipeline's stages work on `links`;
        100k GPUs make 300,000 edges). Nodes are device names with attributes `device` (the Device) and `layer`
        (its layer *in this fabric*: another fabric's switch whose management port attaches here is a `node`);
        edges are keyed by the link's index and carry `link`."""
        import networkx as nx

        graph: nx.MultiGraph = nx.MultiGraph(fabric=self.name)
        own = set(self.switches)
        for name in self.switches:
            graph.add_node(name, device=self.devices[name], layer=self.devices[name].layer)
        for link in self.links:
            if link.a not in own and link.a not in graph:
                graph.add_node(link.a, device=self.devices[link.a], layer=Layer.NODE)
        # an MLAG peer link is a cable, not a path of the Clos: it stays out of the graph (figures, ECMP, bisection)
        graph.add_edges_from(
            (link.a, link.b, i, {"link": link}) for i, link in enumerate(self.links) if link.tier != Tier.PEER
        )
        nx.freeze(graph)
        return graph


@dataclass(frozen=True)
class Rack:
    """A rack of the floor plan: its row, place in the row and floor coordinates."""

    name: str
    row: str
    position: int  # 1-based within the row
    x_m: float
    y_m: float


@dataclass(frozen=True)
class Topology:
    """Every device, fabric and rack of the design, with the topology stage's findings."""

    design: str
    devices: Mapping[str, Device]
    fabrics: Mapping[str, FabricTopology]
    racks: Mapping[str, Rack]
    findings: tuple[Finding, ...] = field(default=())
