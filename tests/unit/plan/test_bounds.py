"""The plan's pruning is exact: the closed-form bound never exceeds a candidate's real cost, the estimate is the
full build's cost, and the pruned sweep gives each node type the same best as building everything."""

from __future__ import annotations

import pytest

from fabric.plan import sweep as sweep_module
from fabric.plan.bounds import link_usd_at_least, module_share_usd
from fabric.plan.candidates import Request, enumerate_candidates
from fabric.plan.evaluate import Estimate, Ruled, estimate, evaluate
from fabric.plan.metrics import METRICS, estimate_bound, lower_bound, metric_value
from fabric.plan.rank import rank
from fabric.plan.sweep import Step, _resolve, best_of_node, pruned_sweep, sweep
from fabric.spec.catalog import builtin_catalog

CATALOG = builtin_catalog()
# GPU counts from one leaf to three tiers; every 37th candidate of each (every node type, switch, 2 and 3 tiers,
# rail or not, 1:1 and 2:1): 2-tier designs that fit, 3-tier ones with their optics and cables, rack-scale trays
COUNTS = (64, 1024, 4096)
STEP = 37


def _sample() -> list[tuple[int, object]]:
    out = []
    for gpus in COUNTS:
        request = Request(gpus, oversubscription=(1.0, 2.0))
        out += [(gpus, c) for c in enumerate_candidates(CATALOG, request)[::STEP]]
    return out


@pytest.mark.slow
def test_the_bound_is_never_above_a_candidates_real_cost() -> None:
    checked, ratios, tiers = 0, [], set()
    for gpus, c in _sample():
        e = estimate(c, gpus)  # type: ignore[arg-type]
        if isinstance(e, Ruled) or e.ruled is not None:
            continue  # fails: no figure to rank (an incomplete BOM's cost leaves optics out)
        for metric in METRICS:
            bound = lower_bound(c, gpus, metric, CATALOG)  # type: ignore[arg-type]
            exact = estimate_bound(e, c, metric, CATALOG)  # type: ignore[arg-type]
            assert bound <= exact * (1 + 1e-9), (c.label, gpus, metric, bound, exact)  # type: ignore[attr-defined]
            ratios.append(bound / exact)
        checked += 1
        tiers.add(c.tiers)  # type: ignore[attr-defined]
    assert checked >= 10 and tiers == {2, 3}
    # the negative case: the bound comes within 1 % of some real cost (the racks' places and the wiring are known in
    # closed form: plan/sizing.py), so a bound 1 % too high fails above
    assert max(ratios) > 0.99 and not all(r * 1.01 <= 1 for r in ratios)


def _topology_bound(c: object, gpus: int) -> tuple[Estimate | None, Estimate | Ruled]:
    """(the bound from the candidate's topology and placement, its exact cost)."""
    seen: list[Estimate] = []
    exact = estimate(c, gpus, lambda e: seen.append(e) or False)  # type: ignore[arg-type]
    return (seen[0] if seen else None), exact


# 4 x 400G in one twin-port cage (q3400), twin-port NICs (DGX), single-port cages (B300), splitter copper, 3 tiers
PLACED = [(1024, ("dgx-h100", "q3400")), (1024, ("dgx-b300", "sn5600")), (512, ("dgx-b200", "qm9700"))]


@pytest.mark.slow
def test_the_topology_bound_is_never_above_the_exact_cost_and_is_tight() -> None:
    """The rack-distance bound (the topology's switches, nodes and racks, each link's cheapest cable and optics at
    the length its placed ends need) never exceeds the exact cost; it comes within 0.5 % of some, so a bound
    0.5 % high would fail."""
    cases = [(g, c) for g, c in _sample() if c.tiers == 2 or g < 4096]  # type: ignore[attr-defined]
    for gpus, (node, switch) in PLACED:
        request = Request(gpus, nodes=(node,), switches=(switch,), oversubscription=(1.0, 2.0))
        cases += [(gpus, c) for c in enumerate_candidates(CATALOG, request)]
    ratios = []
    for gpus, c in cases:
        bound, exact = _topology_bound(c, gpus)
        if bound is None or isinstance(exact, Ruled):
            continue
        assert bound.capital_usd <= exact.capital_usd * (1 + 1e-9), (c.label, gpus)  # type: ignore[attr-defined]
        assert bound.tco_usd <= exact.tco_usd * (1 + 1e-9), (c.label, gpus)  # type: ignore[attr-defined]
        ratios.append(bound.tco_usd / exact.tco_usd)
    assert len(ratios) > 40 and max(ratios) > 0.995 and not all(r * 1.005 <= 1 for r in ratios)


