"""A whole `fabric build` as users run it, timed from outside: wall time, CPU time and peak memory per run.

    .venv/bin/python benchmarks/build.py 100k                 # a size of benchmarks/run.py, 3 runs
    .venv/bin/python benchmarks/build.py roce-100k --rounds 1
    .venv/bin/python benchmarks/build.py vs-pyavd --workers 1  # the 4 x 256 EOS fabric of vs_pyavd.py
    .venv/bin/python benchmarks/build.py designs/lab.yaml
    .venv/bin/python benchmarks/build.py 100k --rebuild         # builds into the directory of the one before

Each run is a fresh `fabric build` process (interpreter start, imports, every stage, every output, the write)
into a new directory. With --rebuild, one build (untimed) writes a directory and each run builds into it again,
as users do: the build reads the previous allocations.lock.json and keeps its assignments. Peak memory is the
largest resident set of a timed build and its render workers, each counted on its own (forked workers share
the build's pages, so a sum would count them twice). Prints the median of the runs. Printed, never asserted.

The runs' trees are removed together after the last one: on this machine's filesystem a build started within
minutes of the removal of a tree as large as its own pays for that removal in every file it creates (disk.py).
Before each run the cost of creating a file there is printed (a rebuild removes its old tree itself, as users'
do).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from disk import create_us
from outputs import spec_path


def _run(command: list[str], log: Path) -> tuple[float, float, float]:
    """Wall and CPU seconds (user + system, its render workers included) and peak MiB of one build process.
    The disk is flushed first: the build's own sync (syncfs) would else also write out what the run before
    left in the page cache (its files, their deletion), a cost of that run, not of this one."""
    os.sync()
    start = time.perf_counter()
    with log.open("w") as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own figures: not the untimed first build's
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"fabric build failed:\n{log.read_text()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main(argv: list[str]) -> None:
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    extra = ["--workers", argv[argv.index("--workers") + 1]] if "--workers" in argv else []
    rebuild = "--rebuild" in argv
    target = argv[0] if argv and not argv[0].startswith("--") else "designs/lab.yaml"
    walls: list[float] = []
    cpus: list[float] = []
    peaks: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        spec = spec_path(target, Path(tmp))
        log = Path(tmp) / "build.log"

        def command(out: Path) -> list[str]:
            return [sys.executable, "-m", "fabric", "build", str(spec), "-o", str(out), "--quiet", *extra]

        if rebuild:
            _run(command(Path(tmp) / "out"), log)
            lock = Path(tmp) / "out" / "allocations.lock.json"
            print(f"rebuilds into one directory, each keeping its lock ({lock.stat().st_size / 1e6:,.1f} MB)")
        for n in range(rounds):
            out = Path(tmp) / ("out" if rebuild else f"out{n}")
            print(f"run {n + 1}: creating a file costs {create_us(Path(tmp)):,.0f} µs", flush=True)
            wall, cpu, peak = _run(command(out), log)
            walls.append(wall)
            cpus.append(cpu)
            peaks.append(peak)
            files = [p for p in out.rglob("*") if p.is_file()]
            size = sum(p.stat().st_size for p in files)
            print(
                f"run {n + 1}: {wall:.2f} s wall, {cpu:.2f} s CPU, {peak:,.0f} MiB, "
                f"{len(files):,} files, {size / 1e6:,.0f} MB"
            )
    print(
        f"{target}{' rebuild' if rebuild else ''}: median of {rounds}: {statistics.median(walls):.2f} s wall, "
        f"{statistics.median(cpus):.2f} s CPU (user + system, workers included); peak {max(peaks):,.0f} MiB; "
        f"{len(os.sched_getaffinity(0))} cores"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
