"""Run a planned InfiniBand fabric in ibsim with the real OpenSM and infiniband-diags (see
shared/reference/infiniband-sim.md): every client under a hard timeout, every process started in its own
session and stopped by that id (also on failure), a private socket name and working directory per case."""

from __future__ import annotations

import contextlib
import glob
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import require_tool

TOOLS = {
    "ibsim": "apt-get install ibsim-utils",
    "opensm": "apt-get install opensm",
    "ibnetdiscover": "apt-get install infiniband-diags",
    "dump_lfts": "apt-get install infiniband-diags",
    "smpquery": "apt-get install infiniband-diags",
}
CLIENT_TIMEOUT_S = 120
DAEMON_TIMEOUT_S = 900  # `timeout -s KILL` around ibsim and OpenSM, should the test process die


def require_simulator() -> str:
    """The libumad2sim.so preload path; skips (or fails under FABRIC_REQUIRE_REAL=1) without the tools."""
    for tool, install in TOOLS.items():
        require_tool(tool, install)
    found = sorted(glob.glob("/usr/lib/*/umad2sim/libumad2sim.so")) + sorted(glob.glob("/usr/lib/umad2sim/*.so"))
    if not found:
        if os.environ.get("FABRIC_REQUIRE_REAL") == "1":
            pytest.fail("libumad2sim.so is not installed (apt-get install libumad2sim0)")
        pytest.skip("libumad2sim.so is not installed (apt-get install libumad2sim0)")
    return found[0]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process started with start_new_session=True: its group (pgid = its pid) by that id, then reap it."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # anything left in its group