def test_a_cage_of_four_links_shares_its_module_four_ways() -> None:
    """q3400 runs a twin-port OSFP cage as 4 x 400G: one module per cage, a quarter of it per link end; a DGX
    H100's twin-port cage carries 2. The bound prices an optical link's ends so (a fibre plus the two shares)."""
    twin = CATALOG.transceivers["osfp-2x400g-sr8"].price_usd
    flat = CATALOG.transceivers["osfp-2x400g-sr8-flat"].price_usd
    fibre = CATALOG.media["mmf-400g"].price_usd
    assert module_share_usd(CATALOG, "q3400", 400, "mmf") == twin / 4
    assert module_share_usd(CATALOG, "dgx-h100", 400, "mmf") == flat / 2
    # 20 m: only fibre reaches
    assert link_usd_at_least(CATALOG, "infiniband", 400, 20.0, ("dgx-h100", "q3400")) == fibre + flat / 2 + twin / 4
    # a cage no module fits pays none (optics-missing: the BOM orders none), so the bound stays below
    assert module_share_usd(CATALOG, "arista-7060dx5-64s", 400, "mmf") == 0.0


def test_the_estimate_is_the_full_builds_cost() -> None:
    request = Request(512, nodes=("dgx-h100", "dgx-b200"), switches=("qm9700", "sn5600"), tiers=(2, 3))
    for c in enumerate_candidates(CATALOG, request):
        e, o = estimate(c, 512), evaluate(c, 512)
        if isinstance(e, Ruled):
            assert not o.ok and e.ruling.split(":")[0] == o.ruling.split(":")[0]
            continue
        assert (round(e.capital_usd, 2), round(e.tco_usd, 2)) == (round(o.capital_usd, 2), round(o.tco_usd, 2))


def _best(outcomes: list, metric: str) -> dict[str, tuple[int, float | None]]:
    best: dict[str, tuple[int, float | None]] = {}
    for r in rank(outcomes, metric=metric):
        if r.status == "ok":
            best.setdefault(r.outcome.candidate.node, (r.outcome.candidate.index, r.metric))
    return best


@pytest.mark.slow
@pytest.mark.parametrize("gpus", [16, 256, 1024])
def test_the_pruned_answer_is_the_unpruned_one(gpus: int) -> None:
    """Over a table of GPU counts: the same best candidate and figure per node type; every candidate the pruned
    sweep rules out without a full build fails the full build with the same finding code."""
    request = Request(
        gpus,
        nodes=("dgx-a100", "dgx-h100"),
        # qm8700: the DGX A100's HDR ports link over fibre to HDR optics only (optics-signalling: not to the NDR
        # twin-port modules of the others)
        switches=("qm9700", "qm8700", "sn5600", "arista-7060dx5-64s"),
    )
    candidates = enumerate_candidates(CATALOG, request)
    metric = "tco-per-delivered-pflops"
    everything = sweep(candidates, gpus, workers=1)
    built, pruned = pruned_sweep(candidates, gpus, metric, "bf16", workers=1)
    assert _best(built, metric) == _best(everything, metric) and len(_best(built, metric)) == 2
    assert len(built) + len(pruned) == len(candidates) and len(pruned) > len(candidates) // 3
    full = {o.candidate.index: o for o in everything}
    for o in built:
        assert o.ok == full[o.candidate.index].ok
        if not o.ok:
            assert o.ruling.split(":")[0] == full[o.candidate.index].ruling.split(":")[0]
            assert metric_value(o, metric, CATALOG) is not None or not o.gpus


def test_the_node_types_steps_side_by_side_give_what_one_after_the_other_does() -> None:
    """`pruned_sweep` on two workers (the node types' steps interleaved, a candidate's topology kept in the worker
    that built it, steps run ahead by an idle worker) gives the same outcomes and pruned candidates, in the same
    order, as in one process."""
    request = Request(256, nodes=("dgx-a100", "dgx-h100", "hgx-b300"), switches=("qm9700", "qm8700", "sn5600"))
    candidates = enumerate_candidates(CATALOG, request)
    metric = "tco-per-delivered-pflops"
    one = pruned_sweep(candidates, 256, metric, "bf16", workers=1)
    assert pruned_sweep(candidates, 256, metric, "bf16", workers=2) == one and len(one[0]) >= 3 and one[1]


class _InOrder:
    """A pool for `_interleaved` that runs each call when it is submitted and hands back the last submitted first:
    the step a free worker runs ahead ends before the step its node type is running (one process: the workers'
    kept topologies are one dict, which changes what is built again, never a result)."""

    def __init__(self, count: int) -> None:
        self.count, self.results = count, {}  # type: ignore[var-annotated]

    def __enter__(self) -> _InOrder:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def idle(self) -> list[int]:
        return [w for w in range(self.count) if w not in self.results]

    def submit(self, worker: int, function, *args):  # type: ignore[no-untyped-def]
        self.results[worker] = function(*args)

    def done(self):  # type: ignore[no-untyped-def]
        worker = list(self.results)[-1]
        return worker, self.results.pop(worker)


