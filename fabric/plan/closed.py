"""`fabric plan --closed-form`: candidates ranked from their closed form, none built.

A 100,000-GPU candidate takes ~10 s to build and a million-GPU one minutes, so above `CLOSED_FORM_ABOVE` GPUs
(or with `--closed-form`) the plan answers from what metrics.py `closed_form` knows without a topology: the generator's
switch counts and wiring and the placement's racks (plan/sizing.py), and the least the nodes, switches, racks,
cables and optics cost at the lengths those places need (within ~1 % of the built cost on the candidates
tests/unit/plan/test_bounds.py samples; never above it). What only a build knows is left out and shown as not
modelled: the optics count, the figures of failures and ECMP, the headroom and the job table; the fabric
delivers the whole-cluster job all of its bandwidth at 1:1 (a non-blocking fat tree, as every built 1:1
candidate shows) and at most all of it when oversubscribed (the figure then ranks as if it did). A candidate
the generator refuses is ruled out by its finding, as in a build; so is one whose links cannot be cabled or
have no optics that link up (`cable-reach`, `optics-missing`, `optics-signalling`): one scalable unit of it
is built with its links cut to the lengths the full size needs (one length per band between two media
reaches, tier by tier), and the allocation lays the cables of its first devices and checks their optics as a
build would (`_cabling_ruling`).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace

from fabric.allocation.allocate import Allocation, _allocate_cables
from fabric.allocation.checks import AllocationContext, check_optics, check_optics_signalling
from fabric.model.findings import FabricError, Severity, sort_findings
from fabric.model.topology import Link
from fabric.plan.candidates import Candidate, node_count
from fabric.plan.document import spec_name, spec_yaml
from fabric.plan.evaluate import INCOMPLETE_BOM, Outcome, _catalog
from fabric.plan.metrics import ClosedForm, closed_form
from fabric.plan.sizing import Refusal, switch_counts
from fabric.spec.loader import load_spec_text
from fabric.spec.schema.outputs import Costs
from fabric.topology.build import build_topology

CLOSED_FORM_ABOVE = 65_536  # GPUs: above (a build then takes ~10 s or more each), `fabric plan` ranks the closed form
# unless asked to build (`--build`)


def closed_outcome(candidate: Candidate, gpus: int) -> Outcome:
    """The candidate's outcome from its closed form (`Outcome.closed_form`)."""
    catalog = _catalog()
    node = catalog.nodes[candidate.node]
    name = spec_name(candidate, gpus)
    found = switch_counts(candidate, node, node_count(node, gpus), catalog)
    if isinstance(found, Refusal):
        return Outcome(candidate, name, False, f"{found.code}: {found.message}", 1, 0, closed_form=True)
    if found is None:
        reason = "closed-form: its ports are not all on rails (or some on none): --build builds it"
        return Outcome(candidate, name, False, reason, 1, 0, closed_form=True)
    form = closed_form(candidate, gpus, catalog)
    ruling = _cabling_ruling(candidate, form)
    if ruling:
        return Outcome(candidate, name, False, ruling, 1, 0, closed_form=True)
    return Outcome(
        candidate,
        name,
        True,
        "",
        0,
        0,
        gpus=form.gpus,
        nodes=form.nodes,
        tiers=candidate.tiers,
        switches=form.switches,
        cables=form.links,
        capital_usd=form.capital_usd,
        power_kw=form.power_w / 1000,
        tco_usd=form.tco_usd,
        tco_years=Costs().years,
        bisection_pct=100.0,
        closed_form=True,
    )


def _bands(catalog_reaches: list[float], lengths: tuple[float, ...]) -> list[float]:
    """The longest of `lengths` between each two successive media reaches: the lengths among which the cabling's
    choice of medium kind can change (within one band every length has the same media that reach it)."""
    longest: dict[int, float] = {}
    for m in lengths:
        band = bisect_left(catalog_reaches, m - 1e-9)
        longest[band] = max(longest.get(band, 0.0), m)
    return [longest[b] for b in sorted(longest)]


SAMPLED = 4  # devices of each tier whose links the cabling check lays: every cage of theirs with its mates


def _sample(links: tuple[Link, ...]) -> tuple[Link, ...]:
    """The links of the first `SAMPLED` lower ends of each tier (every cage on them and on the leaves below them
    holds all its links: a node's ports, a leaf's uplinks; the first nodes share their leaves' first cages)."""
    firsts: dict[str, dict[str, None]] = {}
    for x in links:
        seen = firsts.setdefault(x.tier, {})
        if len(seen) < SAMPLED:
            seen.setdefault(x.a)
    return tuple(x for x in links if x.a in firsts[x.tier])


def _cabling_ruling(candidate: Candidate, form: ClosedForm) -> str:
    """The first `cable-reach`, `optics-missing` or `optics-signalling` finding of the candidate's links at the
    lengths its full size needs: one scalable unit of it (the same models, ports and cages) cabled and checked by
    the allocation, once per band of lengths (`_bands`), every link of a tier at that band's length ("" when
    none)."""
    catalog = _catalog()
    node = catalog.nodes[candidate.node]
    small = min(form.gpus, node.gpus * (candidate.scalable_unit or 8))
    try:
        design = load_spec_text(spec_yaml(candidate, small, catalog), f"candidate-{candidate.index + 1}.yaml")
    except FabricError:
        return ""
    topology = build_topology(design)
    if any(f.severity == Severity.ERROR for f in topology.findings) or not form.lengths:
        return ""
    reaches = sorted({m.reach_m for m in catalog.media.values()})
    bands = {tier: _bands(reaches, lengths) for tier, lengths in form.lengths}
    kept = {key: _sample(ft.links) for key, ft in topology.fabrics.items()}
    for turn in range(max(len(b) for b in bands.values())):
        at = {tier: b[min(turn, len(b) - 1)] for tier, b in bands.items()}
        fabrics = {
            key: replace(ft, links=tuple(replace(x, length_m=at[x.tier]) if x.tier in at else x for x in kept[key]))
            for key, ft in topology.fabrics.items()
        }
        cut = replace(topology, fabrics=fabrics)
        cables, found = _allocate_cables(design, cut)
        context = AllocationContext(design, cut, {}, Allocation(tuple(cables), (), (), ()))
        findings = [*found, *check_optics(context), *check_optics_signalling(context)]
        failing = [f for f in sort_findings(findings) if f.severity == Severity.ERROR or f.code in INCOMPLETE_BOM]
        if failing:
            return f"{failing[0].code}: {failing[0].message}"
    return ""
