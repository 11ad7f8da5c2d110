"""Scale benchmark: generate designs of 1k, 8k, 32k and 100k GPUs and time every stage.

    .venv/bin/python benchmarks/run.py                 # all sizes
    .venv/bin/python benchmarks/run.py 8k 32k          # some sizes
    .venv/bin/python benchmarks/run.py roce-100k       # RoCE Ethernet on SONiC
    .venv/bin/python benchmarks/run.py --core 100k     # the stages before rendering only
    .venv/bin/python benchmarks/run.py 1m roce-1m      # a million GPUs (named only; before rendering only)

`1k` … `100k` are InfiniBand (DGX H100, QM9700); `roce-1k` … `roce-100k` the same GPU counts on RoCEv2 Ethernet:
HGX 8-GPU servers, rail-optimized, SN5600 with 2 x 400G breakouts (128 ports; 3 tiers from 32k), SONiC configs
for every switch. Each row gives CPU seconds per stage (user + system, render workers included), peak memory (also
after each stage, on a line of its own) and
µs of CPU per link (the whole run over the links of the compute fabric, both planes); `core s` and `core CPU` are
the wall and CPU seconds of the stages before rendering, which run with the cyclic garbage collector paused as in
`build_fabric` (`gc` is its first collection after the pause); with `--core` the run stops there (µs per link then
over those stages). numpy and scipy, which the figures of a fabric above 320 switches load once, are imported
first and shown as `imports`, outside the per-link figure; so is `warm-up`, one build of a one-SU design of
the same technology before the timed one (a process's first build pays for the bundled catalog, first-use caches
and the interpreter's warm-up: a third of a 1k-GPU run, which `fabric build` of a small design pays). CPU seconds,
not wall, are the figures to compare on a machine others share. The stages run here one after the other:
`fabric build` computes the figures beside allocation and intent (benchmarks/build.py times that whole process).

`1m` and `roce-1m` (named, never in the default set; ~6 GiB each, run one at a time) are 125,000 8-GPU nodes
on 3 tiers and 2 planes, ~3,000,000 links: DGX H100 on QM9700 at NDR200 (128 x 200G; at NDR's 64 ports a million
endpoints would need 16 planes, twice a node's ports) and HGX on SN5600 at 2 x 400G; they run the stages before
rendering only (`fabric validate`'s work).

Each size runs in a child process so that its peak memory (ru_maxrss) is its own. The figures are
printed, never asserted: speed goals live here, not in the tests.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# GPUs → (DGX H100 nodes, planes). 100k GPUs need 3 tiers and 2 planes of QM9700 (k³/4 = 65,536
# endpoints per plane at 1:1).
SIZES = {"1k": (128, 1), "8k": (1024, 1), "32k": (4096, 1), "100k": (12500, 2)}
# 1M GPUs: 125,000 DGX H100 on 3 tiers of QM9700. At NDR (64 x 400G) 3 tiers join k³/4 = 65,536 endpoints a plane,
# 16 planes for a million ports, more than a node has ports; at NDR200 (the QM9700's 4-port split, 128 x 200G,
# k³/4 = 524,288) 2 planes do, scalable units of 64 nodes filling a rail leaf's 64 down ports: ~3,000,000 links.
MILLION = {"1m": 125_000}
# GPUs → HGX 8-GPU nodes on RoCE. SN5600 at 2 x 400G: 2 tiers reach k²/2 = 8,192 endpoints, 3 tiers k³/4 = 524,288.
ROCE = {"roce-1k": 128, "roce-8k": 1024, "roce-32k": 4096, "roce-100k": 12500}
# 1M GPUs on RoCE: 125,000 HGX nodes, SN5600 at 2 x 400G, 3 tiers, 2 planes (524,288 endpoints a plane)
ROCE_MILLION = {"roce-1m": 125_000}


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


def roce_spec_text(name: str, nodes: int) -> str:
    return f"""\
name: bench-{name}
racks: {{rows: [A, B, C, D, E, F, G, H], rack_units: 48, power_kw: 45}}
nodes:
  - {{group: gpu, type: hgx-8gpu, count: {nodes}, per_rack: 4, name: "gpu{{index:05d}}"}}
fabrics:
  compute:
    technology: ethernet
    platform: sonic
    topology: {{kind: spine-leaf, rail_optimized: true, scalable_unit: 64, tiers: auto}}
    switches: {{leaf: sn5600, spine: sn5600, core: sn5600}}
    speed_gbps: 400
    oversubscription: "1:1"
    qos: {{profile: roce-lossless}}
    mtu: 9216
    attach:
      - {{group: gpu, ports: compute}}
addressing: {{loopback: 10.0.0.0/18, p2p: 10.16.0.0/12, servers: 10.32.0.0/12, mgmt: 10.128.0.0/14}}
asn: {{scheme: rfc7938, spine: 4200000000, leaf_start: 4200100000}}  # 4-byte private: 1,568 leaves at 100k
"""


# a million GPUs' ~33,000 racks in 64 rows of ~500, as 100k's ~3,300 stand in 8 (in 8 rows, 4,000 racks long, the
# far racks' cables would need 2.4 km)
MILLION_ROWS = ", ".join(f"R{i:02d}" for i in range(1, 65))


def million_spec_text(name: str, nodes: int) -> str:
    return f"""\
