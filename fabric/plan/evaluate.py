"""One candidate, built through the pipeline: its spec text → `build_fabric` → figures, findings, BOM cost,
headroom and job bandwidth. A module-level function of plain, picklable values, so a process pool or a Dask
worker runs it as it is."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

from fabric.allocation.allocate import Allocation, Laid, lay_cables  # the cables: what a BOM needs of one
from fabric.allocation.checks import optics_missing
from fabric.allocation.optics import optics
from fabric.analysis.headroom import headroom
from fabric.analysis.jobs import JobBandwidth
from fabric.costing import costing
from fabric.model.findings import FabricError, Finding, Severity, sort_findings
from fabric.model.kinds import Layer
from fabric.model.topology import Topology
from fabric.pipeline import Build, build_fabric
from fabric.plan.bounds import cabling_usd_at_least
from fabric.plan.candidates import Candidate
from fabric.plan.delivered import traffic_pct
from fabric.plan.document import spec_yaml
from fabric.spec.catalog import Catalog, builtin_catalog
from fabric.spec.loader import Design, load_spec_text
from fabric.topology.build import build_topology

FABRIC = "compute"
INCOMPLETE_BOM = frozenset({"optics-missing"})  # warnings of a build that rule a candidate out


@dataclass(frozen=True)
class Growth:
    """The path from the day-one design to `gpus`: the same candidate built for the target."""

    gpus: int
    ok: bool
    ruling: str  # the first error of the grown build, when it fails
    capital_usd: float
    later_usd: float  # bought later: the grown BOM's cost minus the day-one one
    switches_added: int
    recabled: int  # day-one cables of the fabric that the grown design has no more (moved or removed)


@dataclass(frozen=True)
class Outcome:
    candidate: Candidate
    name: str
    ok: bool  # builds without an error
    ruling: str  # "code: message" of the first error finding, when not ok
    errors: int
    warnings: int
    gpus: int = 0
    nodes: int = 0
    tiers: int = 0
    switches: tuple[int, int, int] = (0, 0, 0)  # leaf, spine, core
    optics: int = 0  # transceivers over the BOM
    cables: int = 0
    capital_usd: float = 0.0
    power_kw: float = 0.0
    tco_usd: float = 0.0
    tco_years: int = 0
    bisection_pct: float = 0.0
    worst_failure_pct: float | None = None
    min_ecmp_width: int | None = None
    headroom_gpus: int | None = None
    two_tier_max_gpus: int | None = None
    headroom_beyond: str = ""
    jobs: tuple[JobBandwidth, ...] = ()
    growth: Growth | None = None
    # `fabric plan --delivered ecmp|adaptive`: the traffic model's worst standard pattern, mean % of the NIC rate
    # per GPU (plan/delivered.py); None: delivered is the bisection figure
    traffic_pct: float | None = None
    traffic_routing: str | None = None  # the routing traffic_pct was modelled under (ecmp, adaptive, sm)
    # from the candidate's closed form, not built (plan/closed.py): counts, costs at least; no optics count,
    # failure, ECMP, headroom or job figures
    closed_form: bool = False

    @property
    def capital_per_gpu_usd(self) -> float:
        return self.capital_usd / self.gpus if self.gpus else 0.0

    @property
    def tco_per_gpu_usd(self) -> float:
        return self.tco_usd / self.gpus if self.gpus else 0.0


@cache
def _catalog() -> Catalog:
    return builtin_catalog()


def _ruling(findings: tuple[Finding, ...] | list[Finding]) -> str:
    """The first error, or the first finding that rules a candidate out (INCOMPLETE_BOM)."""
    errors = [f for f in findings if f.severity == Severity.ERROR or f.code in INCOMPLETE_BOM]
    return f"{errors[0].code}: {errors[0].message}" if errors else ""


def _build(candidate: Candidate, gpus: int, resume: Resume | None = None) -> tuple[str, Build | None, str, int]:
    """(spec name, build or None, ruling, errors). `resume`: the candidate's design, topology and cables, made by
    its estimate."""
    if resume is not None:
        build = build_fabric(resume.design, topology=resume.topology, laid=resume.laid)
        failing = [*build.errors, *(f for f in build.findings if f.code in INCOMPLETE_BOM)]
        return resume.design.spec.name, build, _ruling(failing), len(failing)
    text = spec_yaml(candidate, gpus, _catalog())
    try:
        design = load_spec_text(text, f"candidate-{candidate.index + 1}.yaml")
    except FabricError as exc:
        return "", None, _ruling(exc.findings), sum(1 for f in exc.findings if f.severity == Severity.ERROR)
    build = build_fabric(design)
    # an incomplete BOM (optical ends no catalog transceiver fits) rules a candidate out like an error: its cost
    # would leave the optics out
    failing = [*build.errors, *(f for f in build.findings if f.code in INCOMPLETE_BOM)]
    return design.spec.name, build, _ruling(failing), len(failing)


@dataclass(frozen=True)
class Ruled:
    """A candidate its estimate rules out without the full build: the first error found before the addresses,
    intents and figures (the spec's, the topology's, the cabling's) or an incomplete BOM (`optics-missing`)."""

    name: str
    ruling: str
    errors: int  # the errors found so far (a full build may find more)


@dataclass(frozen=True)
class Resume:
    """What an estimate made of a candidate, kept for its next step: its design and topology, and (the exact
    cost's) its cables and their findings, which its full build then need not make again."""

    design: Design
    topology: Topology
    laid: Laid | None = None


@dataclass(frozen=True)
class Estimate:
    """A candidate's bill of materials and TCO from its topology and cables alone: what the full build costs
    (costing reads nothing else), found in a fraction of its time. `exact` False: from the topology alone (no
    cables, no optics), a lower bound."""

    gpus: int
    capital_usd: float
    tco_usd: float
    exact: bool = True
    ruled: Ruled | None = None  # an incomplete BOM: the cost leaves optics out, and the candidate fails
    # the design and topology (the exact cost's: and cables), kept where small (KEEP_LINKS) so that the exact cost
    # and the full build need not make them again
    resume: Resume | None = field(default=None, compare=False, repr=False)


KEEP_LINKS = 20_000  # links of a topology a lower bound keeps for its exact cost: 4,096 GPUs' take ~10 MB


def estimate(
    candidate: Candidate,
    gpus: int,
    enough: Callable[[Estimate], bool] | None = None,
    resume: Resume | None = None,
) -> Estimate | Ruled:
    """The candidate's exact cost without addresses, intents and figures; `Ruled` when its spec, topology or
    cabling has an error or its BOM is incomplete. `enough`: asked with the topology's cost (switches, nodes,
    racks, and each link's cheapest cable and optics at its placed length: bounds.py); when it says so, that lower
    bound is returned and the cables are not laid. `resume`: that bound's design and topology (`Estimate.resume`).
    The exact cost keeps its design, topology and cables (`Estimate.resume`, where small) for the full build."""
    if resume is not None:
        design, topology = resume.design, resume.topology
    else:
        text = spec_yaml(candidate, gpus, _catalog())
        try:
            design = load_spec_text(text, f"candidate-{candidate.index + 1}.yaml")
        except FabricError as exc:
            return _ruled("", exc.findings)
        topology = build_topology(design)
    name = design.spec.name
    if any(f.severity == Severity.ERROR for f in topology.findings):
        return _ruled(name, topology.findings)
    if enough is not None:
        bare = costing(Build(design, topology, {}, Allocation((), (), (), ()), ()))
        # and each link's cheapest cable and optics at the length its placed ends need (bounds.py): capital,
        # and the TCO's support on it
        cabling = cabling_usd_at_least(design, topology)
        costs = design.spec.costs
        support = 1 + (costs.years * costs.support_pct_per_year / 100 if bare.years else 0.0)
        partial = Estimate(
            bare.gpus,
            bare.capital_usd + cabling,
            bare.tco_usd + cabling * support,
            exact=False,
            resume=Resume(design, topology) if _small(topology) else None,
        )
        if enough(partial):
            return partial
    laid = resume.laid if resume is not None and resume.laid is not None else lay_cables(design, topology)
    cables, found = laid
    if any(f.severity == Severity.ERROR for f in found):
        return _ruled(name, [*topology.findings, *found])
    allocation = Allocation(cables, (), (), ())
    missing = [optics_missing(miss) for miss in optics(design.catalog, topology, allocation).unmatched]
    cost = costing(Build(design, topology, {}, allocation, ()))
    if missing:  # ruled out: no full build to keep anything for
        return Estimate(cost.gpus, cost.capital_usd, cost.tco_usd, ruled=_ruled(name, missing))
    kept = Resume(design, topology, laid) if _small(topology) else None
    return Estimate(cost.gpus, cost.capital_usd, cost.tco_usd, resume=kept)


def _small(topology: Topology) -> bool:
    return sum(len(ft.links) for ft in topology.fabrics.values()) <= KEEP_LINKS


def _ruled(name: str, findings: Sequence[Finding]) -> Ruled:
    ordered = sort_findings(findings)
    failing = [f for f in ordered if f.severity == Severity.ERROR or f.code in INCOMPLETE_BOM]
    return Ruled(name, _ruling(ordered), len(failing))


def ruled_outcome(candidate: Candidate, ruled: Ruled) -> Outcome:
    return Outcome(candidate, ruled.name, False, ruled.ruling, ruled.errors, 0)


def _links(build: Build) -> set[tuple[str, str, str, str]]:
    ft = build.topology.fabrics.get(FABRIC)
    return {(x.a, x.a_port, x.b, x.b_port) for x in ft.links} if ft else set()


def _switch_count(build: Build) -> int:
    return sum(1 for d in build.topology.devices.values() if d.layer != Layer.NODE)


def evaluate(
    candidate: Candidate,
    gpus: int,
    grow_to: int | None = None,
    delivered: str = "bisection",
    resume: Resume | None = None,
) -> Outcome:
    """Build a candidate for `gpus` GPUs (and, with `grow_to`, for the target) and take its figures; `delivered`
    other than bisection: also the traffic model's figure under that routing (plan/delivered.py). `resume`: its
    exact estimate's design, topology and cables (`Estimate.resume`), which the build takes as they are."""
    name, build, ruling, errors = _build(candidate, gpus, resume)
    if build is None:
        return Outcome(candidate, name, False, ruling, errors, 0)
    warnings = sum(1 for f in build.findings if f.severity == Severity.WARNING and f.code not in INCOMPLETE_BOM)
    cost = costing(build)
    fig = build.figures.get(FABRIC)
    room = headroom(build.design, build.topology, FABRIC)
    jobs = build.jobs  # the job bandwidth table (analysis/jobs.py), kept for the traffic figure
    node_gpus = _catalog().nodes[candidate.node].gpus
    growth = _growth(candidate, build, cost.capital_usd, grow_to) if grow_to and not errors else None
    modelled = traffic_pct(build, delivered) if delivered != "bisection" and not errors else None
    return Outcome(
        candidate,
        name,
        not errors,
        ruling,
        errors,
        warnings,
        gpus=cost.gpus,
        nodes=cost.gpus // node_gpus if node_gpus else 0,
        tiers=fig.tiers if fig else 0,
        switches=(fig.switches["leaf"], fig.switches["spine"], fig.switches["core"]) if fig else (0, 0, 0),
        optics=sum(line.count for line in cost.lines if line.category == "transceiver"),
        cables=len(build.allocation.cables),
        capital_usd=cost.capital_usd,
        power_kw=cost.power_w / 1000,
        tco_usd=cost.tco_usd,
        tco_years=len(cost.years),
        bisection_pct=fig.bisection_pct if fig else 0.0,
        worst_failure_pct=fig.worst_failure_pct if fig else None,
        min_ecmp_width=fig.min_ecmp_width if fig else None,
        headroom_gpus=room.gpus if room else None,
        two_tier_max_gpus=room.two_tier_max_nodes * node_gpus if room and room.two_tier_max_nodes else None,
        headroom_beyond=room.beyond if room else "",
        jobs=jobs.rows if jobs else (),
        growth=growth,
        traffic_pct=modelled[0] if modelled else None,
        traffic_routing=modelled[1] if modelled else None,
    )


def _growth(candidate: Candidate, day_one: Build, capital: float, target: int) -> Growth:
    _, grown, ruling, errors = _build(candidate, target)
    if grown is None or errors:
        return Growth(target, False, ruling, 0.0, 0.0, 0, 0)
    later = costing(grown).capital_usd
    recabled = len(_links(day_one) - _links(grown))
    return Growth(target, True, "", later, later - capital, _switch_count(grown) - _switch_count(day_one), recabled)
