"""Routing on the host, live: designs/lab-dual.yaml booted in network namespaces, its servers running bgpd on
their generated hosts/<node>/frr.conf with the addresses of their netplan.yaml, and a server staying reachable
from a server on other leaves after either of its two links is cut (and not after both).

Needs root and Debian's frr (and iputils-ping); skips without them, or fails under FABRIC_REQUIRE_REAL=1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabric import Build
from fabric.tools.lab import Lab, LabError, plan_lab, vty
from tests.conftest import built, require_root, require_tool
from tests.support.design_variants import variant

pytestmark = pytest.mark.real

PREFIX = f"d{os.getpid() % 100000}-"
TARGET, OBSERVER = "srv1", "srv3"  # srv1 on leaf1 + leaf2, srv3 on leaf3 + leaf4


@pytest.fixture(scope="module", autouse=True)
def frr() -> None:
    require_root("network namespaces")
    require_tool("vtysh", "apt-get install frr frr-pythontools")
    require_tool("ping", "apt-get install iputils-ping")


def _design(style: str) -> Build:
    if style == "frr-numbered":
        return built("lab-dual")

    def change(data: dict) -> None:  # type: ignore[type-arg]
        fabric = data["fabrics"]["compute"]
        if style == "frr-unnumbered":
            fabric["routing"] = {"bgp_unnumbered": True}
        else:
            fabric["platform"] = "sonic"

    return variant("lab-dual", change)


@pytest.fixture(params=["frr-numbered", "frr-unnumbered", "sonic-numbered"])
def lab(request: pytest.FixtureRequest) -> Iterator[Lab]:
    plan = plan_lab(_design(request.param), prefix=PREFIX)
    state = Path(tempfile.mkdtemp(prefix="fabric-lab-"))
    state.chmod(0o755)  # the daemons run as user frr
    running = Lab(plan, state / "lab")
    try:
        running.up()
        running.wait_converged(timeout=90)
        yield running
    finally:
        running.down()
        shutil.rmtree(state, ignore_errors=True)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert PREFIX not in left, "the lab left namespaces behind"


def _ping(lab: Lab, source: str, target: str) -> subprocess.CompletedProcess[str]:
    """Three pings from a server's namespace; the first may be lost while neighbours resolve."""
    ns = lab.plan.hosts[source]
    return subprocess.run(
        ["ip", "netns", "exec", ns, "ping", "-c", "3", "-i", "0.2", "-W", "2", target], capture_output=True, text=True
    )


def _hops(lab: Lab, device: str, prefix: str) -> int:
    routes = lab.zebra(device, "show ip route bgp json")
    assert isinstance(routes, dict)
    installed = [e for e in routes.get(prefix, []) if e.get("selected") and e.get("installed")]
    return len([h for e in installed for h in e.get("nexthops", []) if h.get("fib") and h.get("active")])


def _wait(what: str, ready: object, timeout: float = 60) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if ready():  # type: ignore[operator]
            return time.monotonic() - start
        time.sleep(0.1)
    raise LabError(f"{what} did not happen in {timeout:g} s")


