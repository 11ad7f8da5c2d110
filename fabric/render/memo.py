"""Per-build memo: several outputs show the same derived data (costing, laid-out diagrams)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from fabric.pipeline import Build

T = TypeVar("T")


def per_build(fn: Callable[[Build], T]) -> Callable[[Build], T]:
    """Compute once per Build object (kept for the few most recent builds; a Build is frozen)."""
    memo: dict[int, tuple[Build, T]] = {}

    @wraps(fn)
    def wrapper(build: Build) -> T:
        hit = memo.get(id(build))
        if hit is not None and hit[0] is build:
            return hit[1]
        value = fn(build)
        if len(memo) >= 4:
            memo.clear()
        memo[id(build)] = (build, value)
        return value

    return wrapper
