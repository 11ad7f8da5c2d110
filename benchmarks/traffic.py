"""Traffic model benchmark (fabric/analysis/traffic): the job table's traffic figures of a generated design, timed
per job size, with the figures. No timed tests: the numbers go to the issue notes and docs/dev/performance.md.

    PYTHONPATH=. .venv/bin/python benchmarks/traffic.py roce-100k   # or 100k, roce-8k, … (benchmarks/run.py's sizes)
"""

from __future__ import annotations

import sys
import time

from benchmarks.run import case_spec
from fabric import build_fabric, load_spec_text
from fabric.analysis.jobs import placement
from fabric.analysis.locality import locality
from fabric.analysis.traffic.jobs import QPS, SAMPLES, SEEDS, TABLE_PORTS, standard
from fabric.analysis.traffic.model import traffic
from fabric.analysis.traffic.net import fabric_net


def main(name: str) -> None:
    gpus, text = case_spec(name)
    t0 = time.perf_counter()
    build = build_fabric(load_spec_text(text))
    table = build.jobs
    assert table is not None
    print(f"{name}: {gpus:,} GPUs, built with its job table in {time.perf_counter() - t0:.1f} s", flush=True)
    loc = locality(build.design, build.topology)
    assert loc is not None
    nodes = placement(loc)
    t1 = time.perf_counter()
    net, ports = fabric_net(build.topology.fabrics[loc.fabric], nodes)
    print(
        f"net: {len(net.names):,} switches, {net.edges:,} directed links, {net.ports:,} ports "
        f"in {time.perf_counter() - t1:.2f} s",
        flush=True,
    )
    total = time.perf_counter()
    for row in table.rows:
        k = row.nodes
        if k < 2:
            continue
        job = [ports[n] for n in nodes[:k]]
        if sum(len(p) for p in job) > TABLE_PORTS and "--all" not in sys.argv:
            print(f"  {k:>6} nodes: above the table's {TABLE_PORTS:,} ports (--all to time it anyway)", flush=True)
            continue
        runs = max(1, min(SEEDS, -(-SAMPLES // sum(len(p) for p in job))))
        for pattern, distance, pxn in standard(k):
            for routing, qps in [*(("ecmp", q) for q in QPS), ("adaptive", 1)]:
                t = time.perf_counter()
                f = traffic(net, job, pattern, routing, qps=qps, seeds=runs, distance=distance, pxn=pxn)
                print(
                    f"  {k:>6} nodes {pattern:10} {routing:8} q={f.qps} seeds={f.seeds}: mean {f.mean_pct:6.2f} "
                    f"p50 {f.p50_pct:6.2f} p5 {f.p5_pct:6.2f}  {time.perf_counter() - t:6.2f} s",
                    flush=True,
                )
    print(f"traffic figures: {time.perf_counter() - total:.1f} s")


if __name__ == "__main__":
    names = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(names[0] if names else "roce-100k")