name: bench-{name}
racks: {{rows: [{MILLION_ROWS}], rack_units: 48, power_kw: 45}}
nodes:
  - {{group: gpu, type: dgx-h100, count: {nodes}, per_rack: 4, name: "dgx{{index:06d}}"}}
fabrics:
  compute:
    technology: infiniband
    topology: {{kind: fat-tree, rail_optimized: true, scalable_unit: 64, tiers: 3, planes: 2}}
    switches: {{leaf: qm9700, spine: qm9700, core: qm9700}}
    speed_gbps: 200
    oversubscription: "1:1"
    cabling: {{media: [mmf, smf]}}
    attach:
      - {{group: gpu, ports: compute}}
addressing: {{mgmt: 10.128.0.0/13}}
"""


def roce_million_spec_text(name: str, nodes: int) -> str:
    return f"""\
name: bench-{name}
racks: {{rows: [{MILLION_ROWS}], rack_units: 48, power_kw: 45}}
nodes:
  - {{group: gpu, type: hgx-8gpu, count: {nodes}, per_rack: 4, name: "gpu{{index:06d}}"}}
fabrics:
  compute:
    technology: ethernet
    platform: sonic
    topology: {{kind: spine-leaf, rail_optimized: true, scalable_unit: 64, tiers: 3, planes: 2}}
    switches: {{leaf: sn5600, spine: sn5600, core: sn5600}}
    speed_gbps: 400
    oversubscription: "1:1"
    qos: {{profile: roce-lossless}}
    mtu: 9216
    attach:
      - {{group: gpu, ports: compute}}
