"""Placeholder GUIDs without an inventory are found by block (guids.py, `_placeholders_by_block`): the same GUIDs
as the general search over every GUID taken, collisions included (docs/dev/performance.md)."""

from __future__ import annotations

import pytest

import fabric.intent.infiniband.guids as guids_module
from fabric.intent.infiniband.guids import (
    PORT_BITS,
    GuidNeed,
    Guids,
    assign_guids,
    assign_keyed_guids,
    placeholder_guid,
)
from fabric.intent.infiniband.subnet import IbNode, Subnet


def _plain(needs: list[GuidNeed]) -> dict[str, Guids]:
    """assign_guids's general search, over every GUID taken (as it runs with an inventory)."""
    out: dict[str, Guids] = {}
    taken: set[int] = set()
    for need in sorted(needs, key=lambda n: n.key):
        attempt = 0
        while True:
            guid = guids_module.placeholder_guid(need.key, attempt)
            span = range(guid, guid + len(need.ports) + 1)
            if taken.isdisjoint(span):
                break
            attempt += 1
        taken.update(span)
        out[need.key] = Guids(guid, tuple(span[1:]), True)
    return out


def _needs() -> list[GuidNeed]:
    switches = [GuidNeed(f"leaf{i}", None, ()) for i in range(40)]
    cas = [
        GuidNeed(f"gpu{i:03d}", f"mlx5_{k}", tuple(f"p{p}" for p in range(k % 3 + 1)))
        for i in range(60)
        for k in (0, 1)
    ]
    return [*switches, *cas, GuidNeed("wide", "mlx5_9", tuple(f"p{p}" for p in range((1 << PORT_BITS) - 1)))]


def test_the_blocks_give_the_general_searchs_guids() -> None:
    needs = _needs()
    found, unused = assign_guids(needs, None)
    assert found == _plain(needs) and unused == []
    assert found["gpu007 mlx5_1"].node == placeholder_guid("gpu007 mlx5_1")


def test_colliding_placeholders_move_on_as_the_general_search_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Placeholders squeezed into a few blocks (the real hash collides improbably): each key takes the next
    attempt until its block is free, as the search over every GUID does."""
    real = guids_module.placeholder_guid

    def squeezed(name: str, attempt: int = 0) -> int:
        return (real(name, attempt) & ~(((1 << 40) - 1) << PORT_BITS)) | (
            (real(name, attempt) >> PORT_BITS) % 400
        ) << PORT_BITS

    monkeypatch.setattr(guids_module, "placeholder_guid", squeezed)
    needs = _needs()
    found, _ = assign_guids(needs, None)
    plain = _plain(needs)
    assert found == plain
    assert any(g.node != squeezed(k) for k, g in plain.items())  # collisions happened and moved keys on
    blocks = [g.node >> PORT_BITS for g in found.values()]
    assert len(set(blocks)) == len(blocks)


def test_needs_given_by_their_keys_get_the_same_guids(monkeypatch: pytest.MonkeyPatch) -> None:
    """`assign_keyed_guids` (the subnets' needs, keyed as they are made) gives what `assign_guids` does, with the
    placeholders squeezed into colliding blocks too (the order of the keys decides who moves on)."""
    needs = _needs()
    keyed = {n.key: n for n in reversed(needs)}  # in another order than the keys'
    assert assign_keyed_guids(keyed, None) == assign_guids(needs, None)
    real = guids_module.placeholder_guid
    monkeypatch.setattr(guids_module, "placeholder_guid", lambda n, a=0: real(n, a) & ~(((1 << 40) - 1) << 16))
    squeezed = assign_guids(needs, None)
    assert assign_keyed_guids(keyed, None) == squeezed
    # the negative: taken in the mapping's order, not the keys', the collisions move other keys on
    assert guids_module._assign(list(keyed.items()), None) != squeezed


def test_a_ca_of_a_whole_block_of_ports_takes_the_general_search() -> None:
    """A CA with 2**PORT_BITS - 1 ports or more could reach the next block: the general search runs (same result)."""
    needs = [*_needs(), GuidNeed("huge", "mlx5_0", tuple(f"p{p}" for p in range(1 << PORT_BITS)))]
    found, _ = assign_guids(needs, None)
    assert found == _plain(needs)


IB_DESIGNS = ["gb200-nvl72-1su", "lab-ib", "lab-ib-3tier", "superpod-h100-1su", "superpod-h100-4su", "tutorial-256"]


@pytest.mark.parametrize("design", IB_DESIGNS)
def test_the_guid_check_passes_over_placeholders_as_the_full_count_does(design: str) -> None:
    """The GUID check does not count the owners of a subnet whose GUIDs are all placeholders (intent/infiniband/
    checks.py, `_guids`: 1,500,000 GUIDs a subnet at 1M GPUs): counted in full (one node marked as given, which
    makes the check count), such a subnet has no GUID twice; and the full count finds one made twice."""
    from dataclasses import replace

    from fabric.intent.infiniband.checks import _guids
    from tests.conftest import built

    build = built(design)
    subnets = [s for s in build.infiniband.subnets if all(n.placeholder for n in s.nodes)]
    assert subnets  # no inventory in the bundled designs: placeholders only

    def with_nodes(subnet: Subnet, nodes: tuple[IbNode, ...]) -> Subnet:
        members = replace(subnet.members, nodes=nodes)
        return replace(subnet, made=lambda: members, placeholder_only=all(n.placeholder for n in nodes))

    for subnet in subnets:
        assert subnet.placeholder_only
        assert list(_guids(build.design, subnet)) == []
        counted = with_nodes(subnet, (replace(subnet.nodes[0], placeholder=False), *subnet.nodes[1:]))
        assert not counted.placeholder_only
        assert list(_guids(build.design, counted)) == []
        twice = with_nodes(counted, (*counted.nodes, replace(counted.nodes[-1], key="copy")))
        assert [f.code for f in _guids(build.design, twice)] == ["duplicate-guid"]
