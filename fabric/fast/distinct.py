"""The keys that take two values, found without a kept tuple per item (docs/dev/performance.md, "Cages with two
plugs"): the check that lists the cages holding two plugs walks every end of every cable (6,000,000 at a million
GPUs), and a dict of every cage's plugs, keyed by (device, cage) tuples, cost more than the rest of the check.
It asks this first, then gathers the plugs of those few cages only."""

from __future__ import annotations

from collections.abc import Hashable, Iterable


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
