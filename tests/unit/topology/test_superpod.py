"""The superpod rack layout (fabric/topology/superpod.py) and the rows it fills (racks.place: row groups, every
other row back to front)."""

from __future__ import annotations

from collections import Counter

from fabric import Build, build_fabric, load_spec_text
from fabric.plan.candidates import Request, enumerate_candidates
from fabric.plan.document import spec_yaml
from fabric.spec.catalog import builtin_catalog
from fabric.spec.schema import RackLayout
from fabric.topology.racks import Placeable, place

CATALOG = builtin_catalog()


def _racks(groups: list[str | None], layout: RackLayout) -> dict[str, str]:
    """One full rack per entry (a 48U device each), in one row group each name (None: no group)."""
    items = [Placeable(f"d{i}", 48, 100, f"block{i}", None, row_group=g) for i, g in enumerate(groups)]
    return {name: rack for name, (rack, _) in place(items, layout).positions.items()}


def test_a_row_groups_racks_share_a_row() -> None:
    # three groups of 3 racks in 2 rows: 5 racks a row would split the second group; 6 keep each group whole
    groups = ["g1"] * 3 + ["g2"] * 3 + ["g3"] * 3
    whole = _racks(groups, RackLayout(rows=["A", "B"]))
    assert [whole[f"d{i}"] for i in range(9)] == ["A01", "A02", "A03", "A04", "A05", "A06", "B01", "B02", "B03"]
    loose = _racks([None] * 9, RackLayout(rows=["A", "B"]))  # no groups: 5 a row, as before
    assert [loose[f"d{i}"] for i in range(9)] == ["A01", "A02", "A03", "A04", "A05", "B01", "B02", "B03", "B04"]
    # a group that does not fit the rest of a row starts the next one; per_row given is kept
    fixed = _racks(["g0", "g1", "g1", "g1"], RackLayout(rows=["A", "B"], per_row=3))
    assert [fixed[f"d{i}"] for i in range(4)] == ["A01", "B01", "B02", "B03"]


def test_a_row_group_skips_a_row_whose_free_racks_are_not_side_by_side() -> None:
    """A grown design keeps its racks (the lock pins them): a new unit goes where a row has its racks free side
    by side, not into the gaps between them."""
    pinned = Placeable("kept", 48, 100, "old", None, rack="A02", u=1)
    items = [pinned, *(Placeable(f"d{i}", 48, 100, f"b{i}", None, row_group="g") for i in range(3))]
    where = place(items, RackLayout(rows=["A", "B"], per_row=4)).positions
    assert [where[f"d{i}"][0] for i in range(3)] == ["B01", "B02", "B03"]
    loose = [pinned, *(Placeable(f"d{i}", 48, 100, f"b{i}", None) for i in range(3))]
    where = place(loose, RackLayout(rows=["A", "B"], per_row=4)).positions
    assert [where[f"d{i}"][0] for i in range(3)] == ["A01", "A03", "A04"]  # no group: the gaps


def test_the_superpod_layout_fills_every_other_row_back_to_front() -> None:
    """The last unit of a row stands across the aisle from the first of the next."""
    groups = ["g1"] * 3 + ["g2"] * 3 + ["g3"] * 3
    snake = _racks(groups, RackLayout(rows=["A", "B"], layout="superpod"))
    assert [snake[f"d{i}"] for i in range(9)] == ["A01", "A02", "A03", "A04", "A05", "A06", "B06", "B05", "B04"]


def _whole(node: str, switch: str, tiers: int, rail: bool, gpus: int) -> str:
    (candidate,) = [
        c
        for c in enumerate_candidates(CATALOG, Request(0, nodes=(node,)))
        if (c.switch, c.tiers, c.rail_optimized, c.planes) == (switch, tiers, rail, 1)
    ]
    return spec_yaml(candidate, gpus, CATALOG, "", whole=True)


def test_without_sus_the_compute_leaf_groups_make_the_units() -> None:
    """A non-rail fabric has no SUs: each group of compute leaves and its nodes make a unit, its leaves and the
    in-band and out-of-band leaves of its nodes in a network rack beside the nodes' racks."""
    text = _whole("dgx-h100", "qm9700", 2, False, 1024)
    build = build_fabric(load_spec_text(text))
    assert not build.errors
    devices, racks = build.topology.devices, build.topology.racks
    compute = build.topology.fabrics["compute"]
    first_leaf: dict[str, str] = {}
    for link in compute.links:
        if link.tier == "node-leaf":
            first_leaf.setdefault(link.a, link.b)
    units = Counter(first_leaf.values())
    assert len(units) == 4 and set(units.values()) == {32}  # 128 DGX: 4 groups of leaves, 32 nodes each
    for leaf, count in units.items():
        nodes = [racks[devices[n].rack or ""] for n, first in first_leaf.items() if first == leaf]
        network = racks[devices[leaf].rack or ""]
        assert {r.row for r in nodes} == {network.row}
        positions = sorted({r.position for r in nodes})
        assert network.position in (positions[0] - 1, positions[-1] + 1)
        # its storage, in-band (2 each) and BMC cables: within its racks and the next unit's (a leaf can serve both)
        names = {n for n, first in first_leaf.items() if first == leaf}
        lengths = [c.length_m or 0 for c in build.allocation.cables if c.link.a in names and c.link.fabric != "compute"]
        assert len(lengths) == count * 5 and max(lengths) <= 15, leaf

    # every DGX's BMC cable stays within its unit's racks (the sequential layout: across the floor)
    def bmc(b: Build) -> list[float]:
        return [c.length_m or 0 for c in b.allocation.cables if c.link.fabric == "oob" and c.link.a.startswith("gpu")]

    sequential = build_fabric(load_spec_text(text.replace("  layout: superpod\n", "")))
    assert len(bmc(build)) == 128 and max(bmc(build)) <= 15 < max(bmc(sequential))


def test_storage_servers_and_head_nodes_stand_in_the_central_racks() -> None:
    """Nodes outside the SUs make central units of their own, one per leaf they first attach to, between the SUs'
    two halves; the spines and cores, and the out-of-band leaves of their management ports, stand among them:
    every cable of theirs stays short."""
    build = build_fabric(load_spec_text(_whole("dgx-h100", "qm9700", 2, True, 1024)))
    assert not build.errors
    devices, racks = build.topology.devices, build.topology.racks
    storage = {n for n, d in devices.items() if d.group in ("storage", "mgmt")}
    assert len(storage) == 20  # 16 storage servers, 4 head nodes
    rows = {racks[devices[n].rack or ""].row for n in [*storage, "spine01"]}
    su_rows = {racks[devices[f"su{su}-rail0-leaf"].rack or ""].row for su in (1, 2, 3, 4)}
    # SUs 1 and 2 in rows A and B (B back to front), the central racks in row C, SUs 3 and 4 in D and E
    assert (su_rows, rows) == ({"A", "B", "D", "E"}, {"C"})
    theirs = [c.length_m or 0 for c in build.allocation.cables if c.link.a in storage]
    assert len(theirs) == 16 * 5 + 4 * 3 and max(theirs) <= 15  # storage, in-band (2 each) and BMC ports
    oob = [c.length_m or 0 for c in build.allocation.cables if c.link.fabric == "oob"]
    assert len(oob) > 200 and max(oob) <= 15
