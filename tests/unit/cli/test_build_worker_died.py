"""A render worker that dies (the OOM killer's SIGKILL, any signal) ends `fabric build` at once with
`render-worker-died` (fabric/render/engine/pool.py), where multiprocessing.Pool waited for ever for its task: a
real build process whose worker kills itself while rendering one output; exit 3, the finding names the output,
the signal and the worker's peak memory; the staging tree is removed and the old output kept. The negative case:
the same process with no worker killed builds (exit 0)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

DESIGN = REPO / "designs" / "lab.yaml"
WAIT_S = 120  # a guard against a hang, not a timed assertion: the build ends in a few seconds either way

# `fabric build`, with the output named in argv[1] (or none: "") made to SIGKILL the render worker that renders it
SCRIPT = """
import dataclasses, os, signal, sys
import fabric.render.engine.pool as pool
import fabric.render.outputs as outputs

victim = sys.argv.pop(1)

def killed(render):
    def render_or_die(*args):
        if pool._WORKER:  # a render worker, never the build process itself
            os.kill(os.getpid(), signal.SIGKILL)
        return render(*args)
    return render_or_die

outputs.OUTPUTS = tuple(
    dataclasses.replace(o, render=killed(o.render), shard=o.shard and killed(o.shard)) if o.name == victim else o
    for o in outputs.OUTPUTS
)
from fabric.cli.app import main
sys.argv[0] = "fabric"
main()
"""


def _tree(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def _build(out: Path, victim: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "FABRIC_WORKERS": "2"}  # a pool, also for the small lab design
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, victim, "build", str(DESIGN), "-o", str(out), "-q"],
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )


@pytest.fixture(scope="module")
def built_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    out = tmp_path_factory.mktemp("died") / "out"
    done = _build(out, "")  # the negative case: no worker killed, the same process builds
    assert done.returncode == 0, done.stderr
    assert "render-worker-died" not in done.stdout + done.stderr
    return out, _tree(out)


@pytest.mark.parametrize(("victim", "shown"), [("cabling", "cabling"), ("configs", "configs (part ")])
def test_a_killed_worker_ends_the_build_with_a_finding(
    victim: str, shown: str, built_once: tuple[Path, dict[str, str]]
) -> None:
    out, before = built_once
    done = _build(out, victim)
    said = done.stdout + done.stderr  # (findings on stdout, the summary line on stderr)
    assert done.returncode == 3, said
    assert said.count("render-worker-died") >= 1, said
    assert f"was killed by SIGKILL while rendering {shown}" in said, said
    assert "peak memory as last read" in said and "a render worker died; nothing was written" in said
    assert "Traceback" not in said and "internal error" not in said
    assert not list(out.parent.glob(f".{out.name}.*"))  # the staging tree is gone
    assert _tree(out) == before and len(before) > 30  # the old output, as it was
