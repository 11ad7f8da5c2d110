"""Generated configs in real software: the lab fabric booted in network namespaces with FRR (numbered and
unnumbered), every generated frr.conf loaded into a live bgpd, and the Linux QoS commands parsed by iproute2.

Needs root and Debian's frr (and iputils-ping); skips without them, or fails under FABRIC_REQUIRE_REAL=1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from ipaddress import ip_interface
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric import render_all
from fabric.cli import app
from fabric.render.platforms.frr import qos_commands
from fabric.tools.lab import Lab, LabError, established, plan_lab, preflight
from tests.conftest import DESIGNS, built, require_root, require_tool
from tests.support.design_variants import ETHERNET_DESIGNS, on_platform
from tests.support.frr_lab import load_into_live_bgpd

PREFIX = f"t{os.getpid() % 100000}-"


@pytest.fixture(scope="module", autouse=True)
def frr() -> None:
    require_root("network namespaces")
    require_tool("vtysh", "apt-get install frr frr-pythontools")
    require_tool("ping", "apt-get install iputils-ping")


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _ip(ns: str, *args: str) -> object:
    return json.loads(subprocess.run(["ip", "-n", ns, "-j", *args], capture_output=True, text=True, check=True).stdout)


@pytest.fixture
def lab_dir() -> Iterator[Path]:
    """A state directory the FRR daemons (user frr) can reach: pytest's own tmp_path is root-only."""
    path = Path(tempfile.mkdtemp(prefix="fabric-lab-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(
    params=[("frr", False), ("frr", True), ("sonic", False)],
    ids=["frr-numbered", "frr-unnumbered", "sonic-numbered-md5"],
)
def booted(
    request: pytest.FixtureRequest, lab_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Lab, float]]:
    platform, unnumbered = request.param
    password = None
    if platform == "sonic":  # also prove a BGP password (TCP MD5) from a secret reference
        monkeypatch.setenv("FABRIC_LAB_BGP_PASSWORD", "lab-md5-secret")
        password = "FABRIC_LAB_BGP_PASSWORD"
    build = on_platform("lab", platform, unnumbered=unnumbered, bgp_password_env=password)
    if password:
        assert all(b"password lab-md5-secret" in c for c in plan_lab(build).configs.values())
    plan = plan_lab(build, prefix=PREFIX)
    lab = Lab(plan, lab_dir / "lab")
    try:
        lab.up()
        converged = lab.wait_converged(timeout=90)
        yield lab, converged
    finally:
        lab.down()
        assert not {ns for ns in _namespaces() if ns.startswith(PREFIX)}, "the lab left namespaces behind"


