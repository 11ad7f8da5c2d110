"""fabric/fast/lazy.py: a mapping made on its first read, and the InfiniBand plan's cable ends made so."""

from __future__ import annotations

import pytest

from fabric.fast.lazy import LazyMapping
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
