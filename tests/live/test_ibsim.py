"""The generated subnet-manager files, proven with the real OpenSM on the simulated planned fabric (ibsim),
and `fabric verify` on simulated mis-cabled fabrics. Skips without the tools, fails under FABRIC_REQUIRE_REAL=1.

For each design: ibsim runs the generated topology.net; OpenSM runs with the generated opensm.conf, GUID files,
partitions.conf and node-name-map (only file paths are rewritten into the test's directory). Then:
- OpenSM reached SUBNET UP, ftree configured all switches, no `ERR` line, no minhop tables;
- ibnetdiscover through the simulator equals the plan cable for cable, every node matched by its planned GUID;
- the HCAs' P_Key tables hold the planned partitions with the planned membership;
- every host-to-host route read back from the switches' forwarding tables is delivered, loop-free and
  up-then-down, and on 1:1 designs every switch spreads its destinations over its uplinks evenly.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fabric import Build
from fabric.cli import app
from fabric.intent.infiniband.subnet import IbLink, IbNode, Subnet
from fabric.model.topology import LAYER_RANK
from fabric.render.outputs.infiniband import render_subnet
from fabric.render.outputs.infiniband.netfile import topology_net
from fabric.tools.ibnetdiscover import parse_ibnetdiscover
from fabric.tools.verify import verify_ib
from tests.conftest import DESIGNS, built
from tests.support.design_variants import variant
from tests.support.ibsim_lab import (
    Lfts,
    Simulation,
    log_problems,
    low_weights,
    parse_lfts,
    pkeys,
    simulation,
    sl2vl_table,
)

pytestmark = pytest.mark.real

PATH_KEYS = (
    "root_guid_file",
    "cn_guid_file",
    "io_guid_file",
    "partition_config_file",
    "node_name_map_name",
    "log_file",
    "dump_files_dir",
)
# OpenSM logs this at error level when `no_fallback` is in the engine list; it is not an error (the reference
# note, §9: "a cosmetic `Failed to setup routing engine 'no_fallback'`").
ALLOWED_LOG = {"Failed to setup routing engine 'no_fallback'": "no_fallback is a flag, not an engine"}
# design → (uplinks must balance: a 1:1 design, pkey sample size)
DESIGN_CASES = {"lab-ib": (False, 0), "superpod-h100-1su": (True, 24), "lab-ib-3tier": (True, 24)}
TIMINGS: dict[str, dict[str, float]] = {}


@cache
def _build(design: str, flavor: str = "upstream") -> Build:
    """The design with its SM hosts running `flavor`'s OpenSM. ibsim runs upstream OpenSM, so a design whose SM
    hosts are UFM appliances (superpod-h100-1su: `sm.flavor` defaults to ufm) is re-built with `flavor: upstream`:
    the same subnet with upstream's engines and paths."""
    build = built(design)
    subnet = build.infiniband.subnet("compute")
    if subnet is not None and subnet.flavor == flavor:
        return build

    def change(data: dict[str, Any]) -> None:
        data["fabrics"]["compute"]["infiniband"]["sm"]["flavor"] = flavor

    return variant(design, change)


def _subnet(design: str, flavor: str = "upstream") -> Subnet:
    subnet = _build(design, flavor).infiniband.subnet("compute")
    assert subnet is not None and subnet.flavor == flavor
    return subnet


def install(subnet: Subnet, where: Path) -> dict[str, Path]:
    """Write the generated files; opensm.conf files get their path keys pointed into `where` (nothing else)."""
    etc = where / "etc"
    etc.mkdir()
    out: dict[str, Path] = {}
    for rel, text in render_subnet(subnet).items():
        name = rel.rsplit("/", 1)[1]
        if name.startswith("opensm"):
            text = _rewrite(text, etc, where)
        (etc / name).write_text(text)
        out[name] = etc / name
    return out