addressing: {{loopback: 10.0.0.0/16, p2p: 10.64.0.0/10, servers: 10.128.0.0/10, mgmt: 172.16.0.0/12}}
asn: {{scheme: rfc7938, spine: 4200000000, leaf_start: 4200100000}}
"""


def warm_up_spec(name: str) -> str:
    """A one-SU design of the technology of size `name`, built once before it is timed."""
    return roce_spec_text("warm-up", 64) if name in ROCE or name in ROCE_MILLION else spec_text("warm-up", 32, 1)


def case_spec(name: str) -> tuple[int, str]:
    """GPUs and spec text of a size."""
    if name in ROCE:
        return ROCE[name] * 8, roce_spec_text(name, ROCE[name])
    if name in MILLION:
        return MILLION[name] * 8, million_spec_text(name, MILLION[name])
    if name in ROCE_MILLION:
        return ROCE_MILLION[name] * 8, roce_million_spec_text(name, ROCE_MILLION[name])
    nodes, planes = SIZES[name]
    return nodes * 8, spec_text(name, nodes, planes)


def run_one(name: str, core_only: bool = False) -> dict[str, object]:
    from fabric.allocation.allocate import allocate
    from fabric.allocation.checks import AllocationContext, run_allocation_checks
    from fabric.analysis.checks import Context, run_checks
    from fabric.analysis.figures import fabric_figures
    from fabric.cli.build import FREEZE_LINKS
    from fabric.fast.collector import gc_paused
    from fabric.intent.checks import run_intent_checks
    from fabric.intent.context import IntentContext
    from fabric.intent.ethernet import build_intents
    from fabric.intent.infiniband import build_infiniband
    from fabric.pipeline import Build
    from fabric.render import render_all
    from fabric.spec.loader import load_spec
    from fabric.topology.build import build_topology
    from fabric.write.atomic import write_outputs

    gpus, text = case_spec(name)
    times: dict[str, float] = {}
    peaks: dict[str, int] = {}  # peak memory after each stage (MiB): where the memory goes
    # a one-time cost, not a per-link one: the figures of a fabric above SMALL_SWITCHES switches load numpy and
    # scipy's graph code (~0.25 s); loaded first and shown on their own, so that µs/link compares the sizes
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the `fabric` command sets it (fabric/cli/app.py)
    before = _cpu()
    import numpy  # noqa: F401
    import scipy.sparse.csgraph  # noqa: F401

    times["imports"] = round(_cpu() - before, 2)

    def stages(path: Path, lap: Callable[[str], None]) -> tuple[Any, Any, Any]:
        with gc_paused():  # as build_fabric does
            design = load_spec(path)
            lap("load")
            topology = build_topology(design)
            lap("topology")
            figures = {k: fabric_figures(ft) for k, ft in topology.fabrics.items()}
            lap("figures")
            findings = run_checks(Context(design, topology, figures))
            lap("checks")
            plan = allocate(design, topology)
            findings += run_allocation_checks(AllocationContext(design, topology, figures, plan))
            lap("allocation")
            intents = build_intents(design, topology, plan)
            findings += intents.findings
            lap("ethernet")
            infiniband = build_infiniband(design, topology, plan)
            findings += infiniband.findings
            lap("infiniband")
            findings += run_intent_checks(
                IntentContext(design, topology, figures, plan, intents.devices, infiniband.subnets)
            )
            lap("intent-checks")
            findings += plan.findings
            build = Build(design, topology, figures, plan, tuple(findings), intents.devices, infiniband=infiniband)
        return design, figures, build

    with tempfile.TemporaryDirectory() as tmp:
        # another one-time cost: a process's first build pays for the bundled catalog, first-use caches and the
        # interpreter's warm-up (at 1k GPUs a third of the run). One build of a one-SU design of the same
        # technology runs first, shown as `warm-up`
        warm = Path(tmp) / "warm-up.yaml"
        warm.write_text(warm_up_spec(name))
        before = _cpu()
        stages(warm, lambda stage: None)
        gc.collect()
        times["warm-up"] = round(_cpu() - before, 2)
        path = Path(tmp) / f"{name}.yaml"
        path.write_text(text)
        start = time.perf_counter()
        last = start_cpu = _cpu()

        def lap(stage: str) -> None:
            nonlocal last
            now = _cpu()
            times[stage] = round(now - last, 2)
            peaks[stage] = _peak_mib()
            last = now

        design, figures, build = stages(path, lap)
        topology = build.topology
        core = time.perf_counter() - start
        times["gc"] = round(_cpu() - last, 2)  # the collector's first pass after the pause
        last = _cpu()
        core_cpu = last - start_cpu
        if core_only:
            return _row(name, gpus, figures, build, times, core, core, core_cpu, core_cpu) | {"peaks": peaks}
        if sum(len(ft.links) for ft in topology.fabrics.values()) > FREEZE_LINKS:  # as `fabric build` does
            gc.freeze()
        files = render_all(build)
        lap("render")
        write_outputs(files, Path(tmp) / "out", design.spec.name)
        lap("write")
        total = time.perf_counter() - start
        total_cpu = _cpu() - start_cpu
    return _row(name, gpus, figures, build, times, core, total, core_cpu, total_cpu) | {"peaks": peaks}


def _peak_mib() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (render workers): user + system."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def _row(
    name: str,
    gpus: int,
    figures: dict[str, Any],
    build: Any,
    times: dict[str, float],
    core: float,
    total: float,
    core_cpu: float,
    cpu: float,
) -> dict[str, object]:
    fig = figures["compute"]
    links = sum(fig.links.values())
    return {
        "size": name,
        "tech": "ethernet" if name in ROCE or name in ROCE_MILLION else "infiniband",
        "gpus": gpus,
        "tiers": fig.tiers,
        "switches": sum(fig.switches.values()),
        "links": links,
        "bisection_pct": round(fig.bisection_pct, 2),
        "worst_failure_pct": round(fig.worst_failure_pct or 0, 2),
        "min_ecmp": fig.min_ecmp_width,
        "reduced_graph": f"{fig.graph_vertices}->{fig.reduced_vertices}",
        "errors": sum(1 for f in build.findings if f.severity.name == "ERROR"),
        "seconds": times,
        "core_s": round(core, 2),
        "core_cpu_s": round(core_cpu, 2),
        "total_s": round(total, 2),
        "us_per_link": round(cpu * 1e6 / links, 1),  # CPU: steady on a shared machine
        "peak_mib": _peak_mib(),
    }


def main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] == "--child":
        print(json.dumps(run_one(argv[1], core_only="--core" in argv)))
        return
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return
    core_only = "--core" in argv
    sizes = [a for a in argv if a != "--core"] or [*SIZES, *ROCE]
    known = [*SIZES, *ROCE, *MILLION, *ROCE_MILLION]
    unknown = [s for s in sizes if s not in known]
    if unknown:
        raise SystemExit(f"unknown size {', '.join(unknown)}; sizes: {', '.join(known)}")
    print(
        f"{'size':>9} {'GPUs':>7} {'tiers':>5} {'switches':>8} {'links':>7} {'core s':>6} {'core CPU':>8} "
        f"{'total s':>8} {'peak MiB':>8} {'µs/link':>7}  stages (CPU s)"
    )
    for name in sizes:
        core = core_only or name in MILLION or name in ROCE_MILLION  # a million GPUs: before rendering only
        child = [sys.executable, __file__, "--child", name, *(["--core"] if core else [])]
        out = subprocess.run(child, capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        stages = " ".join(f"{k}={v}" for k, v in r["seconds"].items())
        print(
            f"{r['size']:>9} {r['gpus']:>7,} {r['tiers']:>5} {r['switches']:>8,} {r['links']:>7,} {r['core_s']:>6} "
            f"{r['core_cpu_s']:>8} {r['total_s']:>8} {r['peak_mib']:>8} {r['us_per_link']:>7}  {stages}  "
            f"| bisection {r['bisection_pct']}% "
            f"worst failure {r['worst_failure_pct']}% ECMP {r['min_ecmp']} graph {r['reduced_graph']} "
            f"errors {r['errors']}",
            flush=True,
        )
        print(f"{'':>9} peak MiB after each stage: " + " ".join(f"{k}={v}" for k, v in r["peaks"].items()), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
