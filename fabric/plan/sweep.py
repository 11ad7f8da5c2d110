"""Run the candidates: in this process, on a process pool, or on a Dask distributed cluster.

Every path returns the outcomes in candidate order (`Executor.map` and `Client.gather` keep it), so the
ranking and every output are the same wherever the sweep ran.

`pruned_sweep` builds only what can rank: each node type's candidates in the order of their lower bound
(metrics.py), stopping at the first whose bound is worse than the best figure built so far; a node type is one
task, so the pool or the cluster runs node types side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any

from fabric.fast.parallel import usable_cores
from fabric.plan.candidates import Candidate
from fabric.plan.evaluate import Estimate, Outcome, Ruled, _catalog, estimate, evaluate, ruled_outcome
from fabric.plan.metrics import estimate_bound, lower_bound, metric_value
from fabric.spec.catalog import Catalog

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
    delivered: str = "bisection",
) -> list[Outcome]:
    """Outcomes of `candidates`, in their order. `scheduler`: a Dask scheduler address (tcp://host:8786, or
    an in-process cluster's address); else a pool of `workers` processes (1: this process). `delivered`: what
    delivered bandwidth is (plan/delivered.py)."""
    run = partial(evaluate, gpus=gpus, grow_to=grow_to, delivered=delivered)
    if scheduler is not None:
        return _dask(candidates, gpus, grow_to, scheduler, delivered)
    workers = workers or default_workers()
    if workers <= 1 or len(candidates) <= 1:
        return [run(c) for c in candidates]
    with ProcessPoolExecutor(max_workers=min(workers, len(candidates))) as pool:
        return list(pool.map(run, candidates, chunksize=1))


def best_of_node(
    candidates: Sequence[Candidate], gpus: int, metric: str, precision: str, delivered: str = "bisection"
) -> tuple[list[Outcome], list[tuple[int, str, float]]]:
    """One node type's candidates, built in bound order until no bound can beat the best built figure:
    (the outcomes built, (index, label, bound) of those pruned)."""
    catalog = _catalog()
    bounded = sorted(
        ((lower_bound(c, gpus, metric, catalog, precision), c.index, c) for c in candidates), key=lambda t: t[:2]
    )
    best: tuple[float, int] | None = None  # the best figure built, and its candidate's index

    def beaten(bound: float, index: int) -> bool:
        """Whether a candidate with this bound cannot rank above the best built: its bound is worse, or equal
        (identical twins: the same cost, the same figures) with a later candidate number."""
        return best is not None and (bound, index) > best

    built: list[Outcome] = []
    pruned: list[tuple[int, str, float]] = []
    for bound, _, c in bounded:
        if beaten(bound, c.index):
            pruned.append((c.index, c.label, bound))
            continue
        cost = estimate(c, gpus, partial(_beaten_at, beaten, c, metric, catalog, precision))
        if isinstance(cost, Ruled):  # an error or an incomplete BOM: ruled out without the full build
            built.append(ruled_outcome(c, cost))
            continue
        bound = max(bound, estimate_bound(cost, c, metric, catalog, precision))
        if beaten(bound, c.index):
            pruned.append((c.index, c.label, bound))
            continue
        if cost.ruled is not None:  # an incomplete BOM that could have ranked: ruled out by its finding
            built.append(ruled_outcome(c, cost.ruled))
            continue
        o = evaluate(c, gpus, delivered=delivered)
        built.append(o)
        figure = metric_value(o, metric, catalog, precision) if o.ok else None
        if figure is not None and (best is None or (figure, c.index) < best):
            best = (figure, c.index)
    return built, pruned


def _beaten_at(
    beaten: Callable[[float, int], bool], c: Candidate, metric: str, catalog: Catalog, precision: str, e: Estimate
) -> bool:
    return beaten(estimate_bound(e, c, metric, catalog, precision), c.index)


def pruned_sweep(
    candidates: Sequence[Candidate],
    gpus: int,
    metric: str,
    precision: str,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    delivered: str = "bisection",
) -> tuple[list[Outcome], list[tuple[int, str, float]]]:
    """The outcomes that can be their node type's best (in candidate order) and the pruned candidates (by index)."""
    groups: dict[str, list[Candidate]] = {}
    for c in candidates:
        groups.setdefault(c.node, []).append(c)
    tasks = sorted(groups.values(), key=len, reverse=True)  # the longest first: the pool ends together
    run = partial(best_of_node, gpus=gpus, metric=metric, precision=precision, delivered=delivered)
    if scheduler is not None:
        results = _dask_map(
            best_of_node, tasks, scheduler, gpus=gpus, metric=metric, precision=precision, delivered=delivered
        )
    else:
        workers = workers or default_workers()
        if workers <= 1 or len(tasks) <= 1:
            results = [run(t) for t in tasks]
        else:
            with ProcessPoolExecutor(max_workers=min(workers, len(tasks))) as pool:
                results = list(pool.map(run, tasks, chunksize=1))
    outcomes = sorted((o for built, _ in results for o in built), key=lambda o: o.candidate.index)
    pruned = sorted((p for _, dropped in results for p in dropped), key=lambda p: p[0])
    return outcomes, pruned


def _dask(
    candidates: Sequence[Candidate], gpus: int, grow_to: int | None, address: str, delivered: str
) -> list[Outcome]:
    results: list[Outcome] = _dask_map(
        evaluate, list(candidates), address, gpus=gpus, grow_to=grow_to, delivered=delivered
    )
    return results


def _dask_map(function: Any, items: list[Any], address: str, **kwargs: Any) -> list[Any]:
    try:
        from distributed import Client
    except ImportError as exc:
        raise SchedulerError("--scheduler needs Dask: pip install 'fabric-netcompiler[dask]'") from exc
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise SchedulerError(f"cannot reach the Dask scheduler at {address}: {exc}") from exc
    try:
        futures = client.map(function, items, pure=False, **kwargs)
        results: list[Any] = client.gather(futures)
    finally:
        client.close()
    return results