def _rewrite(text: str, etc: Path, where: Path) -> str:
    lines = []
    for line in text.splitlines():
        key = line.split(" ", 1)[0]
        if key in PATH_KEYS and not line.startswith("#"):
            value = line.split(" ", 1)[1]
            target = {"log_file": where / "opensm.log", "dump_files_dir": where / "osm-dump"}.get(
                key, etc / Path(value).name
            )
            line = f"{key} {target}"
        lines.append(line)
    rewritten = "\n".join(lines) + "\n"
    changed = [a for a, b in zip(text.splitlines(), rewritten.splitlines(), strict=True) if a != b]
    assert all(c.split(" ", 1)[0] in PATH_KEYS for c in changed)
    return rewritten


def _sm_nodeid(subnet: Subnet, index: int = 0) -> str:
    port = subnet.sm[index].port
    assert port is not None
    return subnet.by_key[port.node].nodeid


def _other_host(subnet: Subnet) -> str:
    """A CA that is not an SM host, to attach the diagnostics as."""
    sm = {h.host for h in subnet.sm}
    return next(n.nodeid for n in subnet.cas if n.device not in sm)


# --------------------------------------------------------------------------------------------- routes


def walk_routes(subnet: Subnet, lfts: Lfts) -> tuple[list[str], int]:
    """Follow every CA-to-CA route through the LFTs over the planned cables. Returns problems and pairs walked."""
    by_key = subnet.by_key
    adjacent: dict[tuple[int, int], tuple[IbNode, int]] = {}
    ca_port_guid: dict[tuple[str, int], int] = {}
    sources: list[tuple[int, IbNode]] = []
    for link in subnet.links:
        a, b = by_key[link.a.node], by_key[link.b.node]
        adjacent[(a.guid, link.a.port)] = (b, link.b.port)
        adjacent[(b.guid, link.b.port)] = (a, link.a.port)
        if not a.switch:
            ca_port_guid[(a.key, link.a.port)] = link.a.guid
            sources.append((link.a.guid, b))
    assert set(lfts.ca_lids) == {guid for guid, _ in sources}, "the LFTs do not name every planned CA port"
    problems: list[str] = []
    pairs = 0
    limit = 2 * subnet.tiers + 1
    for src_guid, leaf in sources:
        for dst_guid, lid in lfts.ca_lids.items():
            if dst_guid == src_guid:
                continue
            pairs += 1
            here, hops, down = leaf, 0, False
            while True:
                out = lfts.tables.get(here.guid, {}).get(lid)
                step = adjacent.get((here.guid, out)) if out is not None else None
                if step is None:
                    problems.append(f"0x{src_guid:x} -> lid {lid}: no route at {here.key} (port {out})")
                    break
                peer, peer_port = step
                if not peer.switch:
                    if ca_port_guid[(peer.key, peer_port)] != dst_guid:
                        problems.append(f"0x{src_guid:x} -> lid {lid}: delivered to {peer.key}")
                    break
                up = LAYER_RANK[peer.layer] > LAYER_RANK[here.layer]
                if up and down:
                    problems.append(f"0x{src_guid:x} -> lid {lid}: turns up again at {here.key} (down-up)")
                    break
                down = down or not up
                here, hops = peer, hops + 1
                if hops > limit:
                    problems.append(f"0x{src_guid:x} -> lid {lid}: loops ({hops} hops)")
                    break
    return problems, pairs


def uplink_spread(subnet: Subnet, lfts: Lfts) -> dict[str, Counter[int]]:
    """Per non-root switch: how many CA destinations each uplink carries (every uplink listed, even unused)."""
    by_key = subnet.by_key
    ups: dict[str, dict[int, bool]] = {}
    for link in subnet.links:
        a, b = by_key[link.a.node], by_key[link.b.node]
        if a.switch and b.switch:
            ups.setdefault(a.key, {})[link.a.port] = True
    spread: dict[str, Counter[int]] = {}
    for key, ports in ups.items():
        table = lfts.tables[by_key[key].guid]
        counts: Counter[int] = Counter(dict.fromkeys(ports, 0))
        for lid in lfts.ca_lids.values():
            port = table.get(lid)
            if port in ports:
                counts[port] += 1
        spread[key] = counts
    return spread


