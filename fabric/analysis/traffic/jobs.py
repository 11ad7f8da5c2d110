"""Traffic figures for the job-bandwidth table's rows: each compactly placed job (analysis/jobs.py) under the
standard patterns and routings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from fabric.analysis.jobs import JobTable, placement
from fabric.analysis.locality import locality
from fabric.analysis.traffic.fairness import Ints
from fabric.analysis.traffic.figure import TrafficFigure
from fabric.analysis.traffic.model import traffic
from fabric.analysis.traffic.net import Net, fabric_net
from fabric.model.kinds import Tier
from fabric.model.topology import Topology
from fabric.spec.loader import Design

SEEDS = 8  # hash seeds per ECMP figure of the table, at most: a large job's ports are samples enough
# NIC ports of the largest job the table models: above, the row's list is empty and `fabric traffic --nodes` gives
# its figures (at 100k GPUs a 1,024-node all-to-all takes half a minute per routing, its spraying several)
TABLE_PORTS = 2048
# NIC ports of the largest all-to-all `fabric traffic` models: the model's memory grows with the job. Spraying
# shares one set of paths per leaf pair and walks a step's links in bounded chunks (routing.py), so the whole
# 100k-GPU RoCE benchmark cluster's all-to-all (100,000 ports) takes 3.3 GB under adaptive routing and 2.4 GB under
# ECMP with 16 seeds (it went past 24 GB before); above this, `--nodes` asks for a smaller job
ALL_TO_ALL_PORTS = 131_072
SAMPLES = 1024  # port samples (ports × seeds) the table's ECMP figure wants: fewer seeds for a larger job
QPS = (1, 4)  # NCCL's default of one QP per connection, and four (Meta's setting, see docs)


def standard(k: int) -> list[tuple[str, int, bool]]:
    """The table's patterns for a job of k nodes: (pattern, shift distance, PXN)."""
    return [("all-reduce", 1, True), ("all-to-all", 1, True), ("shift", max(1, k // 2), True)]


def job_traffic(
    design: Design,
    topology: Topology,
    table: JobTable | None,
    *,
    seeds: int = SEEDS,
    sm: Callable[[Net], Ints] | None = None,
) -> Mapping[int, tuple[TrafficFigure, ...]]:
    """Per job size of the table: its figures; none for a one-node job (its GPUs talk over NVLink). `sm`: the
    subnet manager's forwarding tables over a Net (an InfiniBand fabric whose SM routes are modelled), for a
    figure under routing `sm` beside the others."""
    modelled = table_jobs(design, topology, table)
    if modelled is None:
        return {}
    net, jobs = modelled
    tables = sm(net) if sm is not None else None
    out: dict[int, tuple[TrafficFigure, ...]] = {}
    for k, job in jobs.items():
        if not job:
            out[k] = ()
            continue
        figures = []
        runs = max(1, min(seeds, -(-SAMPLES // sum(len(p) for p in job))))
        for pattern, distance, pxn in standard(k):
            for qps in QPS:
                figures.append(traffic(net, job, pattern, "ecmp", qps=qps, seeds=runs, distance=distance, pxn=pxn))
            figures.append(traffic(net, job, pattern, "adaptive", distance=distance, pxn=pxn))
            if tables is not None:
                figures.append(traffic(net, job, pattern, "sm", distance=distance, pxn=pxn, table=tables))
        out[k] = tuple(figures)
    return out


def table_jobs(
    design: Design, topology: Topology, table: JobTable | None
) -> tuple[Net, dict[int, list[list[int]]]] | None:
    """The scheduler fabric's Net and, per job size of the table, the NIC ports of its nodes in placement order
    (empty where the table gives no figures: a one-node job, a node without ports, more than TABLE_PORTS)."""
    loc = locality(design, topology)
    if table is None or loc is None:
        return None
    nodes = placement(loc)
    net, ports = fabric_net(topology.fabrics[loc.fabric], nodes)
    jobs: dict[int, list[list[int]]] = {}
    for row in table.rows:
        k = row.nodes
        job = [ports[n] for n in nodes[:k]]
        jobs[k] = job if k >= 2 and all(job) and sum(len(p) for p in job) <= TABLE_PORTS else []
    return net, jobs


def fabric_nodes(design: Design, topology: Topology, fabric: str | None) -> tuple[str, list[str]] | None:
    """The fabric (default: the scheduler's) and its GPU nodes in placement order: the Slurm tree order on the
    scheduler fabric, the order of their links on another; None when there is no such fabric."""
    loc = locality(design, topology)
    key = fabric if fabric is not None else (loc.fabric if loc is not None else None)
    if key is None or key not in topology.fabrics:
        return None
    if loc is not None and loc.fabric == key:
        return key, placement(loc)
    gpus = {model for model, part in design.catalog.nodes.items() if part.gpus}
    devices = topology.devices
    nodes = dict.fromkeys(
        link.a for link in topology.fabrics[key].links if link.tier == Tier.NODE_LEAF and devices[link.a].model in gpus
    )
    return key, list(nodes)


def _ports_per_node(topology: Topology, fabric: str) -> Counter[str]:
    return Counter(link.a for link in topology.fabrics[fabric].links if link.tier == Tier.NODE_LEAF)


def nic_ports(topology: Topology, fabric: str, nodes: Sequence[str]) -> int:
    """The NIC ports the nodes have in the fabric (the job's size for the model)."""
    per_node = _ports_per_node(topology, fabric)
    return sum(per_node[n] for n in nodes)


def largest_job(topology: Topology, fabric: str, nodes: Sequence[str], ports: int) -> int:
    """How many of the first `nodes` have at most `ports` NIC ports between them."""
    per_node = _ports_per_node(topology, fabric)
    taken = 0
    for count, node in enumerate(nodes):
        taken += per_node[node]
        if taken > ports:
            return count
    return len(nodes)


def run(
    design: Design,
    topology: Topology,
    nodes: list[str],
    fabric: str,
    *,
    patterns: Sequence[str],
    routings: Sequence[str],
    qps: int,
    seeds: int,
    distance: int | None,
    pxn: bool,
    sm: Callable[[Net], Ints] | None = None,
) -> list[TrafficFigure]:
    """`fabric traffic`'s figures: each pattern under each routing for the job of the first `nodes`; `sm` gives
    the subnet manager's forwarding tables over the job's Net (routing `sm`)."""
    net, ports = fabric_net(topology.fabrics[fabric], nodes)
    job = [ports[n] for n in nodes]
    d = distance if distance is not None else max(1, len(nodes) // 2)
    table = sm(net) if sm is not None and "sm" in routings else None
    return [
        traffic(net, job, pattern, routing, qps=qps, seeds=seeds, distance=d, pxn=pxn, table=table)
        for pattern in patterns
        for routing in routings
    ]
