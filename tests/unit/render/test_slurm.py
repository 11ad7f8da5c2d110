"""Slurm exports: the tree's content, topology/block and topology.yaml by Slurm's rules, and the real
slurmctld (22.05, topology/tree) started on the generated files."""

from __future__ import annotations

import os
import pwd
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import hostlist
import pytest
import yaml

from fabric import render_all
from fabric.analysis.locality import locality
from fabric.pipeline import Build, build_fabric
from fabric.spec.loader import load_spec_text
from tests.conftest import DESIGNS as DESIGN_DIR
from tests.conftest import built, require_tool

MULTI_PLANE = "roce-512-2planes"
NVL72 = "gb200-nvl72-1su"  # NVLink domains: the lowest level, one block each, block the topology.yaml default
DESIGNS = ["superpod-h100-4su", "superpod-h100-1su", "lab-ib-3tier", "roce-512", "lab", "lab-ib", MULTI_PLANE, NVL72]


@cache
def _multi_plane() -> Build:
    """roce-512 as 2 planes of 4 SUs of 16 nodes (no bundled design has planes)."""
    text = (DESIGN_DIR / "roce-512.yaml").read_text(encoding="utf-8")
    text = text.replace("scalable_unit: 64, tiers: 2}", "scalable_unit: 16, tiers: 2, planes: 2}")
    text = text.replace("servers: 10.2.0.0/20", "servers: 10.2.0.0/16").replace("p2p: 10.1.0.0/21", "p2p: 10.1.0.0/20")
    build = build_fabric(load_spec_text(text, "roce-512-2planes.yaml", DESIGN_DIR))
    assert build.topology.fabrics["compute"].planes == 2
    assert build.errors == []
    return build


def _build(design: str) -> Build:
    return _multi_plane() if design == MULTI_PLANE else built(design)


@cache
def _files(design: str) -> dict[str, str]:
    return {k: v.decode() for k, v in render_all(_build(design)).items() if k.startswith("slurm/")}


def _lines(text: str, key: str) -> list[dict[str, str]]:
    """`Key=value Key=value` lines that start with `key=`, as dicts."""
    out = []
    for line in text.splitlines():
        if line.startswith(f"{key}="):
            out.append(dict(part.split("=", 1) for part in line.split()))
    return out


@pytest.mark.parametrize("design", DESIGNS)
def test_every_design_gets_the_four_slurm_files(design: str) -> None:
    assert sorted(_files(design)) == [
        "slurm/nodes.conf",
        "slurm/topology-block.conf",
        "slurm/topology.conf",
        "slurm/topology.yaml",
    ]


@pytest.mark.parametrize("design", DESIGNS)
def test_tree_places_every_scheduler_node_under_exactly_one_lowest_switch(design: str) -> None:
    build = _build(design)
    loc = locality(build.design, build.topology)
    assert loc is not None
    switches = _lines(_files(design)["slurm/topology.conf"], "SwitchName")
    leaves = [s for s in switches if "Nodes" in s]
    seen = [n for s in leaves for n in hostlist.expand_hostlist(s["Nodes"])]
    assert sorted(seen) == sorted(loc.nodes)
    assert len(seen) == len(set(seen))
    names = [s["SwitchName"] for s in switches]
    assert len(names) == len(set(names))
    assert all(len(n) <= 64 for n in names)
    # every Switches= child is defined, and every switch but one top is somebody's child
    children = [c for s in switches if "Switches" in s for c in hostlist.expand_hostlist(s["Switches"])]
    assert set(children) <= set(names)
    assert len(set(names) - set(children)) == 1
    assert not any("Nodes" in s and "Switches" in s for s in switches)


def test_rail_optimized_su_is_one_logical_switch() -> None:
    switches = {s["SwitchName"]: s for s in _lines(_files("superpod-h100-4su")["slurm/topology.conf"], "SwitchName")}
    assert switches == {
        "su1": {"SwitchName": "su1", "Nodes": "dgx[001-031]", "LinkSpeed": "400"},  # slot 32: the UFM appliances
        "su2": {"SwitchName": "su2", "Nodes": "dgx[032-063]", "LinkSpeed": "400"},
        "su3": {"SwitchName": "su3", "Nodes": "dgx[064-095]", "LinkSpeed": "400"},
        "su4": {"SwitchName": "su4", "Nodes": "dgx[096-127]", "LinkSpeed": "400"},
        "spines": {"SwitchName": "spines", "Switches": "su[1-4]", "LinkSpeed": "400"},
    }
    assert "# su1 = su1-rail[0-7]-leaf" in _files("superpod-h100-4su")["slurm/topology.conf"]


