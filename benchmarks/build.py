"""A whole `fabric build` as users run it, timed from outside: wall time, CPU time and peak memory per run.

    .venv/bin/python benchmarks/build.py 100k                 # a size of benchmarks/run.py, 3 runs
    .venv/bin/python benchmarks/build.py roce-100k --rounds 1
    .venv/bin/python benchmarks/build.py vs-pyavd --workers 1  # the 4 x 256 EOS fabric of vs_pyavd.py
    .venv/bin/python benchmarks/build.py designs/lab.yaml

Each run is a fresh `fabric build` process (interpreter start, imports, every stage, every output, the write)
into a new directory. Peak memory is the largest resident set of the build and its render workers, each
counted on its own (forked workers share the build's pages, so a sum would count them twice). Prints the
median of the runs. Printed, never asserted.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from outputs import spec_path


def main(argv: list[str]) -> None:
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    extra = ["--workers", argv[argv.index("--workers") + 1]] if "--workers" in argv else []
    target = argv[0] if argv and not argv[0].startswith("--") else "designs/lab.yaml"
    walls: list[float] = []
    cpus: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        spec = spec_path(target, Path(tmp))
        for n in range(rounds):
            out = Path(tmp) / f"out{n}"
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            command = [sys.executable, "-m", "fabric", "build", str(spec), "-o", str(out), "--quiet", *extra]
            done = subprocess.run(command, capture_output=True, text=True)
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if done.returncode:
                raise SystemExit(f"fabric build failed:\n{done.stdout}{done.stderr}")
            files = [p for p in out.rglob("*") if p.is_file()]
            size = sum(p.stat().st_size for p in files)
            print(
                f"run {n + 1}: {walls[-1]:.2f} s wall, {cpus[-1]:.2f} s CPU, {len(files):,} files, {size / 1e6:,.0f} MB"
            )
            shutil.rmtree(out)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"{target}: median of {rounds}: {statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
        f"(user + system, workers included); peak {peak:,.0f} MiB; {len(os.sched_getaffinity(0))} cores"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
