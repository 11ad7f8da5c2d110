"""InfiniBand intent: per IB subnet the GUIDs, IB port numbers, ftree roles, SM hosts and partitions, and
their checks.

`build_infiniband` (called by the pipeline) turns the topology and the cabling plan into an `IbPlan`;
fabric/render/outputs/infiniband/ writes `infiniband/<fabric>/` from it. No syntax of OpenSM's files here.

The subnet modules (subnet.py, guids.py, ports.py, checks.py) are imported when a design has an InfiniBand fabric:
an Ethernet design's build does not load them (a cost of every process's start).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fabric.model.findings import Finding

if TYPE_CHECKING:
    from fabric.allocation.allocate import Allocation
    from fabric.intent.infiniband.subnet import Subnet
    from fabric.model.topology import Topology
    from fabric.spec.loader import Design

__all__ = ["IbPlan", "Subnet", "build_infiniband"]


@dataclass(frozen=True)
class IbPlan:
    """Every InfiniBand subnet of the design, each cable end's HCA and IB port, and the findings about them."""

    subnets: tuple[Subnet, ...] = ()
    ends: Mapping[tuple[str, str], tuple[str | None, int]] = field(default_factory=dict)  # (device, port) → (hca, IB)
    findings: tuple[Finding, ...] = ()

    def subnet(self, fabric: str, plane: int | None = None) -> Subnet | None:
        return next((s for s in self.subnets if s.fabric == fabric and s.plane == plane), None)


def build_infiniband(design: Design, topology: Topology, plan: Allocation, every: bool = True) -> IbPlan:
    """The intent of every InfiniBand subnet of the design, with the findings about it (a subnet per InfiniBand
    fabric with switches, or per plane of one). `every`: False where nothing renders the build (its subnets'
    members are then made when first read: subnet.py, build_subnets)."""
    if not any(ft.technology == "infiniband" and ft.switches for ft in topology.fabrics.values()):
        return IbPlan()
    from fabric.intent.infiniband.subnet import build_subnets

    return build_subnets(design, topology, plan, every)


def __getattr__(name: str) -> Any:
    if name == "Subnet":
        from fabric.intent.infiniband.subnet import Subnet

        return Subnet
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
