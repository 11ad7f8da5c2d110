"""The pipeline: spec (1) → topology (2) → figures and graph checks (3) → allocation and plan checks (4) →
switch and InfiniBand subnet intent and intent checks (5), as one frozen Build, which render (6), write (7)
and the tools consume. The checks' context grows along the way: analysis.checks.Context → allocation.checks.
PlanContext → intent.context.IntentContext.

Each stage returns a new value and never edits an earlier one. An unreadable or invalid spec stops
at the loader (FabricError with spec_invalid); design errors do not stop the pipeline, so one run
reports every problem; `build` refuses to write outputs while errors remain.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fabric.allocation.allocate import Plan, allocate
from fabric.allocation.checks import PlanContext, run_plan_checks
from fabric.allocation.lock import keep_locked
from fabric.analysis.checks import Context, run_checks
from fabric.analysis.figures import FabricFigures, fabric_figures
from fabric.intent.checks import run_intent_checks
from fabric.intent.context import IntentContext
from fabric.intent.ethernet import DeviceIntent, build_intents
from fabric.intent.hosts import BondedHost, HostIntent, build_bonded, build_hosts
from fabric.intent.infiniband import IbPlan, build_infiniband
from fabric.model.findings import Finding, Severity, sort_findings
from fabric.model.topology import Topology
from fabric.spec.loader import Design, load_spec
from fabric.spec.paths import locate
from fabric.topology.build import build_topology


@dataclass(frozen=True)
class Build:
    design: Design
    topology: Topology
    figures: dict[str, FabricFigures]
    plan: Plan
    findings: tuple[Finding, ...]
    intents: Mapping[str, DeviceIntent] = field(default_factory=dict)  # per Ethernet switch
    infiniband: IbPlan = field(
        default_factory=IbPlan
    )  # per InfiniBand subnet: GUIDs, ftree roles, SM hosts, partitions
    hosts: Mapping[str, HostIntent] = field(default_factory=dict)  # per node that routes on the host
    bonded: Mapping[str, BondedHost] = field(default_factory=dict)  # per node bonded to an MLAG leaf pair

    @property
    def name(self) -> str:
        return self.design.spec.name

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == Severity.ERROR]


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: the stages make millions of long-lived objects (a 100k-GPU
    fabric: ~2.5 million) and next to no cyclic garbage; each automatic collection walks all of them again,
    which cost ~40% of the build. Reference counting still frees everything as usual.

    On the way out the survivors go straight to the oldest generation (freeze, then unfreeze: a list splice, no
    walk); else the first collection after the pause walks them all as young objects (~1 s at 100k GPUs). They
    stay collectable as any long-lived object. Skipped when something else holds objects frozen: unfreeze
    would release those too."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def build_fabric(spec: Design | str | Path) -> Build:
    """Everything but rendering. Raises FabricError only for an unreadable or invalid spec."""
    with gc_paused():
        return _build(spec)


def _build(spec: Design | str | Path) -> Build:
    design = spec if isinstance(spec, Design) else load_spec(spec)
    topology = build_topology(design)
    figures = {key: fabric_figures(ft) for key, ft in topology.fabrics.items()}
    graph_findings = run_checks(Context(design, topology, figures))
    plan = keep_locked(design, topology, allocate(design, topology))  # a lock's assignments kept
    plan_findings = run_plan_checks(PlanContext(design, topology, figures, plan))
    intents = build_intents(design, topology, plan)
    infiniband = build_infiniband(design, topology, plan)
    intent_findings = run_intent_checks(
        IntentContext(design, topology, figures, plan, intents.devices, infiniband.subnets)
    )
    findings = [
        *design.notes,
        *topology.findings,
        *(locate(design.doc, f) for f in graph_findings),
        *(locate(design.doc, f) for f in plan.findings),
        *(locate(design.doc, f) for f in plan_findings),
        *(locate(design.doc, f) for f in intents.findings),
        *(locate(design.doc, f) for f in infiniband.findings),
        *(locate(design.doc, f) for f in intent_findings),
    ]
    return Build(
        design,
        topology,
        figures,
        plan,
        tuple(sort_findings(findings)),
        intents.devices,
        infiniband=infiniband,
        hosts=build_hosts(design, topology, plan),
        bonded=build_bonded(design, topology, plan),
    )
