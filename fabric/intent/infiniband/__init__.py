"""InfiniBand intent: per IB subnet the GUIDs, IB port numbers, ftree roles, SM hosts and partitions, and
their checks.

`build_infiniband` (called by the pipeline) turns the topology and the cabling plan into an `IbPlan`;
fabric/render/infiniband/ writes `infiniband/<fabric>/` from it. No syntax of OpenSM's files here.
"""

from fabric.intent.infiniband.subnet import IbPlan, Subnet, build_infiniband

__all__ = ["IbPlan", "Subnet", "build_infiniband"]
