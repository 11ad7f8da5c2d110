"""Per-build memo: several outputs show the same derived data (costing, laid-out diagrams); per fabric too."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from fabric.pipeline import Build

T = TypeVar("T")
K = TypeVar("K")


def per_object(fn: Callable[[K], T]) -> Callable[[K], T]:
    """Compute once per argument object, by identity (kept for the few most recent ones; they are frozen)."""
    memo: dict[int, tuple[K, T]] = {}

    @wraps(fn)
    def wrapper(build: K) -> T:
        hit = memo.get(id(build))
        if hit is not None and hit[0] is build:
            return hit[1]
        value = fn(build)
        if len(memo) >= 4:
            memo.clear()
        memo[id(build)] = (build, value)
        return value

    return wrapper


def per_build(fn: Callable[[Build], T]) -> Callable[[Build], T]:
    """Compute once per Build object."""
    return per_object(fn)
