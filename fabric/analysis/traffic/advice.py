"""The `ecmp-shortfall` finding: where static ECMP delivers a whole-cluster training collective well below what
adaptive routing delivers, with the figures of what closes the gap (more queue pairs, adaptive routing)."""

from __future__ import annotations

from collections.abc import Iterator

from fabric.analysis.traffic.figure import TrafficFigure
from fabric.analysis.traffic.jobs import SAMPLES, SEEDS, TABLE_PORTS, fabric_nodes
from fabric.analysis.traffic.model import traffic
from fabric.analysis.traffic.net import fabric_net
from fabric.model.findings import Finding, warning
from fabric.model.topology import Topology
from fabric.spec.loader import Design

MORE_QPS = (4, 8)  # the queue pairs per connection the finding measures beside the design's
TRAINING = (("all-reduce", True), ("all-to-all", True))  # what the design is for (shift is a stress test)


def _pct(f: TrafficFigure) -> str:
    return f"{f.mean_pct:g}%"


def shortfalls(design: Design, topology: Topology) -> Iterator[Finding]:
    """A warning per training pattern of the whole-cluster job whose ECMP mean is under the threshold's share of
    the adaptive figure."""
    settings = design.spec.traffic
    chosen = fabric_nodes(design, topology, None)
    if settings.ecmp_warning_pct <= 0 or chosen is None or len(chosen[1]) < 2:
        return
    key, everyone = chosen
    net, ports = fabric_net(topology.fabrics[key], everyone)
    # The job the summary's table measures at most (TABLE_PORTS NIC ports, compactly placed): the model's cost grows
    # with the job (a sprayed all-to-all over a 32k-GPU fabric took 18 GB), and a fabric whose ECMP falls short
    # shows it at that size already; `fabric traffic --nodes N` measures any size.
    nodes: list[str] = []
    taken = 0
    for n in everyone:
        taken += len(ports[n])
        if taken > TABLE_PORTS and len(nodes) >= 2:
            break
        nodes.append(n)
    job = [ports[n] for n in nodes]
    if not all(job):
        return
    what = "whole-cluster" if len(nodes) == len(everyone) else "compactly placed"
    runs = max(1, min(SEEDS, -(-SAMPLES // sum(len(p) for p in job))))
    for pattern, pxn in TRAINING:
        got = traffic(net, job, pattern, "ecmp", qps=settings.qps, seeds=runs, pxn=pxn)
        if got.mean_pct >= settings.ecmp_warning_pct:  # the ideal is at most 100 %: no need to compute it
            continue
        ideal = traffic(net, job, pattern, "adaptive", pxn=pxn)
        if got.mean_pct >= ideal.mean_pct * settings.ecmp_warning_pct / 100:
            continue
        more = [traffic(net, job, pattern, "ecmp", qps=q, seeds=runs, pxn=pxn) for q in MORE_QPS if q > settings.qps]
        closing = ", ".join(f"{f.qps} QPs per connection {_pct(f)}" for f in more)
        spread = f"median {got.p50_pct:g}%, 5th percentile {got.p5_pct:g}%, {got.seeds} hash seed(s)"
        yield warning(
            "ecmp-shortfall",
            f"fabrics.{key}",
            f"fabric `{key}`: the {what} {pattern} ({len(nodes):,} nodes) gets {_pct(got)} of the NIC rate per "
            f"GPU under static ECMP with {settings.qps} queue pair(s) per connection ({spread}) against {_pct(ideal)} "
            f"under adaptive routing: under {settings.ecmp_warning_pct:g}% of it (traffic.ecmp_warning_pct)"
            + (f"; {closing}" if closing else ""),
            "hashed flows collide on uplinks: set NCCL_IB_QPS_PER_CONNECTION (and traffic.qps) to spread each "
            "connection over more queue pairs, or enable adaptive routing / packet spraying where the switches "
            "support it (`fabric traffic` gives each figure)",
        )
