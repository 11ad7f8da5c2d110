"""The bare floor of a build: what any tool pays to hold a design's links and write them once.

    .venv/bin/python benchmarks/floor.py 100k           # a size of benchmarks/run.py
    .venv/bin/python benchmarks/floor.py 1m roce-100k
    .venv/bin/python benchmarks/floor.py --files output/bench-1m ...   # trees builds wrote

For a size of benchmarks/run.py, fabric's own topology gives the devices and links (untimed); the floor is then a
networkx graph of them (a node per device, an edge per link with its ports and speed) and a CSV of the same links
(both ends, ports, speed) written to a temporary file: no checks, no allocation, no configs. A build is compared
with this figure (issue 30: a whole build within 2x of it). Prints CPU (user + system) and wall seconds and the
memory the graph holds (the resident set after it was made, less the one before); printed, never asserted.

`--files DIR …` is the floor of the files instead: a tree as a build wrote it (DIR, read untimed: its directories,
its files and their sizes) is made again beside it, each directory made and each file created and written with
as many bytes (zeros) as fabric's writer does it (os.open, os.write), then the filesystem synced once (syncfs):
what any tool pays to put that many files and bytes on this disk, before it renders a byte of them. Prints the
wall time with the CPU of this process, user and system apart, and what creating one file cost just before
(disk.py: this machine's filesystem makes a file created where many were just removed dearer).
"""

from __future__ import annotations

import csv
import ctypes
import ctypes.util
import gc
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from disk import create_us
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


def files_floor(tree: Path, work: Path) -> dict[str, float]:
    """The floor of the files of `tree`, made again under `work` (left there: see main)."""
    dirs: list[str] = []
    files: list[tuple[str, int]] = []
    for here, subdirs, names in os.walk(tree):
        rel = os.path.relpath(here, tree)
        dirs += [os.path.normpath(os.path.join(rel, d)) for d in subdirs]
        files += [(os.path.normpath(os.path.join(rel, n)), os.stat(os.path.join(here, n)).st_size) for n in names]
    largest = max((size for _, size in files), default=0)
    zeros = memoryview(bytes(min(largest, 64 * 2**20)))
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    probe = create_us(work)
    out = work / "tree"
    out.mkdir()
    start, before = time.perf_counter(), os.times()
    for d in dirs:
        os.mkdir(out / d)
    for rel, size in files:
        fd = os.open(out / rel, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        left = size
        while left:
            left -= os.write(fd, zeros[: min(left, len(zeros))])
        os.close(fd)
    root = os.open(out, os.O_RDONLY)
    libc.syncfs(root)
    os.close(root)
    wall, after = time.perf_counter() - start, os.times()
    return {
        "files": len(files),
        "dirs": len(dirs),
        "bytes": sum(size for _, size in files),
        "wall_s": wall,
        "user_s": after.user - before.user,
        "system_s": after.system - before.system,
        "create_us": probe,
    }


def main(argv: list[str]) -> None:
    if argv[:1] == ["--files"]:
        works = []
        try:  # the copies are removed after the last is timed: a removal makes the next creates dearer (disk.py)
            for tree in argv[1:]:
                works.append(Path(tempfile.mkdtemp(prefix="files-floor-", dir=Path(tree).resolve().parent)))
                f = files_floor(Path(tree).resolve(), works[-1])
                print(
                    f"{tree}: {f['files']:,} files, {f['dirs']:,} directories, {f['bytes'] / 1e6:,.0f} MB; floor "
                    f"{f['wall_s']:.1f} s wall, {f['user_s']:.1f} s user, {f['system_s']:.1f} s system "
                    f"(creating a file cost {f['create_us']:,.0f} µs just before)",
                    flush=True,
                )
        finally:
            for work in works:
                shutil.rmtree(work)
        return
    for name in argv or ["100k"]:
        f = floor(name)
        print(
            f"{name}: {f['links']:,} links; floor {f['cpu_s']:.1f} s CPU, {f['wall_s']:.1f} s wall, "
            f"graph {f['graph_mib']:,.0f} MiB; {f['cpu_s'] * 1e6 / f['links']:.1f} µs a link",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
