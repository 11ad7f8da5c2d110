"""What `fabric plan` ranks by, and the analytic lower bound of it that prunes candidates before they are built.

Compute is the catalog's dense tensor throughput per GPU (`gpu_bf16_tflops`, `gpu_fp8_tflops`: datasheet
figures) × GPUs; delivered compute is that × the fraction of its NIC bandwidth the fabric delivers the
whole-cluster job (the last row of the job bandwidth table, analysis/jobs.py). A GPU without FP8 counts its BF16
rate at `fp8` (an A100 runs an FP8 model at its BF16 speed).

The bound: a candidate costs at least its nodes, its switches and racks, and each link's cheapest cable and
optics at the length the places of its two ends need, with the TCO rates of the candidate's spec (the schema's
defaults: the plan writes no `costs:`), and delivers at most all of its compute. The switches, the racks and
where each node and switch stands are known in closed form (plan/sizing.py: the generator's counts and wiring,
the sequential placement; `_Floor` below), so each link is priced at the route from its node's unit (or its
switch's) to the rack of the switch it joins, at the highest unit a switch of that tier takes in that rack
(`_placed_links_usd`): within ~1 % of the exact cost for most candidates. Where the closed form does not apply
(the generator refuses the candidate), the fewest switches any design of its kind can have and the shortest
cable per link (`_links_usd_at_least`). Every real build costs as much or more (the allocation's cage rules,
the far switch's real unit, the node-side optics' power come on top), so a candidate whose bound is worse than
a built candidate's figure cannot rank above it and is not built. Those the bound keeps get a second, exact
one: their cost from the topology and cables alone (evaluate.estimate, a fraction of a build), over all of
their compute; a candidate whose estimate finds an error or an incomplete BOM is ruled out by that finding
without a full build. tests/unit/plan/test_bounds.py checks the bound against real costs and the pruned answer
against building everything; tests/unit/plan/test_sizing.py the closed form against built topologies.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from fabric.model.kinds import Tier
from fabric.plan.bounds import LinkPrices, link_usd_at_least
from fabric.plan.candidates import Candidate, node_count
from fabric.plan.document import spec_data
from fabric.plan.evaluate import Estimate, Outcome
from fabric.plan.sizing import Racks, Sizes, switch_counts
from fabric.plan.sizing import racks as racks_of
from fabric.spec.catalog import Catalog, NodeType, SwitchModel, radix, switch_ports
from fabric.spec.schema.outputs import Costs
from fabric.spec.schema.racks import RackLayout
from fabric.topology.leaves import split_leaf_ports
from fabric.topology.media import DEFAULT_SERVICE_LOOP_M, DEFAULT_SLACK_PCT, DEFAULT_TRAY_HEIGHT_M
from fabric.topology.racks import U_M

HOURS_PER_YEAR = 8760
ROUNDING = 1e-9  # a relative margin below which two sums of the same costs in another order may differ
# name → what it divides (the TCO or the capital) by (the GPUs, the compute or the delivered compute)
METRICS = {
    "tco-per-delivered-pflops": ("tco", "delivered"),
    "tco-per-pflops": ("tco", "pflops"),
    "tco-per-gpu": ("tco", "gpus"),
    "capital-per-gpu": ("capital", "gpus"),
}
DEFAULT_METRIC = "tco-per-delivered-pflops"
PRECISIONS = ("bf16", "fp8")


def tflops_per_gpu(node: NodeType, precision: str) -> float:
    """A GPU's dense tensor TFLOPS at `precision` (FP8: its BF16 rate when it has none); 0 when unknown."""
    if precision == "fp8" and node.gpu_fp8_tflops:
        return node.gpu_fp8_tflops
    return node.gpu_bf16_tflops or 0.0


def delivered_fraction(o: Outcome) -> float:
    """The whole-cluster job's intact bandwidth over its NIC bandwidth (1 when the build has no job table); with
    `fabric plan --delivered ecmp|adaptive`, the traffic model's figure instead (plan/delivered.py)."""
    if o.traffic_pct is not None:
        return o.traffic_pct / 100
    if not o.jobs:
        return 1.0
    whole = o.jobs[-1]
    return whole.intact_gbps_per_gpu / whole.nic_gbps_per_gpu if whole.nic_gbps_per_gpu else 0.0


def pflops(o: Outcome, catalog: Catalog, precision: str) -> float:
    return o.gpus * tflops_per_gpu(catalog.nodes[o.candidate.node], precision) / 1000


