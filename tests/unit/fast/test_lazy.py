"""fabric/fast/lazy.py: a mapping made on its first read, and the InfiniBand plan's cable ends made so."""

from __future__ import annotations

import pytest

from fabric.fast.lazy import LazyMapping, LazyTuple, resolved
from fabric.intent.infiniband import build_infiniband
from fabric.intent.infiniband.subnet import cable_ends
from tests.conftest import built


def test_a_lazy_mapping_is_made_once_on_first_read_and_reads_as_its_dict() -> None:
    calls: list[int] = []

    def make() -> dict[str, int]:
        calls.append(1)
        return {"b": 2, "a": 1}

    lazy = LazyMapping(make)
    assert calls == [] and not lazy.built
    assert lazy["b"] == 2 and calls == [1] and lazy.built
    assert list(lazy) == ["b", "a"] and len(lazy) == 2 and "a" in lazy and "c" not in lazy
    assert lazy.get("c") is None and lazy.get("c", 3) == 3 and dict(lazy) == {"b": 2, "a": 1}
    assert lazy == {"a": 1, "b": 2} and lazy != {"a": 1}
    assert calls == [1]  # made once
    with pytest.raises(KeyError):
        lazy["c"]


def test_a_lazy_mapping_never_read_is_never_made() -> None:
    def make() -> dict[str, int]:
        raise AssertionError("made")

    lazy = LazyMapping(make)
    assert not lazy.built
    with pytest.raises(AssertionError, match="made"):
        len(lazy)  # the negative case: a read makes it


@pytest.mark.parametrize("design", ["superpod-h100-1su", "lab-ib", "lab-ib-3tier"])
def test_the_ib_plans_cable_ends_are_made_when_read_and_are_every_links_ends(design: str) -> None:
    """IbPlan.ends (each cable end's HCA and IB port, 6,000,000 at 1M GPUs) is made when an output first reads
    it, from the subnets' wiring: each IB link's a end with its node's HCA (None for a switch), its b end with
    none, at the link's IB port numbers."""
    build = built(design)
    plan = build_infiniband(build.design, build.topology, build.allocation)  # fresh: nothing has read it
    assert isinstance(plan.ends, LazyMapping) and not plan.ends.built
    expected: dict[tuple[str, str], tuple[str | None, int]] = {}
    for subnet in plan.subnets:
        for link in subnet.links:
            cable = link.cable.link
            expected[(cable.a, cable.a_port)] = (subnet.by_key[link.a.node].hca, link.a.port)
            expected[(cable.b, cable.b_port)] = (None, link.b.port)
    assert expected, "an InfiniBand design"
    assert any(hca is not None for hca, _ in expected.values())
    assert dict(cable_ends(plan.subnets)) == expected
    assert dict(plan.ends) == expected
    assert list(plan.ends) == list(expected)  # in cabling order, as the eager dict was filled
    assert plan.ends.built and plan == build.infiniband


def test_a_lazy_tuple_is_made_once_on_first_read_and_reads_as_its_tuple() -> None:
    calls: list[int] = []

    def make() -> tuple[int, ...]:
        calls.append(1)
        return (3, 1, 2)

    lazy = LazyTuple(make)
    assert calls == [] and not lazy.built
    assert lazy[0] == 3 and calls == [1] and lazy.built
    assert list(lazy) == [3, 1, 2] and len(lazy) == 3 and 1 in lazy and 4 not in lazy and lazy[1:] == (1, 2)
    assert (
        lazy == (3, 1, 2) and lazy == LazyTuple(lambda: (3, 1, 2)) and lazy != (3, 1) and hash(lazy) == hash((3, 1, 2))
    )
    assert calls == [1]  # made once
    with pytest.raises(IndexError):
        lazy[3]
    never = LazyTuple(make)
    assert not never.built and calls == [1]


@pytest.mark.parametrize("design", ["superpod-h100-1su", "lab-ib", "lab-ib-3tier", "broken/ib-inventory"])
def test_the_subnets_wiring_is_made_when_read_and_validate_reads_none(design: str) -> None:
    """Subnet.wiring (3,000,000 cables at 1M GPUs) is made when an output first reads it: building the plan and
    running its checks (`fabric validate`) leaves it unmade, and the checks that read it before (the ftree ranks,
    the GUID owners) find from the subnet's cables and cabled CA ports what they found from it (the broken
    inventory's duplicate GUID among them)."""
    from fabric.intent.checks import run_intent_checks
    from fabric.intent.context import IntentContext
    from fabric.intent.infiniband.checks import _guids, _ranks
    from fabric.pipeline import build_fabric
    from tests.conftest import DESIGNS

    build = build_fabric(DESIGNS.parent / "tests" / f"{design}.yaml") if "/" in design else built(design)
    plan = build_infiniband(build.design, build.topology, build.allocation)
    run_intent_checks(
        IntentContext(build.design, build.topology, build.figures, build.allocation, build.intents, plan.subnets)
    )
    assert plan.subnets and all(isinstance(s.wiring, LazyTuple) and not s.wiring.built for s in plan.subnets)
    for subnet in plan.subnets:
        # what the checks read from the wiring: switch-to-switch cables, and each CA end's key and port GUID
        switches = {n.key for n in subnet.switches}
        from_wiring = [(a, b) for _, a, _, _, b, _, _ in subnet.wiring if a in switches and b in switches]
        from_cables = [(c.link.a, c.link.b) for c in subnet.cables if c.link.a in switches and c.link.b in switches]
        assert from_cables == from_wiring and from_wiring
        owners = [(a, g) for _, a, _, g, _, _, _ in subnet.wiring if not subnet.by_key[a].switch]
        assert [(p.node, p.guid) for p in subnet.cabled] == owners and owners
        assert [c for c, *_ in subnet.wiring] == list(subnet.cables)
        assert list(_ranks(subnet, "p", "f", "h")) == []
        clashes = [f.message for f in _guids(build.design, subnet)]
        assert clashes == (
            ["1 GUID(s) are used twice in fabric `compute`: 0x946dae0300aa1b21 (node01 mlx5_0 and node02 mlx5_0)"]
            if design == "broken/ib-inventory"
            else []
        )


def test_resolved_is_the_dict_a_lazy_mapping_holds() -> None:
    made = {("leaf1", "p1"): 1}
    lazy = LazyMapping(lambda: made)
    assert not lazy.built
    assert resolved(lazy) is made  # made now, and the same dict, not a copy
    assert lazy.built
    plain = {"a": 1}
    assert resolved(plain) is plain  # any other mapping as it is
