"""The bisection both engines compute: the balanced splits of a plane's endpoints, and the loop over planes, splits
and failures that makes the bisection and worst-failure figures from an engine's flows.

Bisection is the smallest maximum flow over two balanced splits of the endpoints — the leaves in order cut in two
halves (across pods in 3 tiers) and alternate leaves. A failure comes with a lower bound of its flow read from the
intact flow, so a failure that cannot be the worst is not computed (only a strictly lower flow replaces the worst).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar


@dataclass
class Split:
    """A balanced split of the endpoints: per switch the Gb/s on side A and on side B."""

    name: str
    s_cap: list[int]
    t_cap: list[int]


def endpoint_splits(n: int, endpoints: Sequence[tuple[int, int]], members: list[int]) -> list[Split]:
    """Balanced splits of the endpoints on the leaves in `members` (one plane), as per-switch Gb/s on each side;
    both engines take theirs from here."""
    inside = set(members)
    eps = [(leaf, gbps) for leaf, gbps in endpoints if leaf in inside]
    eps.sort(key=lambda e: e[0])  # leaf order; stable keeps port order
    half = sum(g for _, g in eps) / 2
    out = []
    for name in ("halves", "alternate"):
        s_cap, t_cap = [0] * n, [0] * n
        a_sum = b_sum = 0
        leaf_pos = {leaf: i for i, leaf in enumerate(dict.fromkeys(e[0] for e in eps))}
        for leaf, gbps in eps:
            if name == "halves":
                to_a = a_sum < half
            else:
                want_a = leaf_pos[leaf] % 2 == 0
                to_a = (want_a and a_sum < half) or (not want_a and b_sum >= half)
            if to_a:
                s_cap[leaf] += gbps
                a_sum += gbps
            else:
                t_cap[leaf] += gbps
                b_sum += gbps
        out.append(Split(name, s_cap, t_cap))
    return out


Members = TypeVar("Members")
Inside = TypeVar("Inside")
SplitT = TypeVar("SplitT", bound="Split | _ArraySplit")
Graph = TypeVar("Graph")
Alive = TypeVar("Alive")


class _ArraySplit(Protocol):
    """arrays.ArraySplit: the same fields as Split, as numpy arrays."""

    @property
    def s_cap(self) -> Any: ...
    @property
    def t_cap(self) -> Any: ...


@dataclass(frozen=True)
class Flow:
    """A maximum flow's value and the size of the graph it was computed on."""

    value: int
    size: int


def lower_bound(value: int, lost: float) -> float:
    """value - lost, a hair lower when anything is lost (the spread is in floats: a bound a hair low never skips
    a failure it should not; nothing lost is exact)."""
    return value - lost - 1e-9 * max(1, value) if lost else float(value)


def plane_bisection(
    planes: Sequence[tuple[Members, Inside]],
    splits_of: Callable[[Members], Sequence[SplitT]],
    flow: Callable[[Graph, SplitT, Alive | None], Any],
    failures_of: Callable[
        [SplitT, Inside], Sequence[tuple[str, Callable[[], Graph], Alive | None, Callable[[Any], float]]]
    ],
    intact: Graph,
    failures_too: bool,
) -> tuple[float, int, tuple[str, float] | None]:
    """Bisection Gb/s, the largest reduced flow graph and the worst single failure (element, bisection after it)
    over the planes (their switches as `members` and as an `inside` mask), whichever engine's primitives run it.

    `flow` gives an object with the flow's `value` and `size`; each failure comes with a lower bound of its flow
    given the intact one: a failure whose bound is no lower than the worst so far cannot be the worst (only a
    strictly lower flow replaces it), so it is not computed."""
    reduced = 0
    per_plane_best: list[float] = []
    per_plane_worst: list[float] = []
    worst_names: list[str] = []
    for members, inside in planes:
        plane_full = 0.0
        best: float | None = None
        plane_worst: tuple[float, str] | None = None
        for split in splits_of(members):
            # Endpoints are atomic, so halves can differ by one port: judge a split against its
            # smaller side, then scale to the plane's ideal half.
            a, b = int(sum(split.s_cap)), int(sum(split.t_cap))
            plane_full = float(a + b) / 2
            side = float(min(a, b))
            if not side:  # a single endpoint: nothing to split
                best = 1.0
                continue
            whole = flow(intact, split, None)
            reduced = max(reduced, whole.size)
            best = min(best, whole.value / side) if best is not None else whole.value / side
            if failures_too:
                for element, damaged, alive, bound in failures_of(split, inside):
                    if plane_worst is not None and bound(whole) / side >= plane_worst[0]:
                        continue
                    value = flow(damaged(), split, alive).value
                    if plane_worst is None or value / side < plane_worst[0]:
                        plane_worst = (value / side, element)
        per_plane_best.append((best or 0.0) * plane_full)
        if plane_worst is not None:
            per_plane_worst.append(plane_worst[0] * plane_full)
            worst_names.append(plane_worst[1])
    bisection = sum(per_plane_best)
    worst = None
    if failures_too and per_plane_worst:
        # one failure hits one plane; the others keep their share
        drops = [b - w for b, w in zip(per_plane_best, per_plane_worst, strict=True)]
        i = drops.index(max(drops))
        worst = (worst_names[i], bisection - drops[i])
    return bisection, reduced, worst