def test_steps_run_ahead_are_taken_and_give_what_one_process_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """hgx-b300's candidates all fail (optics-missing) after their exact cost, so dgx-h100's search ends first and a
    free worker runs hgx-b300's likely next steps ahead: they are taken, and the answer is one process's."""
    request = Request(256, nodes=("hgx-b300", "dgx-h100"), switches=("qm9700", "sn5600"))
    candidates = enumerate_candidates(CATALOG, request)
    metric = "tco-per-delivered-pflops"
    tasks = [[c for c in candidates if c.node == node] for node in ("hgx-b300", "dgx-h100")]
    one = [best_of_node(t, 256, metric, "bf16") for t in tasks]
    taken = []
    monkeypatch.setattr(sweep_module, "_resolve", lambda *a: taken.append(a) or _resolve(*a))
    two = sweep_module._interleaved(tasks, 256, metric, "bf16", "bisection", 2, _InOrder)
    assert two == one and len(taken) >= 3


def test_a_step_run_ahead_gives_the_result_its_turn_would() -> None:
    """A step computed ahead holds the topology's bound and the exact cost: the step takes the bound only where it
    would have stopped there (its bound above the least waiting), else the exact cost."""
    c = enumerate_candidates(CATALOG, Request(256, nodes=("dgx-h100",), switches=("qm9700",)))[0]
    seen: list[Estimate] = []
    exact = estimate(c, 256, lambda e: seen.append(e) or False)
    assert isinstance(exact, Estimate) and exact.exact and not seen[0].exact
    metric = "tco-per-delivered-pflops"
    bound = estimate_bound(seen[0], c, metric, CATALOG)
    found = (seen[0], exact)
    above, below = (bound - 1, c.index), (bound + 1, c.index)
    assert _resolve(found, Step(c, enough=True, least=above), metric, CATALOG, "bf16") is seen[0]
    assert _resolve(found, Step(c, enough=True, least=below), metric, CATALOG, "bf16") is exact
    assert _resolve(found, Step(c, enough=True, least=None), metric, CATALOG, "bf16") is exact
    assert _resolve(found, Step(c, least=above), metric, CATALOG, "bf16") is exact  # no stop asked: the exact cost
    assert _resolve((None, exact), Step(c, enough=True, least=above), metric, CATALOG, "bf16") is exact


def _plain_cabling(c: object, gpus: int) -> tuple[float, float]:
    """(cabling_usd_at_least, the same summed link by link with `link_usd_at_least`: the plain way)."""
    from fabric.allocation.cages import CageLookup
    from fabric.plan.bounds import cabling_usd_at_least
    from fabric.plan.document import spec_yaml
    from fabric.spec.loader import load_spec_text
    from fabric.topology.build import build_topology
    from fabric.topology.media import CablingRules
    from fabric.topology.racks import route_m

    design = load_spec_text(spec_yaml(c, gpus, CATALOG), "c.yaml")  # type: ignore[arg-type]
    topology = build_topology(design)
    cage_of, total = CageLookup(CATALOG, topology.devices), 0.0
    for key, ft in topology.fabrics.items():
        rules = CablingRules.resolve(design.spec.fabrics[key].cabling, design.spec.cabling)
        for link in ft.links:
            a, b = topology.devices[link.a], topology.devices[link.b]
            ra, rb = topology.racks.get(a.rack or ""), topology.racks.get(b.rack or "")
            if link.length_m is None and (ra is None or rb is None or not a.u or not b.u):
                continue
            tray = rules.tray_height_m
            needed = link.length_m or rules.length_for(
                route_m(design.spec.racks, ra, a.u, a.height_u, rb, b.u, b.height_u, tray)
            )  # type: ignore[arg-type]
            cages = (cage_of(link.a, link.a_port)[1], cage_of(link.b, link.b_port)[1])
            total += link_usd_at_least(CATALOG, ft.technology, link.speed_gbps, needed, (a.model, b.model), cages)
    return cabling_usd_at_least(design, topology), total


def test_the_cabling_bound_by_class_is_the_plain_sum_link_by_link() -> None:
    """The rack-distance bound counts links by class (numbered places and cage kinds) and keeps the prices across
    calls: the same sum as pricing every link on its own (a twin-port q3400, DGX and GB200 trays, 3 tiers)."""
    cases = [(1024, ("dgx-h100", "q3400")), (512, ("dgx-gb200-tray", "qm9700")), (1024, ("dgx-b300", "sn5600"))]
    checked = 0
    for gpus, (node, switch) in cases:
        for c in enumerate_candidates(CATALOG, Request(gpus, nodes=(node,), switches=(switch,)))[:3]:
            fast, plain = _plain_cabling(c, gpus)
            assert plain > 0 and fast == pytest.approx(plain, rel=1e-12), (c.label, fast, plain)
            checked += 1
    assert checked == 9


def test_the_full_build_from_the_estimates_topology_and_cables_is_the_full_build() -> None:
    """`evaluate` with the exact estimate's design, topology and cables (`Estimate.resume`) gives the outcome of
    building the candidate from its spec."""
    request = Request(512, nodes=("dgx-h100", "dgx-a100"), switches=("qm9700", "sn5600"), tiers=(2, 3))
    kept = 0
    for c in enumerate_candidates(CATALOG, request)[::3]:
        e = estimate(c, 512)
        if isinstance(e, Ruled) or e.resume is None:
            continue
        assert e.resume.laid is not None
        assert evaluate(c, 512, resume=e.resume) == evaluate(c, 512), c.label
        kept += 1
    assert kept >= 3
