"""What "delivered" means when `fabric plan` ranks by delivered compute (`--delivered`).

- `bisection` (the default): the whole-cluster job's intact max-flow bandwidth over its NIC bandwidth (the last
  row of the job bandwidth table, analysis/jobs.py): traffic split perfectly over every path.
- `ecmp`: the traffic model's figure (analysis/traffic) for static ECMP with the design's queue pairs per
  connection (`traffic.qps`: the plan's specs leave NCCL's default, 1) over hash seeds as summary.json takes them;
- `adaptive`: the same model under packet spraying (the fluid ideal of adaptive routing).

The traffic figure is the worst mean % of the NIC rate per GPU over the standard patterns (ring all-reduce,
all-to-all with PXN, shift by half the job: analysis/traffic/jobs.py `standard`) for the largest job of the job
table the summary models (the whole cluster up to TABLE_PORTS NIC ports, else the largest compactly placed job
within them). The worst pattern, as bisection is the worst cut. At most 100 %, so metrics.py's bounds (all of
the compute delivered) hold for it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabric.pipeline import Build

DELIVERED = ("bisection", "ecmp", "adaptive")
DEFAULT_DELIVERED = "bisection"


def traffic_pct(build: Build, routing: str) -> float | None:
    """The worst standard pattern's mean % of the NIC rate per GPU under `routing` (ecmp, adaptive) for the
    largest job the summary's table models; None when there is none (one node, no scheduler fabric)."""
    from fabric.analysis.traffic.jobs import SAMPLES, SEEDS, standard, table_jobs
    from fabric.analysis.traffic.model import traffic

    modelled = table_jobs(build.design, build.topology, build.jobs)
    if modelled is None:
        return None
    net, jobs = modelled
    sized = [(k, job) for k, job in jobs.items() if job]
    if not sized:
        return None
    k, job = max(sized, key=lambda item: item[0])
    runs = max(1, min(SEEDS, -(-SAMPLES // sum(len(p) for p in job))))
    qps = build.design.spec.traffic.qps
    figures = [
        traffic(net, job, pattern, routing, qps=qps, seeds=runs, distance=distance, pxn=pxn)
        for pattern, distance, pxn in standard(k)
    ]
    return min(f.mean_pct for f in figures)
