"""InfiniBand: subnet-manager intent per IB subnet (GUIDs, ftree roles, partitions), its checks and outputs.

`build_infiniband` (called by the pipeline) turns the topology and the cabling plan into an `IbPlan`;
`render.render_infiniband` writes `infiniband/<fabric>/` from it; `netfile` writes and reads the
ibnetdiscover topology format.
"""

from fabric.infiniband.intent import IbPlan, Subnet, build_infiniband

__all__ = ["IbPlan", "Subnet", "build_infiniband"]
