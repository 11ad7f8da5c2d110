"""Run the candidates: in this process, on a process pool, or on a Dask distributed cluster.

Every path returns the outcomes in candidate order (`Executor.map` and `Client.gather` keep it), so the
ranking and every output are the same wherever the sweep ran.

`pruned_sweep` builds only what can rank: each node type's candidates in the order of their lower bound
(metrics.py), stopping at the first whose bound is worse than the best figure built so far. On a Dask cluster a
node type is one task; on this machine the node types' steps share pinned worker processes (`_interleaved`: no
worker waits while a step of any node type can run, and an idle one runs ahead the step a node type will likely
ask for next), with the same decisions as running them one after the other.
"""

from __future__ import annotations

import heapq
import multiprocessing
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from fabric.fast.collector import gc_paused
from fabric.fast.parallel import usable_cores
from fabric.fast.pinned import Pinned
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
    return _map(evaluate, candidates, workers, scheduler, gpus=gpus, grow_to=grow_to, delivered=delivered)


def closed_sweep(
    candidates: Sequence[Candidate], gpus: int, *, workers: int | None = None, scheduler: str | None = None
) -> list[Outcome]:
    """Every candidate's outcome from its closed form (plan/closed.py), in candidate order, none built."""
    return _map(closed_outcome, candidates, workers, scheduler, gpus=gpus)


def _map(
    function: Callable[..., Outcome],
    candidates: Sequence[Candidate],
    workers: int | None,
    scheduler: str | None,
    **kwargs: Any,
) -> list[Outcome]:
    """`function(candidate, **kwargs)` of each candidate, in their order: on the Dask scheduler, else in this
    process (1 worker) or on a pool of `workers` processes."""
    if scheduler is not None:
        results: list[Outcome] = _dask_map(function, list(candidates), scheduler, **kwargs)
        return results
    run = partial(function, **kwargs)
    workers = workers or default_workers()
    if workers <= 1 or len(candidates) <= 1:
        return [run(c) for c in candidates]
    with ProcessPoolExecutor(max_workers=min(workers, len(candidates))) as pool:
        return list(pool.map(run, candidates, chunksize=1))


def best_of_node(
    candidates: Sequence[Candidate], gpus: int, metric: str, precision: str, delivered: str = "bisection"
) -> tuple[list[Outcome], list[tuple[int, str, float]]]:
    """One node type's candidates, best first (`_best_first`), each step run here: (the outcomes built or ruled
    out, (index, label, bound) of those pruned). The cyclic garbage collector is paused meanwhile: a step makes
    tens of thousands of objects and next to no cyclic garbage, and each collection walks the kept topologies again
    (a third of the sweep's time)."""
    with gc_paused():
        chain = _best_first(candidates, gpus, metric, precision)
        step = next(chain)
        while True:
            try:
                step = chain.send(_run_step(step, gpus, metric, precision, delivered))
            except StopIteration as end:
                result: tuple[list[Outcome], list[tuple[int, str, float]]] = end.value
                return result


@dataclass(frozen=True)
class Step:
    """One step of a node type's refinement: the estimate of a candidate (`enough`: stop at the topology's bound
    when its bound is above `least`, the least (bound, index) waiting), or its full build (`build`); `resume`: what
    its estimate kept (evaluate.py `Resume`)."""

    candidate: Candidate
    build: bool = False
    enough: bool = False
    least: tuple[float, int] | None = None
    resume: Any = None


