"""fabric against Arista's pyavd on the same fabric: 4 spines x 256 leaves on Arista EOS, eBGP underlay.

    .venv/bin/python benchmarks/vs_pyavd.py              # 3 rounds, alternating the two
    .venv/bin/python benchmarks/vs_pyavd.py --rounds 1

fabric: a spec with a 288-port Arista-style modular spine (288 x 400G QSFP-DD, each also 100G: a part file, since
the catalog's 7808R4 has no 100G mode) and the catalog's 48 x 25G + 8 x 100G `arista-7050sx3-48yc8` leaf, platform
eos, 4 uplinks per leaf (one to each spine), 48 single-port 25G servers per leaf, QoS off. Timed four ways, each in
a fresh process:
- `fabric build`: every output it writes (configs, cabling, IP/ASN plans, docs, diagrams, report, workbook, exports);
- configs+docs, the set the issue names and pyavd's side matches (SET): every switch's `startup-config` and
  `structured-config.yaml`; the cabling (`cabling.csv`, `cabling.md` and, above `documents.split_above` cables,
  `cabling/<rack>.md`); the IP and ASN plans (`ip-plan.csv`, `asn-plan.csv`); the docs: `inventory.csv` (switches
  with their management addresses), `report.md` (the design's summary, findings, fabrics, cost) — made as
  `fabric build` makes them (the analysis beside allocation and intent, the outputs rendered by its pool of
  workers, each writing into the staging tree, then the commit); and `configs+docs, 1 proc`, the same outputs
  rendered one after the other in one process, then written;
- configs only: load, build, `startup-config` and `structured-config.yaml` of every switch, written.

pyavd 6.4.0, installed by this script into its own virtual environment (benchmarks/results/pyavd-6.4.0, not a
dependency of fabric): the equivalent eos_designs input (design l3ls-evpn with no overlay = an eBGP underlay;
`spine` and `l3leaf` node types, the same names, ASNs, loopback, point-to-point and management addresses and
uplink ports), run through pyavd's API as the eos_designs and eos_cli_config_gen roles run for an AVD user with
their defaults: validate_inputs and get_avd_facts for all devices; per device get_device_structured_config
(written as YAML), validate_structured_config, get_device_config and get_device_doc (with its table of contents,
as the role's default); then get_fabric_documentation with the topology and point-to-point links CSVs (the
eos_designs defaults: fabric switches and management IPs, topology, IP allocation). fabric writes no per-device
Markdown document (its per-switch record is structured-config.yaml); pyavd writes no cabling plan with media and
lengths, no ASN plan and no report. pyavd runs twice, on two inputs:
- `pyavd, same servers`: the same work as fabric's side. The 12,288 servers are eos_designs connected endpoints,
  each leaf's 48 in its host vars (access ports in VLAN 1000, 25G, MTU 9214), and VLAN 1000 with each leaf's
  gateway SVI (fabric's addresses) is a network service in the default VRF. Its leaf configs then hold what
  fabric's do (48 access ports, 4 routed uplinks, loopback, management, the SVI, eBGP to the 4 spines; fabric's
  also carry IPv6 and prefix lists), and the two sides write about the same bytes (14 MB each).
- `pyavd, underlay`: the underlay only, while fabric still configures the servers: a conservative ratio.

The figures are printed, never asserted: wall and CPU time (user + system) of each child process, interpreter start
included, and the seconds of each stage inside it. Each child ends with os._exit once done, as `fabric build` does.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from laps import Laps

if TYPE_CHECKING:
    from fabric.render.engine.registry import Output

HERE = Path(__file__).resolve().parent
PYAVD = "6.4.0"
VENV = HERE / "results" / f"pyavd-{PYAVD}"
SPINES, LEAVES, SERVERS_PER_LEAF = 4, 256, 48
SPINE_ASN, LEAF_ASN = 65000, 65100
LOOPBACKS, P2P, MGMT = "10.0.0.0/23", "10.1.0.0/21", "192.168.0.0/22"

PARTS = """\
switches:
  arista-7808r3-288:
    description: Arista 7808R3-style modular spine, 8 line cards of 36 x 400GbE QSFP-DD = 288 ports, each 400G or 100G
    vendor: Arista
    technology: ethernet
    u: 16
    power_w: 16000
    list_price_usd: 700000
    unverified: [u, power_w, list_price_usd]
    platform: eos
    mgmt_port: Management1
    ports:
      - group: qsfp-dd
        cages: 288
        connector: qsfp-dd
        lanes: 8
        modes:
          - {ports: 1, speed_gbps: 400, name: "swp{cage}"}
          - {ports: 1, speed_gbps: 100, name: "swp{cage}"}
