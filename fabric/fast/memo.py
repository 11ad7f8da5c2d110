"""Identity memos for frozen values that several readers derive the same data from (any stage may use them), and
their eviction in a render worker whose memory grows large.

Every memo of the process is registered here. A forked render worker keeps what it inherited (the parent's
entries: pages it shares) and what its tasks add; past FORGET_ABOVE resident bytes after a task it forgets what
its tasks added, but for memos declared `keep` (the physical sheet: four outputs read it and it takes seconds to
make at a million GPUs). What fast/lazy.py made counts as a memo. At a million GPUs the memos a worker's tasks left
(the cage columns, the report's content, the address columns, the InfiniBand ends...) were ~3 GiB, on top of each
task's own peak; after forgetting, the worker hands the heap's free pages back (`give_back`). A forgotten entry
is made again if a later task asks: the bytes never change, only the time. docs/dev/performance.md ("Memos a
render worker forgets").
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from functools import cache, wraps
from typing import Any, TypeVar, cast

T = TypeVar("T")
K = TypeVar("K")

# resident bytes past which a render worker forgets its tasks' memos after a task: above what any design of
# 100k GPUs reaches (a worker's peak there is ~1 GiB), so they never pay a memo made twice
FORGET_ABOVE = 4 * 2**30

_MEMOS: list[tuple[dict[Any, Any], bool]] = []  # every memo of this process, and whether it is kept
_INHERITED: dict[int, frozenset[Any]] = {}  # per memo (by id), the keys it held when this worker was forked
# the values of fast/lazy.py made so far (the InfiniBand ends and wiring: ~1 GiB each at a million GPUs), and
# those made before this worker was forked
_LAZY: dict[int, weakref.ReferenceType[Any]] = {}  # by id (a LazyMapping is not hashable)
_LAZY_INHERITED: set[int] = set()


def made_lazily(value: Any) -> None:
    """A LazyMapping or LazyTuple (fast/lazy.py) just made its value: a memo like the others."""
    key = id(value)

    def gone(ref: weakref.ReferenceType[Any]) -> None:
        if _LAZY.get(key) is ref:
            del _LAZY[key]

    _LAZY[key] = weakref.ref(value, gone)


def registered(memo: dict[Any, Any], keep: bool = False) -> dict[Any, Any]:
    """`memo` (a dict a module keeps derived values in) made known for eviction; `keep`: never forgotten."""
    _MEMOS.append((memo, keep))
    return memo


def per_object(fn: Callable[[K], T], keep: bool = False) -> Callable[[K], T]:
    """Compute once per argument object, by identity (kept for the few most recent ones; they are frozen)."""
    memo: dict[int, tuple[K, T]] = registered({}, keep)

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


def inherit() -> None:
    """In a forked worker, before its first task: what the memos hold now is the parent's and stays."""
    _INHERITED.clear()
    _INHERITED.update((id(memo), frozenset(memo)) for memo, _ in _MEMOS)
    _LAZY_INHERITED.clear()
    _LAZY_INHERITED.update(_LAZY)


def resident_bytes() -> int:
    """This process's resident set (0 where /proc does not say)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def forget_if_large(above: int | None = None) -> int:
    """After a worker's task: if the process holds more than `above` bytes (default FORGET_ABOVE), forget every
    entry its tasks added to a memo not declared `keep`. Returns the entries forgotten."""
    if resident_bytes() <= (FORGET_ABOVE if above is None else above):
        return 0
    forgotten = 0
    for memo, keep in _MEMOS:
        if keep:
            continue
        old = _INHERITED.get(id(memo), frozenset())
        for key in [k for k in memo if k not in old]:
            del memo[key]
            forgotten += 1
    for key in [k for k in _LAZY if k not in _LAZY_INHERITED]:
        lazy = _LAZY.pop(key)()
        if lazy is not None:
            lazy.forget()
            forgotten += 1
    return forgotten


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, from the symbols the process has loaded (None elsewhere): looked up at the first use,
    not when a stage imports this module."""
    import ctypes

    return cast("Callable[[int], int] | None", getattr(ctypes.CDLL(None), "malloc_trim", None))


def give_back() -> None:
    """Hand the heap's free pages back to the system (glibc's malloc_trim): after a worker forgot its memos and
    collected, its resident set is what it still holds (~0.5 GiB less at a million GPUs), not its high mark."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
