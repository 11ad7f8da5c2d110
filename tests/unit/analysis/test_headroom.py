"""Growth headroom (fabric/analysis/headroom.py): what a built fabric takes on free ports only, checked by building
the grown design and comparing its cables with the day-one ones."""

from __future__ import annotations

from fabric import Build, build_fabric, load_spec_text
from fabric.analysis.headroom import headroom
from tests.conftest import REPO


def _spec(nodes: int) -> str:
    """One-port 100G servers, 8 per leaf (8 down + 8 up), over 4 fixed 64-port SN4600C spines."""
    return f"""
name: headroom
nodes: [{{group: srv, type: linux-server, count: {nodes}}}]
fabrics:
  compute:
    technology: ethernet
    topology: {{kind: spine-leaf, tiers: 2, downlinks: 8, uplinks: 8, spines: 4}}
    switches: {{leaf: sn4600c}}
    attach: [{{group: srv, ports: data}}]
"""


def _links(build: Build) -> set[tuple[str, str, str, str]]:
    return {(x.a, x.a_port, x.b, x.b_port) for x in build.topology.fabrics["compute"].links}


def test_headroom_is_what_the_spines_free_ports_take() -> None:
    # 2 leaves use 2 x 2 ports of each 64-port spine: 60 free = 30 more leaves of 8 servers; no free leaf slot
    day_one = build_fabric(load_spec_text(_spec(16)))
    room = headroom(day_one.design, day_one.topology, "compute")
    assert room is not None
    assert (room.nodes, room.free_slots, room.gpus) == (240, 0, 0)  # linux-server has no GPUs
    assert room.two_tier_max_nodes == 64 * 8  # a spine's 64 ports, one leaf each
    grown = build_fabric(load_spec_text(_spec(16 + room.nodes)))
    assert not grown.errors
    assert _links(day_one) <= _links(grown)  # nothing moved
    beyond = build_fabric(load_spec_text(_spec(16 + room.nodes + 1)))
    assert beyond.errors or not _links(day_one) <= _links(beyond)


def test_a_partly_filled_leaf_counts_its_free_slots() -> None:
    day_one = build_fabric(load_spec_text(_spec(13)))  # leaves of 7 and 6 servers: 3 slots free
    room = headroom(day_one.design, day_one.topology, "compute")
    assert room is not None and room.free_slots == 3 and room.nodes == 3 + 240


def test_three_tiers_take_new_pods_on_the_cores_free_ports() -> None:
    """lab-ib-3tier: 6 pods of one 8-node SU (8 rail leaves, 2 spines of 32 down + 32 up); 8 cores of 64 ports
    carry 12 x 32 = 384 spine uplinks, so 128 are free: 2 more pods of 64 uplinks = 2 SUs = 16 nodes."""
    text = (REPO / "designs" / "lab-ib-3tier.yaml").read_text()
    day_one = build_fabric(load_spec_text(text))
    room = headroom(day_one.design, day_one.topology, "compute")
    assert room is not None
    assert (room.nodes, room.gpus, room.free_slots, room.two_tier_max_nodes) == (16, 128, 0, None)
    grown = build_fabric(load_spec_text(text.replace("count: 48", "count: 64")))
    assert not grown.errors and _links(day_one) <= _links(grown)
    beyond = build_fabric(load_spec_text(text.replace("count: 48", "count: 65")))
    assert beyond.errors or not _links(day_one) <= _links(beyond)