nodes:
  server-25g:
    description: a server with one 25G SFP28 data port
    u: 1
    power_w: 300
    ports:
      data: {technology: ethernet, speed_gbps: 25, connector: sfp28, count: 1, name: "eth{n}"}
"""

SPEC = f"""\
name: vs-pyavd
racks: {{rows: [A, B, C, D], rack_units: 48, power_kw: 30}}
catalog: [parts.yaml]
nodes:
  - {{group: srv, type: server-25g, count: {LEAVES * SERVERS_PER_LEAF}, per_rack: 40, name: "srv{{index:05d}}"}}
fabrics:
  compute:
    technology: ethernet
    platform: eos
    topology: {{kind: spine-leaf, tiers: 2, spines: {SPINES}, leaves: {LEAVES}, uplinks: {SPINES}}}
    switches: {{leaf: arista-7050sx3-48yc8, spine: arista-7808r3-288}}
    oversubscription: "3:1"
    qos: {{profile: none}}
    attach: [{{group: srv, ports: data}}]
addressing: {{loopback: {LOOPBACKS}, p2p: {P2P}, servers: 10.4.0.0/14, mgmt: {MGMT}}}
asn: {{scheme: rfc7938, spine: {SPINE_ASN}, leaf_start: {LEAF_ASN}}}
"""


# ---- pyavd side (runs in pyavd's own venv: imports nothing of fabric) ----


def avd_inputs(servers: bool = False) -> dict[str, dict[str, Any]]:
    """eos_designs input per device, as an Ansible inventory would give it: shared group vars plus `type`.

    `servers`: also the servers fabric's side configures, so that both sides do the same work: each leaf's 48
    server ports as connected endpoints (access ports in VLAN 1000, 25G, MTU 9214, named after the server's port)
    and, as a network service in the default VRF, VLAN 1000 `servers` with each leaf's gateway SVI at the address
    fabric plans (the leaf's /26 of the server pool, its first host). Each leaf gets its own 48 servers, as host
    vars would give them: given to every device as group vars, the 12,288 servers took pyavd 661 s here, 69 s of
    it validating the inputs, each device's copy of the whole list."""
    spines = [f"spine{j:02d}" for j in range(1, SPINES + 1)]

    def mgmt(host: int) -> str:
        return f"192.168.{host // 256}.{host % 256}/22"

    # addresses as fabric plans them: loopbacks spines first (AVD: pool + id + offset), management from .2 leaves
    # first, /31s per leaf and spine in order (AVD: by leaf id and uplink index)
    spine_nodes = [{"name": name, "id": j, "mgmt_ip": mgmt(LEAVES + j + 1)} for j, name in enumerate(spines, start=1)]
    leaf_nodes = []
    for i in range(1, LEAVES + 1):
        leaf_nodes.append(
            {
                "name": f"leaf{i:02d}",
                "id": i,
                "bgp_as": str(LEAF_ASN + i - 1),
                "mgmt_ip": mgmt(i + 1),
                "uplink_switch_interfaces": [f"Ethernet{i}/1"] * SPINES,
            }
        )
    group_vars: dict[str, Any] = {
        "fabric_name": "VS_PYAVD",
        "underlay_routing_protocol": "ebgp",
        "overlay_routing_protocol": "none",
        "mgmt_gateway": "192.168.0.1",
        "p2p_uplinks_mtu": 9214,
        "spine": {
            "defaults": {
                "platform": "7800R3",
                "loopback_ipv4_pool": LOOPBACKS,
                "bgp_as": str(SPINE_ASN),
                "evpn_role": "none",
            },
            "nodes": spine_nodes,
        },
        "l3leaf": {
            "defaults": {
                "platform": "7050SX3",
                "loopback_ipv4_pool": LOOPBACKS,
                "loopback_ipv4_offset": SPINES,
                "uplink_switches": spines,
                "uplink_interfaces": [f"Ethernet{49 + j}/1" for j in range(SPINES)],
                "uplink_ipv4_pool": P2P,
                "max_uplink_switches": SPINES,
                "max_parallel_uplinks": 1,
                "evpn_role": "none",
                "vtep": False,
            },
            "nodes": leaf_nodes,
        },
    }
    devices = {str(s["name"]): "spine" for s in spine_nodes} | {str(n["name"]): "l3leaf" for n in leaf_nodes}
    inputs = {name: {**group_vars, "type": kind} for name, kind in devices.items()}
    if servers:
        by_leaf, gateways = _avd_servers()
        inputs = {name: data | _avd_svis(gateways) for name, data in inputs.items()}
        for leaf, own in by_leaf.items():
            inputs[leaf]["servers"] = own
    return inputs


def _avd_servers() -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, str]]]:
    """The servers of fabric's spec as eos_designs connected endpoints, by leaf, with every leaf's gateway."""
    gateways = []
    by_leaf: dict[str, list[dict[str, Any]]] = {}
    for i in range(1, LEAVES + 1):
        leaf = f"leaf{i:02d}"
        first = (i - 1) * 64  # the leaf's /26 of 10.4.0.0/14, as fabric allocates it
        gateways.append({"node": leaf, "ip_address": f"10.4.{first // 256}.{first % 256 + 1}/26"})
        own = by_leaf.setdefault(leaf, [])
        for port in range(1, SERVERS_PER_LEAF + 1):
            n = (i - 1) * SERVERS_PER_LEAF + port
            adapter = {
                "endpoint_ports": ["eth1"],
                "switches": [leaf],
                "switch_ports": [f"Ethernet{port}"],
                "mode": "access",
                "vlans": "1000",
                "speed": "25g",
                "mtu": 9214,
            }
            own.append({"name": f"srv{n:05d}", "adapters": [adapter]})
    return by_leaf, gateways