def expected_pkeys(subnet: Subnet, port_guid: int, sm_guid: int) -> set[int]:
    out: set[int] = set()
    for part in subnet.partitions:
        if part.self_full:
            out.add(part.pkey | (0x8000 if port_guid == sm_guid else 0))
        elif part.keyword is not None:
            out.add(part.pkey | 0x8000)
        else:
            member = next((m for m in part.members if m.guid == port_guid), None)
            if member is not None:
                out.add(part.pkey | (0x8000 if member.membership == "full" else 0))
    return out


# --------------------------------------------------------------------------------------------- the proof


@pytest.mark.parametrize("design", list(DESIGN_CASES))
def test_opensm_routes_the_planned_fabric(design: str, tmp_path: Path) -> None:
    balanced, sample = DESIGN_CASES[design]
    subnet = _subnet(design)
    files = install(subnet, tmp_path)
    with simulation(tmp_path, files["topology.net"], design) as sim:
        sim.start_opensm(files["opensm.conf"], _sm_nodeid(subnet))
        log = (tmp_path / "opensm.log").read_text()
        assert "ftree tables configured on all switches" in log
        assert "minhop tables configured" not in log
        assert not re.search(r"ERR AB", log)
        assert log_problems(log, ALLOWED_LOG) == []

        host = _other_host(subnet)
        started = time.monotonic()
        text = sim.run(host, "ibnetdiscover")
        discovered = parse_ibnetdiscover(text, "ibnetdiscover")
        assert discovered.findings == ()
        report = verify_ib(_build(design), subnet, discovered, ignore_speed=True)
        sim.timings["discover_verify_s"] = time.monotonic() - started
        assert report.problems == (), report.text()
        assert report.notes == (), report.text()  # every node matched by its planned GUID, description as planned
        assert report.planned == report.as_planned == len(subnet.links)
        assert {n.description for n in discovered.nodes.values()} == {n.key for n in subnet.nodes}
        hdr = {(lk.a.guid, lk.a.port) for lk in subnet.links if lk.rate and lk.rate.lane == "HDR"}
        for link in discovered.links:  # ibsim simulates speeds up to HDR: those links come up as planned
            if (link.a_guid, link.a_port) in hdr or (link.b_guid, link.b_port) in hdr:
                assert link.rate == "4xHDR"

        sm_port = subnet.sm[0].port
        assert sm_port is not None
        ports = [(lk.a.guid, lk.a.node) for lk in subnet.links if not subnet.by_key[lk.a.node].switch]
        chosen = ports if not sample else ports[:: max(1, len(ports) // sample)]
        if all(g != sm_port.guid for g, _ in chosen):
            chosen.append((sm_port.guid, sm_port.node))
        for guid, node in chosen:
            table = pkeys(sim.run(host, "smpquery", "-G", "pkeys", f"0x{guid:x}"))
            assert table == expected_pkeys(subnet, guid, sm_port.guid), node

        if subnet.settings.qos is not None:  # the SL-to-VL map and VL arbitration of an HCA port as planned
            _, low, sl2vl = subnet.settings.qos.tables()
            guid = f"0x{chosen[0][0]:x}"
            assert sl2vl_table(sim.run(host, "smpquery", "-G", "sl2vl", guid)) == sl2vl
            arbitration = sim.run(host, "smpquery", "-G", "vlarb", guid)
            assert low_weights(arbitration) == low

        lfts = parse_lfts(sim.run(host, "dump_lfts"))
        problems, pairs = walk_routes(subnet, lfts)
        assert pairs == len(ports) * (len(ports) - 1)
        assert problems == [], problems[:5]
        if balanced:
            spread = uplink_spread(subnet, lfts)
            uneven = {k: dict(c) for k, c in spread.items() if max(c.values()) - min(c.values()) > 1}
            assert spread and not uneven, list(uneven.items())[:2]
    TIMINGS[design] = dict(sim.timings)
    print(f"{design}: " + ", ".join(f"{k} {v:.2f}" for k, v in sim.timings.items()))


def test_the_standby_sm_stays_standby(tmp_path: Path) -> None:
    """The master's and the standby's generated files, two OpenSMs: the planned master wins the election."""
    subnet = _subnet("lab-ib")
    files = install(subnet, tmp_path)
    standby_conf = files[subnet.sm[1].file]
    standby_text = standby_conf.read_text().replace(str(tmp_path / "opensm.log"), str(tmp_path / "standby.log"))
    standby_conf.write_text(standby_text)
    with simulation(tmp_path, files["topology.net"], "lab-ib-sm") as sim:
        sim.start_opensm(files["opensm.conf"], _sm_nodeid(subnet))
        standby = Simulation(tmp_path, files["topology.net"], sim.sockname, sim.preload)
        try:
            import subprocess

            proc = subprocess.Popen(
                ["timeout", "-s", "KILL", "120", "opensm", "-F", str(standby_conf)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=tmp_path,
                env=sim.env(_sm_nodeid(subnet, 1)),
                start_new_session=True,
            )
            standby.opensm = proc
            deadline = time.monotonic() + 30
            log = tmp_path / "standby.log"
            while time.monotonic() < deadline and "Entering STANDBY state" not in (
                log.read_text() if log.exists() else ""
            ):
                time.sleep(0.1)
            assert "Entering STANDBY state" in log.read_text()
            info = sim.run(_other_host(subnet), "sminfo")
            master = subnet.sm[0]
            assert master.port is not None and f"sm guid 0x{master.port.guid:x}" in info
            assert f"priority {master.priority}" in info and "SMINFO_MASTER" in info
        finally:
            standby.stop()


# --------------------------------------------------------------------------------------------- mis-cabled


def _move(link: IbLink, a: tuple[str, int] | None = None, b: tuple[str, int] | None = None) -> IbLink:
    ends = {}
    if a:
        ends["a"] = dataclasses.replace(link.a, node=a[0], port=a[1])
    if b:
        ends["b"] = dataclasses.replace(link.b, node=b[0], port=b[1])
    return dataclasses.replace(link, **ends)


def _free_port(subnet: Subnet, key: str) -> int:
    used = {e.port for lk in subnet.links for e in (lk.a, lk.b) if e.node == key}
    return next(p for p in range(1, subnet.by_key[key].nports + 1) if p not in used)


def _discover(subnet: Subnet, links: list[IbLink], where: Path, name: str) -> Path:
    net = where / "mis-cabled.net"
    net.write_text(topology_net(subnet, _header(subnet), links))
    with simulation(where, net, name) as sim:
        out = where / "ibnetdiscover.out"
        out.write_text(sim.run(_other_host(subnet), "ibnetdiscover"))
    return out


def _header(subnet: Subnet) -> dict[str, object]:
    from fabric.render.outputs.infiniband import _header as header

    return header(subnet)


def _verify(design: str, discovered: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app, ["verify", str(DESIGNS / f"{design}.yaml"), "--ibnetdiscover", str(discovered), "--ignore-speed", *args]
    )
    return result.exit_code, result.output


def test_verify_reports_a_mis_cabled_fabric(tmp_path: Path) -> None:
    """Two uplinks swapped at the spine, a missing cable, a leaf uplink moved into another leaf's free port
    and a link that trains at 1x: verify names exactly those cables."""
    subnet = _subnet("lab-ib")
    links = list(subnet.links)
    up = [i for i, lk in enumerate(links) if lk.cable.link.tier == "leaf-spine"]
    s1, s2, gone, moved, slow = up[0], up[1], up[4], up[6], 2
    assert links[s1].b.node == links[s2].b.node  # leaf1's two cables to spine1
    links[s1], links[s2] = (
        _move(links[s1], b=(links[s2].b.node, links[s2].b.port)),
        _move(links[s2], b=(links[s1].b.node, links[s1].b.port)),
    )
    other_leaf = links[up[-1]].a.node
    free = _free_port(subnet, other_leaf)
    assert links[moved].a.node != other_leaf
    links[moved] = _move(links[moved], b=(other_leaf, free))
    links[slow] = dataclasses.replace(links[slow], rate=dataclasses.replace(links[slow].rate, width=1))
    del links[gone]
    code, output = _verify("lab-ib", _discover(subnet, links, tmp_path, "lab-ib-mis"))
    assert code == 1, output
    cables = subnet.links
    heads = [line for line in output.splitlines() if line.split(" ", 1)[0] in ("MISSING", "WRONG", "UNEXPECTED")]
    assert len(heads) == 5, output
    assert f"MISSING     {cables[gone].cable_id}" in output
    for i in (s1, s2):
        assert f"WRONG PORT  {cables[i].cable_id}" in output
    assert f"WRONG PORT  {cables[moved].cable_id}" in output
    assert f"WRONG RATE  {cables[slow].cable_id}" in output and "width 1x, planned 4x" in output
    lines = output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"WRONG PORT  {cables[moved].cable_id}"))
    moved_line = lines[at + 1]
    spine, cable = cables[moved].b, cables[moved].cable
    assert f"move it to {cable.b_rack} U{cable.b_u:02d} {spine.device} {spine.port_name}" in moved_line
    assert f"{other_leaf} {subnet.numbering[other_leaf].name(free)} (IB port {free})" in moved_line
    assert "3 in a wrong port" in output and "1 missing" in output and "1 at a wrong width" in output


def test_verify_reports_a_leaf_to_leaf_cable(tmp_path: Path) -> None:
    """A cable between two leaves' free ports that the plan does not have: one unexpected cable, both ends named."""
    subnet = _subnet("lab-ib")
    leaf_a, leaf_b = subnet.switches[0], subnet.switches[1]
    free_a, free_b = _free_port(subnet, leaf_a.key), _free_port(subnet, leaf_b.key)
    extra = dataclasses.replace(
        subnet.links[0],
        a=dataclasses.replace(subnet.links[0].a, node=leaf_a.key, port=free_a),
        b=dataclasses.replace(subnet.links[0].b, node=leaf_b.key, port=free_b),
    )
    code, output = _verify("lab-ib", _discover(subnet, [*subnet.links, extra], tmp_path, "lab-ib-l2l"))
    assert code == 1, output
    problems = [line for line in output.splitlines() if line.startswith(("MISSING", "WRONG", "UNEXPECTED"))]
    assert len(problems) == 1 and problems[0].startswith("UNEXPECTED  -"), output
    assert "not in the plan: unplug it" in output
    name_a, name_b = subnet.numbering[leaf_a.key].name(free_a), subnet.numbering[leaf_b.key].name(free_b)
    assert f"{leaf_a.key} {name_a} (IB port {free_a})" in problems[0]
    assert f"{leaf_b.key} {name_b} (IB port {free_b})" in problems[0]


def test_verify_a_correct_simulated_fabric_as_json(tmp_path: Path) -> None:
    subnet = _subnet("lab-ib")
    import json

    code, output = _verify("lab-ib", _discover(subnet, list(subnet.links), tmp_path, "lab-ib-ok"), "--json")
    data = json.loads(output)
    assert code == 0 and data["ok"] is True and data["problems"] == []
    assert data["planned_cables"] == data["as_planned"] == len(subnet.links)


# --------------------------------------------------------------------------------------------- SM keys

MKEY_ENV, SMKEY_ENV = "FABRIC_TEST_M_KEY", "FABRIC_TEST_SM_KEY"


def _keyed(level: int) -> Subnet:
    """lab-ib with an M_Key and an SM_Key from environment secrets, at M_Key protection `level`."""

    def change(data: dict) -> None:  # type: ignore[type-arg]
        sm = data["fabrics"]["compute"]["infiniband"]["sm"]
        sm.update({"m_key": {"env": MKEY_ENV}, "sm_key": {"env": SMKEY_ENV}, "m_key_protection_level": level})

    build = variant("lab-ib", change)
    assert not [f for f in build.findings if f.severity == "error"], [f.format() for f in build.findings]
    subnet = build.infiniband.subnet("compute")
    assert subnet is not None
    return subnet


def _effective(conf: Path, where: Path) -> dict[str, str]:
    """The options OpenSM itself reads from `conf` (`opensm -F conf -c dump`: it parses, dumps and exits)."""
    import subprocess

    dump = where / "effective.conf"
    done = subprocess.run(
        ["opensm", "-F", str(conf), "-c", str(dump)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    pairs = (line.split(" ", 1) for line in dump.read_text().splitlines() if line and not line.startswith("#"))
    return {p[0]: p[1] for p in pairs if len(p) == 2}


def test_opensm_reads_the_keys_from_the_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenSM parses the generated opensm.conf's M_Key, protection level and SM_Key (its own dump of what it read)
    and routes the fabric with them; without keys in the spec it keeps its defaults (so the check can fail).
    ibsim does not model M_Key (nothing in it handles the field), so the keys' effect on the ports is not observed.
    """
    monkeypatch.setenv(MKEY_ENV, "0x8a3c51d2e4f60718")
    monkeypatch.setenv(SMKEY_ENV, "0x1f2e3d4c5b6a7988")
    subnet = _keyed(2)
    assert subnet.m_key == "0x8a3c51d2e4f60718" and subnet.sm_key == "0x1f2e3d4c5b6a7988"
    files = install(subnet, tmp_path)
    options = _effective(files["opensm.conf"], tmp_path)
    assert (options["m_key"], options["m_key_protection_level"], options["sm_key"]) == (
        "0x8a3c51d2e4f60718",
        "2",
        "0x1f2e3d4c5b6a7988",
    )
    with simulation(tmp_path, files["topology.net"], "lab-ib-keys") as sim:
        sim.start_opensm(files["opensm.conf"], _sm_nodeid(subnet))
        log = (tmp_path / "opensm.log").read_text()
        assert "ftree tables configured on all switches" in log
        assert log_problems(log, ALLOWED_LOG) == []
    # negative: the design without keys leaves OpenSM's defaults
    plain = tmp_path / "plain"
    plain.mkdir()
    options = _effective(install(_subnet("lab-ib"), plain)["opensm.conf"], plain)
    assert (options["m_key"], options["sm_key"]) == ("0x0000000000000000", "0x0000000000000001")


# --------------------------------------------------------------------------------------------- SM flavor


def test_upstream_opensm_cannot_route_with_the_ufm_engines(tmp_path: Path) -> None:
    """`sm.flavor: ufm` output is for NVIDIA's OpenSM (UFM): upstream OpenSM reads its `routing_engine ar_updn`
    (the option parses), fails to set the engine up ("cannot find or setup routing engine 'ar_updn'") and, with
    `no_fallback`, routes nothing: no SUBNET UP. The same fabric at `flavor: upstream` comes up with ftree
    (so the check can fail)."""
    subnet = _subnet("lab-ib", "ufm")
    assert subnet.engines == ("ar_updn", "no_fallback")
    ufm = tmp_path / "ufm"
    ufm.mkdir()
    files = install(subnet, ufm)
    assert _effective(files["opensm.conf"], ufm)["routing_engine"] == "ar_updn,no_fallback"
    with simulation(ufm, files["topology.net"], "lab-ib-ufm") as sim:
        sim.start_opensm(files["opensm.conf"], _sm_nodeid(subnet), until="No routing engine able")
        log = (ufm / "opensm.log").read_text()
    assert "cannot find or setup routing engine 'ar_updn'" in log
    assert "SUBNET UP" not in log and "tables configured" not in log
    # negative: upstream's engines on the same fabric route it
    plain = tmp_path / "upstream"
    plain.mkdir()
    upstream = _subnet("lab-ib", "upstream")
    files = install(upstream, plain)
    with simulation(plain, files["topology.net"], "lab-ib-upstream") as sim:
        sim.start_opensm(files["opensm.conf"], _sm_nodeid(upstream))
        log = (plain / "opensm.log").read_text()
    assert "ftree tables configured on all switches" in log and "cannot find or setup routing engine" not in log
