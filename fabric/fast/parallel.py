"""Processes: how many this run may use, and one computation in a forked child beside the caller's own work.

A forked child shares the parent's memory as it was at the fork, so the computation's inputs (a whole topology)
are never pickled; only its result comes back through a pipe. docs/dev/performance.md ("The analysis beside
allocation and intent") says where this pays.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")


def env_workers() -> int | None:
    """$FABRIC_WORKERS as a count; anything else is as if unset (the count never changes the bytes)."""
    env = os.environ.get("FABRIC_WORKERS", "").strip()
    return int(env) if env.isdigit() and int(env) >= 1 else None


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def cores(workers: int | None) -> int:
    """Processes to use: `workers` if given, else $FABRIC_WORKERS, else the usable cores."""
    if workers is None:
        workers = env_workers()
    return max(1, workers) if workers is not None else usable_cores()


_COMPUTE: Callable[[], Any] | None = None  # what the forked child computes (inherited through the fork)


def _in_child() -> Any:
    # numpy's BLAS would start a thread per core that spins for a while, taking CPU the parent's work needs;
    # nothing computed beside multiplies matrices (only set if unset, and only in this child)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    assert _COMPUTE is not None
    return _COMPUTE()


class Beside(Generic[T]):
    """A value computed in a forked child (`result()` waits for it), or here at `result()` when nothing forked."""

    def __init__(self, compute: Callable[[], T], pending: Any = None) -> None:
        self._compute, self._pending = compute, pending

    def result(self) -> T:
        return cast(T, self._pending.get()) if self._pending is not None else self._compute()


def can_fork() -> bool:
    """Whether this process may fork a child: the platform forks, and this is not a daemonic process (a worker of
    `fabric plan`'s sweep may have no children)."""
    import multiprocessing  # (here: `fabric validate` of a small design need not load it)

    return "fork" in multiprocessing.get_all_start_methods() and not multiprocessing.current_process().daemon


@contextmanager
def beside(compute: Callable[[], T], fork: bool = True) -> Iterator[Beside[T]]:
    """Start `compute` in a forked child (when `fork` and this process can), to be collected with `result()` inside
    the block; the child is gone when the block ends, also on an error. Else `compute` runs at `result()`."""
    global _COMPUTE
    if not (fork and can_fork()):
        yield Beside(compute)
        return
    import multiprocessing

    _COMPUTE = compute
    pool = multiprocessing.get_context("fork").Pool(1)
    try:
        pending = pool.apply_async(_in_child)
        try:
            yield Beside(compute, pending)
        except Exception:
            # the child's result is taken before the pool ends (as the render pool does): terminating a child in
            # the middle of sending one would leave the pool's reader waiting for the rest for ever
            pending.wait()
            raise
    finally:
        _COMPUTE = None
        pool.terminate()
        pool.join()
