"""A subnet's members (intent/infiniband/subnet.py, `Members`: its nodes, CA ports and what their GUIDs decide) are
made when first read where nothing renders (`fabric validate`), and the checks read the subnet's facts instead.
On every bundled InfiniBand design and every broken spec with an InfiniBand fabric: the facts are what the members
give; a build nothing renders finds what a rendered build finds, without making the members (where no inventory
gives GUIDs and no partition lists its groups), and its members made late are the rendered build's. Negative
cases: facts that lie change what the checks find."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fabric import build_fabric
from fabric.intent.checks import run_intent_checks
from fabric.intent.context import IntentContext
from fabric.intent.infiniband.subnet import Subnet, ftree_role
from fabric.model.findings import FabricError
from fabric.model.topology import LAYER_RANK
from fabric.pipeline import Build
from tests.conftest import DESIGNS, REPO

IB = "technology: infiniband"
SPECS = sorted(
    [p for p in DESIGNS.glob("*.yaml") if IB in p.read_text()]
    + [p for p in (REPO / "tests" / "broken").glob("*.yaml") if IB in p.read_text()]
)


def _build(spec: Path, rendered: bool) -> Build | None:
    try:
        return build_fabric(spec, rendered=rendered)
    except FabricError:
        return None  # a spec the loader refuses (its findings are golden elsewhere)


def _lazy_members(subnet: Subnet) -> bool:
    """Whether the checks leave the subnet's members unmade: its GUIDs all placeholders (else the GUID owners are
    counted) and no partition listing its groups (else their ports are its members)."""
    return subnet.placeholder_only and all(part.members == "all" for part in subnet.settings.partitions)


def test_there_are_specs_to_compare() -> None:
    assert len(SPECS) >= 20, [p.stem for p in SPECS]


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_facts_are_what_the_members_give(spec: Path) -> None:
    build = _build(spec, rendered=True)
    if build is None:
        pytest.skip("refused by the loader")
    for subnet in build.infiniband.subnets:
        assert subnet.made() is subnet.made()  # made at once where the build renders
        assert subnet.layers == {n.key: n.layer for n in subnet.switches}
        assert subnet.attached == tuple(dict.fromkeys(n.device for n in subnet.cas))
        assert subnet.cabled_devices == {p.device for p in subnet.cabled}
        assert subnet.cabled_groups == {p.group for p in subnet.cabled}
        assert subnet.size == len(subnet.nodes)
        assert subnet.placeholder_only == all(n.placeholder for n in subnet.nodes)
        assert subnet.placeholders == sum(1 for n in subnet.nodes if n.placeholder)
        assert subnet.slowest == min((p.speed_gbps for p in subnet.cabled), default=None)
        tops = [s for s, layer in subnet.layers.items() if LAYER_RANK[layer] == subnet.tiers]
        assert [r.key for r in subnet.roots] == (tops if subnet.tiers > 1 else [])
        has_compute = any(ftree_role(subnet.settings, g) == "compute" for g in subnet.cabled_groups)
        assert has_compute == bool(subnet.compute)


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_validate_finds_what_a_rendered_build_finds_without_the_members(spec: Path) -> None:
    rendered = _build(spec, rendered=True)
    if rendered is None:
        pytest.skip("refused by the loader")
    checked = _build(spec, rendered=False)
    assert checked is not None
    assert [f.as_dict() for f in checked.findings] == [f.as_dict() for f in rendered.findings]
    for late, made in zip(checked.infiniband.subnets, rendered.infiniband.subnets, strict=True):
        assert ("members" not in vars(late)) == _lazy_members(late)
        assert late.members == made.members  # made now, the same
        assert late.partitions == made.partitions
        assert late.wiring == made.wiring


def test_some_validate_leaves_the_members_unmade() -> None:
    """The specs without partitions of listed groups and without an inventory's GUIDs (most of them)."""
    built = [b for b in map(lambda s: _build(s, rendered=False), SPECS) if b is not None]
    lazy = [b.name for b in built if all(_lazy_members(s) for s in b.infiniband.subnets)]
    assert len(lazy) >= 10, lazy


def _findings(build: Build, subnets: tuple[Subnet, ...]) -> list[str]:
    ctx = IntentContext(
        build.design, build.topology, build.figures, build.allocation, build.intents, subnets, build.roce, None
    )
    return sorted(f.code for f in run_intent_checks(ctx))


def test_the_checks_read_the_facts() -> None:
    """Negative cases: a subnet whose facts say its SM hosts have no port, it has no compute node, its roots are
    elsewhere or its GUIDs are not all placeholders is found so (the ftree checks, `sm-host`, the GUID owners)."""
    build = build_fabric(DESIGNS / "lab-ib.yaml", rendered=False)
    subnets = build.infiniband.subnets
    assert subnets[0].settings.sm.hosts and subnets[0].settings.routing_engine[0] == "ftree"
    assert _findings(build, subnets) == []

    def lied(**facts: object) -> list[str]:
        return _findings(build, (dataclasses.replace(subnets[0], **facts), *subnets[1:]))  # type: ignore[arg-type]

    hosts = len(subnets[0].settings.sm.hosts)
    assert lied(cabled_devices=frozenset()) == ["sm-host"] * hosts
    assert lied(cabled_groups=frozenset()) == ["ftree-admissible"]
    leaves = {s: "leaf" for s in subnets[0].layers}
    assert lied(layers=leaves) == ["ftree-admissible"]  # every switch a root: ranked 0, planned elsewhere
    assert lied(placeholder_only=False) == []  # counted in full: no GUID twice