def _kernel_ports(lab: Lab, host: str, destination: str) -> set[str]:
    """The ports of a server's kernel route to `destination` (a /32 without its length)."""
    out = subprocess.run(
        ["ip", "-n", lab.plan.hosts[host], "-j", "-4", "route", "show", destination],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    routes = json.loads(out)
    return {r["dev"] for r in routes if "dev" in r} | {h["dev"] for r in routes for h in r.get("nexthops", [])}


def _link(lab: Lab, port: str, state: str) -> None:
    """Set the target server's `port` up or down."""
    subprocess.run(["ip", "-n", lab.plan.hosts[TARGET], "link", "set", "dev", port, state], check=True)


def _repair(lab: Lab, port: str, record_property) -> None:  # type: ignore[no-untyped-def]
    """Wait for the repaired link's session; if FRR leaves it down, say so and flap the link once more.

    A repaired session is back in about 2 s. On FRR 8.4 and unnumbered, about 1 repair in 50 (twice in CI, twice in
    50 runs of this test here under load) leaves it down for good: the server's zebra has learnt the leaf's
    link-local address from its router advertisements, the server's bgpd has not (its session Idle, the neighbour
    address unknown) and, as zebra knows it, later advertisements tell bgpd nothing. The failover is what this test
    measures, and the repair is what lets it cut the other link: a stuck repair is reported as a warning, with
    bgpd's state, its log and zebra's view of the port, and the link is flapped again, which brings the session
    back (both times here); a second stuck repair fails.
    """
    try:
        lab.wait_converged(timeout=60)
        return
    except LabError as stuck:
        lines = [str(stuck)]
        for device, peers in sorted(lab.status().waiting.items()):
            try:
                log = (lab.switch_dir(device) / "bgpd.log").read_text(errors="replace").splitlines()[-8:]
            except OSError as error:  # (nor may a log that is not there)
                log = [f"not readable: {error}"]
            lines.extend(f"{device} bgpd.log: {line}" for line in log)
            for peer in peers:  # zebra's view of the port: router advertisements sent and heard, neighbours known
                try:
                    shown = vty(lab.switch_dir(device) / "zebra.vty", f"show interface {peer}")
                except OSError as error:  # the diagnosis must not stop the repair
                    shown = f"zebra does not answer: {error}"
                lines.extend(f"{device} zebra: {line}" for line in shown.splitlines())
        said = "\n".join(lines)
        record_property(f"repair_retried_{port}", said)
        warnings.warn(f"{TARGET}:{port} repaired, its session still down, flapping it again: {said}", stacklevel=2)
    _link(lab, port, "down")
    time.sleep(1)
    _link(lab, port, "up")
    lab.wait_converged(timeout=90)


def test_a_dual_homed_server_survives_either_link(lab: Lab, record_property) -> None:  # type: ignore[no-untyped-def]
    plan = lab.plan
    assert len(plan.bgp_hosts) == 4 and plan.bridges == {}  # every server routes; no leaf bridges a server port
    hosts = {name: built("lab-dual").hosts[name] for name in (TARGET, OBSERVER)}
    target_lo = str(hosts[TARGET].loopback_v4.ip)
    observer_lo = str(hosts[OBSERVER].loopback_v4.ip)
    leaf3_lo = built("lab-dual").intents["leaf3"].loopback_v4
    assert leaf3_lo is not None
    leaf_lo = str(leaf3_lo.ip)
    ports = [p.name for p in hosts[TARGET].ports]
    assert ports == ["eth1", "eth2"]
    # converged: every server has both sessions and every other server's loopback over both its leaves
    status = lab.status()
    assert status.converged and set(status.host_ecmp) == set(plan.bgp_hosts)
    assert all(w == 2 for routes in status.host_ecmp.values() for w in routes.values())
    assert len(status.host_ecmp[OBSERVER]) == 3
    spines = plan.spines
    assert all(_hops(lab, s, f"{target_lo}/32") == 2 for s in spines)  # each spine reaches srv1 over both leaves
    ping = _ping(lab, OBSERVER, target_lo)
    assert ping.returncode == 0, ping.stdout + ping.stderr
    assert _kernel_ports(lab, TARGET, observer_lo) == {"eth1", "eth2"}
    took = {}
    for cut in ports:
        survivor = next(p for p in ports if p != cut)
        _link(lab, cut, "down")
        took[cut] = _wait(
            f"withdrawal after cutting {TARGET}:{cut}",
            lambda survivor=survivor: (
                all(_hops(lab, s, f"{target_lo}/32") == 1 for s in spines)
                and _kernel_ports(lab, TARGET, observer_lo) == {survivor}
            ),
        )
        ping = _ping(lab, OBSERVER, target_lo)
        assert ping.returncode == 0, (cut, ping.stdout + ping.stderr)
        # and from a leaf that is not the server's, from its loopback
        leaf_ping = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                plan.switches["leaf3"],
                "ping",
                "-c",
                "3",
                "-i",
                "0.2",
                "-W",
                "2",
                "-I",
                leaf_lo,
                target_lo,
            ],
            capture_output=True,
            text=True,
        )
        assert leaf_ping.returncode == 0, (cut, leaf_ping.stdout + leaf_ping.stderr)
        _link(lab, cut, "up")
        _repair(lab, cut, record_property)
        _wait(f"{TARGET}:{cut} back in the kernel's route", lambda: _kernel_ports(lab, TARGET, observer_lo) == {*ports})
    record_property("failover_s", {k: round(v, 2) for k, v in took.items()})
    print(f"\nwithdrawal seen on the spines {', '.join(f'{k}: {v:.2f} s' for k, v in took.items())} after the cut")
    # the check can fail: with both links cut the server is gone
    for cut in ports:
        _link(lab, cut, "down")
    _wait("withdrawal of both links", lambda: all(_hops(lab, s, f"{target_lo}/32") == 0 for s in spines))
    assert _ping(lab, OBSERVER, target_lo).returncode != 0