def _best_first(
    candidates: Sequence[Candidate],
    gpus: int,
    metric: str,
    precision: str,
    heap: list[tuple[float, int, int, Candidate, Any]] | None = None,
) -> Generator[Step, Estimate | Ruled | Outcome, tuple[list[Outcome], list[tuple[int, str, float]]]]:
    """One node type's candidates, best first (those the generator refuses, as the closed form of plan/sizing.py
    tells, ruled out by its finding's code without a build): each step refines the candidate whose bound is the
    least (the analytic bound, then the bound from its topology and placement, then its exact cost, then its full
    build), until the least is a built figure: the node type's best. What is left cannot beat it and is pruned.
    Each step is yielded (a `Step`) and its result sent back, so that the steps of several node types can run side
    by side (`_interleaved`) with the same decisions as one after the other (`best_of_node`): (the outcomes built
    or ruled out, (index, label, bound) of those pruned). `heap`: a list it keeps its heap in (which the caller may read
    between steps: what comes next)."""
    catalog = _catalog()
    # (figure or bound, candidate index, stage, candidate, the topology bound's `resume`): stage 0 the analytic
    # bound, 1 the topology's, 2 the exact cost (estimate), 3 the built figure
    heap = heap if heap is not None else []
    built: list[Outcome] = []
    heap[:] = []
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
            least = heap[0][:2] if heap else None
            cost = yield Step(c, enough=stage == 0, least=least, resume=resume)
            assert not isinstance(cost, Outcome)
            if isinstance(cost, Ruled):  # an error or an incomplete BOM: ruled out without the full build
                built.append(ruled_outcome(c, cost))
                continue
            if cost.ruled is not None:  # an incomplete BOM: ruled out by its finding
                built.append(ruled_outcome(c, cost.ruled))
                continue
            bound = max(bound, estimate_bound(cost, c, metric, catalog, precision))
            resume = cost.resume
            if not cost.exact or waits(bound, c.index):  # built when its bound is the least again
                heapq.heappush(heap, (bound, c.index, 2 if cost.exact else 1, c, resume))
                continue
        o = yield Step(c, build=True, resume=resume)
        assert isinstance(o, Outcome)
        built.append(o)
        figure = metric_value(o, metric, catalog, precision) if o.ok else None
        if figure is not None:
            heapq.heappush(heap, (max(figure, bound), c.index, 3, c, None))
    pruned = [(c.index, c.label, bound) for bound, _, stage, c, _ in heap if stage != 3]
    return built, pruned


def _run_step(step: Step, gpus: int, metric: str, precision: str, delivered: str) -> Estimate | Ruled | Outcome:
    """A step's result: the candidate's full build, or its estimate (stopping at the topology's bound where
    `step.enough` and that bound is above `step.least`: what `waits` says of it, as the heap stands while it runs)."""
    c = step.candidate
    if step.build:
        return evaluate(c, gpus, delivered=delivered, resume=step.resume)
    enough = partial(_above, step.least, c, metric, _catalog(), precision) if step.enough else None
    return estimate(c, gpus, enough, step.resume)


def _above(
    least: tuple[float, int] | None, c: Candidate, metric: str, catalog: Catalog, precision: str, e: Estimate
) -> bool:
    return least is not None and (estimate_bound(e, c, metric, catalog, precision), c.index) > least


# a worker's kept designs and topologies (an estimate's `resume`), by candidate index: the follow-up step of a
# candidate goes to the worker that keeps its topology, which then need not build it again nor pickle it
_KEPT: dict[int, Any] = {}


def _remote_step(
    step: Step, gpus: int, metric: str, precision: str, delivered: str, forget: tuple[int, ...]
) -> tuple[Estimate | Ruled | Outcome, bool]:
    """`_run_step` in a pinned worker: (its result without the resume, whether this worker keeps the resume)."""
    for index in forget:
        _KEPT.pop(index, None)
    resume = _KEPT.pop(step.candidate.index, None)
    with gc_paused():
        result = _run_step(
            replace(step, resume=resume) if resume is not None else step, gpus, metric, precision, delivered
        )
    return _kept(step.candidate.index, result)


def _kept(index: int, result: Any) -> tuple[Any, bool]:
    if isinstance(result, Estimate) and result.resume is not None:
        _KEPT[index] = result.resume
        return replace(result, resume=None), True
    return result, False


AHEAD_DEPTH = 3  # how deep in a running node type's heap an idle worker looks for a step to run ahead

# what a step ahead of its turn computes: a candidate's estimate both ways (the topology's bound, None where the
# topology has an error or was kept before, and the exact cost: whatever bound the heap then holds, the step's
# result is one of them), or its full build
_Ahead = tuple[Estimate | None, Estimate | Ruled] | Outcome


