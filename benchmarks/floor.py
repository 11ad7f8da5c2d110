"""The bare floor of a build: what any tool pays to hold a design's links and write them once.

    .venv/bin/python benchmarks/floor.py 100k           # a size of benchmarks/run.py
    .venv/bin/python benchmarks/floor.py 1m roce-100k

For a size of benchmarks/run.py, fabric's own topology gives the devices and links (untimed); the floor is then a
networkx graph of them (a node per device, an edge per link with its ports and speed) and a CSV of the same links
(both ends, ports, speed) written to a temporary file: no checks, no allocation, no configs. A build is compared
with this figure (issue 30: a whole build within 2x of it). Prints CPU (user + system) and wall seconds and the
memory the graph holds (the resident set after it was made, less the one before); printed, never asserted.
"""

from __future__ import annotations

import csv
import gc
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import case_spec


def _rss_mib() -> float:
    """The resident set now (not the peak), MiB."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def floor(name: str) -> dict[str, float]:
    import networkx as nx

    from fabric import load_spec_text
    from fabric.topology.build import build_topology

    _, text = case_spec(name)
    topology = build_topology(load_spec_text(text))
    devices = list(topology.devices)
    links = [(lk.a, lk.a_port, lk.b, lk.b_port, lk.speed_gbps) for ft in topology.fabrics.values() for lk in ft.links]
    del topology
    gc.collect()
    before = _rss_mib()
    cpu, wall = time.process_time(), time.perf_counter()
    graph = nx.MultiGraph()
    graph.add_nodes_from(devices)
    for a, a_port, b, b_port, speed in links:
        graph.add_edge(a, b, a_port=a_port, b_port=b_port, speed_gbps=speed)
    held = _rss_mib() - before
    with tempfile.TemporaryDirectory() as tmp, (Path(tmp) / "links.csv").open("w", newline="") as out:
        rows = csv.writer(out)
        rows.writerow(["a_device", "a_port", "b_device", "b_port", "speed_gbps"])
        rows.writerows(links)
    return {
        "links": len(links),
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
        "graph_mib": held,
    }


def main(argv: list[str]) -> None:
    for name in argv or ["100k"]:
        f = floor(name)
        print(
            f"{name}: {f['links']:,} links; floor {f['cpu_s']:.1f} s CPU, {f['wall_s']:.1f} s wall, "
            f"graph {f['graph_mib']:,.0f} MiB; {f['cpu_s'] * 1e6 / f['links']:.1f} µs a link",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
