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