def _vtysh(lab: Lab, device: str, *commands: str) -> None:
    """Configure a running device (switch or routing server) through its own daemons."""
    d = str(lab.switch_dir(device))
    args = [arg for command in ("configure terminal", *commands) for arg in ("-c", command)]
    done = subprocess.run(["vtysh", "--vty_socket", d, "--config_dir", d, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _paths_from(lab: Lab, leaf: str, prefix: str, peer: str) -> int:
    """How many of a leaf's BGP paths to `prefix` came from `peer` (a neighbour address)."""
    out = lab.bgp(leaf, f"show bgp ipv4 unicast {prefix} json")
    assert isinstance(out, dict)
    return sum(1 for p in out.get("paths", []) if p.get("peer", {}).get("peerId") == peer)


@pytest.fixture
def numbered_lab() -> Iterator[Lab]:
    plan = plan_lab(_design("frr-numbered"), prefix=PREFIX)
    state = Path(tempfile.mkdtemp(prefix="fabric-lab-"))
    state.chmod(0o755)  # the daemons run as user frr
    running = Lab(plan, state / "lab")
    try:
        running.up()
        running.wait_converged(timeout=90)
        yield running
    finally:
        running.down()
        shutil.rmtree(state, ignore_errors=True)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert PREFIX not in left, "the lab left namespaces behind"


def test_a_server_cannot_announce_a_spines_loopback(numbered_lab: Lab) -> None:
    """A routed server that announces spine1's loopback (added to its own outbound list) is refused by its leaf's
    per-server prefix-list; without that list the leaf takes the hijack (so the check can fail)."""
    lab = numbered_lab
    build = built("lab-dual")
    leaf = build.intents["leaf1"]
    assert leaf.bgp is not None and leaf.bgp.maximum_prefix is not None
    [session] = [n for n in leaf.bgp.neighbors if n.peer_device == TARGET and not n.v6]  # its IPv4 session
    spine_lo = str(build.intents["spine1"].loopback_v4.network)  # type: ignore[union-attr]
    subprocess.run(["ip", "-n", lab.plan.hosts[TARGET], "address", "add", spine_lo, "dev", "lo"], check=True)
    _vtysh(
        lab,
        TARGET,
        f"ip prefix-list LOOPBACK seq 20 permit {spine_lo}",
        f"router bgp {build.hosts[TARGET].asn}",
        "address-family ipv4 unicast",
        f"network {spine_lo}",
    )

    def sent() -> set[int]:
        out = lab.bgp(TARGET, "show bgp ipv4 unicast summary json")
        assert isinstance(out, dict)
        return {p.get("pfxSnt", 0) for p in out["peers"].values()}

    def accepted() -> int:
        out = lab.bgp("leaf1", f"show bgp neighbors {session.peer} json")
        assert isinstance(out, dict)
        return int(out[session.peer]["addressFamilyInfo"]["ipv4Unicast"]["acceptedPrefixCounter"])

    # the server sends 2 prefixes (its loopback and the spine's) to each leaf; leaf1 accepts its loopback only
    _wait("the server sending the spine's loopback", lambda: sent() == {2})
    assert accepted() == 1
    assert _paths_from(lab, "leaf1", spine_lo, session.peer) == 0
    # negative: without the per-server list the leaf takes the server's path to the spine's loopback
    _vtysh(
        lab,
        "leaf1",
        f"router bgp {leaf.bgp.asn}",
        "address-family ipv4 unicast",
        f"no neighbor {session.peer} prefix-list {session.prefix_list} in",
    )
    _wait("the leaf accepting the hijack", lambda: _paths_from(lab, "leaf1", spine_lo, session.peer) == 1)
    assert accepted() == 2
