"""Scale benchmark: generate designs of 1k, 8k, 32k and 100k GPUs and time every stage.

    .venv/bin/python benchmarks/run.py            # all sizes
    .venv/bin/python benchmarks/run.py 8k 32k     # some sizes

Each size runs in a child process so that its peak memory (ru_maxrss) is its own. The figures are
printed, never asserted: speed goals live here, not in the tests.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# GPUs → (DGX H100 nodes, planes). 100k GPUs need 3 tiers and 2 planes of QM9700 (k³/4 = 65,536
# endpoints per plane at 1:1).
SIZES = {"1k": (128, 1), "8k": (1024, 1), "32k": (4096, 1), "100k": (12500, 2)}


def spec_text(name: str, nodes: int, planes: int) -> str:
    return f"""\
name: bench-{name}
racks: {{rows: [A, B, C, D, E, F, G, H], rack_units: 48, power_kw: 45}}
nodes:
  - {{group: gpu, type: dgx-h100, count: {nodes}, per_rack: 4, name: "dgx{{index:05d}}"}}
fabrics:
  compute:
    technology: infiniband
    topology: {{kind: fat-tree, rail_optimized: true, scalable_unit: 32, tiers: auto, planes: {planes}}}
    switches: {{leaf: qm9700, spine: qm9700, core: qm9700}}
    oversubscription: "1:1"
    cabling: {{media: [mmf, smf]}}
    attach:
      - {{group: gpu, ports: compute}}
addressing: {{mgmt: 10.128.0.0/14}}
"""


def run_one(name: str) -> dict[str, object]:
    from fabric.allocation.allocate import allocate
    from fabric.allocation.checks import PlanContext, run_plan_checks
    from fabric.analysis.checks import Context, run_checks
    from fabric.analysis.figures import fabric_figures
    from fabric.render import render_all
    from fabric.spec.loader import load_spec
    from fabric.topology.build import build_topology
    from fabric.write.atomic import write_outputs

    nodes, planes = SIZES[name]
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.yaml"
        path.write_text(spec_text(name, nodes, planes))
        start = last = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal last
            now = time.perf_counter()
            times[stage] = round(now - last, 2)
            last = now

        design = load_spec(path)
        lap("load")
        topology = build_topology(design)
        lap("topology")
        figures = {k: fabric_figures(ft) for k, ft in topology.fabrics.items()}
        lap("figures")
        findings = run_checks(Context(design, topology, figures))
        lap("checks")
        plan = allocate(design, topology)
        findings += run_plan_checks(PlanContext(design, topology, figures, plan))
        lap("allocation")
        from fabric.intent.infiniband import build_infiniband
        from fabric.pipeline import Build

        infiniband = build_infiniband(design, topology, plan)
        lap("infiniband")
        build = Build(design, topology, figures, plan, tuple(findings + list(plan.findings)), infiniband=infiniband)
        files = render_all(build)
        lap("render")
        write_outputs(files, Path(tmp) / "out", design.spec.name)
        lap("write")
        total = time.perf_counter() - start
    fig = figures["compute"]
    return {
        "size": name,
        "gpus": nodes * 8,
        "tiers": fig.tiers,
        "switches": sum(fig.switches.values()),
        "links": sum(fig.links.values()),
        "bisection_pct": round(fig.bisection_pct, 2),
        "worst_failure_pct": round(fig.worst_failure_pct or 0, 2),
        "min_ecmp": fig.min_ecmp_width,
        "reduced_graph": f"{fig.graph_vertices}->{fig.reduced_vertices}",
        "errors": sum(1 for f in build.findings if f.severity.name == "ERROR"),
        "seconds": times,
        "total_s": round(total, 2),
        "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main(argv: list[str]) -> None:
    if len(argv) == 2 and argv[0] == "--child":
        print(json.dumps(run_one(argv[1])))
        return
    sizes = argv or list(SIZES)
    print(
        f"{'size':>5} {'GPUs':>7} {'tiers':>5} {'switches':>8} {'links':>7} {'total s':>8} {'peak MiB':>8}  stages (s)"
    )
    for name in sizes:
        out = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        stages = " ".join(f"{k}={v}" for k, v in r["seconds"].items())
        print(
            f"{r['size']:>5} {r['gpus']:>7,} {r['tiers']:>5} {r['switches']:>8,} {r['links']:>7,} {r['total_s']:>8} "
            f"{r['peak_mib']:>8}  {stages}  | bisection {r['bisection_pct']}% worst failure {r['worst_failure_pct']}% "
            f"ECMP {r['min_ecmp']} graph {r['reduced_graph']} errors {r['errors']}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