def metric_value(o: Outcome, metric: str, catalog: Catalog, precision: str = "bf16") -> float | None:
    """The outcome's figure for `metric` (lower is better); None when it has no compute figure to divide by."""
    cost, per = METRICS[metric]
    usd = o.tco_usd if cost == "tco" else o.capital_usd
    if per == "gpus":
        return usd / o.gpus if o.gpus else None
    compute = pflops(o, catalog, precision) * (delivered_fraction(o) if per == "delivered" else 1.0)
    return usd / compute if compute > 0 else None


def _capacity_gbps(model: SwitchModel, speed: int) -> int:
    """A switch's bandwidth: its ports' sum at the node speed or in their default modes, the larger."""
    return max(sum(p.speed_gbps for p in switch_ports(model, s)) for s in (speed, None))


def _shortest_m(route_m: float) -> float:
    """The shortest cable a route needs, with the default slack and service loop (the plan writes no `cabling:`)."""
    return route_m * (1 + DEFAULT_SLACK_PCT / 100) + DEFAULT_SERVICE_LOOP_M


def _between_racks_m(layout: RackLayout) -> float:
    """The shortest cable between devices in two racks (topology/racks.py, route_m): up from the top U to the tray
    and down again, and at least one rack pitch or one row apart."""
    up = DEFAULT_TRAY_HEIGHT_M + U_M / 2
    return _shortest_m(2 * up + min(layout.pitch_m, layout.depth_m + layout.row_gap_m))


def _per_gbps_at_least(catalog: Catalog, technology: str, switch: str, needed_m: float) -> float:
    """The least a switch-to-switch link of model `switch` can cost per Gb/s, over the speeds its ports run."""
    speeds = {m.speed_gbps for g in catalog.switches[switch].ports for m in g.modes}
    return min((link_usd_at_least(catalog, technology, s, needed_m, (switch, switch)) / s for s in speeds), default=0.0)


def _links_usd_at_least(
    candidate: Candidate, node: NodeType, nodes: int, catalog: Catalog, layout: RackLayout
) -> float:
    """Cables and optics where the placement is not known in closed form: each node link between racks (a node
    group and a fabric's switches never share a rack: topology/racks.py starts a new rack at each block) at the
    shortest cable between two racks; the switch tiers' links, which may share a rack, at the shortest cable, per
    Gb/s of the bandwidth the tiers above the leaves carry at least (as `_switches_at_least`)."""
    links = nodes * len(node.ports["compute"].port_list())
    ends = (candidate.node, candidate.switch)
    usd = links * link_usd_at_least(catalog, candidate.technology, candidate.speed_gbps, _between_racks_m(layout), ends)
    ratio = candidate.oversubscription
    up_gbps = links * candidate.speed_gbps / ratio
    if candidate.tiers >= 3:
        up_gbps += up_gbps / ratio
    elif _leaves_at_least(candidate, node, nodes, catalog) <= 1:
        up_gbps = 0.0
    return usd + up_gbps * _per_gbps_at_least(catalog, candidate.technology, candidate.switch, _shortest_m(0.0))


