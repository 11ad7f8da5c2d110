"""Traffic figures for the job-bandwidth table's rows: each compactly placed job (analysis/jobs.py) under the
standard patterns and routings."""

from __future__ import annotations

from collections.abc import Mapping

from fabric.analysis.jobs import JobTable, placement
from fabric.analysis.locality import locality
from fabric.analysis.traffic.model import TrafficFigure, traffic
from fabric.analysis.traffic.net import fabric_net
from fabric.model.topology import Topology
from fabric.spec.loader import Design

SEEDS = 8  # hash seeds per ECMP figure of the table, at most: a large job's ports are samples enough
SAMPLES = 1024  # port samples (ports × seeds) the table's ECMP figure wants: fewer seeds for a larger job
QPS = (1, 4)  # NCCL's default of one QP per connection, and four (Meta's setting, see docs)


def standard(k: int) -> list[tuple[str, int, bool]]:
    """The table's patterns for a job of k nodes: (pattern, shift distance, PXN)."""
    return [("all-reduce", 1, True), ("all-to-all", 1, True), ("shift", max(1, k // 2), True)]


def job_traffic(
    design: Design, topology: Topology, table: JobTable | None, *, seeds: int = SEEDS
) -> Mapping[int, tuple[TrafficFigure, ...]]:
    """Per job size of the table: its figures; none for a one-node job (its GPUs talk over NVLink)."""
    loc = locality(design, topology)
    if table is None or loc is None:
        return {}
    nodes = placement(loc)
    net, ports = fabric_net(topology.fabrics[loc.fabric], nodes)
    out: dict[int, tuple[TrafficFigure, ...]] = {}
    for row in table.rows:
        k = row.nodes
        job = [ports[n] for n in nodes[:k]]
        if k < 2 or not all(job):
            out[k] = ()
            continue
        figures = []
        runs = max(1, min(seeds, -(-SAMPLES // sum(len(p) for p in job))))
        for pattern, distance, pxn in standard(k):
            for qps in QPS:
                figures.append(traffic(net, job, pattern, "ecmp", qps=qps, seeds=runs, distance=distance, pxn=pxn))
            figures.append(traffic(net, job, pattern, "adaptive", distance=distance, pxn=pxn))
        out[k] = tuple(figures)
    return out