def _remote_ahead(
    c: Candidate, build: bool, bounded: bool, gpus: int, delivered: str, forget: tuple[int, ...]
) -> tuple[_Ahead, bool]:
    """A step run ahead of its turn by an idle worker (`_interleaved`): the full build, or the estimate with its
    topology's bound (`bounded`) and its exact cost."""
    for index in forget:
        _KEPT.pop(index, None)
    resume = _KEPT.pop(c.index, None)
    if build:
        return evaluate(c, gpus, delivered=delivered, resume=resume), False
    seen: list[Estimate] = []

    def keep_going(e: Estimate) -> bool:
        seen.append(replace(e, resume=None))
        return False

    with gc_paused():
        exact, keeps = _kept(c.index, estimate(c, gpus, keep_going if bounded else None, resume))
    return (seen[0] if seen else None, exact), keeps


def _interleaved(
    tasks: Sequence[Sequence[Candidate]],
    gpus: int,
    metric: str,
    precision: str,
    delivered: str,
    workers: int,
    pool_of: Callable[[int], Any] = Pinned,
) -> list[tuple[list[Outcome], list[tuple[int, str, float]]]]:
    """`best_of_node` of each task, their steps run side by side on `workers` pinned processes: whenever a worker is
    free it takes the next step of some node type (one step of each at a time), so the workers stay busy until the
    last node type's last steps, whatever each node type's work turns out to be. A candidate's follow-up step goes
    to the worker that keeps its topology when that one is free. When no node type has a step waiting (the last
    ones run), a free worker runs ahead: the step of the candidate least in a running node type's heap (its
    likely next), estimated both ways or built; its node type takes the result when it asks for that step, as it
    would have been computed then (the same functions of the candidate, and the bound the heap then holds).
    `pool_of`: the pool for a count of workers (`Pinned`; a test gives one that runs calls in order)."""
    catalog = _catalog()
    heaps: list[list[tuple[float, int, int, Candidate, Any]]] = [[] for _ in tasks]
    chains = [_best_first(t, gpus, metric, precision, heaps[k]) for k, t in enumerate(tasks)]
    results: list[tuple[list[Outcome], list[tuple[int, str, float]]] | None] = [None] * len(chains)
    ready: dict[int, Step] = {}  # chain → its next step, not running
    done = [0] * len(chains)  # steps each chain has run
    holder: dict[int, int] = {}  # candidate index → the worker that keeps its design and topology
    forget: dict[int, list[int]] = {}  # worker → kept candidates it may drop
    ahead: dict[tuple[int, bool], _Ahead] = {}  # (candidate index, build) → computed ahead
    running: dict[int, tuple[int, Step | None, tuple[int, bool] | None]] = {}  # worker → (chain, step, or ahead)
    waiting: dict[tuple[int, bool], tuple[int, Step]] = {}  # running ahead → the chain that asks for it, its step

    def drop(index: int) -> None:
        worker = holder.pop(index, None)
        if worker is not None:
            forget.setdefault(worker, []).append(index)

    def advance(k: int, result: Any) -> None:
        """Send the chain its step's result; take its next step from what was computed ahead where it can."""
        while True:
            try:
                step = chains[k].send(result) if result is not None else next(chains[k])
            except StopIteration as end:
                results[k] = end.value
                for c in tasks[k]:
                    drop(c.index)
                    ahead.pop((c.index, False), None)
                    ahead.pop((c.index, True), None)
                return
            key = (step.candidate.index, step.build)
            if any(r[2] == key for r in running.values()):
                waiting[key] = (k, step)  # running ahead: the chain takes it when it ends
                return
            found = ahead.pop(key, None)
            if found is None:
                ready[k] = step
                return
            done[k] += 1
            result = _resolve(found, step, metric, catalog, precision)
            if isinstance(found, tuple) and result is found[0]:  # the bound: its exact cost for the next step
                ahead[key] = (None, found[1])

    def pick(worker: int) -> int:
        """The chain whose step this worker runs: one whose candidate it keeps, else one no other worker keeps;
        then the chain that has run the most steps, then task order."""

        def rank(k: int) -> tuple[int, int, int]:
            kept = holder.get(ready[k].candidate.index)
            return (0 if kept == worker else 1 if kept is None else 2, -done[k], k)

        return min(ready, key=rank)

    def next_ahead() -> tuple[Candidate, bool, bool] | None:
        """The step to run ahead: of the running chains', the candidate least in its heap not yet computed."""
        best: tuple[tuple[float, int], Candidate, bool, bool] | None = None
        busy = {r[2] for r in running.values()} | set(waiting)
        for k, heap in enumerate(heaps):
            if results[k] is not None or k in ready:
                continue
            for bound, index, stage, c, _ in heapq.nsmallest(AHEAD_DEPTH, heap):
                key = (index, stage == 2)
                if stage == 3 or key in ahead or key in busy:
                    continue
                if best is None or (bound, index) < best[0]:
                    best = ((bound, index), c, stage == 2, stage == 0)
                break
        return best[1:] if best is not None else None

    for k in range(len(chains)):
        advance(k, None)
    with pool_of(min(workers, len(chains))) as pool:
        while ready or running:
            for worker in pool.idle():
                if ready:
                    k = pick(worker)
                    step = ready.pop(k)
                    kept = holder.pop(step.candidate.index, None)
                    if kept is not None and kept != worker:  # built again here: the other worker's copy is stale
                        forget.setdefault(kept, []).append(step.candidate.index)
                    mine = tuple(forget.pop(worker, ()))
                    pool.submit(worker, _remote_step, step, gpus, metric, precision, delivered, mine)
                    running[worker] = (k, step, None)
                    continue
                nxt = next_ahead()
                if nxt is None:
                    break
                c, build, bounded = nxt
                if holder.get(c.index) == worker:
                    del holder[c.index]
                else:
                    drop(c.index)
                pool.submit(worker, _remote_ahead, c, build, bounded, gpus, delivered, tuple(forget.pop(worker, ())))
                running[worker] = (-1, None, (c.index, build))
            if not running:
                break
            worker, (result, keeps) = pool.done()
            k, ran, key = running.pop(worker)
            if key is not None:  # computed ahead
                if keeps:
                    holder[key[0]] = worker
                asked = waiting.pop(key, None)
                if asked is None:
                    ahead[key] = result
                    continue
                k, asking = asked
                done[k] += 1
                answer = _resolve(result, asking, metric, catalog, precision)
                if isinstance(result, tuple) and answer is result[0]:
                    ahead[key] = (None, result[1])
                advance(k, answer)
                continue
            assert ran is not None
            done[k] += 1
            if keeps:
                holder[ran.candidate.index] = worker
            advance(k, result)
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


