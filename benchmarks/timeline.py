"""Where the wall time of one `fabric validate` goes: a mark at each stage's start and end, in the process and in
the children it forks (the analysis beside, the allocation checks beside), printed as one timeline.

    .venv/bin/python benchmarks/timeline.py 1m                 # a size of benchmarks/run.py
    .venv/bin/python benchmarks/timeline.py designs/lab.yaml

The command runs as users run it (`fabric validate`, its imports, its exit), in this process; the pipeline's stage
functions are wrapped to print a mark (seconds since the process started, the process's CPU seconds and minor page
faults so far, its resident and peak memory) on stderr as they start and end, and the children print theirs (they
inherit the wrapping through the fork). The marks are gathered from stderr and printed after the run with the wall
time to the process's end. Printed, never asserted.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

STAGES = (
    "build_topology",
    "allocate",
    "build_intents",
    "build_infiniband",
    "build_ib_hosts",
    "run_allocation_checks",
    "run_intent_checks",
    "fabric_figures",
    "run_checks",
)


def _child(spec: str, started: float) -> None:
    """Run `fabric validate SPEC` here with the stages marked (`started`: the process's start, time.time())."""
    from fabric.fast.memo import resident_bytes  # (a few modules of the standard library: the marks stay true)

    def mark(what: str) -> None:
        use = resource.getrusage(resource.RUSAGE_SELF)
        line = (
            f"MARK {time.time() - started:.3f} {os.getpid()} {use.ru_utime + use.ru_stime:.2f} {use.ru_minflt} "
            f"{resident_bytes() // 2**20} {use.ru_maxrss // 1024} {what}"
        )
        os.write(2, f"{line}\n".encode())  # one write: the children's lines never run into the parent's

    mark("start")
    import fabric.cli

    mark("imported the command line")
    import fabric.pipeline as pipeline

    mark("imported the pipeline")

    def wrapped(name: str) -> None:
        real = getattr(pipeline, name)

        def stage(*args: object, **kwargs: object) -> object:
            mark(f"{name} start")
            try:
                return real(*args, **kwargs)
            finally:
                mark(f"{name} end")

        setattr(pipeline, name, stage)

    for name in STAGES:
        wrapped(name)
    import fabric.cli.validate as validate

    real_print = validate.print_findings

    def printing(*args: object, **kwargs: object) -> None:
        mark("findings printed")
        real_print(*args, **kwargs)  # type: ignore[arg-type]

    validate.print_findings = printing
    sys.argv = ["fabric", "validate", spec]
    fabric.cli.main()


def main(argv: list[str]) -> None:
    if argv[:1] == ["--child"]:
        _child(argv[1], float(argv[2]))
        return
    if not argv or "-h" in argv or "--help" in argv:
        print(__doc__)
        return
    import run

    with tempfile.TemporaryDirectory() as tmp:
        spec = argv[0]
        if spec in run.SIZES or spec in run.ROCE or spec in run.MILLION or spec in run.ROCE_MILLION:
            path = Path(tmp) / f"{spec}.yaml"
            path.write_text(run.case_spec(spec)[1])
            spec = str(path)
        started = time.time()
        done = subprocess.run(
            [sys.executable, __file__, "--child", spec, repr(started)], capture_output=True, text=True, check=False
        )
        ended = time.time() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    marks = [line.split(" ", 7)[1:] for line in done.stderr.splitlines() if line.startswith("MARK ")]
    parent = marks[0][1] if marks else ""
    print(f"{'s':>7} {'process':>8} {'CPU s':>6} {'faults':>8} {'RSS MiB':>8} {'peak':>6}  mark")
    for at, pid, cpu, faults, resident, peak, what in marks:
        who = "parent" if pid == parent else f"child {pid}"
        print(f"{float(at):7.2f} {who:>8} {float(cpu):6.2f} {int(faults):8,} {int(resident):8,} {int(peak):6,}  {what}")
    print(
        f"{ended:7.2f} {'':>8} {'':>6} {'':>8}  the process has ended (exit {done.returncode}); CPU of it and its "
        f"children {children.ru_utime + children.ru_stime:.1f} s, the largest peak {children.ru_maxrss / 1024:,.0f} MiB"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
