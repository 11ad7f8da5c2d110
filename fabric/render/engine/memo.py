"""Per-build memo: several outputs show the same derived data (costing, laid-out diagrams); per fabric too
(per_object, shared with the stages: fabric/fast/memo.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from fabric.fast.memo import per_object

if TYPE_CHECKING:
    from fabric.pipeline import Build

T = TypeVar("T")


def per_build(fn: Callable[[Build], T]) -> Callable[[Build], T]:
    """Compute once per Build object."""
    return per_object(fn)


__all__ = ["per_build", "per_object"]