def _avd_svis(gateways: list[dict[str, str]]) -> dict[str, Any]:
    """VLAN 1000 `servers` in the default VRF, a gateway SVI on each leaf (group vars: every device has them)."""
    svi = {"id": 1000, "name": "servers", "enabled": True, "mtu": 9214, "nodes": gateways}
    return {
        "network_services_keys": [{"name": "tenants"}],
        "tenants": [{"name": "FABRIC", "vrfs": [{"name": "default", "svis": [svi]}]}],
    }


def run_pyavd(out: Path, servers: bool = False) -> dict[str, Any]:
    """What an AVD user gets from the eos_designs and eos_cli_config_gen roles with their defaults, the same steps
    through pyavd's API: structured configs, each validated, EOS configs, device documentation (with its table of
    contents) and the fabric documentation with its topology and point-to-point links CSVs."""
    import pyavd
    import yaml

    lap = Laps()
    times = lap.times

    inputs = avd_inputs(servers)
    validated: dict[str, Any] = {}
    for name, data in inputs.items():
        result = pyavd.validate_inputs(data)
        if result.validated_data is None:
            problems = [f"{'.'.join(map(str, v.path))}: {v.message}" for v in result.validation_result.violations]
            raise SystemExit(f"pyavd: {name}: invalid input: {problems[:5]}")
        validated[name] = result.validated_data
    lap("validate_inputs")
    facts = pyavd.get_avd_facts(validated)
    lap("get_avd_facts")
    for folder in ("structured_configs", "configs", "documentation/devices", "documentation/fabric"):
        (out / folder).mkdir(parents=True)
    structured: dict[str, Any] = {}
    for name, data in validated.items():
        structured[name] = pyavd.get_device_structured_config(name, data, facts)
    lap("get_device_structured_config")
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    checked: dict[str, dict[str, Any]] = {}
    for name, config in structured.items():
        plain = config._as_dict()
        (out / "structured_configs" / f"{name}.yml").write_text(yaml.dump(plain, Dumper=dumper, sort_keys=False))
        result = pyavd.validate_structured_config(plain)
        if result.validated_data is None:
            raise SystemExit(f"pyavd: {name}: invalid structured config")
        checked[name] = result.validated_data
    lap("validate_structured_config")
    for name, config in checked.items():  # pyavd's notes: the validated dict renders faster than the EOSConfig
        (out / "configs" / f"{name}.cfg").write_text(pyavd.get_device_config(config))
    lap("get_device_config")
    for name, config in checked.items():
        (out / "documentation" / "devices" / f"{name}.md").write_text(pyavd.get_device_doc(config, add_md_toc=True))
    lap("get_device_doc")
    docs = pyavd.get_fabric_documentation(facts, checked, "VS_PYAVD", topology_csv=True, p2p_links_csv=True)
    fabric_docs = out / "documentation" / "fabric"
    (fabric_docs / "VS_PYAVD-documentation.md").write_text(docs.fabric_documentation)
    (fabric_docs / "VS_PYAVD-topology.csv").write_text(docs.topology_csv)
    (fabric_docs / "VS_PYAVD-p2p-links.csv").write_text(docs.p2p_links_csv)
    lap("get_fabric_documentation")
    files = [p for p in out.rglob("*") if p.is_file()]
    return {"seconds": times, "cpu": lap.cpu, "files": len(files), "bytes": sum(p.stat().st_size for p in files)}


