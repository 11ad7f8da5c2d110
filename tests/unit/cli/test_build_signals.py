"""SIGTERM and SIGHUP during `fabric build` end it as SIGINT does (fabric/fast/process.py's
ended_like_an_interrupt): a real build process is signalled once its staging tree exists; the tree is removed,
the old output is as it was, the exit code is 128 + the signal's number, and no process of the build is left."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

DESIGN = REPO / "designs" / "tutorial-256.yaml"  # ~2 s: long enough to be caught while rendering
WAIT_S = 60


def _tree(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def _build(out: Path, workers: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "FABRIC_WORKERS": str(workers)}
    return subprocess.Popen(
        [sys.executable, "-m", "fabric", "build", str(DESIGN), "-o", str(out), "-q"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: what is left of it can be looked for
    )


@pytest.fixture(scope="module")
def built_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    out = tmp_path_factory.mktemp("signals") / "out"
    build = _build(out, 1)
    assert build.wait(WAIT_S) == 0, build.stderr.read() if build.stderr else ""
    return out, _tree(out)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_mid_build_removes_the_staging_tree_and_keeps_the_old_output(
    signum: int, workers: int, built_once: tuple[Path, dict[str, str]]
) -> None:
    out, before = built_once
    build = _build(out, workers)
    deadline = time.monotonic() + WAIT_S
    staging: list[Path] = []
    while not staging and build.poll() is None and time.monotonic() < deadline:
        staging = list(out.parent.glob(f".{out.name}.new-*"))
        time.sleep(0.005)
    assert staging, "the build ended before its staging tree was seen"
    build.send_signal(signum)
    code = build.wait(WAIT_S)
    err = build.stderr.read().decode() if build.stderr else ""
    assert code == 128 + signum, err
    assert "Traceback" not in err and "internal error" not in err
    assert not any(p.exists() for p in staging) and not list(out.parent.glob(f".{out.name}.*"))
    assert _tree(out) == before and len(before) > 30
    with pytest.raises(ProcessLookupError):  # no render worker or analysis child outlives the build
        os.killpg(build.pid, 0)


def test_a_forked_child_gets_the_default_actions_back() -> None:
    """A render worker blocked in a lock runs no Python handler: it must die by the default action when its pool
    terminates it, or the pool's join waits for ever."""
    from fabric.fast.process import ended_like_an_interrupt

    with ended_like_an_interrupt():
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # ours, in this process
        child = os.fork()
        if child == 0:
            ok = all(signal.getsignal(s) is signal.SIG_DFL for s in (signal.SIGTERM, signal.SIGHUP))
            os._exit(0 if ok else 1)
        _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