class _Floor:
    """The sequential placement's geometry (plan/sizing.py `racks`; topology/racks.py `place` and `route_m`): node
    i in slot i // n at the (i % n)-th place from the bottom; the switches after the node racks in the order the
    generator makes them (each plane's leaves, spines, cores), switch i of them in slot node_racks + i // k at the
    (i % k)-th place; slot s in row s // per_row at position s % per_row."""

    def __init__(self, layout: RackLayout, placed: Racks, switch_u: int) -> None:
        self.layout, self.placed, self.switch_u = layout, placed, switch_u
        self.top = layout.rack_units * U_M + DEFAULT_TRAY_HEIGHT_M  # a rack's top and the tray above it
        self.row_m = layout.depth_m + layout.row_gap_m

    def switch_slot(self, i: int) -> int:
        return self.placed.node_racks + i // self.placed.switches_per_rack

    def switch_up_m(self, i: int) -> float:
        """From switch i's middle up to the tray."""
        return self.top - ((i % self.placed.switches_per_rack) * self.switch_u + self.switch_u / 2) * U_M

    def node_up_m(self, node: NodeType, i: int) -> float:
        return self.top - ((i % self.placed.nodes_per_rack) * node.u + node.u / 2) * U_M

    def _along_m(self, a: int, b: int) -> float:
        """Along the rows and aisles between two slots."""
        w = self.placed.per_row
        return abs(a % w - b % w) * self.layout.pitch_m + abs(a // w - b // w) * self.row_m

    def routes(self, slot: int, up_m: float, targets: range, switch: int | None = None) -> Iterator[tuple[float, int]]:
        """(route, switches) from a device in `slot` whose middle is `up_m` below the tray (a switch: block index
        `switch`) to the switches `targets`, rack by rack: up, along the floor and down to the highest of them in
        that rack; in the device's own rack, the units between."""
        k = self.placed.switches_per_rack
        for t in range(self.switch_slot(targets.start), self.switch_slot(targets.stop - 1) + 1):
            first = (t - self.placed.node_racks) * k
            low, high = max(targets.start, first), min(targets.stop - 1, first + k - 1)
            if t == slot and switch is not None:
                for j in range(low, high + 1):
                    yield abs(switch - j) * self.switch_u * U_M, 1
            else:
                yield up_m + self._along_m(slot, t) + self.switch_up_m(high), high - low + 1


Routes = list[tuple[str, int, Counter[float]]]  # (tier, speed, the least route in m → links) of each plane


def _placed_routes(
    candidate: Candidate, node: NodeType, nodes: int, catalog: Catalog, layout: RackLayout, placed: Racks, sizes: Sizes
) -> Routes:
    """Every link at the least route the places of its two ends need (`_Floor`), wired as topology/clos.py wires
    them (plan/sizing.py `Plane`): a node's links to its scalable unit's rail leaves (or its group's leaves), a
    leaf's to every spine (2 tiers) or to its pod's spines, a spine's to its group of cores; the far end counted at
    the highest place a switch of that tier takes in its rack."""
    floor = _Floor(layout, placed, catalog.switches[candidate.switch].u)
    node_links: Counter[float] = Counter()  # route → links
    out: Routes = [(Tier.NODE_LEAF, candidate.speed_gbps, node_links)]
    offset = 0
    for plane in sizes.planes:
        leaves = offset
        spines = leaves + plane.leaves
        cores = spines + plane.spines
        offset = cores + plane.cores
        width = plane.rails or plane.node_ports  # leaves a node's links in this plane go to
        ups = [floor.node_up_m(node, j) for j in range(placed.nodes_per_rack)]
        # (rack, first leaf) → (the route beyond the node's own climb, links) to each rack of those leaves: the
        # nodes of a rack mostly share their leaves
        beyond: dict[tuple[int, int], list[tuple[float, int]]] = {}
        for i in range(nodes):
            slot, first = i // placed.nodes_per_rack, leaves + i // plane.su * width
            found = beyond.get((slot, first))
            if found is None:
                targets = range(first, first + width)
                found = beyond[(slot, first)] = [
                    (route, count * plane.per_rail) for route, count in floor.routes(slot, 0.0, targets)
                ]
            climb = ups[i % placed.nodes_per_rack]
            for route, links in found:
                node_links[climb + route] += links
        up: Counter[float] = Counter()
        for i in range(plane.leaves):
            at, up_m = floor.switch_slot(leaves + i), floor.switch_up_m(leaves + i)
            if plane.cores:  # its pod's spines, one link to each
                pod = i // plane.per_pod
                far, per = range(spines + pod * plane.uplinks, spines + (pod + 1) * plane.uplinks), 1
            else:  # every spine, uplinks / spines to each
                far, per = range(spines, cores), plane.uplinks // plane.spines
            for route, count in floor.routes(at, up_m, far, leaves + i):
                up[route] += count * per
        out.append((Tier.LEAF_SPINE, plane.leaf_up_gbps, up))
        if plane.cores:
            top: Counter[float] = Counter()
            per = plane.spine_uplinks // plane.per_group
            for j in range(plane.spines):
                group = j % plane.uplinks
                far = range(cores + group * plane.per_group, cores + (group + 1) * plane.per_group)
                at, up_m = floor.switch_slot(spines + j), floor.switch_up_m(spines + j)
                for route, count in floor.routes(at, up_m, far, spines + j):
                    top[route] += count * per
            out.append((Tier.SPINE_CORE, plane.spine_up_gbps, top))
    return out


def _routes_usd(candidate: Candidate, catalog: Catalog, routes: Routes) -> float:
    """Each link at the cheapest medium and optics that reach its route with the default slack and service loop
    (`link_usd_at_least`, a step function of the length: priced once per orderable length or reach); what the
    allocation adds on top (a cage whose links part ways takes fibre) only makes the real cost higher."""
    usd = 0.0
    for tier, speed, links in routes:
        ends = (candidate.node if tier == Tier.NODE_LEAF else candidate.switch, candidate.switch)
        prices = _StepPrices(catalog, candidate.technology, speed, ends)
        usd += sum(count * prices(_shortest_m(route)) for route, count in links.items())
    return usd


class _StepPrices:
    """`link_usd_at_least` of one speed and pair of models as a function of the length: it changes only at a
    medium's orderable length or reach, so it is priced at each of those once and looked up."""

    def __init__(self, catalog: Catalog, technology: str, speed: int, ends: tuple[str, str]) -> None:
        marks = sorted({x for m in catalog.media.values() for x in (m.reach_m, *m.lengths_m)})
        prices = LinkPrices(catalog, technology)
        self._marks = marks
        self._usd = [prices.least(speed, x, ends, (None, None)) for x in marks]

    def __call__(self, needed_m: float) -> float:
        i = bisect_left(self._marks, needed_m - 1e-9)
        return self._usd[i] if i < len(self._usd) else 0.0


def _leaves_at_least(candidate: Candidate, node: NodeType, nodes: int, catalog: Catalog) -> int:
    model = catalog.switches[candidate.switch]
    down_gbps = nodes * len(node.ports["compute"].port_list()) * candidate.speed_gbps
    ratio = candidate.oversubscription
    capacity = _capacity_gbps(model, candidate.speed_gbps)
    if not capacity:
        return 0
    return max(
        math.ceil(down_gbps / (capacity * ratio / (1 + ratio))),
        math.ceil(down_gbps / candidate.speed_gbps / max(radix(model, candidate.speed_gbps), 1)),
    )


def _switches_at_least(candidate: Candidate, node: NodeType, nodes: int, catalog: Catalog) -> int:
    """Leaves: the node links' bandwidth over a leaf's share for down ports at the ratio (and at least one per
    `radix` links); spines: the uplinks' bandwidth over a switch's (3 tiers: with their own uplinks, and the cores
    those need)."""
    model = catalog.switches[candidate.switch]
    down_gbps = nodes * len(node.ports["compute"].port_list()) * candidate.speed_gbps
    ratio = candidate.oversubscription
    capacity = _capacity_gbps(model, candidate.speed_gbps)
    if not capacity:
        return 0
    leaves = _leaves_at_least(candidate, node, nodes, catalog)
    up_gbps = down_gbps / ratio  # the leaves' uplinks carry at least their used down ports at the ratio
    if candidate.tiers >= 3:  # spines carry the uplinks down and at least 1/ratio of them up; cores take those
        spines = math.ceil(up_gbps * (1 + 1 / ratio) / capacity)
        cores = math.ceil(up_gbps / ratio / capacity)
        # and a pod has a spine per leaf uplink (topology/clos.py, `spines` unset), each with its own up ports
        layout = [p for p in switch_ports(model, candidate.speed_gbps) if p.speed_gbps == candidate.speed_gbps]
        _, leaf_up, problem = split_leaf_ports(layout, ratio, None, None)
        if not problem and layout:
            _, spine_up, problem = split_leaf_ports(layout, max(ratio, 1.0), None, None)
            spines = max(spines, len(leaf_up))
            cores = max(cores, 0 if problem else math.ceil(len(leaf_up) * len(spine_up) / len(layout)))
        return leaves + spines + cores
    return leaves + (math.ceil(up_gbps / capacity) if leaves > 1 else 0)


def _racks_at_least(node: NodeType, nodes: int, candidate: Candidate, gpus: int, catalog: Catalog) -> int:
    """The node racks of the candidate's spec: as many nodes in one as its power budget and units hold, at most."""
    racks = spec_data(candidate, gpus, catalog)["racks"]
    units = racks.get("rack_units", RackLayout.model_fields["rack_units"].default)
    per_rack = min(int(racks["power_kw"] * 1000 // node.power_w) if node.power_w else nodes, units // node.u)
    return math.ceil(nodes / per_rack) if per_rack > 0 else 0


def _pdus_per_rack(candidate: Candidate, gpus: int, catalog: Catalog, costs: Costs) -> int:
    """As costing.py counts them: enough to carry the rack's power budget twice over (A and B feeds)."""
    if costs.pdus_per_rack is not None:
        return costs.pdus_per_rack
    return 2 * math.ceil(spec_data(candidate, gpus, catalog)["racks"]["power_kw"] / catalog.pdus[costs.pdu].kw)


@dataclass(frozen=True, slots=True)
class ClosedForm:
    """What a candidate costs at least, in closed form (see the module's docstring), and what it holds."""

    gpus: int
    nodes: int
    switches: tuple[int, int, int]  # leaf, spine, core (the fewest a design of its kind can have, if not `exact`)
    links: int  # of the compute fabric (0 if not `exact`)
    racks: int
    capital_usd: float
    tco_usd: float
    power_w: float  # nodes and switches (no optics)
    exact: bool  # the generator's counts and places (plan/sizing.py); False: the fewest any design can have
    # each tier's cable lengths (the least each link needs, with the default slack and service loop), if `exact`
    lengths: tuple[tuple[str, tuple[float, ...]], ...] = ()


def closed_form(candidate: Candidate, gpus: int, catalog: Catalog) -> ClosedForm:
    """The candidate's closed form: its nodes, switches, racks and links, and the least they cost."""
    node = catalog.nodes[candidate.node]
    nodes = node_count(node, gpus)
    model = catalog.switches[candidate.switch]
    costs = Costs()
    layout = RackLayout(**spec_data(candidate, gpus, catalog)["racks"])
    found = switch_counts(candidate, node, nodes, catalog)
    sizes = found if isinstance(found, Sizes) else None  # None: the generator refuses it, or no closed form
    placed = None if sizes is None else racks_of(node, nodes, sizes.switches, model, layout)
    switches = _switches_at_least(candidate, node, nodes, catalog) if sizes is None else sizes.switches
    racks = _racks_at_least(node, nodes, candidate, gpus, catalog) if placed is None else placed.total
    per_rack_usd = (
        catalog.racks[costs.rack].price_usd
        + _pdus_per_rack(candidate, gpus, catalog, costs) * catalog.pdus[costs.pdu].price_usd
    )
    routes = (
        []
        if sizes is None or placed is None
        else _placed_routes(candidate, node, nodes, catalog, layout, placed, sizes)
    )
    links_usd = (
        _routes_usd(candidate, catalog, routes)
        if routes
        else _links_usd_at_least(candidate, node, nodes, catalog, layout)
    )
    # less a rounding's worth: where the bound is the exact cost (every link's medium as the allocation picks it),
    # the sums' order must not put it a hair above the real figure
    capital = (nodes * node.list_price_usd + switches * model.list_price_usd + racks * per_rack_usd + links_usd) * (
        1 - ROUNDING
    )
    watts = nodes * node.power_w + switches * model.power_w
    energy = watts / 1000 * costs.load_pct / 100 * costs.pue * HOURS_PER_YEAR * costs.energy_usd_per_kwh
    space = racks * costs.space_usd_per_rack_month * 12
    tco = capital + costs.years * (energy + space + capital * costs.support_pct_per_year / 100)
    counts = (sizes.leaves, sizes.spines, sizes.cores) if sizes is not None else (switches, 0, 0)
    links = 0
    if sizes is not None:
        links = sum(
            nodes * p.node_ports + p.leaves * p.uplinks + p.spines * p.spine_uplinks * (p.cores > 0)
            for p in sizes.planes
        )
    lengths: dict[str, set[float]] = {}
    for tier, _, found_routes in routes:
        lengths.setdefault(tier, set()).update(_shortest_m(route) for route in found_routes)
    by_tier = tuple((tier, tuple(sorted(m))) for tier, m in lengths.items())
    return ClosedForm(nodes * node.gpus, nodes, counts, links, racks, capital, tco, watts, sizes is not None, by_tier)


def lower_bound(candidate: Candidate, gpus: int, metric: str, catalog: Catalog, precision: str = "bf16") -> float:
    """The best figure for `metric` any build of `candidate` can have (see the module's docstring)."""
    form = closed_form(candidate, gpus, catalog)
    cost, per = METRICS[metric]
    usd = form.tco_usd if cost == "tco" else form.capital_usd
    if per == "gpus":
        return usd / form.gpus if form.gpus else math.inf
    compute = form.gpus * tflops_per_gpu(catalog.nodes[candidate.node], precision) / 1000
    return usd / compute if compute > 0 else math.inf


def estimate_bound(e: Estimate, candidate: Candidate, metric: str, catalog: Catalog, precision: str = "bf16") -> float:
    """The best figure for `metric` the candidate's full build can have, given its exact cost (evaluate.estimate):
    the figure itself, but for delivering all of its compute."""
    cost, per = METRICS[metric]
    usd = e.tco_usd if cost == "tco" else e.capital_usd
    if per == "gpus":
        return usd / e.gpus if e.gpus else math.inf
    compute = e.gpus * tflops_per_gpu(catalog.nodes[candidate.node], precision) / 1000
    return usd / compute if compute > 0 else math.inf
