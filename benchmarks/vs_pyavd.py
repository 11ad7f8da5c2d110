"""fabric against Arista's pyavd on the same fabric: 4 spines x 256 leaves on Arista EOS, eBGP underlay.

    .venv/bin/python benchmarks/vs_pyavd.py              # 3 rounds, alternating the two
    .venv/bin/python benchmarks/vs_pyavd.py --rounds 1

fabric: a spec with a 288-port Arista-style modular spine (288 x 400G QSFP-DD, each also 100G: a part file, since
the catalog's 7808R4 has no 100G mode) and the catalog's 48 x 25G + 8 x 100G `arista-7050sx3-48yc8` leaf, platform
eos, 4 uplinks per leaf (one to each spine), 48 single-port 25G servers per leaf, QoS off. Timed twice, each in a
fresh process: a whole `fabric build` (every output it writes: configs, cabling, IP/ASN plans, docs, diagrams,
report, workbook, exports), and the configs only (load, build, `startup-config` and `structured-config.yaml` of
every switch, written).

pyavd 6.4.0, installed by this script into its own virtual environment (benchmarks/results/pyavd-6.4.0, not a
dependency of fabric): the equivalent eos_designs input (design l3ls-evpn with no overlay = an eBGP underlay;
`spine` and `l3leaf` node types, the same names, ASNs, loopback, point-to-point and management addresses and
uplink ports), run as AVD users run it: validate_inputs and get_avd_facts for all devices, then per device
get_device_structured_config and get_device_config, and both written (structured config YAML and EOS config).
pyavd gets the underlay only; fabric also configures the 48 server ports, server VLAN and gateway of every
leaf and plans the 12,288 server cables, so the ratio is conservative.

The figures are printed, never asserted (wall time of each child process, interpreter start included).
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from laps import Laps

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


def avd_inputs() -> dict[str, dict[str, Any]]:
    """eos_designs input per device, as an Ansible inventory would give it: shared group vars plus `type`."""
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
    return {name: {**group_vars, "type": kind} for name, kind in devices.items()}


def run_pyavd(out: Path) -> dict[str, Any]:
    import pyavd
    import yaml

    lap = Laps()
    times = lap.times

    inputs = avd_inputs()
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
    (out / "structured_configs").mkdir(parents=True)
    (out / "configs").mkdir()
    structured: dict[str, Any] = {}
    for name, data in validated.items():
        structured[name] = pyavd.get_device_structured_config(name, data, facts)
    lap("get_device_structured_config")
    for name, config in structured.items():
        text = yaml.dump(config._as_dict(), Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
        (out / "structured_configs" / f"{name}.yml").write_text(text)
        (out / "configs" / f"{name}.cfg").write_text(pyavd.get_device_config(config))
    lap("get_device_config")
    files = sum(1 for p in out.rglob("*") if p.is_file())
    return {"seconds": times, "files": files, "bytes": sum(p.stat().st_size for p in out.rglob("*") if p.is_file())}


# ---- fabric side (runs in fabric's venv) ----


def run_fabric_configs(spec: Path, out: Path) -> dict[str, Any]:
    """The configs only: spec to every switch's startup-config and structured-config.yaml, written."""
    lap = Laps()
    times = lap.times

    from fabric import build_fabric, write_outputs
    from fabric.model.rendered import Rendered
    from fabric.render.configs import configs, private_configs
    from fabric.render.platforms.eos_structured import structured_configs

    lap("import")
    build = build_fabric(spec)
    lap("build")
    texts = {**configs(build), **structured_configs(build)}
    lap("render")
    write_outputs(Rendered({k: v.encode() for k, v in texts.items()}, private=private_configs(build)), out, build.name)
    lap("write")
    return {"seconds": times, "files": len(texts), "bytes": sum(len(v.encode()) for v in texts.values())}


def _tree(out: Path) -> tuple[int, int]:
    files = [p for p in out.rglob("*") if p.is_file() and p.name != ".fabric-output"]
    return len(files), sum(p.stat().st_size for p in files)


def _child(python: str, *args: str) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    done = subprocess.run([python, __file__, *args], capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(args[:1])} failed:\n{done.stdout}{done.stderr}")
    return took, json.loads(done.stdout.strip().splitlines()[-1])


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


def main(argv: list[str]) -> None:
    if argv[:1] == ["--pyavd-child"]:
        print(json.dumps(run_pyavd(Path(argv[1]))))
        return
    if argv[:1] == ["--configs-child"]:
        print(json.dumps(run_fabric_configs(Path(argv[1]), Path(argv[2]))))
        return
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    avd_python = pyavd_python()
    times: dict[str, list[float]] = {"fabric build": [], "fabric configs only": [], "pyavd": []}
    produced: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "parts.yaml").write_text(PARTS)
        spec = root / "vs-pyavd.yaml"
        spec.write_text(SPEC)
        for n in range(1, rounds + 1):
            out = root / f"build{n}"
            start = time.perf_counter()
            build = [sys.executable, "-m", "fabric", "build", str(spec), "-o", str(out), "--quiet"]
            done = subprocess.run(build, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"fabric build failed:\n{done.stdout}{done.stderr}")
            times["fabric build"].append(time.perf_counter() - start)
            files, size = _tree(out)
            configs = sum(1 for _ in (out / "configs").rglob("*") if _.is_file())
            produced["fabric build"] = f"{files} files, {size / 1e6:.1f} MB ({configs} of them under configs/)"
            shutil.rmtree(out)

            took, r = _child(sys.executable, "--configs-child", str(spec), str(root / f"configs{n}"))
            times["fabric configs only"].append(took)
            produced["fabric configs only"] = f"{r['files']} files, {r['bytes'] / 1e6:.1f} MB; stages {r['seconds']}"
            shutil.rmtree(root / f"configs{n}")

            took, r = _child(avd_python, "--pyavd-child", str(root / f"avd{n}"))
            times["pyavd"].append(took)
            produced["pyavd"] = f"{r['files']} files, {r['bytes'] / 1e6:.1f} MB; stages {r['seconds']}"
            shutil.rmtree(root / f"avd{n}")
            print(f"round {n}: " + "  ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)
    print(f"\n{SPINES} spines x {LEAVES} leaves, Arista EOS, eBGP; median of {rounds} round(s), wall time per process")
    median = {k: statistics.median(v) for k, v in times.items()}
    for name, seconds in median.items():
        ratio = "" if name == "pyavd" else f"  pyavd / this = {median['pyavd'] / seconds:.1f}x"
        print(f"  {name:<20} {seconds:7.2f} s{ratio}")
    print("what each side produces:")
    for name, what in produced.items():
        print(f"  {name:<20} {what}")


if __name__ == "__main__":
    main(sys.argv[1:])
