"""Run the candidates: in this process, on a process pool, or on a Dask distributed cluster.

Every path returns the outcomes in candidate order (`Executor.map` and `Client.gather` keep it), so the
ranking and every output are the same wherever the sweep ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial

from fabric.fast.parallel import usable_cores
from fabric.plan.candidates import Candidate
from fabric.plan.evaluate import Outcome, evaluate

CONNECT_TIMEOUT_S = 30


class SchedulerError(Exception):
    """The Dask scheduler cannot be used (distributed missing or unreachable)."""


def default_workers() -> int:
    return usable_cores()


def sweep(
    candidates: Sequence[Candidate],
    gpus: int,
    grow_to: int | None = None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
) -> list[Outcome]:
    """Outcomes of `candidates`, in their order. `scheduler`: a Dask scheduler address (tcp://host:8786, or
    an in-process cluster's address); else a pool of `workers` processes (1: this process)."""
    run = partial(evaluate, gpus=gpus, grow_to=grow_to)
    if scheduler is not None:
        return _dask(candidates, gpus, grow_to, scheduler)
    workers = workers or default_workers()
    if workers <= 1 or len(candidates) <= 1:
        return [run(c) for c in candidates]
    with ProcessPoolExecutor(max_workers=min(workers, len(candidates))) as pool:
        return list(pool.map(run, candidates, chunksize=1))


def _dask(candidates: Sequence[Candidate], gpus: int, grow_to: int | None, address: str) -> list[Outcome]:
    try:
        from distributed import Client
    except ImportError as exc:
        raise SchedulerError("--scheduler needs Dask: pip install 'fabric-netcompiler[dask]'") from exc
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise SchedulerError(f"cannot reach the Dask scheduler at {address}: {exc}") from exc
    try:
        futures = client.map(evaluate, list(candidates), gpus=gpus, grow_to=grow_to, pure=False)
        results: list[Outcome] = client.gather(futures)
    finally:
        client.close()
    return results
