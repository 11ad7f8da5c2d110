"""Time every output of a design on its own (render, then write), after the build: where render time goes.

    .venv/bin/python benchmarks/outputs.py designs/lab.yaml
    .venv/bin/python benchmarks/outputs.py 100k            # a size of benchmarks/run.py (InfiniBand or roce-…)
    .venv/bin/python benchmarks/outputs.py vs-pyavd        # the 4 x 256 EOS fabric of benchmarks/vs_pyavd.py

Prints wall and CPU seconds and megabytes per output, slowest first (one process, no pool), then the write of
all of them. Printed, never asserted.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import MILLION, ROCE, ROCE_MILLION, SIZES, case_spec


def spec_path(target: str, tmp: Path) -> Path:
    if target in SIZES or target in ROCE or target in MILLION or target in ROCE_MILLION:
        path = tmp / f"{target}.yaml"
        path.write_text(case_spec(target)[1])
        return path
    if target == "vs-pyavd":
        import vs_pyavd

        (tmp / "parts.yaml").write_text(vs_pyavd.PARTS)
        path = tmp / "vs-pyavd.yaml"
        path.write_text(vs_pyavd.SPEC)
        return path
    return Path(target)


def main(argv: list[str]) -> None:
    from fabric import build_fabric
    from fabric.model.rendered import Rendered
    from fabric.render.engine.registry import file_bytes
    from fabric.render.outputs import OUTPUTS
    from fabric.write.atomic import write_outputs

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        build = build_fabric(spec_path(argv[0] if argv else "designs/lab.yaml", Path(tmp)))
        print(f"{build.name}: build {time.perf_counter() - start:.2f} s")
        rows: list[tuple[float, float, str, int, int]] = []
        files: dict[str, bytes] = {}
        for output in OUTPUTS:
            start, cpu = time.perf_counter(), time.process_time()
            rendered = {k: file_bytes(v) for k, v in output.render(build).items()}
            took, cpu = time.perf_counter() - start, time.process_time() - cpu
            rows.append((took, cpu, output.name, len(rendered), sum(map(len, rendered.values()))))
            files.update(rendered)
        print(f"  {'output':<24} {'wall s':>7} {'CPU s':>7} {'files':>7} {'MB':>9}   (CPU: this process, not dot's)")
        for took, cpu, name, count, size in sorted(rows, reverse=True):
            print(f"  {name:<24} {took:7.2f} {cpu:7.2f} {count:>7,} {size / 1e6:9.2f}")
        print(f"  {'render, all':<24} {sum(r[0] for r in rows):7.2f} {sum(r[1] for r in rows):7.2f} {len(files):>7,}")
        start = time.perf_counter()
        write_outputs(Rendered(files, private=()), Path(tmp) / "out", build.name)
        print(f"  {'write, all':<24} {time.perf_counter() - start:7.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
