"""Golden findings for hostile and careless input (issue 7): every case in tests/hostile/ runs in a scratch copy
of the folder (with a FIFO `fifo`, a symbolic link loop `loop` and the large files made there) and must print
exactly its .txt file, exit 1 or 2, and never a traceback, a secret or a line of a file it rejected. A case is
`<name>.yaml` (run as `fabric validate <name>.yaml`) or `<name>.args` (the command line after `fabric`). A
`valid-*` case is input that looks hostile but is valid (a no-break space, normalised): it must exit 0.
`pytest --update-golden` rewrites the .txt files.

Cases that could hang or read the process environment (`hang-*`, `*environ*`) run as a real `fabric` process
under a timeout, which only keeps a regression from hanging the suite (no timing assertion); the others run
in-process, which is faster."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli import app
from tests.conftest import REPO

HOSTILE = REPO / "tests" / "hostile"
CASES = sorted({p.stem for p in HOSTILE.iterdir() if p.suffix in (".yaml", ".args")})
SECRET = "pass\nrouter bgp 666"
LEAKS = ("router bgp 666", "LEAKTOKEN", "FAKEHASH", "pwned", "Traceback")
HANG_GUARD_S = 60


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    shutil.copytree(HOSTILE, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.txt"))
    os.mkfifo(root / "fifo")
    (root / "loop").symlink_to("loop")
    (root / "lose-foreign" / ".git" / "objects").mkdir(parents=True)  # (git keeps no .git in a repository)
    files = root / "files"
    flow = ", ".join(f"{{a: {i}, b: c{i}}}" for i in range(46_000))
    (files / "flow-1mb.yaml").write_text(f"name: flow\nx: [{flow}]\n")  # 1 MB: under the limit
    header = "cable_id,fabric,plane,rail,tier,a_rack,a_u,a_device,a_port,b_rack,b_u,b_device,b_port,media,length_m\n"
    row = "c1,compute,1,,node-leaf,A01,1,srv1,eth1,A01,40,leaf01,swp1,dac,"
    (files / "huge-field.csv").write_text(header + row + "9" * 200_000 + "\n")
    # `fabric diff` inputs: an output directory whose config is a symbolic link out of it (to a secret), one whose
    # cabling.csv has a 200 KB field, one with NUL bytes (diff-base and diff-columns are in the folder)
    base = files / "diff-base"
    for name in ("diff-link", "diff-huge", "diff-nul"):
        shutil.copytree(base, files / name)
    (files / "diff-link" / "configs" / "leaf1" / "frr.conf").unlink()
    (files / "diff-link" / "configs" / "leaf1" / "frr.conf").symlink_to("../../../two-line.secret")
    table = (base / "cabling.csv").read_text()
    (files / "diff-huge" / "cabling.csv").write_text(table + row + "9" * 200_000 + "\n")
    (files / "diff-nul" / "cabling.csv").write_text(table.replace("srv1", "srv\0\0"))
    return root


def case_args(scratch: Path, case: str) -> list[str]:
    args_file = scratch / f"{case}.args"
    return shlex.split(args_file.read_text()) if args_file.exists() else ["validate", f"{case}.yaml"]


def run_case(scratch: Path, case: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    args = case_args(scratch, case)
    if not (case.startswith("hang-") or "environ" in case):
        monkeypatch.chdir(scratch)
        monkeypatch.setenv("FABRIC_HOSTILE_SECRET", SECRET)
        result = CliRunner().invoke(app, args)
        return result.exit_code, result.output
    # the environment is the case's input (the *environ* cases read /proc/self/environ): only what the child
    # needs to start, so the golden does not depend on the machine's variables (a comma in one adds a column)
    kept = {name: os.environ[name] for name in ("PATH", "HOME", "PYTHONPATH", "LANG", "LC_ALL") if name in os.environ}
    env = {**kept, "FABRIC_HOSTILE_SECRET": SECRET, "COLUMNS": "200"}
    result = subprocess.run(
        [sys.executable, "-m", "fabric", *args],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=False,
    )
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize("case", CASES)
def test_hostile_input_golden(case: str, scratch: Path, golden, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    code, output = run_case(scratch, case, monkeypatch)
    golden(HOSTILE / f"{case}.txt", f"exit {code}\n{output}")
    assert code in ((0,) if case.startswith("valid-") else (1, 2)), output
    leaked = [token for token in LEAKS if token in output]
    assert not leaked, f"{case} printed {leaked}"
    assert output.count("\n") >= 1


def test_every_case_has_its_golden_file() -> None:
    missing = [c for c in CASES if not (HOSTILE / f"{c}.txt").exists()]
    assert len(CASES) >= 40 and not missing, missing
