"""The cage check and the signalling check per kind of end, from the optics' pass (allocation/optics.py,
`_filled_twice` and `_signals`; docs/dev/performance.md, "Checks per kind of cable end"): where every cable is
fibre with a transceiver at each end, the cages with two plugs are those two transceivers fill, the cages the walk
of every cable end (`keys_twice` over `_end_plugs`) finds; the signalling check asks of the distinct transceivers
in their cages what the walk of every optical cable finds."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.allocation import optics as optics_module
from fabric.fast.distinct import keys_twice
from fabric.pipeline import Build, build_fabric
from tests.conftest import DESIGNS

BROKEN = DESIGNS.parent / "tests" / "broken"
# 128 DGX H100 on one plane, racks 16 rows of 2 (too few: `rack-space`): leaves whose links need multimode and
# single-mode fibre, so (with the plug-per-cage pass as it was: the `spread` fixture) twin-port cages that two
# transceivers fill (`cage-plugs`)
SPREAD = """\
name: spread
racks: {rows: [R00, R01, R02, R03, R04, R05, R06, R07, R08, R09, R10, R11, R12, R13, R14, R15], rack_units: 48,
        power_kw: 45, per_row: 2}
nodes:
  - {group: gpu, type: dgx-h100, count: 128, per_rack: 4, name: "dgx{index:05d}"}
fabrics:
  compute:
    technology: infiniband
    topology: {kind: fat-tree, rail_optimized: true, scalable_unit: 32, tiers: auto, planes: 1}
    switches: {leaf: qm9700, spine: qm9700, core: qm9700}
    oversubscription: "1:1"
    cabling: {media: [mmf, smf]}
    attach:
      - {group: gpu, ports: compute}
addressing: {mgmt: 10.128.0.0/14}
"""


def _both(build: Build) -> tuple[dict[str, set[str]] | None, dict[str, set[object]]]:
    catalog, topology, allocation = build.design.catalog, build.topology, build.allocation
    optics_module._MEMO.clear()  # the optics' pass made here
    known = optics_module._counted(catalog, topology, allocation)[2].twice
    return known, keys_twice(optics_module._end_plugs(catalog, topology, allocation))


@pytest.fixture(scope="module")
def spread(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """SPREAD allocated as the plug-per-cage pass was before it gave a cage's fibres one kind (allocate.py,
    `_one_module`): its twin-port cages keep a multimode and a single-mode transceiver each (the pass as it is
    leaves none: then the check has nothing to find)."""
    from fabric.allocation import allocate as allocate_module

    path = tmp_path_factory.mktemp("spread") / "spread.yaml"
    path.write_text(SPREAD)
    assert not any(f.code == "cage-plugs" for f in build_fabric(path).findings)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(allocate_module, "_one_module", lambda kinds: kinds <= set(allocate_module.OPTICAL_KINDS))
        return build_fabric(path)


@pytest.mark.parametrize(
    "path",
    [*sorted(DESIGNS.glob("*.yaml")), *(BROKEN / f"{n}.yaml" for n in ("cage-plugs", "optics-missing", "names"))],
    ids=lambda p: p.stem,
)
def test_the_cages_two_transceivers_fill_are_the_cages_the_walk_finds(path: Path) -> None:
    known, walked = _both(build_fabric(path))
    assert known is None or known == walked


def test_a_fibre_only_fabric_gives_its_cages_with_two_plugs_from_the_optics(spread: Build) -> None:
    known, walked = _both(spread)
    assert known is not None and walked  # the optics told, and there are such cages
    assert known == walked
    assert any(f.code == "cage-plugs" for f in spread.findings)


def test_a_fabric_with_copper_is_walked() -> None:
    """The negative case: a cable without a transceiver at each end (roce-512's forced ACC) leaves it to the walk,
    which finds its cage with two plugs."""
    known, walked = _both(build_fabric(BROKEN / "cage-plugs.yaml"))
    assert known is None and walked


@pytest.mark.parametrize(
    "path",
    [*sorted(DESIGNS.glob("*.yaml")), *(BROKEN / f"{n}.yaml" for n in ("optics-signalling", "optics-missing"))],
    ids=lambda p: p.stem,
)
def test_the_signalling_check_asks_of_the_kinds_of_end_what_the_walk_finds(path: Path) -> None:
    """`unlinkable` answers none when every two transceivers at the optical ends link in their cages (`_signals`,
    a few kinds of end), as the walk over every optical cable finds; optics-signalling's links that do not come up
    are found all the same (the negative case)."""
    build = build_fabric(path)
    catalog, topology, allocation = build.design.catalog, build.topology, build.allocation
    optics_module._MEMO.clear()
    walked = optics_module._unlinkable_links(catalog, topology, allocation)
    assert optics_module.unlinkable(catalog, topology, allocation) == walked
    assert bool(walked) is (path.stem == "optics-signalling")
    optical = any(c.media_kind in ("mmf", "smf") for c in allocation.cables)
    assert bool(optics_module._counted(catalog, topology, allocation)[2].signals) is optical  # asked, where any