# ---- fabric side (runs in fabric's venv) ----


def run_fabric_configs(spec: Path, out: Path) -> dict[str, Any]:
    """The configs only: spec to every switch's startup-config and structured-config.yaml, written."""
    lap = Laps()
    times = lap.times

    from fabric import build_fabric, write_outputs
    from fabric.model.rendered import Rendered
    from fabric.render.outputs.configs import configs, private_configs
    from fabric.render.platforms.eos_structured import structured_configs

    lap("import")
    build = build_fabric(spec)
    lap("build")
    texts = {**configs(build), **structured_configs(build)}
    lap("render")
    write_outputs(Rendered({k: v.encode() for k, v in texts.items()}, private=private_configs(build)), out, build.name)
    lap("write")
    size = sum(len(v.encode()) for v in texts.values())
    return {"seconds": times, "cpu": lap.cpu, "files": len(texts), "bytes": size}


# the fabric set the issue names: configs, cabling, IP/ASN plans, docs (the outputs matching pyavd's documents)
SET = ("configs", "eos-structured-config", "cabling", "cabling-doc", "ip-plan", "asn-plan", "inventory", "report-md")


def set_outputs() -> tuple[Output, ...]:
    """The outputs of SET as fabric declares them (their modules imported, not all of fabric.render's)."""
    from fabric.render.outputs import cabling_md, configs, tables
    from fabric.render.outputs import report as report

    declared = [o for module in (configs, tables, cabling_md, report) for o in module.OUTPUTS]  # (configs: EOS's too)
    chosen = tuple(o for o in declared if o.name in SET)
    assert len(chosen) == len(SET), "an output of SET was renamed"
    return chosen


