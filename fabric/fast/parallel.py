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


# processes per usable core at most: more only adds forks and memory (the lab's 0.6 s build took 11 s at 1,000
# workers and hung at 10,000); a few per core still overlap a render worker's waits on the disk
WORKERS_PER_CORE = 4


class WorkersError(ValueError):
    """A count of processes (--workers, $FABRIC_WORKERS) that is not one this machine takes."""


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def max_workers() -> int:
    """The most processes a run may be given: WORKERS_PER_CORE per usable core."""
    return WORKERS_PER_CORE * usable_cores()


def parse_workers(text: str, source: str) -> int:
    """A count of processes given as text (`source`: --workers or FABRIC_WORKERS, named in the error): ASCII
    digits (not `¹`, which str.isdigit takes and int refuses), from 1 to max_workers(); else WorkersError, whose
    text is the same for both sources but the name (and never quotes the value)."""
    value = text.strip()
    limit = max_workers()
    if value.isascii() and value.isdigit() and len(value.lstrip("0")) <= len(str(limit)) and 1 <= int(value) <= limit:
        return int(value)
    raise WorkersError(
        f"{source} must be a count of processes from 1 to {limit} ({WORKERS_PER_CORE} per usable core, "
        f"{usable_cores()} here), in the digits 0-9"
    )


def env_workers() -> int | None:
    """$FABRIC_WORKERS as a count (unset or blank: None); anything else is WorkersError (the command line checks
    it before any command runs: exit 2). The count never changes the bytes."""
    env = os.environ.get("FABRIC_WORKERS", "")
    return parse_workers(env, "FABRIC_WORKERS") if env.strip() else None


def cores(workers: int | None) -> int:
    """Processes to use: `workers` if given (at most max_workers()), else $FABRIC_WORKERS, else the usable
    cores."""
    if workers is None:
        workers = env_workers()
    return min(max(1, workers), max_workers()) if workers is not None else usable_cores()


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