def _resolve(found: _Ahead, step: Step, metric: str, catalog: Catalog, precision: str) -> Any:
    """A step's result from what was computed ahead: the build; else the topology's bound where the step would have
    stopped there (as `_run_step` decides), else the exact cost."""
    if isinstance(found, Outcome):
        return found
    bound, exact = found
    if step.enough and bound is not None and _above(step.least, step.candidate, metric, catalog, precision, bound):
        return bound
    return exact


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
    """The outcomes that can be their node type's best (in candidate order) and the pruned candidates (by index).
    On a Dask cluster a node type is one task; on this machine the node types' steps share the workers
    (`_interleaved`)."""
    groups: dict[str, list[Candidate]] = {}
    for c in candidates:
        groups.setdefault(c.node, []).append(c)
    tasks = sorted(groups.values(), key=len, reverse=True)  # the longest first
    if scheduler is not None:
        results = _dask_map(
            best_of_node, tasks, scheduler, gpus=gpus, metric=metric, precision=precision, delivered=delivered
        )
    else:
        workers = workers or default_workers()
        if workers <= 1 or len(tasks) <= 1 or multiprocessing.current_process().daemon:
            results = [best_of_node(t, gpus, metric, precision, delivered) for t in tasks]
        else:
            results = _interleaved(tasks, gpus, metric, precision, delivered, workers)
    outcomes = sorted((o for built, _ in results for o in built), key=lambda o: o.candidate.index)
    pruned = sorted((p for _, dropped in results for p in dropped), key=lambda p: p[0])
    return outcomes, pruned


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
