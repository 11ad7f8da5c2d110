"""Test helper: load an frr.conf into a fresh, unconnected zebra + bgpd and report what FRR refused.

A grammar-only check (`vtysh -C`) misses semantic errors; loading into live daemons catches them
(shared/reference/frr-netns.md, "Lint").
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from fabric.lab import alive

FRR = Path("/usr/lib/frr")


def _kill(pid_files: list[Path]) -> None:
    pids = []
    for pid_file in pid_files:
        with contextlib.suppress(OSError, ValueError):
            pid = int(pid_file.read_text().strip())
            if Path(f"/proc/{pid}/comm").read_text().strip() in ("zebra", "bgpd"):
                pids.append(pid)
    for pid in pids:  # throwaway daemons: no graceful shutdown needed
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 3
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if alive(p)]
        time.sleep(0.01)


def load_into_live_bgpd(config: bytes, namespace: str) -> tuple[int, str]:
    """(exit code, output) of the grammar check, then of loading the file into live daemons in `namespace`."""
    work = Path(tempfile.mkdtemp(prefix="frrlint-"))
    work.chmod(0o755)  # the daemons drop to user frr
    try:
        (work / "frr.conf").write_bytes(config)
        (work / "vtysh.conf").write_text("service integrated-vtysh-config\n")
        (work / "empty.conf").write_text("")
        (work / "tmp").mkdir()
        grammar = subprocess.run(
            ["vtysh", "--config_dir", str(work), "-C", "-f", str(work / "frr.conf")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if grammar.returncode != 0:
            return grammar.returncode, grammar.stdout + grammar.stderr
        subprocess.run(["chown", "-R", "frr:frr", str(work)], check=True)
        daemons = " && ".join(
            f"{FRR / d} -d -F datacenter --vty_socket {work} -z {work}/zserv.api -f {work}/empty.conf -P 0 "
            f"-i {work}/{d}.pid --log file:{work}/{d}.log"
            for d in ("zebra", "bgpd")
        )
        try:
            subprocess.run(
                [
                    "ip",
                    "netns",
                    "exec",
                    namespace,
                    "unshare",
                    "--mount",
                    "--propagation",
                    "private",
                    "sh",
                    "-ec",
                    f"mount -n --bind {work}/tmp /var/tmp && {daemons}",
                ],
                check=True,
                capture_output=True,
                timeout=60,
            )
            live = subprocess.run(
                [
                    "ip",
                    "netns",
                    "exec",
                    namespace,
                    "vtysh",
                    "--vty_socket",
                    str(work),
                    "--config_dir",
                    str(work),
                    "-f",
                    str(work / "frr.conf"),
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
            return live.returncode, live.stdout + live.stderr
        finally:
            _kill([work / "zebra.pid", work / "bgpd.pid"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
