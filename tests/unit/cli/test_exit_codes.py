"""Exit codes mean what the README says: an exception no stage turned into a finding is an internal error,
exit 3 with a hint to report it, never a traceback with exit 1 (the design-error code)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import fabric.cli
import fabric.pipeline
import fabric.render
import fabric.tools.verify
from fabric.cli import INTERNAL_ERROR, app
from tests.conftest import DESIGNS, REPO

runner = CliRunner()
LAB = str(DESIGNS / "lab.yaml")
RADIX = str(REPO / "tests" / "broken" / "radix.yaml")


def _raise(exc: BaseException) -> Any:
    def stage(*args: object, **kwargs: object) -> Any:
        raise exc

    return stage


@pytest.mark.parametrize(
    ("target", "name", "command", "where"),
    [  # where: the fabric module that called the failing function
        (fabric.pipeline, "build_fabric", ["validate", LAB], "fabric/cli/loading.py"),
        (fabric.pipeline, "build_fabric", ["show", LAB], "fabric/cli/loading.py"),
        (fabric.render, "render_into", ["build", LAB, "-o", "{tmp}/out"], "fabric/cli/build.py"),
        (fabric.tools.verify, "verify_lldp", ["verify", LAB, "--lldp", "{tmp}/n.csv"], "fabric/cli/verify.py"),
    ],
)
def test_an_unexpected_exception_is_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: object, name: str, command: list[str], where: str
) -> None:
    (tmp_path / "n.csv").write_text("local_device,local_port,remote_device,remote_port\nleaf1,swp1,spine1,swp1\n")
    monkeypatch.setattr(target, name, _raise(KeyError("s3cret-from-a-file")))
    result = runner.invoke(app, [a.replace("{tmp}", str(tmp_path)) for a in command])
    assert result.exit_code == INTERNAL_ERROR == 3
    lines = result.output.splitlines()
    assert lines[-2].startswith(f"internal error: KeyError at {where}:"), lines
    assert "this is a bug in fabric" in lines[-1] and "please report it" in lines[-1]
    assert "s3cret" not in result.output  # an exception's message may quote input: not printed
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_the_traceback_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_TRACEBACK", "1")
    monkeypatch.setattr(fabric.pipeline, "build_fabric", _raise(RecursionError("deep")))
    result = runner.invoke(app, ["validate", LAB])
    assert result.exit_code == 3
    assert "internal error: RecursionError" in result.output and "Traceback (most recent call last)" in result.output


def test_usage_errors_and_design_exits_are_not_internal_errors(tmp_path: Path) -> None:
    assert runner.invoke(app, ["validate", "--no-such-option"]).exit_code == 2
    assert runner.invoke(app, ["validate", LAB]).exit_code == 0
    missing = runner.invoke(app, ["validate", str(tmp_path / "missing.yaml")])
    assert missing.exit_code == 2 and "internal error" not in missing.output


def test_the_installed_command_exits_3(tmp_path: Path) -> None:
    code = (
        "import fabric.cli as c, fabric.pipeline as p\ndef boom(*a, **k): raise ZeroDivisionError('x')\n"
        "p.build_fabric = boom\nc.main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "validate", LAB], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert result.returncode == 3
    assert result.stderr.startswith("internal error: ZeroDivisionError at fabric/cli/loading.py:")
    assert result.stdout == ""


def test_the_installed_build_exits_at_once_with_its_code_and_output(tmp_path: Path) -> None:
    """`fabric build` ends with os._exit (cli.app.EXIT_AT_ONCE, fast.process.exit_now): what it printed is
    flushed, its exit code kept."""
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "fabric", "build", LAB, "-o", str(out), "--quiet"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.startswith("lab: wrote ") and (out / "cabling.csv").is_file()
    radix = subprocess.run(
        [sys.executable, "-m", "fabric", "build", "tests/broken/radix.yaml", "-o", str(tmp_path / "b"), "--quiet"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert radix.returncode == 1 and "error" in radix.stdout + radix.stderr
    usage = subprocess.run(
        [sys.executable, "-m", "fabric", "build", "--no-such"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert usage.returncode == 2 and "No such option" in usage.stderr


@pytest.mark.parametrize(
    ("args", "code"), [(["validate", LAB], 0), (["validate", LAB, "--json"], 0), (["validate", RADIX], 1)]
)
def test_the_installed_validate_exits_at_once_with_its_code_and_output(args: list[str], code: int) -> None:
    """`fabric validate` ends with os._exit too (a million GPUs' objects are not freed one by one): it prints what
    it printed in process, flushed, with its exit code, and the interpreter's teardown (atexit) does not run."""
    script = "import atexit, fabric.cli as c\natexit.register(print, 'TEARDOWN')\nc.main()\n"
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=REPO, capture_output=True, text=True, check=False)
    in_process = runner.invoke(app, args)
    assert (done.returncode, done.stdout) == (code, in_process.stdout) == (in_process.exit_code, in_process.stdout)
    assert "TEARDOWN" not in done.stdout
    # the negative case: a command that is not in EXIT_AT_ONCE runs the teardown
    shown = subprocess.run(
        [sys.executable, "-c", script, "--help"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert shown.stdout.rstrip().endswith("TEARDOWN")


def test_validate_does_not_free_its_build_before_it_exits() -> None:
    """The build is held to the end (fast.process.keep_to_the_end): not freed object by object as the command's
    frame unwinds, just before the exit frees it at once (2.3 s at a million GPUs)."""
    script = (
        "import sys, weakref, fabric.cli as c, fabric.cli.validate as v\n"
        "real = v.load_build\n"
        "def loading(*a, **k):\n"
        "    build = real(*a, **k)\n"
        "    weakref.finalize(build, print, 'FREED', flush=True)\n"
        "    return build\n"
        "v.load_build = loading\n"
        "how = sys.argv.pop(1)\n"
        "c.main() if how == 'main' else c.app(sys.argv[1:], standalone_mode=False)\n"
        "print('STILL RUNNING', flush=True)\n"
    )

    def run(how: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", script, how, "validate", LAB], cwd=REPO, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "FREED" not in run("main")
    # the negative case: a process that goes on (the library, tests) holds nothing: the build is freed
    assert run("app").splitlines()[-2:] == ["FREED", "STILL RUNNING"]
