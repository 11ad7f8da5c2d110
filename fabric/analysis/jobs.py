"""Job bandwidth: what the network guarantees one job, per GPU, for job sizes from one node to the cluster.

A job of k nodes is placed compactly, as the generated Slurm topology places it: the first k scheduler
nodes in the order of the logical switch tree (locality.py), so it fills one SU before the next. Its worst
bisection is the smaller of two balanced cuts of its nodes — first half against second half in that order
(on a tree this cuts at the highest level the job spans) and odd against even nodes. The figure is the
maximum flow across the cut, computed on the switch graph with the same machinery and symmetry reduction as
the fabric's bisection (figures.py), divided by the GPUs of the smaller side. After the worst single failure
it is the same flow with each class of spine/core switch and switch-to-switch link removed in turn (the
cut in halves; a leaf's failure takes its nodes' ports with it, as in figures.py).

It is a bound from capacities, not a model of traffic: no congestion control, no NCCL algorithm (ring, tree,
PXN), no ECMP hash collisions, no NVLink. A one-node job's figure is its NIC rate per GPU: its GPUs talk over
NVLink and the network takes whatever the NICs send. Likewise a job inside one NVLink domain of a rack-scale
system (`nvlink`: DGX GB200 NVL72, 18 trays): its GPUs talk over NVLink, the traffic between them does not touch
this scale-out fabric; its figure is what the fabric would carry, not what the job needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

# the bisection's own switch graph, cuts, damaged graphs and flow: one machinery for both figures, on the engine
# the figures choose for the fabric's size
from fabric.analysis.figures import Engine, on_lists
from fabric.analysis.flow import lists as list_engine
from fabric.analysis.flow.graph import switch_lists
from fabric.analysis.locality import Locality, locality
from fabric.model.kinds import Tier
from fabric.model.topology import Topology
from fabric.spec.loader import Design

# an engine's job_cut on the fabric's switch graph: (Gb/s on side A, on side B, with failures) → (max flow,
# each loss with its flow, made when asked for, and a lower bound of it)
CutFlows = Callable[[list[int], list[int], bool], tuple[int, list[tuple[str, Callable[[], int], float]]]]


@dataclass(frozen=True, slots=True)
class JobBandwidth:
    """A job of `nodes` nodes: its span, and its NIC, intact and worst-failure bandwidth per GPU."""

    nodes: int
    gpus: int
    span: str  # the lowest logical switch (locality.py) holding every node of the job; "" when none does
    nic_gbps_per_gpu: float  # the job's NIC bandwidth on this fabric per GPU: the ceiling
    intact_gbps_per_gpu: float
    failure_gbps_per_gpu: float
    failure: str | None  # the element whose loss costs this job most; None when no loss lowers it
    nvlink: bool = False  # the job fits in one NVLink domain: its GPUs talk over NVLink, not over this fabric

    @property
    def intact_pct(self) -> float:
        return 100.0 * self.intact_gbps_per_gpu / self.nic_gbps_per_gpu if self.nic_gbps_per_gpu else 0.0

    @property
    def failure_pct(self) -> float:
        return 100.0 * self.failure_gbps_per_gpu / self.nic_gbps_per_gpu if self.nic_gbps_per_gpu else 0.0


@dataclass(frozen=True)
class JobTable:
    """The job-bandwidth rows of the scheduler fabric, by job size."""

    fabric: str
    rows: tuple[JobBandwidth, ...]
    nvlink_system: str = ""  # the rack-scale NVLink system of the scheduler nodes' domains; "" when none
    nvlink_domain_gpus: int = 0  # GPUs of the smallest domain


def job_sizes(total: int) -> list[int]:
    """1, 2, 4, … nodes below the cluster's size, then the whole cluster."""
    sizes = []
    k = 1
    while k < total:
        sizes.append(k)
        k *= 2
    return [*sizes, total] if total else []


def placement(loc: Locality) -> list[str]:
    """Scheduler nodes in the order compact placement fills them: block by block along the tree."""
    order = dict.fromkeys(n for block in loc.blocks() for n in block.nodes)
    return list(order)