def test_generated_configs_bring_the_fabric_up(booted: tuple[Lab, float], record_property) -> None:  # type: ignore[no-untyped-def]
    lab, converged = booted
    plan = lab.plan
    record_property("convergence_s", round(converged, 2))
    print(f"\nconverged {converged:.2f} s after loading the generated configs")
    spines = len(plan.spines)
    unnumbered = b"remote-as external" in plan.configs["leaf1"]
    # every BGP session Established, on every switch, in each address family it carries: an unnumbered session
    # carries both; a numbered link has an IPv4 session and an IPv6 one (its /127 addresses), one family each
    for device in plan.switches:
        summary = lab.bgp(device, "show bgp summary json")
        assert isinstance(summary, dict)
        v4, v6 = summary["ipv4Unicast"]["peers"], summary["ipv6Unicast"]["peers"]
        assert {p["state"] for p in (*v4.values(), *v6.values())} == {"Established"}, device
        assert len(established(summary)) == plan.expected_peers[device] > 0, device
        if unnumbered:
            assert set(v4) == set(v6), device
        else:
            assert all(":" not in peer for peer in v4) and all(":" in peer for peer in v6), device
            assert len(v4) == len(v6) == plan.expected_peers[device] // 2, device
    # every leaf learns every other leaf's loopback and server subnet over all spines: RIB and kernel FIB
    for leaf in plan.leaves:
        rib = lab.zebra(leaf, "show ip route bgp json")
        assert isinstance(rib, dict)
        fib = {r["dst"]: r for r in _ip(plan.switches[leaf], "-4", "route", "show", "proto", "bgp")}  # type: ignore[union-attr]
        for other in plan.leaves:
            if other == leaf:
                continue
            for prefix in plan.leaf_prefixes[other]:
                [route] = [r for r in rib[prefix] if r.get("selected")]
                assert route["installed"] and route["protocol"] == "bgp"
                assert len([h for h in route["nexthops"] if h.get("fib") and h.get("active")]) == spines
                dst = prefix.removesuffix("/32")
                assert len(fib[dst]["nexthops"]) == spines, (leaf, prefix, fib[dst])
    # servers on different leaves reach each other through the fabric
    hosts = plan.host_addresses
    first, last = plan.hosts["srv1"], plan.hosts["srv8"]
    target = next(str(ip_interface(a).ip) for _, a in hosts[last] if ":" not in a)
    ping = subprocess.run(
        ["ip", "netns", "exec", first, "ping", "-c", "2", "-W", "2", target], capture_output=True, text=True
    )
    assert ping.returncode == 0, ping.stdout + ping.stderr
    # IPv6 is routed too, numbered or unnumbered (the numbered IPv6 sessions carry it)
    target6 = next(str(ip_interface(a).ip) for _, a in hosts[last] if ":" in a)
    ping6 = subprocess.run(
        ["ip", "netns", "exec", first, "ping", "-6", "-c", "2", "-W", "2", target6], capture_output=True, text=True
    )
    assert ping6.returncode == 0, ping6.stdout + ping6.stderr
    # and every leaf learns every other leaf's IPv6 loopback and server /64 over all spines
    for leaf in plan.leaves:
        rib6 = lab.zebra(leaf, "show ipv6 route bgp json")
        assert isinstance(rib6, dict)
        for other in plan.leaves:
            if other == leaf:
                continue
            for prefix in plan.leaf_prefixes_v6[other]:
                [route] = [r for r in rib6[prefix] if r.get("selected")]
                assert route["installed"], (leaf, prefix)
                assert len([h for h in route["nexthops"] if h.get("fib") and h.get("active")]) == spines


def _frr_configs() -> list[tuple[str, bytes]]:
    """Every frr.conf of every design whose Ethernet switches run FRR (FRR on Linux, SONiC), both BGP styles, and
    lab-dual's servers' hosts/<node>/frr.conf."""
    out = []
    for design in ETHERNET_DESIGNS:
        for platform in ("frr", "sonic"):
            for unnumbered in (False, True):
                for path, data in render_all(on_platform(design, platform, unnumbered)).items():
                    if path.endswith("/frr.conf"):
                        out.append((f"{design}/{platform}/{'unnumbered' if unnumbered else 'numbered'}/{path}", data))
    for unnumbered in (False, True):  # servers that route on the host, and their leaves
        for path, data in render_all(on_platform("lab-dual", "frr", unnumbered)).items():
            if path.endswith("/frr.conf"):
                out.append((f"lab-dual/frr/{'unnumbered' if unnumbered else 'numbered'}/{path}", data))
    return out


def test_every_generated_frr_conf_loads_into_a_live_bgpd() -> None:
    configs = _frr_configs()
    assert len(configs) > 100
    namespaces = [f"{PREFIX}lint{i}" for i in range(4)]
    try:
        for ns in namespaces:
            subprocess.run(["ip", "netns", "add", ns], check=True)
        with ThreadPoolExecutor(len(namespaces)) as pool:
            jobs = {
                name: pool.submit(load_into_live_bgpd, data, namespaces[i % len(namespaces)])
                for i, (name, data) in enumerate(configs)
            }
            failures = {}
            for name, job in jobs.items():
                code, output = job.result()
                errors = [line for line in output.splitlines() if "%" in line or "rror" in line or "line " in line]
                if code != 0 or errors:
                    failures[name] = (code, errors[:3] or output[-300:])
        assert not failures, failures
    finally:
        for ns in namespaces:
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True)


def test_live_bgpd_rejects_a_broken_config() -> None:
    """The check above can fail: FRR refuses a misspelt command and a neighbour without remote-as."""
    good = render_all(built("lab"))["configs/leaf1/frr.conf"]
    ns = f"{PREFIX}neg"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        assert load_into_live_bgpd(good, ns)[0] == 0
        typo = good.replace(b"bgp log-neighbor-changes", b"bgp log-neighbour-changes")
        assert load_into_live_bgpd(typo, ns)[0] != 0
        semantic = good.replace(b" neighbor 10.254.0.0 remote-as 65000\n", b"")
        code, output = load_into_live_bgpd(semantic, ns)
        assert code == 13 and "Failure to communicate" in output  # semantic: bgpd refused the line
    finally:
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True)


