"""Run the candidates: in this process, on a process pool, or on a Dask distributed cluster.

Every path returns the outcomes in candidate order (`Executor.map` and `Client.gather` keep it), so the
ranking and every output are the same wherever the sweep ran.

`pruned_sweep` builds only what can rank: each node type's candidates in the order of their lower bound
(metrics.py), stopping at the first whose bound is worse than the best figure built so far; a node type is one
task, so the pool or the cluster runs node types side by side.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any

from fabric.fast.parallel import usable_cores
from fabric.plan.candidates import Candidate, node_count
from fabric.plan.closed import closed_outcome
from fabric.plan.document import spec_name
from fabric.plan.evaluate import Estimate, Outcome, Ruled, _catalog, estimate, evaluate, ruled_outcome
from fabric.plan.metrics import estimate_bound, lower_bound, metric_value
from fabric.plan.sizing import Refusal, switch_counts
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


def closed_sweep(
    candidates: Sequence[Candidate], gpus: int, *, workers: int | None = None, scheduler: str | None = None
) -> list[Outcome]:
    """Every candidate's outcome from its closed form (plan/closed.py), in candidate order, none built."""
    run = partial(closed_outcome, gpus=gpus)
    if scheduler is not None:
        results: list[Outcome] = _dask_map(closed_outcome, list(candidates), scheduler, gpus=gpus)
        return results
    workers = workers or default_workers()
    if workers <= 1 or len(candidates) <= 1:
        return [run(c) for c in candidates]
    with ProcessPoolExecutor(max_workers=min(workers, len(candidates))) as pool:
        return list(pool.map(run, candidates, chunksize=1))


def best_of_node(
    candidates: Sequence[Candidate], gpus: int, metric: str, precision: str, delivered: str = "bisection"
) -> tuple[list[Outcome], list[tuple[int, str, float]]]:
    """One node type's candidates, best first (those the generator refuses, as the closed form of plan/sizing.py
    tells, ruled out by its finding's code without a build): each step refines the candidate whose bound is the
    least (the analytic bound, then the bound from its topology and placement, then its exact cost, then its full
    build), until the least is a built figure: the node type's best. What is left cannot beat it and is pruned:
    (the outcomes built or ruled out, (index, label, bound) of those pruned)."""
    catalog = _catalog()
    built: list[Outcome] = []
    # (figure or bound, candidate index, stage, candidate, the topology bound's `resume`): stage 0 the analytic
    # bound, 1 the topology's, 2 the exact cost (estimate), 3 the built figure
    heap: list[tuple[float, int, int, Candidate, Any]] = []
    for c in candidates:
        found = switch_counts(c, catalog.nodes[c.node], node_count(catalog.nodes[c.node], gpus), catalog)
        if isinstance(found, Refusal):  # the generator refuses it (radix, port budget): ruled out unbuilt
            built.append(ruled_outcome(c, Ruled(spec_name(c, gpus), f"{found.code}: {found.message}", 1)))
        else:
            heap.append((lower_bound(c, gpus, metric, catalog, precision), c.index, 0, c, None))
    heapq.heapify(heap)

    def waits(bound: float, index: int) -> bool:
        """Whether a candidate at this bound should wait: another's bound is less (ties: the lower number)."""
        return bool(heap) and (bound, index) > heap[0][:2]

    while heap:
        bound, _, stage, c, resume = heapq.heappop(heap)
        if stage == 3:  # the least figure or bound is a built figure: the node type's best; the rest are pruned
            break
        if stage < 2:
            # the topology's bound (stage 0): kept when another candidate's bound is less by then
            enough = partial(_waits_at, waits, c, metric, catalog, precision) if stage == 0 else None
            cost = estimate(c, gpus, enough, resume)
            if isinstance(cost, Ruled):  # an error or an incomplete BOM: ruled out without the full build
                built.append(ruled_outcome(c, cost))
                continue
            if cost.ruled is not None:  # an incomplete BOM: ruled out by its finding
                built.append(ruled_outcome(c, cost.ruled))
                continue
            bound = max(bound, estimate_bound(cost, c, metric, catalog, precision))
            if not cost.exact or waits(bound, c.index):  # built when its bound is the least again
                heapq.heappush(heap, (bound, c.index, 2 if cost.exact else 1, c, cost.resume))
                continue
        o = evaluate(c, gpus, delivered=delivered)
        built.append(o)
        figure = metric_value(o, metric, catalog, precision) if o.ok else None
        if figure is not None:
            heapq.heappush(heap, (max(figure, bound), c.index, 3, c, None))
    pruned = [(c.index, c.label, bound) for bound, _, stage, c, _ in heap if stage != 3]
    return built, pruned


def _waits_at(
    waits: Callable[[float, int], bool], c: Candidate, metric: str, catalog: Catalog, precision: str, e: Estimate
) -> bool:
    return waits(estimate_bound(e, c, metric, catalog, precision), c.index)


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