def test_three_tiers_give_three_levels() -> None:
    build = built("lab-ib-3tier")
    loc = locality(build.design, build.topology)
    assert loc is not None
    assert [len(level) for level in loc.levels] == [6, 6, 1]
    assert [s.name for s in loc.levels[2]] == ["cores"]
    assert loc.levels[1][0].children == ("su1",)
    assert loc.chain("gpu009") == ("su2", "pod2", "cores")


def test_planes_are_one_tree() -> None:
    switches = _lines(_files(MULTI_PLANE)["slurm/topology.conf"], "SwitchName")
    assert [(s["SwitchName"], s.get("Nodes"), s.get("Switches")) for s in switches] == [
        ("su1", "gpu[001-016]", None),
        ("su2", "gpu[017-032]", None),
        ("su3", "gpu[033-048]", None),
        ("su4", "gpu[049-064]", None),
        ("spines", None, "su[1-4]"),
    ]
    text = _files(MULTI_PLANE)["slurm/topology.conf"]
    assert "# su1 = p1-su1-rail[0,2,4,6]-leaf,p2-su1-rail[1,3,5,7]-leaf" in text
    assert "The 2 planes are parallel copies" in text


def test_non_rail_fabric_lists_its_leaves() -> None:
    switches = _lines(_files("lab")["slurm/topology.conf"], "SwitchName")
    assert [(s["SwitchName"], s.get("Nodes"), s.get("Switches")) for s in switches] == [
        ("leaf1", "srv[1-2]", None),
        ("leaf2", "srv[3-4]", None),
        ("leaf3", "srv[5-6]", None),
        ("leaf4", "srv[7-8]", None),
        ("spines", None, "leaf[1-4]"),
    ]


# --------------------------------------------------------------------------------------------- block, yaml


def _check_block_sizes(sizes: list[int], block_nodes: list[int]) -> None:
    """Slurm's rules (block_record.c): the base is at most every block's node count; each later size is a
    multiple of the base by a power of two (exponent ≤ 15), ascending."""
    base = sizes[0]
    assert base > 0
    assert all(n >= base for n in block_nodes)
    for size in sizes[1:]:
        assert size % base == 0
        ratio = size // base
        assert ratio & (ratio - 1) == 0 and 1 < ratio <= 2**15
    assert sizes == sorted(set(sizes))


@pytest.mark.parametrize("design", DESIGNS)
def test_block_file_follows_slurms_rules(design: str) -> None:
    text = _files(design)["slurm/topology-block.conf"]
    blocks = _lines(text, "BlockName")
    sizes_lines = [line for line in text.splitlines() if line.startswith("BlockSizes=")]
    assert len(sizes_lines) == 1
    sizes = [int(n) for n in sizes_lines[0].split("=", 1)[1].split(",")]
    members = [hostlist.expand_hostlist(b["Nodes"]) for b in blocks]
    _check_block_sizes(sizes, [len(m) for m in members])
    flat = [n for m in members for n in m]
    assert len(flat) == len(set(flat))  # slurmctld accepts a node in two blocks silently
    build = _build(design)
    loc = locality(build.design, build.topology)
    assert loc is not None
    assert sorted(flat) == sorted(loc.nodes)
    assert len({b["BlockName"] for b in blocks}) == len(blocks)
    # physical order: the blocks in the order of the tree's lowest switches, depth-first
    assert [b["BlockName"] for b in blocks] == [s.name for s in loc.blocks()]
    assert sizes[-1] <= len(flat)


def test_block_sizes_of_the_4su_design() -> None:
    text = _files("superpod-h100-4su")["slurm/topology-block.conf"]
    assert "BlockSizes=31,62,124" in text.splitlines()
    assert [b["BlockName"] for b in _lines(text, "BlockName")] == ["su1", "su2", "su3", "su4"]


@pytest.mark.parametrize("design", DESIGNS)
def test_topology_yaml_has_the_same_tree_and_blocks(design: str) -> None:
    files = _files(design)
    data = yaml.safe_load(files["slurm/topology.yaml"])
    assert isinstance(data, list) and len(data) == 2
    for item in data:
        assert next(iter(item)) == "topology"  # must be the first key
        assert len({"tree", "block", "flat"} & set(item)) == 1
    assert [item["cluster_default"] for item in data] == ([False, True] if design == NVL72 else [True, False])
    tree = {s["switch"]: s for s in data[0]["tree"]["switches"]}
    conf = {s["SwitchName"]: s for s in _lines(files["slurm/topology.conf"], "SwitchName")}
    assert list(tree) == list(conf)
    for name, s in tree.items():
        assert set(s) <= {"switch", "nodes", "children"} and len(s) == 2  # no link_speed key in yaml
        assert s.get("nodes") == conf[name].get("Nodes")
        assert s.get("children") == conf[name].get("Switches")
    block = data[1]["block"]
    conf_blocks = _lines(files["slurm/topology-block.conf"], "BlockName")
    assert [(b["block"], b["nodes"]) for b in block["blocks"]] == [(b["BlockName"], b["Nodes"]) for b in conf_blocks]
    _check_block_sizes(block["block_sizes"], [len(hostlist.expand_hostlist(b["nodes"])) for b in block["blocks"]])


