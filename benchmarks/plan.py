"""Time `fabric plan`: the default sweep as the command runs it (each node type's best, pruned by the bounds), and
a 200-candidate sweep built whole on a local process pool and on a local Dask distributed cluster.

    .venv/bin/python benchmarks/plan.py            # 512 GPUs (every GPU node type and switch, 2 tiers, 1:1 and 2:1)
    .venv/bin/python benchmarks/plan.py 4096       # another GPU count (the candidate count changes little)
    .venv/bin/python benchmarks/plan.py 1024 100000 --pruned   # the default sweep only, at each count
    .venv/bin/python benchmarks/plan.py 100000 1000000 --closed-form   # every candidate from its closed form

The pruned sweep prints wall seconds and the CPU seconds of this process and its workers (on a loaded machine the
wall clock measures the neighbours; the CPU time, over the cores, is what an idle one would take), the candidates
built clean, those ruled out (most by their estimate, without a full build) and those pruned.

The sweep is every candidate the catalog makes for the GPU count with 2 tiers, rail-optimized or not, at 1:1 and
2:1: 200 at 512 GPUs. The Dask cluster has as many single-threaded worker processes as the pool, on this machine
(needs `pip install 'fabric-netcompiler[dask]'`). Prints seconds and candidates per second, and checks that both
sweeps give the same outcomes in the same order; figures are printed, never asserted.
"""

from __future__ import annotations

import resource
import sys
import time

from fabric.plan.candidates import Request, enumerate_candidates
from fabric.plan.metrics import DEFAULT_METRIC
from fabric.plan.rank import rank
from fabric.plan.sweep import closed_sweep, default_workers, pruned_sweep, sweep
from fabric.spec.catalog import builtin_catalog


def _cpu() -> float:
    self, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return self.ru_utime + self.ru_stime + children.ru_utime + children.ru_stime


def pruned(gpus: int) -> None:
    """The default `fabric plan --gpus N` sweep: every candidate enumerated, each node type's best built."""
    catalog = builtin_catalog()
    wall, cpu = time.perf_counter(), _cpu()
    candidates = enumerate_candidates(catalog, Request(gpus))
    built, dropped = pruned_sweep(candidates, gpus, DEFAULT_METRIC, "bf16", workers=default_workers())
    best = [r for r in rank(built, metric=DEFAULT_METRIC, catalog=catalog) if r.status == "ok"]
    took, used = time.perf_counter() - wall, _cpu() - cpu
    print(
        f"{gpus:,} GPUs: {len(candidates)} candidates, {sum(o.ok for o in built)} built clean, "
        f"{sum(not o.ok for o in built)} ruled out (by their estimate or build), {len(dropped)} pruned: "
        f"{took:.1f} s wall, {used:.1f} s CPU on {default_workers()} worker(s)"
    )
    seen: set[str] = set()
    for r in best:
        if r.outcome.candidate.node not in seen:
            seen.add(r.outcome.candidate.node)
            print(f"  {r.outcome.candidate.label}: ${r.metric or 0:,.0f} per delivered PFLOPS")


def closed(gpus: int) -> None:
    """Every candidate from its closed form, none built (`fabric plan --closed-form`, the default above 65,536 GPUs)."""
    catalog = builtin_catalog()
    wall, cpu = time.perf_counter(), _cpu()
    candidates = enumerate_candidates(catalog, Request(gpus))
    outcomes = closed_sweep(candidates, gpus, workers=default_workers())
    ranked = [r for r in rank(outcomes, metric=DEFAULT_METRIC, catalog=catalog) if r.status == "ok"]
    took, used = time.perf_counter() - wall, _cpu() - cpu
    print(
        f"{gpus:,} GPUs, closed form: {len(candidates)} candidates, {len(ranked)} rank, "
        f"{sum(not o.ok for o in outcomes)} ruled out: {took:.1f} s wall, {used:.1f} s CPU on {default_workers()} "
        "worker(s)"
    )
    seen: set[str] = set()
    for r in ranked:
        if r.outcome.candidate.node not in seen:
            seen.add(r.outcome.candidate.node)
            print(f"  {r.outcome.candidate.label}: at least ${r.metric or 0:,.0f} per delivered PFLOPS")


def main(argv: list[str]) -> None:
    if "--closed-form" in argv:
        for text in (a for a in argv if a != "--closed-form"):
            closed(int(text))
        return
    if "--pruned" in argv:
        for text in (a for a in argv if a != "--pruned"):
            pruned(int(text))
        return
    gpus = int(argv[0]) if argv else 512
    candidates = enumerate_candidates(builtin_catalog(), Request(gpus, tiers=(2,), oversubscription=(1.0, 2.0)))
    workers = default_workers()
    print(f"{len(candidates)} candidates for {gpus:,} GPUs, {workers} worker process(es)")

    start = time.perf_counter()
    local = sweep(candidates, gpus, workers=workers)
    took = time.perf_counter() - start
    ok = sum(1 for r in rank(local) if r.status == "ok")
    print(f"local process pool: {took:.1f} s ({len(candidates) / took:.1f} candidates/s), {ok} build clean")

    try:
        from distributed import LocalCluster
    except ImportError:
        print("Dask: not installed (pip install 'fabric-netcompiler[dask]')")
        return
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        start = time.perf_counter()
        remote = sweep(candidates, gpus, scheduler=cluster.scheduler_address)
        took = time.perf_counter() - start
    same = "same outcomes, same order" if remote == local else "OUTCOMES DIFFER"
    print(f"local Dask cluster: {took:.1f} s ({len(candidates) / took:.1f} candidates/s); {same}")


if __name__ == "__main__":
    main(sys.argv[1:])
