"""Identity memo for frozen values that several readers derive the same data from (any stage may use it)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar

T = TypeVar("T")
K = TypeVar("K")


def per_object(fn: Callable[[K], T]) -> Callable[[K], T]:
    """Compute once per argument object, by identity (kept for the few most recent ones; they are frozen)."""
    memo: dict[int, tuple[K, T]] = {}

    @wraps(fn)
    def wrapper(value: K) -> T:
        hit = memo.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        result = fn(value)
        if len(memo) >= 4:
            memo.clear()
        memo[id(value)] = (value, result)
        return result

    return wrapper
