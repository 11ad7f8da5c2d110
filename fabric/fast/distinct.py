"""The keys that take two values, found without a kept tuple per item (docs/dev/performance.md, "Cages with two
plugs"): the check that lists the cages holding two plugs walks every end of every cable (6,000,000 at a million
GPUs), and a dict of every cage's plugs, keyed by (device, cage) tuples, cost more than the rest of the check.
It asks this first, then gathers the plugs of those few cages only; where the optics already hold each
transceiver's cages per device, it asks `keys_under_two` of them instead ("Checks per kind of cable end")."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import TypeVar

K = TypeVar("K", bound=Hashable)  # an inner key


def keys_twice(items: Iterable[tuple[str, Hashable, object, object]]) -> dict[str, set[Hashable]]:
    """`outer` → its `inner` keys that come with two different values among `items` (outer, inner, value,
    payload; the payload, unread here, is what the caller's second walk gathers for those keys).

    Kept by `outer` first (a device name: a few hundred thousand small dicts whose keys are shared strings, each
    holding the first value seen), so that no tuple is made or kept per item."""
    seen: dict[str, dict[Hashable, object]] = {}
    twice: dict[str, set[Hashable]] = {}
    for outer, inner, value, _ in items:
        here = seen.get(outer)
        if here is None:
            seen[outer] = {inner: value}
            continue
        old = here.setdefault(inner, value)
        if old is not value and old != value:
            twice.setdefault(outer, set()).add(inner)
    return twice


def keys_under_two(groups: Iterable[tuple[Hashable, Mapping[str, AbstractSet[K]]]]) -> dict[str, set[K]]:
    """`outer` → its `inner` keys found under two different values, from `groups` of (value, outer → its inner
    keys) (a value may come in several groups): what `keys_twice` finds of the items (outer, inner, value) the
    groups hold, when each group already holds its keys per outer (the optics' cages filled per transceiver and
    device: a pass over devices, not over every cable end). The pairs of values are compared, each outer of the
    smaller mapping looked up in the larger."""
    by_value: dict[Hashable, list[Mapping[str, AbstractSet[K]]]] = {}
    for value, mapping in groups:
        by_value.setdefault(value, []).append(mapping)
    found: dict[str, set[K]] = {}
    values = list(by_value.values())
    for k, ones in enumerate(values):
        for others in values[k + 1 :]:  # two values
            for one in ones:
                for other in others:
                    small, large = (one, other) if len(one) <= len(other) else (other, one)
                    for outer, inner in small.items():
                        also = large.get(outer)
                        if also is not None and not inner.isdisjoint(also):
                            found.setdefault(outer, set()).update(inner & also)
    return found
