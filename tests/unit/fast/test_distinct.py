"""fabric/fast/distinct.py: keys_twice finds the keys that take two values."""

from __future__ import annotations

from collections.abc import Hashable

from fabric.fast.distinct import keys_twice


def _plain(items: list[tuple[str, Hashable, object]]) -> dict[str, set[Hashable]]:
    values: dict[tuple[str, Hashable], set[object]] = {}
    for outer, inner, value in items:
        values.setdefault((outer, inner), set()).add(value)
    out: dict[str, set[Hashable]] = {}
    for (outer, inner), seen in values.items():
        if len(seen) > 1:
            out.setdefault(outer, set()).add(inner)
    return out


def test_the_keys_with_two_values_are_found_and_repeats_are_not() -> None:
    cases: list[list[tuple[str, Hashable, object]]] = [
        [],
        [("a", "1", "x")],
        [("a", "1", "x"), ("a", "1", "x"), ("a", "2", "y"), ("b", "1", "z")],  # repeats, other keys
        [("a", "1", "x"), ("b", "1", "z"), ("a", "1", "y"), ("a", "1", "w"), ("b", "2", "z")],  # a 1: x, y and w
        [("a", "1", "osfp"), ("a", "1", "".join(["os", "fp"]))],  # equal values, different objects
        [("a", "1", "sr8"), ("a", "1", "dr8"), ("b", "1", "sr8"), ("b", "1", "acc compute-0512"), ("c", "1", "x")],
    ]
    expected: list[dict[str, set[Hashable]]] = [{}, {}, {}, {"a": {"1"}}, {}, {"a": {"1"}, "b": {"1"}}]
    with_payload = [[(*item, f"payload {i}") for i, item in enumerate(c)] for c in cases]  # unread
    assert [keys_twice(c) for c in with_payload] == [_plain(c) for c in cases] == expected


def test_the_keys_under_two_values_are_what_keys_twice_finds_of_the_same_items() -> None:
    """`keys_under_two` of groups (value, outer → its inner keys) against `keys_twice` of the items they hold:
    random groups, a value in several groups, outers in some groups only."""
    import random

    from fabric.fast.distinct import keys_under_two

    rng = random.Random(30)
    for _ in range(200):
        groups: list[tuple[str, dict[str, set[str]]]] = []
        for _ in range(rng.randint(0, 5)):
            value = rng.choice(["sr8", "dr8", "acc", "dac"])
            outers = rng.sample(["a", "b", "c", "d", "e"], rng.randint(0, 5))
            groups.append((value, {o: {str(rng.randint(1, 4)) for _ in range(rng.randint(1, 3))} for o in outers}))
        items = [(outer, inner, value, None) for value, m in groups for outer, inners in m.items() for inner in inners]
        assert keys_under_two(groups) == keys_twice(items)
    assert keys_under_two([("sr8", {"a": {"1", "2"}}), ("dr8", {"a": {"2"}, "b": {"1"}})]) == {"a": {"2"}}
    assert keys_under_two([("sr8", {"a": {"1"}}), ("sr8", {"a": {"2"}}), ("dr8", {"b": {"1"}})]) == {}
