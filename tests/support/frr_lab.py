"""Test helper: load an frr.conf into a fresh, unconnected zebra + bgpd and report what FRR refused.

A grammar-only check (`vtysh -C`) misses semantic errors; loading into live daemons catches them
(shared/reference/frr-netns.md, "Lint").
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from fabric.tools.lab import stop_daemons

FRR = Path("/usr/lib/frr")


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
            stop_daemons([work / "zebra.pid", work / "bgpd.pid"], graceful=False)  # throwaway daemons
    finally:
        shutil.rmtree(work, ignore_errors=True)