# iproute2 answers these when the command parsed but the kernel or driver cannot apply it here
# (veth has no DCB, this kernel has no ETS or RED qdisc); anything else is a bad command.
NOT_HERE = (
    "Operation not supported",
    "Specified qdisc kind is unknown",
    "Attribute read",
    "not supported",
    "Failed to find specified qdisc",
)  # the last: the ETS parent this kernel could not create


def test_linux_qos_commands_parse_with_iproute2() -> None:
    """tc parses its arguments before asking the kernel, so a wrong tc command fails here even where the kernel
    lacks the qdisc. dcb reads the device's DCB state first, which veth does not have: its commands run here
    only to show they do not break the sequence (their syntax is pinned by the goldens)."""
    require_tool("dcb", "apt-get install iproute2")
    ns = f"{PREFIX}qos"
    intent = built("roce-512").intents["spine01"]
    assert intent.qos is not None
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(
            ["ip", "-n", ns, "link", "add", "name", "swp1", "type", "veth", "peer", "name", "peer1"], check=True
        )
        for command in qos_commands(intent.qos, "swp1"):
            result = subprocess.run(["ip", "netns", "exec", ns, *command.split()], capture_output=True, text=True)
            message = (result.stdout + result.stderr).strip()
            assert result.returncode == 0 or any(m in message for m in NOT_HERE), (command, message)
        bad = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                ns,
                "tc",
                "qdisc",
                "replace",
                "dev",
                "swp1",
                "parent",
                "1:2",
                "handle",
                "12:",
                "red",
                "ecn",
                "min",
                "150000",
                "max",
                "1500000",
                "probability",
                "often",
            ],
            capture_output=True,
            text=True,
        )
        assert bad.returncode != 0 and not any(m in bad.stderr for m in NOT_HERE)  # a parse error looks different
    finally:
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True)


# --------------------------------------------------------------------------------------------- fabric lab


def test_fabric_lab_up_status_down(monkeypatch: pytest.MonkeyPatch, lab_dir: Path) -> None:
    import fabric.tools.lab

    monkeypatch.setattr(fabric.tools.lab, "STATE_ROOT", lab_dir / "labs")
    runner = CliRunner()
    lab_yaml = str(DESIGNS / "lab.yaml")
    try:
        up = runner.invoke(app, ["lab", "up", lab_yaml, "--prefix", PREFIX])
        assert up.exit_code == 0, up.output
        assert f"ip netns exec {PREFIX}leaf1 bash" in up.output and "converged" in up.output
        again = runner.invoke(app, ["lab", "up", lab_yaml, "--prefix", PREFIX])
        assert again.exit_code == 2 and "running already" in again.output
        status = runner.invoke(app, ["lab", "status"])
        assert status.exit_code == 0 and "lab: converged" in status.output
        assert "leaf1       10.255.0.6/32               2/2" in status.output
    finally:
        down = runner.invoke(app, ["lab", "down", lab_yaml])
    assert down.exit_code == 0 and "lab removed" in down.output
    assert not {ns for ns in _namespaces() if ns.startswith(PREFIX)}
    assert runner.invoke(app, ["lab", "status"]).exit_code == 2  # nothing runs any more


def test_lab_refuses_politely(monkeypatch: pytest.MonkeyPatch) -> None:
    import fabric.tools.lab

    runner = CliRunner()
    big = on_platform("roce-512", "frr")
    plan = plan_lab(big)
    with pytest.raises(LabError, match="at most 40 switches and 200 links"):
        preflight(len(plan.switches), sum(1 for w in plan.wires if w.a_ns in plan.switches.values()))
    monkeypatch.setattr(fabric.tools.lab, "FRR_DIR", Path("/nonexistent"))
    result = runner.invoke(app, ["lab", "up", str(DESIGNS / "lab.yaml")])
    assert result.exit_code == 2 and "FRR is not installed" in result.output
    monkeypatch.setattr(fabric.tools.lab.os, "geteuid", lambda: 1000)
    result = runner.invoke(app, ["lab", "up", str(DESIGNS / "lab.yaml")])
    assert result.exit_code == 2 and "needs root" in result.output
    result = runner.invoke(app, ["lab", "up", str(DESIGNS / "superpod-h100-1su.yaml")])
    assert result.exit_code == 2 and "no Ethernet fabric" in result.output