@dataclass
class Simulation:
    """ibsim on `net` in `workdir`; OpenSM and clients attach as a given node (SIM_HOST)."""

    workdir: Path
    net: Path
    sockname: str
    preload: str
    started: float = 0.0
    ibsim: subprocess.Popen[bytes] | None = None
    opensm: subprocess.Popen[bytes] | None = None
    timings: dict[str, float] = field(default_factory=dict)

    def env(self, host: str) -> dict[str, str]:
        return {
            **os.environ,
            "IBSIM_SOCKNAME": self.sockname,
            "SIM_HOST": host,
            "LD_PRELOAD": self.preload,
            "OSM_TMP_DIR": str(self.workdir / "osm-dump"),
            "OSM_CACHE_DIR": str(self.workdir / "osm-cache"),
        }

    def start(self, ready_s: float = 60) -> None:
        (self.workdir / "osm-dump").mkdir(exist_ok=True)
        (self.workdir / "osm-cache").mkdir(exist_ok=True)
        out = (self.workdir / "ibsim.out").open("wb")
        self.started = time.monotonic()
        self.ibsim = subprocess.Popen(
            ["timeout", "-s", "KILL", str(DAEMON_TIMEOUT_S), "ibsim", "-s", "-n", str(self.net)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
            env={**os.environ, "IBSIM_SOCKNAME": self.sockname},
            start_new_session=True,
        )
        out.close()
        self._wait_for(self.workdir / "ibsim.out", "Network simulator ready", ready_s, self.ibsim, "ibsim")
        self.timings["ibsim_ready_s"] = time.monotonic() - self.started

    def start_opensm(self, conf: Path, host: str, subnet_up_s: float = 120, until: str = "SUBNET UP") -> None:
        """Start OpenSM and wait (up to `subnet_up_s`) until its log says `until`."""
        out = (self.workdir / "opensm.stdout").open("wb")
        self.opensm = subprocess.Popen(
            ["timeout", "-s", "KILL", str(DAEMON_TIMEOUT_S), "opensm", "-F", str(conf)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
            env=self.env(host),
            start_new_session=True,
        )
        out.close()
        self._wait_for(self.workdir / "opensm.log", until, subnet_up_s, self.opensm, "opensm")
        self.timings["subnet_up_s"] = time.monotonic() - self.started

    def _wait_for(self, log: Path, text: str, limit: float, proc: subprocess.Popen[bytes], what: str) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if log.exists() and text in log.read_text(errors="replace"):
                return
            if proc.poll() is not None:
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise AssertionError(f"{what} exited ({proc.returncode}) before {text!r}:\n{tail}")
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} from {what} within {limit:g} s")

    def run(self, host: str, *args: str, timeout: float = CLIENT_TIMEOUT_S) -> str:
        """A client command attached as `host`; killed (SIGKILL) when it outlives `timeout`."""
        done = subprocess.run(
            list(args), cwd=self.workdir, env=self.env(host), capture_output=True, timeout=timeout, check=False
        )
        if done.returncode != 0:
            raise AssertionError(f"{' '.join(args)} exited {done.returncode}: {done.stderr.decode(errors='replace')}")
        return done.stdout.decode(errors="replace")

    def stop(self) -> None:
        for proc in (self.opensm, self.ibsim):
            if proc is not None:
                _stop(proc)
        for leftover in self.workdir.glob("sys-*"):
            subprocess.run(["rm", "-rf", str(leftover)], check=False)


@contextlib.contextmanager
def simulation(workdir: Path, net: Path, name: str) -> Iterator[Simulation]:
    preload = require_simulator()
    sim = Simulation(workdir, net, f"fab{os.getpid()}-{name}", preload)
    try:
        sim.start()
        yield sim
    finally:
        sim.stop()


# --------------------------------------------------------------------------------------------- reading results

_LFT_HEAD = re.compile(r"guid (0x[0-9a-fA-F]+)")
_LFT_ROW = re.compile(r"^0x([0-9a-fA-F]+)\s+(\d+)\s+:\s+\((Channel Adapter|Switch) portguid (0x[0-9a-fA-F]+)")


@dataclass
class Lfts:
    tables: dict[int, dict[int, int]]  # switch GUID → destination LID → out port
    ca_lids: dict[int, int]  # CA port GUID → LID


def parse_lfts(text: str) -> Lfts:
    tables: dict[int, dict[int, int]] = {}
    ca_lids: dict[int, int] = {}
    current: dict[int, int] | None = None
    for line in text.splitlines():
        if line.startswith("Unicast lids"):
            match = _LFT_HEAD.search(line)
            assert match, line
            current = tables.setdefault(int(match.group(1), 16), {})
            continue
        match = _LFT_ROW.match(line)
        if match and current is not None:
            lid, port = int(match.group(1), 16), int(match.group(2))
            current[lid] = port
            if match.group(3) == "Channel Adapter":
                ca_lids[int(match.group(4), 16)] = lid
    return Lfts(tables, ca_lids)


def pkeys(text: str) -> set[int]:
    """The non-zero entries of `smpquery pkeys` output."""
    values: set[int] = set()
    for line in text.splitlines():
        head, sep, rest = line.partition(":")
        if sep and head.strip().isdigit():
            values.update(int(v, 16) for v in rest.split() if v.startswith("0x") and int(v, 16))
    return values


def log_problems(log: str, allowed: Mapping[str, str]) -> list[str]:
    """Error lines of an OpenSM log (level 0x01 or `ERR`), except those `allowed` names (text → why)."""
    out = []
    for line in log.splitlines():
        if (" 0x01 -> " in line or " ERR " in line) and not any(a in line for a in allowed):
            out.append(line)
    return out


def sl2vl_table(text: str) -> list[int]:
    """The 16 VLs of the first row of `smpquery sl2vl` output."""
    row = next(line for line in text.splitlines() if line.startswith("ports:"))
    return [int(v) for v in row.rsplit(":", 1)[1].split("|") if v.strip()]


def low_weights(text: str) -> dict[int, int]:
    """VL → weight of the low-priority table of `smpquery vlarb` output (entries of weight 0 left out)."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "Low priority" in line)
    vls = [int(v, 16) for v in lines[at + 1].split(":", 1)[1].split("|") if v.strip()]
    weights = [int(v, 16) for v in lines[at + 2].split(":", 1)[1].split("|") if v.strip()]
    return {vl: w for vl, w in zip(vls, weights, strict=True) if w}