@pytest.mark.parametrize("design", DESIGNS)
def test_nodes_conf_names_are_the_topology_names(design: str) -> None:
    files = _files(design)
    nodes = [
        n for line in _lines(files["slurm/nodes.conf"], "NodeName") for n in hostlist.expand_hostlist(line["NodeName"])
    ]
    in_tree = [
        n
        for s in _lines(files["slurm/topology.conf"], "SwitchName")
        if "Nodes" in s
        for n in hostlist.expand_hostlist(s["Nodes"])
    ]
    assert sorted(nodes) == sorted(in_tree)
    assert len(nodes) == len(set(nodes))


def test_nodes_conf_has_gres_and_features() -> None:
    lines = _lines(_files("superpod-h100-4su")["slurm/nodes.conf"], "NodeName")
    assert lines[0] == {"NodeName": "dgx[001-004]", "Gres": "gpu:h100:8", "Feature": "su1,rackA01"}
    assert lines[-1] == {"NodeName": "dgx[125-127]", "Gres": "gpu:h100:8", "Feature": "su4,rackD02"}
    assert all(line["Gres"] == "gpu:h100:8" for line in lines)


# --------------------------------------------------------------------------------------------- real slurmctld

NOISE = re.compile(r"pmix|mpi/|MPI:|state file|Trying backup|Cray|gettimeofday|gres\.conf")
TOPOLOGY_PROBLEM = re.compile(r"switch|topolog|block|_find_node_record|hostlist|hostname|Pars", re.IGNORECASE)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _slurm_conf(d: Path, nodes_conf: str) -> str:
    nodes = [
        line + " State=CLOUD NodeAddr=127.0.0.1" for line in nodes_conf.splitlines() if line.startswith("NodeName=")
    ]
    return "\n".join(
        [
            "ClusterName=check",
            "SlurmctldHost=localhost",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "CommunicationParameters=NoCtldInAddrAny",
            "AuthType=auth/none",
            "CredType=cred/none",
            f"SlurmUser={pwd.getpwuid(os.geteuid()).pw_name}",
            f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={d}/state/spool",
            f"SlurmctldPidFile={d}/slurmctld.pid",
            "MailProg=/bin/true",
            "MpiDefault=none",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "TopologyPlugin=topology/tree",
            "GresTypes=gpu",
            "PrivateData=cloud",
            "NodeName=DEFAULT CPUs=64 RealMemory=512000",
            *nodes,
            "PartitionName=gpu Nodes=ALL Default=YES State=UP",
            "",
        ]
    )


class Controller:
    """One slurmctld in the foreground on loopback, with its own state directory and port."""

    def __init__(self, d: Path) -> None:
        self.dir = d
        self.env = {**os.environ, "SLURM_CONF": str(d / "slurm.conf")}
        self.log = d / "slurmctld.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> subprocess.Popen[bytes]:
        assert (self.dir / "topology.conf").is_file()  # a missing one blocks slurmctld for 60 s
        (self.dir / "state").mkdir()
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                ["slurmctld", "-D", "-vv", "-f", str(self.dir / "slurm.conf")],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return self.proc

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def scontrol(self, *args: str) -> str:
        result = subprocess.run(["scontrol", *args], env=self.env, capture_output=True, text=True, timeout=30)
        return result.stdout + result.stderr

    def expand(self, expression: str) -> set[str]:
        return set(self.scontrol("show", "hostnames", expression).split())


@pytest.fixture
def slurmctld(tmp_path: Path) -> Iterator[Controller]:
    """A fresh controller per test; stopped by PID when the test ends, also on failure."""
    require_tool("slurmctld", "apt-get install slurmctld slurm-client (see .ci/apt-packages.txt)")
    require_tool("scontrol", "apt-get install slurm-client")
    controller = Controller(tmp_path)
    try:
        yield controller
    finally:
        controller.stop()


def _wait_up(controller: Controller, proc: subprocess.Popen[bytes]) -> None:
    """Poll `scontrol ping` until the controller answers; fail with its fatal line if it exits."""
    for _ in range(400):
        if proc.poll() is not None:
            fatal = [line for line in controller.log.read_text().splitlines() if "fatal" in line]
            pytest.fail(f"slurmctld exited with {proc.returncode}: {fatal or controller.log.read_text()[-2000:]}")
        if "is UP" in controller.scontrol("ping"):
            return
        time.sleep(0.05)
    pytest.fail("slurmctld did not answer scontrol ping")


