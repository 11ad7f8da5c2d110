"""`fabric verify --lldp` on neighbour tables from the real lldpd: the lab design's 14 devices as network
namespaces, one veth pair per planned cable named after the planned ports, lldpd in each namespace (switches
send their interface name as port id, servers lldpd's default, the MAC). Needs root for the namespaces; skips
without it or without lldpd, fails instead under FABRIC_REQUIRE_REAL=1."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabric.tools.lldp import read_lldp
from fabric.tools.verify import verify_lldp
from tests.conftest import built, require_tool

pytestmark = pytest.mark.real
CLIENT_TIMEOUT_S = 30


def _require_root() -> None:
    if os.geteuid() != 0:
        message = "network namespaces need root"
        if os.environ.get("FABRIC_REQUIRE_REAL") == "1":
            pytest.fail(message + "; FABRIC_REQUIRE_REAL=1 makes this a failure")
        pytest.skip(message)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=CLIENT_TIMEOUT_S)


@contextlib.contextmanager
def lab_network(workdir: Path, cables: list[tuple[str, str, str, str]]) -> Iterator[dict[str, Path]]:
    """Namespaces wired by `cables` (a device, a port, b device, b port), lldpd in each; yields device → socket."""
    require_tool("lldpd", "apt-get install lldpd")
    require_tool("ip", "apt-get install iproute2")
    _require_root()
    devices = sorted({d for a, _, b, _ in cables for d in (a, b)})
    prefix = f"fv{os.getpid()}"
    spaces = {d: f"{prefix}-{i}" for i, d in enumerate(devices)}
    daemons: list[subprocess.Popen[bytes]] = []
    # lldpd's unprivileged half must reach its control socket: not under pytest's 0700 directories
    socket_dir = Path(tempfile.mkdtemp(prefix="fabric-lldp-"))
    socket_dir.chmod(0o755)
    sockets = {d: socket_dir / f"{d}.sock" for d in devices}
    try:
        for ns in spaces.values():
            _ip("netns", "add", ns)
        for i, (a, a_port, b, b_port) in enumerate(cables):
            left, right = f"{prefix}a{i}", f"{prefix}b{i}"
            _ip("link", "add", left, "type", "veth", "peer", "name", right)
            _ip("link", "set", left, "netns", spaces[a], "name", a_port)
            _ip("link", "set", right, "netns", spaces[b], "name", b_port)
            _ip("-n", spaces[a], "link", "set", a_port, "up")
            _ip("-n", spaces[b], "link", "set", b_port, "up")
        for device, ns in spaces.items():
            # lldpd stays paused until lldpcli has run this file: its first frame already carries the name
            conf = socket_dir / f"{device}.conf"
            commands = [f"configure system hostname {device}", "configure lldp tx-interval 1"]
            if not device.startswith("srv"):
                commands.append("configure lldp portidsubtype ifname")  # as switches send it
            conf.write_text("\n".join(commands) + "\n")
            log = (workdir / f"{device}.log").open("wb")
            daemons.append(
                subprocess.Popen(
                    [
                        "timeout",
                        "-s",
                        "KILL",
                        "300",
                        "ip",
                        "netns",
                        "exec",
                        ns,
                        "lldpd",
                        "-d",
                        "-u",
                        str(sockets[device]),
                        "-O",
                        str(conf),
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
            log.close()
        yield sockets
    finally:
        for proc in daemons:  # timeout passes SIGTERM on to lldpd, which stops and reaps its own child
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        for proc in daemons:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of its session
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        for ns in spaces.values():
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True, timeout=CLIENT_TIMEOUT_S)
        shutil.rmtree(socket_dir, ignore_errors=True)


def _lldpcli(socket: Path, *args: str) -> str:
    deadline = time.monotonic() + 10
    while True:  # the daemon creates its socket a moment after it starts
        done = subprocess.run(
            ["lldpcli", "-u", str(socket), *args], capture_output=True, timeout=CLIENT_TIMEOUT_S, check=False
        )
        if done.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout.decode()


def collect(sockets: dict[str, Path], where: Path, expected: dict[str, int]) -> Path:
    """`lldpctl -f json` of every device into <device>.json, once every device sees its neighbours."""
    out = where / "lldp"
    out.mkdir()
    deadline = time.monotonic() + 30
    while True:
        tables = {d: _lldpcli(s, "-f", "json", "show", "neighbors") for d, s in sockets.items()}
        seen = {d: _count(t) for d, t in tables.items()}
        if all(seen[d] >= n for d, n in expected.items()) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    for device, text in tables.items():
        (out / f"{device}.json").write_text(text)
    return out


def _count(text: str) -> int:
    data = json.loads(text).get("lldp", {})
    interfaces = data.get("interface", []) if isinstance(data, dict) else []
    return len(interfaces) if isinstance(interfaces, list) else len(interfaces) and 1


def _plan() -> list[tuple[str, str, str, str]]:
    return [(c.link.a, c.link.a_port, c.link.b, c.link.b_port) for c in built("lab").allocation.cables]


def _expected(cables: list[tuple[str, str, str, str]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for a, _, b, _ in cables:
        counts[a] = counts.get(a, 0) + 1
        counts[b] = counts.get(b, 0) + 1
    return counts


def test_lldpd_neighbours_of_the_planned_lab(tmp_path: Path) -> None:
    cables = _plan()
    with lab_network(tmp_path, cables) as sockets:
        where = collect(sockets, tmp_path, _expected(cables))
    data = read_lldp([where])
    assert data.findings == ()
    report = verify_lldp(built("lab"), data)
    assert report.ok, report.text()
    assert report.planned == report.as_planned == len(cables) and report.unchecked == 0


def test_lldpd_neighbours_of_a_mis_cabled_lab(tmp_path: Path) -> None:
    """srv1 and srv2 swapped on leaf1, leaf2's first uplink left out, a cable between two leaves' free ports."""
    plan = built("lab").allocation.cables
    cables = _plan()
    first, second = cables[0], cables[1]
    assert first[2] == second[2] == "leaf1"
    cables[0], cables[1] = (first[0], first[1], first[2], second[3]), (second[0], second[1], second[2], first[3])
    gone = next(i for i, c in enumerate(plan) if c.link.tier == "leaf-spine" and c.link.a == "leaf2")
    del cables[gone]
    cables.append(("leaf1", "swp40", "leaf3", "swp40"))
    with lab_network(tmp_path, cables) as sockets:
        where = collect(sockets, tmp_path, _expected(cables))
    report = verify_lldp(built("lab"), read_lldp([where]))
    problems = sorted((p.kind, p.cable_id) for p in report.problems)
    assert problems == sorted(
        [
            ("wrong-port", plan[0].cable_id),
            ("wrong-port", plan[1].cable_id),
            ("missing", plan[gone].cable_id),
            ("unexpected", ""),
        ]
    ), report.text()
    unexpected = next(p for p in report.problems if p.kind == "unexpected")
    assert unexpected.found is not None and {(e.device, e.port) for e in unexpected.found} == {
        ("leaf1", "swp40"),
        ("leaf3", "swp40"),
    }
