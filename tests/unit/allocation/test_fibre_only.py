"""The plug-per-cage pass of the allocator skips a fabric cabled in one fibre only (allocate.py, `_one_fibre`):
the cables are the full pass's (docs/dev/performance.md, "Per-cable work that validate does not need")."""

from __future__ import annotations

import pytest

import fabric.allocation.allocate as allocate_module
from fabric.allocation.allocate import allocate
from tests.conftest import DESIGNS, built

BUNDLED = sorted(p.stem for p in DESIGNS.glob("*.yaml"))


@pytest.mark.parametrize("design", BUNDLED)
def test_the_pass_over_a_fibre_only_fabric_moves_nothing(design: str, monkeypatch: pytest.MonkeyPatch) -> None:
    build = built(design)
    fast = allocate(build.design, build.topology).cables
    monkeypatch.setattr(allocate_module, "_one_fibre", lambda cables, first: False)
    assert allocate(build.design, build.topology).cables == fast == build.allocation.cables


def test_some_bundled_design_is_fibre_only() -> None:
    """The comparison above saw the skip taken (and, the RoCE designs with copper, not taken)."""
    for design in ("superpod-h100-1su", "roce-512"):  # one fabric each: fibre only; fibre, DAC and ACC
        build = built(design)
        cables = list(build.allocation.cables)
        assert allocate_module._one_fibre(cables, 0) is (design == "superpod-h100-1su")