def run_fabric_set(spec: Path, out: Path) -> dict[str, Any]:
    """The outputs of SET as `fabric build` renders them (each output's declared renderer, in one process; their
    modules imported, not all of fabric.render's), and written."""
    lap = Laps()
    times = lap.times

    from fabric import build_fabric, write_outputs
    from fabric.model.rendered import Rendered
    from fabric.render.engine.registry import file_bytes

    chosen = set_outputs()
    lap("import")
    build = build_fabric(spec)
    lap("build")
    files: dict[str, bytes] = {}
    for output in chosen:
        for path, content in output.render(build).items():
            files[path] = file_bytes(content)
        lap(output.name)
    private = {path for output in chosen for path in output.private(build)}
    write_outputs(Rendered(dict(sorted(files.items())), private=private), out, build.name)
    lap("write")
    return {"seconds": times, "cpu": lap.cpu, "files": len(files), "bytes": sum(map(len, files.values()))}


def run_fabric_set_pool(spec: Path, out: Path) -> dict[str, Any]:
    """The outputs of SET as `fabric build` makes them (fabric/cli/build.py): the build with the analysis beside
    allocation and intent, the outputs rendered by its pool of workers, each writing its files into the staging
    tree as it makes them, then the commit."""
    lap = Laps()
    times = lap.times

    from fabric import build_fabric
    from fabric.render.engine.pool import render_tasks, worker_count
    from fabric.write.atomic import Staging

    chosen = set_outputs()
    lap("import")
    build = build_fabric(spec, workers=None, jobs=True)
    lap("build")
    staging = Staging(out, build.name)
    files = 0
    with staging.syncing():
        for done in render_tasks(build, chosen, worker_count(build, None), None, staging.write):
            assert done.refused is None
            files += len(done.sunk)
    lap("render")
    staging.commit()
    lap("write")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and p.name != ".fabric-output")
    return {"seconds": times, "cpu": lap.cpu, "files": files, "bytes": size}


def _tree(out: Path) -> tuple[int, int]:
    files = [p for p in out.rglob("*") if p.is_file() and p.name != ".fabric-output"]
    return len(files), sum(p.stat().st_size for p in files)


