"""Time a 200-candidate `fabric plan` sweep: on a local process pool and on a local Dask distributed cluster.

    .venv/bin/python benchmarks/plan.py            # 512 GPUs (every GPU node type and switch, 2 tiers, 1:1 and 2:1)
    .venv/bin/python benchmarks/plan.py 4096       # another GPU count (the candidate count changes little)

The sweep is every candidate the catalog makes for the GPU count with 2 tiers, rail-optimized or not, at 1:1 and
2:1: 200 at 512 GPUs. The Dask cluster has as many single-threaded worker processes as the pool, on this machine
(needs `pip install 'fabric-netcompiler[dask]'`). Prints seconds and candidates per second, and checks that both
sweeps give the same outcomes in the same order; figures are printed, never asserted.
"""

from __future__ import annotations

import sys
import time

from fabric.plan.candidates import Request, enumerate_candidates
from fabric.plan.rank import rank
from fabric.plan.sweep import default_workers, sweep
from fabric.spec.catalog import builtin_catalog


def main(argv: list[str]) -> None:
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
