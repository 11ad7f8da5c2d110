"""The allocator's address runs (allocate.py's AddressRun) hold exactly its rows' integers, on every bundled design
and the broken specs of addresses, so that check_unique_addresses may read the runs instead of the rows; a lock
that keeps addresses drops them (the check reads the rows then); and a plan of duplicate addresses is still
reported."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from fabric import build_fabric
from fabric.allocation.allocate import allocate
from fabric.allocation.checks import AllocationContext, check_unique_addresses
from fabric.spec.loader import load_spec
from fabric.topology.build import build_topology
from tests.conftest import DESIGNS, REPO

BROKEN = REPO / "tests" / "broken"
SPECS = [*sorted(DESIGNS.glob("*.yaml")), *(BROKEN / f"{b}.yaml" for b in ("addressing", "mlag-platform", "names"))]


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_the_runs_hold_the_rows_integers(spec: Path) -> None:
    design = load_spec(spec)
    plan = allocate(design, build_topology(design))
    assert plan.address_runs is not None
    from_rows = Counter((row.address.version, int(row.address)) for row in plan.addresses)
    from_runs = Counter((r.version, r.first + k * r.step) for r in plan.address_runs for k in range(r.count))
    assert from_runs == from_rows
    assert len(plan.addresses) > 0 or spec.parent == BROKEN


def test_a_duplicate_address_is_found_with_runs_and_without() -> None:
    build = build_fabric(DESIGNS / "lab.yaml")
    plan = build.allocation
    assert plan.address_runs is not None
    row = replace(plan.addresses[0], device="elsewhere")  # the first address, on another device too
    twice = type(plan)(plan.cables, (*plan.addresses, row), plan.asns, plan.findings)  # no runs: a caller's plan
    ctx = AllocationContext(build.design, build.topology, build.figures, twice)
    assert [f.code for f in check_unique_addresses(ctx)] == ["duplicate-address"]
    # runs made for other rows are not read: more rows, or as many (the last replaced by the duplicate)
    stale = replace(twice, runs_made=plan.runs_made)
    assert stale.address_runs is None
    ctx = AllocationContext(build.design, build.topology, build.figures, stale)
    assert [f.code for f in check_unique_addresses(ctx)] == ["duplicate-address"]
    swapped = replace(plan, addresses=(*plan.addresses[:-1], row))
    assert swapped.runs_made is plan.runs_made and swapped.address_runs is None
    ctx = AllocationContext(build.design, build.topology, build.figures, swapped)
    assert [f.code for f in check_unique_addresses(ctx)] == ["duplicate-address"]
    # and with the runs of the plan (every address once): none
    ctx = AllocationContext(build.design, build.topology, build.figures, plan)
    assert list(check_unique_addresses(ctx)) == []
