"""The plan's closed form of a candidate (plan/sizing.py, metrics.py `_Floor`) is what the generator and the
placement build: the switches of each tier, the racks, where every node and switch stands, and which switches
each link joins."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from fabric.model.kinds import Layer
from fabric.plan.candidates import Candidate, Request, enumerate_candidates, node_count
from fabric.plan.document import spec_data, spec_yaml
from fabric.plan.metrics import _Floor
from fabric.plan.sizing import Refusal, Sizes, racks, switch_counts
from fabric.spec.catalog import builtin_catalog
from fabric.spec.loader import load_spec_text
from fabric.spec.schema.racks import RackLayout
from fabric.topology.build import build_topology

CATALOG = builtin_catalog()


def _candidates(gpus: int, step: int) -> list[Candidate]:
    request = Request(gpus, oversubscription=(1.0, 2.0), planes=(1, 2))
    return enumerate_candidates(CATALOG, request)[::step]


def _check(c: Candidate, gpus: int, closed: Candidate | None = None) -> str:
    """'refused' (the generator refuses it and the closed form says so), 'same' (every fact equal); else fails.
    `closed`: the candidate whose closed form is held against c's topology (the negative case)."""
    node = CATALOG.nodes[c.node]
    nodes = node_count(node, gpus)
    sizes = switch_counts(closed or c, node, nodes, CATALOG)
    topo = build_topology(load_spec_text(spec_yaml(c, gpus, CATALOG), "c.yaml"))
    errors = [(f.code, f.message) for f in topo.findings if f.severity.name == "ERROR"]
    if errors:  # the plan rules it out with the generator's finding, unbuilt
        assert isinstance(sizes, Refusal) and (sizes.code, sizes.message) == errors[0], (c.label, gpus, errors, sizes)
        return "refused"
    assert isinstance(sizes, Sizes), (c.label, gpus)
    devices = topo.devices
    layers = Counter(d.layer for d in devices.values())
    assert (sizes.leaves, sizes.spines, sizes.cores) == (layers[Layer.LEAF], layers[Layer.SPINE], layers[Layer.CORE])
    layout = RackLayout(**spec_data(c, gpus, CATALOG)["racks"])
    model = CATALOG.switches[c.switch]
    placed = racks(node, nodes, sizes.switches, model, layout)
    assert placed.total == len(topo.racks), (c.label, gpus)
    floor = _Floor(layout, placed, model.u)
    # where each device stands: its slot (row by row) and unit
    slot = {r.name: layout.rows.index(r.row) * placed.per_row + r.position - 1 for r in topo.racks.values()}
    index: dict[str, int] = {}  # a switch's place in the generator's order (each plane's leaves, spines, cores)
    for name, d in devices.items():
        assert d.rack is not None and d.u is not None
        if d.layer == Layer.NODE:
            i = int(name.removeprefix("gpu")) - 1
            assert (slot[d.rack], d.u) == (i // placed.nodes_per_rack, (i % placed.nodes_per_rack) * node.u + 1)
            assert floor.node_up_m(node, i) == pytest.approx(floor.top - ((d.u - 1) + node.u / 2) * 0.04445)
        else:
            k = placed.switches_per_rack
            index[name] = (slot[d.rack] - placed.node_racks) * k + (d.u - 1) // model.u
            assert floor.switch_slot(index[name]) == slot[d.rack]
    # each plane's block of switches: leaves, spines, cores in a row, as _Floor counts them
    blocks, offset = [], 0
    for plane in sizes.planes:
        blocks.append((offset, offset + plane.leaves, offset + plane.leaves + plane.spines))
        offset += plane.switches
    order = sorted(index, key=index.__getitem__)
    assert sorted(index.values()) == list(range(sizes.switches))
    for (leaves, spines, cores), plane in zip(blocks, sizes.planes, strict=True):
        assert all(devices[n].layer == Layer.LEAF for n in order[leaves:spines])
        assert all(devices[n].layer == Layer.SPINE for n in order[spines:cores])
        assert all(devices[n].layer == Layer.CORE for n in order[cores : cores + plane.cores])
    # which switches each link joins, and how many links: as `_placed_links_usd` wires them
    per: Counter[tuple[str, str]] = Counter()
    for ft in topo.fabrics.values():
        for link in ft.links:
            per[(link.a, link.b)] += 1
    seen = 0
    for (a, b), links in per.items():
        da, db = devices[a], devices[b]
        lower, upper = (a, b) if da.layer == Layer.NODE or (da.layer, db.layer) in _UP else (b, a)
        p = next(p for p, (lo, _, end) in enumerate(blocks) if lo <= index[upper] < end + sizes.planes[p].cores)
        plane, (leaves, spines, cores) = sizes.planes[p], blocks[p]
        if devices[lower].layer == Layer.NODE:
            i = int(lower.removeprefix("gpu")) - 1
            width = plane.rails or plane.node_ports
            assert leaves + i // plane.su * width <= index[upper] < leaves + (i // plane.su + 1) * width
            assert links == plane.per_rail
        elif devices[lower].layer == Layer.LEAF:
            i = index[lower] - leaves
            if plane.cores:
                pod = i // plane.per_pod
                assert spines + pod * plane.uplinks <= index[upper] < spines + (pod + 1) * plane.uplinks
                assert links == 1
            else:
                assert links == plane.uplinks // plane.spines
        else:
            group = (index[lower] - spines) % plane.uplinks
            assert cores + group * plane.per_group <= index[upper] < cores + (group + 1) * plane.per_group
            assert links == plane.spine_uplinks // plane.per_group
        seen += links
    assert seen == sum(len(ft.links) for ft in topo.fabrics.values())
    return "same"


_UP = {(Layer.LEAF, Layer.SPINE), (Layer.SPINE, Layer.CORE)}


@pytest.mark.slow
@pytest.mark.parametrize(("gpus", "step"), [(64, 7), (1024, 9), (4096, 23)])
def test_the_closed_form_is_what_the_generator_and_placement_build(gpus: int, step: int) -> None:
    results = Counter(_check(c, gpus) for c in _candidates(gpus, step))
    assert results["same"] >= 20, results  # and some the generator refuses, the closed form with it
    assert gpus < 4096 or results["refused"] >= 1, results


def test_a_wrong_closed_form_fails_the_check() -> None:
    """The negative case: the closed form of a scalable unit half the size, held against the real topology."""
    c = next(c for c in _candidates(1024, 1) if c.rail_optimized and c.node == "dgx-h100" and c.switch == "qm9700")
    assert _check(c, 1024) == "same"
    with pytest.raises(AssertionError):
        _check(c, 1024, replace(c, scalable_unit=(c.scalable_unit or 2) // 2))
    flat = next(c for c in _candidates(1024, 1) if not c.rail_optimized and c.tiers == 3 and c.switch == "qm9700")
    assert _check(flat, 1024) == "same"
    with pytest.raises(AssertionError):  # and a 3-tier one with its pods of another size
        _check(flat, 1024, replace(flat, oversubscription=2.0))


def test_the_generators_refusals_are_known_unbuilt() -> None:
    """100,000 GPUs on single-plane 64-port switches: 2 tiers cannot join the leaves, nor 3 tiers the pods; a
    scalable unit too large for a leaf. The closed form gives each finding as the generator does."""
    request = Request(100_000, nodes=("dgx-h100",), switches=("qm9700",), rail_optimized=(True,))
    results = [_check(c, 100_000) for c in enumerate_candidates(CATALOG, request)]
    assert results == ["refused", "refused"]
    big = Request(
        1024, nodes=("dgx-h100",), switches=("qm9700",), tiers=(2,), rail_optimized=(True,), scalable_units=(64,)
    )
    assert [_check(c, 1024) for c in enumerate_candidates(CATALOG, big)] == ["refused"]