def job_bandwidth(
    design: Design,
    topology: Topology,
    *,
    sizes: list[int] | None = None,
    failures: bool = True,
    engine: Engine = "auto",
) -> JobTable | None:
    """The job bandwidth table of the scheduler fabric; None when the design has none or it has no nodes.
    `engine`: numpy/scipy or pure Python (same results); auto picks by size, as figures.fabric_figures does."""
    loc = locality(design, topology)
    if loc is None:
        return None
    ft = topology.fabrics[loc.fabric]
    nodes = placement(loc)
    if not nodes:
        return None
    sg = switch_lists(ft)
    cut: CutFlows
    if on_lists(len(sg.names), engine):
        cut = partial(list_engine.job_cut, sg)
    else:
        from fabric.analysis.flow import arrays  # numpy and scipy load here, for a large fabric only

        cut = partial(arrays.job_cut, arrays.array_graph(sg))
    index = {name: i for i, name in enumerate(sg.names)}
    ports: dict[str, list[tuple[int, int]]] = {n: [] for n in nodes}
    for link in ft.links:
        if link.tier == Tier.NODE_LEAF and link.a in ports:
            ports[link.a].append((index[link.b], link.speed_gbps))
    # per GPU; a scheduler node without GPUs counts as one (its figure is then per node)
    per_model = {model: part.gpus or 1 for model, part in design.catalog.nodes.items()}
    devices = topology.devices
    gpus = {n: per_model[devices[n].model] for n in nodes}
    counts = [min(k, len(nodes)) for k in sizes or job_sizes(len(nodes))]
    prefix = _prefixes(nodes, ports, gpus, len(sg.names), {b for k in counts for b in (k, k // 2)})
    spans = _spans(loc, nodes)
    domains = {d.name for d in loc.domains} if loc.domain_level else set()
    rows = []
    for k in counts:
        span = next((name for name, held in spans if held >= k), "")
        row = _job(cut, k, span, prefix, failures)
        rows.append(replace(row, nvlink=True) if span in domains else row)
    if not loc.domains:
        return JobTable(loc.fabric, tuple(rows))
    smallest = min(d.gpus for d in loc.domains)
    return JobTable(loc.fabric, tuple(rows), loc.domains[0].system, smallest)


def _spans(loc: Locality, nodes: list[str]) -> list[tuple[str, int]]:
    """Each logical switch, lowest level first, with how long a prefix of the placement it holds: a job of the
    first k nodes spans the first switch holding k or more."""
    out = []
    whole = tuple(nodes)
    for level in loc.levels:
        for switch in level:
            if switch.nodes == whole:  # the whole placement, as the root holds it
                held = len(nodes)
            elif nodes[0] not in switch.nodes:  # most switches: no job starts under them
                held = 0
            else:
                below = set(switch.nodes)
                held = 1
                while held < len(nodes) and nodes[held] in below:
                    held += 1
            out.append((switch.name, held))
    return out


@dataclass(frozen=True, slots=True)
class _Prefix:
    """The first k nodes of the placement, those at even and at odd positions apart: per switch Gb/s, GPUs."""

    even: list[int]
    odd: list[int]
    even_gpus: int
    odd_gpus: int

    def caps(self) -> list[int]:
        return [a + b for a, b in zip(self.even, self.odd, strict=True)]


def _prefixes(
    nodes: list[str], ports: dict[str, list[tuple[int, int]]], gpus: dict[str, int], n: int, wanted: set[int]
) -> dict[int, _Prefix]:
    """The prefixes of the placement of the `wanted` lengths, in one walk along it."""
    caps = ([0] * n, [0] * n)
    count = [0, 0]
    out = {}
    for i in range(max(wanted) + 1):
        if i in wanted:
            out[i] = _Prefix(list(caps[0]), list(caps[1]), count[0], count[1])
        if i == len(nodes):
            break
        side = caps[i % 2]
        for leaf, gbps in ports[nodes[i]]:
            side[leaf] += gbps
        count[i % 2] += gpus[nodes[i]]
    return out


def _job(cut: CutFlows, k: int, span: str, prefix: dict[int, _Prefix], failures: bool) -> JobBandwidth:
    whole = prefix[k]
    n_gpus = whole.even_gpus + whole.odd_gpus
    everything = whole.caps()
    nic = sum(everything) / n_gpus
    if k < 2:
        return JobBandwidth(k, n_gpus, span, nic, nic, nic, None)
    # the cuts: first half against second half, odd against even nodes
    first = prefix[k // 2]
    halves = first.caps()
    a_gpus = first.even_gpus + first.odd_gpus
    cuts = [
        (halves, [x - y for x, y in zip(everything, halves, strict=True)], min(a_gpus, n_gpus - a_gpus)),
        (whole.even, whole.odd, min(whole.even_gpus, whole.odd_gpus)),
    ]
    intact = float("inf")
    worst = float("inf")
    element: str | None = None
    for i, (s_cap, t_cap, smaller) in enumerate(cuts):
        if i and cuts[0] == cuts[1]:  # a job on one leaf: both cuts are the same
            continue
        flow, lost = _worst_loss(cut, s_cap, t_cap, failures and i == 0, smaller)
        intact = min(intact, flow / smaller)
        if lost is not None:
            worst, element = lost
    if worst >= intact:  # no single loss lowers this job's figure
        worst, element = intact, None
    return JobBandwidth(k, n_gpus, span, nic, intact, worst, element)


def _worst_loss(
    cut: CutFlows, s_cap: list[int], t_cap: list[int], failures: bool, smaller: int
) -> tuple[int, tuple[float, str] | None]:
    """The cut's max flow and, with `failures`, the worst loss that costs it anything (flow per GPU of the `smaller`
    side, element): the first of the lowest. Only a strictly lower flow may replace the worst so far, or the intact
    flow at first (a loss that costs nothing leaves the job's figure as it is, whichever loss it is), so a loss
    whose lower bound is no lower is not computed."""
    flow, losses = cut(s_cap, t_cap, failures)
    worst: tuple[float, str] | None = None
    for name, computed, lower in losses:
        if lower / smaller >= (worst[0] if worst is not None else flow / smaller):
            continue
        value = computed() / smaller
        if value < (worst[0] if worst is not None else flow / smaller):
            worst = (value, name)
    return flow, worst
