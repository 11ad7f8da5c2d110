"""The one-plug-per-cage pass reads a large fabric's cages as integer groups (fabric/fast/groups.py): the same cables
as from the dict of cages a small fabric's pass reads, on every bundled design and every broken spec whose cables
it can move, and the groups themselves as the dict would list them."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

import fabric.allocation.allocate as allocate_module
from fabric.allocation.allocate import lay_cables
from fabric.fast.groups import EndGroups
from fabric.spec.loader import load_spec
from fabric.topology.build import build_topology
from tests.conftest import DESIGNS, REPO

BROKEN = REPO / "tests" / "broken"
SPECS = [
    *sorted(DESIGNS.glob("*.yaml")),
    *(BROKEN / f"{b}.yaml" for b in ("cage-plugs", "cage-mixed-mode", "optics-missing", "optics-signalling")),
    *(BROKEN / f"{b}.yaml" for b in ("cable-reach", "speeds", "explicit-links")),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_integer_groups_move_the_cables_the_dict_moves(spec: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    design = load_spec(spec)
    topology = build_topology(design)
    calls: dict[str, int] = {"_cage_dict": 0, "_cage_groups": 0}
    for name in calls:
        real = getattr(allocate_module, name)

        def counting(*args: object, name: str = name, real: object = real) -> object:
            calls[name] += 1
            return real(*args)  # type: ignore[operator]

        monkeypatch.setattr(allocate_module, name, counting)
    with_dict = lay_cables(design, topology)
    monkeypatch.setattr(allocate_module, "CAGE_ARRAYS_FROM", 0)
    assert lay_cables(design, topology) == with_dict
    # the groups read every fabric's cages the dict read (a fabric cabled in one fibre only has none to move)
    assert calls["_cage_groups"] == calls["_cage_dict"], spec.stem


def test_the_bundled_designs_move_cables_in_the_pass() -> None:
    # the comparison above covers a pass that changes something: some bundled design's cage takes a new medium
    moved = 0
    for spec in sorted(DESIGNS.glob("*.yaml")):
        design = load_spec(spec)
        topology = build_topology(design)
        pass_off = allocate_module._one_plug_per_cage
        allocate_module._one_plug_per_cage = lambda *a, **k: None  # type: ignore[assignment]
        try:
            unmoved = lay_cables(design, topology)[0]
        finally:
            allocate_module._one_plug_per_cage = pass_off
        moved += sum(a != b for a, b in zip(unmoved, lay_cables(design, topology)[0], strict=True))
    assert moved > 0


def test_groups_list_a_cage_cables_in_cable_order() -> None:
    # cables 0..4: ends (a, b); cage 7 holds cable 0's a, cable 2's b and both ends of cable 3
    a = array("q", [7, 1, 2, 7, 5])
    b = array("q", [9, 9, 7, 7, 6])
    kinds = [0, 1, 1, 2, 1]  # cable 1's cages: 1 (alone), 9 (with cable 0, kind 0)
    groups = EndGroups(a, b, kinds)
    seven = groups.of(0)[0]
    assert groups.cables(seven) == [0, 2, 3, 3] and groups.count(seven) == 4
    assert groups.of(3) == (seven, seven)
    nine = groups.of(0)[1]
    assert groups.cables(nine) == [0, 1]
    assert groups.mixed([1, 2]) == [seven, nine]  # first reached: 7 (cable 0's a), then 9 (its b)
    # cages of one optical kind are left out; a cage of one end never listed
    alike = EndGroups(array("q", [1, 1]), array("q", [2, 3]), [1, 1])
    assert alike.mixed([1, 2]) == []
    assert EndGroups(array("q", [1, 1]), array("q", [2, 3]), [1, 2]).mixed([1, 2]) == [alike.of(0)[0]]
    assert EndGroups(array("q", [1, 1]), array("q", [2, 3]), [0, 0]).mixed([1, 2]) == [alike.of(0)[0]]