def _show_topology(text: str) -> dict[str, dict[str, str]]:
    return {s["SwitchName"]: s for s in _lines(text, "SwitchName")}


@pytest.mark.real
@pytest.mark.parametrize("design", ["superpod-h100-4su", "lab-ib-3tier", MULTI_PLANE, NVL72])
def test_slurmctld_accepts_the_tree_and_reports_the_planned_one(design: str, slurmctld: Controller) -> None:
    controller = slurmctld
    files = _files(design)
    d = controller.dir
    (d / "topology.conf").write_text(files["slurm/topology.conf"])
    (d / "slurm.conf").write_text(_slurm_conf(d, files["slurm/nodes.conf"]))
    proc = controller.start()
    _wait_up(controller, proc)

    shown = _show_topology(controller.scontrol("show", "topology"))
    build = _build(design)
    loc = locality(build.design, build.topology)
    assert loc is not None
    assert set(shown) == {s.name for s in loc.switches}
    for s in loc.switches:
        got = shown[s.name]
        assert int(got["Level"]) == s.level, s.name
        assert controller.expand(got["Nodes"]) == set(s.nodes), s.name  # parents' Nodes are computed by Slurm
        if s.children:
            assert controller.expand(got["Switches"]) == set(s.children), s.name
        else:
            assert "Switches" not in got
        assert got["LinkSpeed"] == str(s.speed_gbps)
    for node in loc.nodes[:: max(1, len(loc.nodes) // 16)]:
        chain = set(_show_topology(controller.scontrol("show", "topology", node)))
        assert chain == set(loc.chain(node)), node

    first = loc.nodes[0]
    shown_node = controller.scontrol("show", "node", first)
    gres = {MULTI_PLANE: "Gres=gpu:8", NVL72: "Gres=gpu:gb200:4"}.get(design, "Gres=gpu:h100:8")
    assert gres in shown_node
    assert f"AvailableFeatures={loc.levels[0][0].name},rack" in shown_node

    assert proc.poll() is None  # still up after the queries
    problems = [
        line
        for line in controller.log.read_text().splitlines()
        if re.search(r"error|warning", line, re.IGNORECASE) and TOPOLOGY_PROBLEM.search(line) and not NOISE.search(line)
    ]
    assert problems == []


# --------------------------------------------------------------------------------------------- spec settings


def _with(exports: str) -> Build:
    text = (DESIGN_DIR / "superpod-h100-4su.yaml").read_text(encoding="utf-8") + exports
    return build_fabric(load_spec_text(text, "superpod-h100-4su.yaml", DESIGN_DIR))


def test_unknown_scheduler_fabric_and_group_are_errors_at_their_lines() -> None:
    from fabric.model.findings import FabricError

    with pytest.raises(FabricError) as caught:
        _with("exports:\n  scheduler:\n    fabric: compte\n    groups: [gpu, gpus]\n")
    found = [(f.code, f.path, f.line) for f in caught.value.findings]
    lines = (DESIGN_DIR / "superpod-h100-4su.yaml").read_text(encoding="utf-8").count("\n")
    assert found == [
        ("unknown-fabric", "exports.scheduler.fabric", lines + 3),
        ("unknown-group", "exports.scheduler.groups[1]", lines + 4),
    ]
    assert "compute" in caught.value.findings[0].hint


def test_a_group_off_the_scheduler_fabric_is_a_warning_and_is_left_out_of_the_tree() -> None:
    build = _with("exports: {scheduler: {groups: [gpu, mgmt], link_speed: false}}\n")
    warnings = [f for f in build.findings if f.code == "scheduler-group-unattached"]
    assert [(f.path, f.severity.name) for f in warnings] == [("exports.scheduler.groups[1]", "WARNING")]
    loc = locality(build.design, build.topology)
    assert loc is not None
    assert loc.unplaced == ("head01", "head02", "head03", "head04")
    text = render_all(build)["slurm/topology.conf"].decode()
    assert "Not on this fabric, so in no switch: head[01-04]." in text
    assert "LinkSpeed" not in text


def test_scheduler_on_another_fabric() -> None:
    build = _with("exports: {scheduler: {fabric: storage, groups: [gpu, storage]}}\n")
    loc = locality(build.design, build.topology)
    assert loc is not None
    assert loc.fabric == "storage"
    assert loc.unplaced == ()
    assert len(loc.nodes) == 127 + 16
