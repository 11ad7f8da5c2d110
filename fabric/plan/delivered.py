"""What "delivered" means when `fabric plan` ranks by delivered compute (`--delivered`).

- `bisection` (the default): the whole-cluster job's intact max-flow bandwidth over its NIC bandwidth (the last
  row of the job bandwidth table, analysis/jobs.py): traffic split perfectly over every path.
- `ecmp`: the traffic model's figure (analysis/traffic) for static ECMP with the design's queue pairs per
  connection (`traffic.qps`: the plan's specs leave NCCL's default, 1) over hash seeds as summary.json takes them;
- `adaptive`: the same model under packet spraying (the fluid ideal of adaptive routing);
- `static`: each candidate's own static routing: on InfiniBand the subnet manager's forwarding tables where they
  are modelled (ftree, updn: analysis/traffic/sm.py, updn.py; one path per destination) and no larger than the
  build models (BUILD_ENTRIES switch × CA-port entries), else static ECMP as above; each row's
  `delivered_routing` says which.

The traffic figure is the worst mean % of the NIC rate per GPU over the standard patterns (ring all-reduce,
all-to-all with PXN, shift by half the job: analysis/traffic/jobs.py `standard`) for the largest job of the job
table the summary models (the whole cluster up to TABLE_PORTS NIC ports, else the largest compactly placed job
within them). The worst pattern, as bisection is the worst cut. At most 100 %, so metrics.py's bounds (all of
the compute delivered) hold for it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabric.analysis.traffic.fairness import Ints
    from fabric.analysis.traffic.net import Net
    from fabric.pipeline import Build

DELIVERED = ("bisection", "ecmp", "adaptive", "static")
DEFAULT_DELIVERED = "bisection"


def traffic_pct(build: Build, routing: str) -> tuple[float, str] | None:
    """The worst standard pattern's mean % of the NIC rate per GPU under `routing` (ecmp, adaptive, static) for
    the largest job the summary's table models, and the routing modelled (static: sm or ecmp); None when there is
    none (one node, no scheduler fabric)."""
    from fabric.analysis.traffic.jobs import SAMPLES, SEEDS, standard, table_jobs
    from fabric.analysis.traffic.model import traffic

    table = build.jobs
    modelled = table_jobs(build.design, build.topology, table)
    if modelled is None or table is None:
        return None
    net, jobs = modelled
    forwarding = None
    if routing == "static":
        forwarding = _sm_table(build, table.fabric, net)
        routing = "ecmp" if forwarding is None else "sm"
    sized = [(k, job) for k, job in jobs.items() if job]
    if not sized:
        return None
    k, job = max(sized, key=lambda item: item[0])
    runs = max(1, min(SEEDS, -(-SAMPLES // sum(len(p) for p in job))))
    qps = build.design.spec.traffic.qps
    figures = [
        traffic(net, job, pattern, routing, qps=qps, seeds=runs, distance=distance, pxn=pxn, table=forwarding)
        for pattern, distance, pxn in standard(k)
    ]
    return min(f.mean_pct for f in figures), routing


def _sm_table(build: Build, fabric: str, net: Net) -> Ints | None:
    """The subnet manager's modelled forwarding tables of the fabric over `net`; None where there are none (an
    Ethernet fabric, an engine or setting the models do not reproduce)."""
    from fabric.analysis.traffic.sm import NotModelled
    from fabric.intent.infiniband.routes import BUILD_ENTRIES, sm_tables

    subnets = [s for s in build.infiniband.subnets if s.fabric == fabric]
    try:
        return sm_tables(subnets, build.topology.fabrics[fabric], BUILD_ENTRIES)(net)
    except NotModelled:
        return None
