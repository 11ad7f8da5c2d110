"""The pipeline: spec (1) → topology (2) → figures and graph checks (3) → allocation and its checks (4) →
switch and InfiniBand subnet intent and intent checks (5), as one frozen Build, which render (6), write (7)
and the tools consume. The checks' context grows along the way: analysis.checks.Context → allocation.checks.
AllocationContext → intent.context.IntentContext.

Each stage returns a new value and never edits an earlier one. An unreadable or invalid spec stops
at the loader (FabricError with spec_invalid); design errors do not stop the pipeline, so one run
reports every problem; `build` refuses to write outputs while errors remain.

On a large design with spare cores, the fabric's figures with the graph checks (and, if asked, its job-bandwidth
table) are computed beside allocation and intent, in a forked child that shares the topology (nothing of it is
pickled; only the small results come back); the later checks that read the figures run once they are back. When
nothing will render the build (`fabric validate`), the allocation checks run likewise beside the intents, in a
second child forked once the allocation is made. The values are the same either way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from fabric.allocation.allocate import Allocation, Laid, allocate
from fabric.allocation.checks import AllocationContext, run_allocation_checks
from fabric.allocation.lock import keep_locked
from fabric.analysis.checks import Context, run_checks
from fabric.analysis.figures import SMALL_SWITCHES, FabricFigures, fabric_figures
from fabric.fast.collector import gc_paused
from fabric.fast.lazy import LazyMapping
from fabric.fast.parallel import beside, cores
from fabric.intent.checks import run_intent_checks
from fabric.intent.context import IntentContext
from fabric.intent.ethernet import DeviceIntent, build_intents
from fabric.intent.hosts import (
    BondedHost,
    HostIntent,
    IbHost,
    RoceHost,
    build_bonded,
    build_hosts,
    build_ib_hosts,
    build_roce_hosts,
)
from fabric.intent.infiniband import IbPlan, build_infiniband
from fabric.model.findings import Finding, Severity, sort_findings
from fabric.model.topology import Topology
from fabric.spec.loader import Design, load_spec
from fabric.spec.paths import locate
from fabric.topology.build import build_topology

if TYPE_CHECKING:  # jobs.py loads when a table is made (`fabric validate` makes none)
    from fabric.analysis.jobs import JobTable
    from fabric.analysis.traffic.figure import TrafficFigure


@dataclass(frozen=True)
class Build:
    design: Design  # without its lock (the allocation holds what was kept)
    topology: Topology
    figures: dict[str, FabricFigures]
    allocation: Allocation
    findings: tuple[Finding, ...]
    intents: Mapping[str, DeviceIntent] = field(default_factory=dict)  # per Ethernet switch
    infiniband: IbPlan = field(
        default_factory=IbPlan
    )  # per InfiniBand subnet: GUIDs, ftree roles, SM hosts, partitions
    hosts: Mapping[str, HostIntent] = field(default_factory=dict)  # per node that routes on the host
    bonded: Mapping[str, BondedHost] = field(default_factory=dict)  # per node bonded to an MLAG leaf pair
    roce: Mapping[str, RoceHost] = field(default_factory=dict)  # per server on a routed RoCE fabric
    ib_hosts: Mapping[str, IbHost] = field(default_factory=dict)  # per GPU node on an InfiniBand compute fabric

    @cached_property
    def jobs(self) -> JobTable | None:
        """The job-bandwidth table of the scheduler fabric (analysis/jobs.py), None when the design has none. Made on
        first read (`fabric validate` never needs it), unless build_fabric made it beside its other stages."""
        from fabric.analysis.jobs import job_bandwidth

        return job_bandwidth(self.design, self.topology)

    @cached_property
    def traffic(self) -> Mapping[int, tuple[TrafficFigure, ...]]:
        """The traffic figures of the job table's rows by job size (analysis/traffic): made on first read; on an
        InfiniBand fabric routed by ftree or updn also under the subnet manager's modelled routes
        (intent/infiniband)."""
        from fabric.analysis.traffic.jobs import job_traffic
        from fabric.analysis.traffic.sm import NotModelled
        from fabric.intent.infiniband.routes import BUILD_ENTRIES, sm_tables

        sm = None
        if self.jobs is not None:  # the subnet manager's routes, where the fabric is InfiniBand routed by ftree or updn
            subnets = [s for s in self.infiniband.subnets if s.fabric == self.jobs.fabric]
            try:
                sm = sm_tables(subnets, self.topology.fabrics[self.jobs.fabric], BUILD_ENTRIES)
            except NotModelled:
                sm = None
        return job_traffic(self.design, self.topology, self.jobs, sm=sm)

    @property
    def name(self) -> str:
        return self.design.spec.name

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == Severity.ERROR]


class FiguresNotBack(Mapping[str, FabricFigures]):
    """The figures in the context of the allocation checks run beside the analysis, before its figures are back:
    no allocation check reads them (tests/unit/pipeline/test_beside.py runs them all against this)."""

    def _not_back(self) -> NoReturn:
        raise RuntimeError(
            "the allocation checks run before the figures are back: a check that reads them is an "
            "intent check (fabric/intent/checks.py)"
        )

    def __getitem__(self, fabric: str) -> FabricFigures:
        self._not_back()

    def __iter__(self) -> Iterator[str]:
        self._not_back()

    def __len__(self) -> int:
        self._not_back()


BESIDE_ABOVE = 5_000  # links: below this the analysis takes less time than forking for it
# switches of the largest fabric: up to SMALL_SWITCHES the figures and job table take the lists engine, faster than
# the fork and its results cost; above, the child also loads numpy and scipy while allocation and intent run
BESIDE_SWITCHES = SMALL_SWITCHES


def build_fabric(
    spec: Design | str | Path,
    *,
    workers: int | None = 1,
    jobs: bool = False,
    topology: Topology | None = None,
    laid: Laid | None = None,
    rendered: bool = True,
) -> Build:
    """Everything but rendering. Raises FabricError only for an unreadable or invalid spec.

    `workers`: processes it may use (None: as cli's --workers; see cores()); with more than one, a large
    design's figures are computed beside allocation and intent, and with `jobs` its job-bandwidth table too
    (else that is made on first use). `topology` and `laid` (its cables and their findings): what
    `build_topology` and the allocation's cabling give for this design (a Design, not a path), already made
    (`fabric plan` estimates a candidate's cost from them before it builds it). `rendered`: False when nothing
    will render the build (`fabric validate`): a large design's allocation checks may then run beside the intents
    too, in a child of their own, whose memos (the optics' pass the BOM and the cabling tables read) stay there."""
    with gc_paused():
        return _build(spec, cores(workers), jobs, topology, laid, rendered)


def beside_pays(topology: Topology) -> bool:
    """Whether the analysis is worth a forked child of its own (given a spare core)."""
    fabrics = topology.fabrics.values()
    return (
        sum(len(ft.links) for ft in fabrics) >= BESIDE_ABOVE
        and max((len(ft.switches) for ft in fabrics), default=0) > BESIDE_SWITCHES
    )


def _build(
    spec: Design | str | Path,
    workers: int,
    jobs: bool,
    topology: Topology | None = None,
    laid: Laid | None = None,
    rendered: bool = True,
) -> Build:
    design = spec if isinstance(spec, Design) else load_spec(spec)
    topology = topology if topology is not None and isinstance(spec, Design) else build_topology(design)
    fork = workers > 1 and beside_pays(topology)
    with_jobs = fork and jobs  # in one process the table is made on first read, no sooner than needed

    def analysis() -> tuple[dict[str, FabricFigures], list[Finding], tuple[JobTable | None, ...]]:
        """The figures, the checks that read only them and the graph, and the job table if asked: in one child
        (numpy and scipy load once; it still ends before allocation and intent at 100k GPUs)."""
        figures = {key: fabric_figures(ft) for key, ft in topology.fabrics.items()}
        found = list(run_checks(Context(design, topology, figures)))
        if not with_jobs:
            return figures, found, ()
        from fabric.analysis.jobs import job_bandwidth

        return figures, found, (job_bandwidth(design, topology),)

    checks_beside = fork and not rendered  # the allocation checks in a child of their own too

    with beside(analysis, fork) as analysed:
        allocation = keep_locked(design, topology, allocate(design, topology, laid))  # a lock's assignments kept
        # the lock is kept: the build needs it no more (a lock of 100k GPUs is large while rendering)
        unlocked = design if design.lock is None else replace(design, lock=None)

        def allocation_checks(figures: Mapping[str, FabricFigures]) -> list[Finding]:
            return run_allocation_checks(AllocationContext(unlocked, topology, figures, allocation))

        # (~5 s of checks at a million GPUs beside ~11 s of intents; at the normal priority: niced, the child lost
        # 9 s on a machine others' jobs loaded for the 1.2 s it saved on an idle one)
        with beside(lambda: allocation_checks(FiguresNotBack()), checks_beside) as checked:
            intents = build_intents(design, topology, allocation, every=rendered)
            infiniband = build_infiniband(design, topology, allocation, every=rendered)
            hosts = build_hosts(design, topology, allocation)
            bonded = build_bonded(design, topology, allocation)
            roce = build_roce_hosts(design, topology, allocation)
            # each GPU node's HCAs for the renderers (125,000 at 1M GPUs): made when first read where nothing renders
            ib_hosts = (
                build_ib_hosts(design, topology) if rendered else LazyMapping(partial(build_ib_hosts, design, topology))
            )
            figures, graph_findings, table = analysed.result()
            # (before the allocation checks' child is waited for: it may still run)
            intent_findings = run_intent_checks(
                IntentContext(
                    unlocked, topology, figures, allocation, intents.devices, infiniband.subnets, roce, intents.classes
                )
            )
            allocation_findings = checked.result() if checks_beside else allocation_checks(figures)
    design = unlocked
    findings = [
        *design.notes,
        *topology.findings,
        *(locate(design.doc, f) for f in graph_findings),
        *(locate(design.doc, f) for f in allocation.findings),
        *(locate(design.doc, f) for f in allocation_findings),
        *(locate(design.doc, f) for f in intents.findings),
        *(locate(design.doc, f) for f in infiniband.findings),
        *(locate(design.doc, f) for f in intent_findings),
    ]
    build = Build(
        design,
        topology,
        figures,
        allocation,
        tuple(sort_findings(findings)),
        intents.devices,
        infiniband=infiniband,
        hosts=hosts,
        bonded=bonded,
        roce=roce,
        ib_hosts=ib_hosts,
    )
    if table:  # made beside: the cached_property's cache, so that the first read finds it
        vars(build)["jobs"] = table[0]
    return build