def _timed(command: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Run a child process: its wall time (interpreter start included), its CPU time (user + system), its result.
    The disk is flushed first, untimed: fabric's sync (syncfs) would else also write out what the child before
    left in the page cache (pyavd's files, a removed output), a cost of that child, not of this one."""
    os.sync()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode:
        raise SystemExit(f"{' '.join(command[:4])} failed:\n{done.stdout}{done.stderr}")
    return wall, cpu, done


def _child(python: str, *args: str) -> tuple[float, float, dict[str, Any]]:
    wall, cpu, done = _timed([python, __file__, *args])
    return wall, cpu, json.loads(done.stdout.strip().splitlines()[-1])


def pyavd_python() -> str:
    """pyavd's own venv, made on first use."""
    python = VENV / "bin" / "python"
    check = [str(python), "-c", f"import pyavd; assert pyavd.__version__ == {PYAVD!r}"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return str(python)
    print(f"installing pyavd=={PYAVD} into {VENV} …", flush=True)
    shutil.rmtree(VENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"pyavd=={PYAVD}"], check=True)
    subprocess.run(check, check=True)
    return str(python)


def _stages(results: list[dict[str, Any]]) -> str:
    """Files and bytes, and each stage's median wall / CPU seconds over the rounds."""
    last = results[-1]
    stages = ", ".join(
        f"{stage} {statistics.median(r['seconds'][stage] for r in results):.2f}"
        f"/{statistics.median(r['cpu'][stage] for r in results):.2f}"
        for stage in last["seconds"]
    )
    return f"{last['files']} files, {last['bytes'] / 1e6:.1f} MB; stages (wall/CPU s) {stages}"


# pyavd's two inputs: the servers fabric's side configures (the same work on both sides), and the underlay alone
SAME, UNDERLAY = "pyavd, same servers", "pyavd, underlay"
PYAVDS = (SAME, UNDERLAY)

CHILDREN = ("--pyavd-child", "--pyavd-servers-child", "--set-child", "--set-pool-child", "--configs-child")


def _run_child(flag: str, args: list[str]) -> None:
    """One measured child. It ends with os._exit once its figures are out, as `fabric build` ends
    (fabric/fast/process.py): neither side pays for freeing its objects one by one at interpreter exit."""
    if flag == "--pyavd-child":
        result = run_pyavd(Path(args[0]))
    elif flag == "--pyavd-servers-child":
        result = run_pyavd(Path(args[0]), servers=True)
    elif flag == "--set-child":
        result = run_fabric_set(Path(args[0]), Path(args[1]))
    elif flag == "--set-pool-child":
        result = run_fabric_set_pool(Path(args[0]), Path(args[1]))
    else:
        result = run_fabric_configs(Path(args[0]), Path(args[1]))
    print(json.dumps(result), flush=True)
    os._exit(0)


def main(argv: list[str]) -> None:
    if argv[:1] and argv[0] in CHILDREN:
        _run_child(argv[0], argv[1:])
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    avd_python = pyavd_python()
    # fabric's bytecode, as an installed package has it (pip compiles pyavd's); without it (a source checkout
    # under PYTHONDONTWRITEBYTECODE) every child would compile fabric's modules again, 0.1 s
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "fabric")], check=True)
    names = ("fabric build", "fabric configs+docs", "configs+docs, 1 proc", "fabric configs only", *PYAVDS)
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    produced: dict[str, str] = {}
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "parts.yaml").write_text(PARTS)
        spec = root / "vs-pyavd.yaml"
        spec.write_text(SPEC)
        for n in range(1, rounds + 1):
            out = root / f"build{n}"
            took, used, _ = _timed([sys.executable, "-m", "fabric", "build", str(spec), "-o", str(out), "--quiet"])
            wall["fabric build"].append(took)
            cpu["fabric build"].append(used)
            files, size = _tree(out)
            configs = sum(1 for _ in (out / "configs").rglob("*") if _.is_file())
            produced["fabric build"] = f"{files} files, {size / 1e6:.1f} MB ({configs} of them under configs/)"
            shutil.rmtree(out)
            for name, python, flag in (
                ("fabric configs+docs", sys.executable, "--set-pool-child"),
                ("configs+docs, 1 proc", sys.executable, "--set-child"),
                ("fabric configs only", sys.executable, "--configs-child"),
                (UNDERLAY, avd_python, "--pyavd-child"),
                (SAME, avd_python, "--pyavd-servers-child"),
            ):
                out = root / f"{flag.strip('-')}{n}"
                took, used, result = _child(python, flag, *([] if name in PYAVDS else [str(spec)]), str(out))
                wall[name].append(took)
                cpu[name].append(used)
                results[name].append(result)
                produced[name] = _stages(results[name])
                shutil.rmtree(out)
            print(f"round {n}: " + "  ".join(f"{k} {v[-1]:.2f} s" for k, v in wall.items()), flush=True)
    print(f"\n{SPINES} spines x {LEAVES} leaves, Arista EOS, eBGP; median of {rounds} round(s) per process")
    print(f"  {'':<20} {'wall':>8} {'CPU':>8}   {SAME} / this, {UNDERLAY} / this (wall, CPU)")
    median = {k: statistics.median(v) for k, v in wall.items()}
    median_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    for name in names:
        ratios = (
            ""
            if name in PYAVDS
            else "".join(
                f"   {median[avd] / median[name]:5.1f}x {median_cpu[avd] / median_cpu[name]:5.1f}x"
                for avd in (SAME, UNDERLAY)
            )
        )
        print(f"  {name:<20} {median[name]:6.2f} s {median_cpu[name]:6.2f} s{ratios}")
    print("what each side produces:")
    for name in names:
        print(f"  {name:<20} {produced[name]}")


if __name__ == "__main__":
    main(sys.argv[1:])
