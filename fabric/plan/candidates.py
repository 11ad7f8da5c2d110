"""Candidate designs for a GPU count, enumerated from the catalog, each written as a spec document.

A candidate is a choice along each dimension — node type, technology, switch model, tiers, rail-optimized or
not, planes, SU size, leaf oversubscription — and nothing else: its spec is the smallest document the
loader accepts, so what `fabric plan` builds, ranks and writes (`--write`) is one and the same text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from fabric.spec.catalog import Catalog, NodeType, SwitchModel, best_speed, switch_ports
from fabric.spec.schema import format_ratio
from fabric.topology.leaves import split_leaf_ports

TECHNOLOGIES = ("infiniband", "ethernet")
MIN_PORTS = 16  # a model with fewer ports at the node speed is an access or out-of-band switch


@dataclass(frozen=True, slots=True)
class Candidate:
    index: int  # position in the enumeration: the sweep's fixed order
    node: str
    technology: str
    switch: str
    tiers: int
    rail_optimized: bool
    planes: int
    scalable_unit: int | None  # nodes per SU (rail-optimized only)
    oversubscription: float  # leaf down:up
    speed_gbps: int

    @property
    def label(self) -> str:
        rail = f"rail SU{self.scalable_unit}" if self.rail_optimized else "non-rail"
        planes = f" {self.planes} planes" if self.planes > 1 else ""
        return (
            f"{self.node} / {self.switch} / {self.tiers}T {rail}{planes} / {format_ratio(self.oversubscription)} "
            f"@{self.speed_gbps}G"
        )


@dataclass(frozen=True)
class Request:
    gpus: int
    nodes: tuple[str, ...] = ()  # node types; empty: every GPU node type with compute ports
    technologies: tuple[str, ...] = TECHNOLOGIES
    switches: tuple[str, ...] = ()  # switch models; empty: every one that serves the node speed
    tiers: tuple[int, ...] = (2, 3)
    rail_optimized: tuple[bool, ...] = (True, False)
    planes: tuple[int, ...] = (1,)
    scalable_units: tuple[int, ...] = ()  # nodes per SU; empty: as many as fill a rail leaf's down ports
    oversubscription: tuple[float, ...] = (1.0,)


def node_count(node: NodeType, gpus: int) -> int:
    """Nodes for `gpus` GPUs; a rack-scale system's trays in whole racks (NVLink domains of 72 GPUs)."""
    system = node.rack_system
    if system is not None:
        return math.ceil(gpus / system.gpus) * system.trays
    return math.ceil(gpus / node.gpus)


def _su_nodes(node: NodeType, down: int, per_rail: int) -> int:
    """Nodes per SU that fill a rail leaf's down ports; a rack-scale system's: whole racks of trays, so that an
    NVLink domain's trays share their leaves (at least one rack)."""
    system = node.rack_system
    if system is None:
        return down // per_rail
    return system.trays * max(1, down // (per_rail * system.trays))


def _node_speed(node: NodeType, technology: str) -> int | None:
    group = node.ports.get("compute")
    if group is None or group.technology not in ("any", technology):
        return None
    return group.speed_gbps


def _serves(model: SwitchModel, technology: str, speed: int) -> bool:
    if model.technology != technology or best_speed(model, speed) != speed:
        return False
    return sum(1 for p in switch_ports(model, speed) if p.speed_gbps == speed) >= MIN_PORTS


def _leaf_down(model: SwitchModel, speed: int, ratio: float) -> int:
    down, _, problem = split_leaf_ports(switch_ports(model, speed, model.platform), ratio, None, None)
    return 0 if problem else len(down)


def _per_rail(node: NodeType, planes: int) -> int:
    """Ports of one rail a node brings to one plane (ports are dealt over the planes in rail order)."""
    ports = node.ports["compute"].port_list()[::planes]
    rails = [p.rail for p in ports if p.rail is not None]
    return max((rails.count(r) for r in set(rails)), default=0)


def enumerate_candidates(catalog: Catalog, request: Request) -> list[Candidate]:
    """Every combination of the request's dimensions the catalog's parts can make, in a fixed order."""
    out: list[Candidate] = []
    node_names = request.nodes or tuple(k for k, n in catalog.nodes.items() if n.gpus > 0 and "compute" in n.ports)
    for node_name in node_names:
        node = catalog.nodes[node_name]
        for technology in request.technologies:
            speed = _node_speed(node, technology)
            if speed is None:
                continue
            models = request.switches or tuple(catalog.switches)
            for switch in models:
                model = catalog.switches[switch]
                if not _serves(model, technology, speed):
                    continue
                for ratio in request.oversubscription:
                    down = _leaf_down(model, speed, ratio)
                    for tiers in request.tiers:
                        for rail in request.rail_optimized:
                            for planes in request.planes:
                                if len(node.ports["compute"].port_list()) < planes:
                                    continue
                                per_rail = _per_rail(node, planes)
                                if rail and not per_rail:
                                    continue
                                sus: Sequence[int | None] = (
                                    (request.scalable_units or (_su_nodes(node, down, per_rail),)) if rail else (None,)
                                )
                                for su in sus:
                                    out.append(
                                        Candidate(
                                            len(out),
                                            node_name,
                                            technology,
                                            switch,
                                            tiers,
                                            rail,
                                            planes,
                                            su,
                                            ratio,
                                            speed,
                                        )
                                    )
    return out
