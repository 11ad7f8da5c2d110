"""The writer: typed input, paths that cannot leave the output, fsync, failure paths, stale staging cleanup,
and a real `fabric build` killed while it writes."""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import fabric.write.atomic as atomic
from fabric import build_fabric, render_all
from fabric.model.rendered import Rendered
from fabric.write.atomic import MANIFEST, MARKER, OutputError, remove_stale, write_outputs
from tests.conftest import DESIGNS, REPO, built

FILES = Rendered(
    {"a.txt": b"one\n", "configs/leaf1/frr.conf": b"secret\n", "configs/leaf1/interfaces": b"x\n"},
    private={"configs/leaf1/frr.conf"},
)
OTHER = Rendered({"b.txt": b"two\n"}, private=())


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def siblings(out: Path) -> list[str]:
    """What a build of `out` may leave beside it: its staging and old-output directories."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith((f".{out.name}.new-", f".{out.name}.old-")))


def written(files: Rendered) -> dict[str, bytes]:
    manifest = "".join(f"{hashlib.sha1(files[path]).hexdigest()}  {path}\n" for path in sorted(files)).encode()
    return {**files, MARKER: b"written by fabric for design d\n", MANIFEST: manifest}


# --------------------------------------------------------------------------------------------- typed value


def test_rendered_is_frozen_and_keeps_the_private_mark() -> None:
    assert dict(FILES) == {k: FILES[k] for k in FILES} and len(FILES) == 3
    assert FILES.private == {"configs/leaf1/frr.conf"}
    with pytest.raises(AttributeError):
        FILES.private = frozenset()  # type: ignore[misc]
    with pytest.raises(TypeError):
        FILES.files["a.txt"] = b"changed"  # type: ignore[index]
    with pytest.raises(ValueError, match="private files that are not rendered: nope"):
        Rendered({"a": b""}, private={"nope"})
    with pytest.raises(TypeError):
        Rendered({"a": "text, not bytes"}, private=())  # type: ignore[dict-item]
    assert list(Rendered({"b": b"", "a": b""}, private=())) == ["a", "b"]
    with pytest.raises(TypeError):
        Rendered({"a": b""})  # type: ignore[call-arg]  # which files hold secrets is never left out


def test_the_writer_takes_only_the_typed_value(tmp_path: Path) -> None:
    for plain in (dict(FILES), {"a.txt": b"1"}):
        with pytest.raises(TypeError, match="takes the Rendered value of render_all"):
            write_outputs(plain, tmp_path / "out", "d")  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists() and siblings(tmp_path / "out") == []


def test_render_all_marks_secret_files_and_the_writer_writes_them_0600(tmp_path: Path) -> None:
    out = write_outputs(FILES, tmp_path / "out", "d")
    assert tree(out) == written(FILES)
    assert stat.S_IMODE((out / "configs/leaf1/frr.conf").stat().st_mode) == 0o600
    assert stat.S_IMODE((out / "a.txt").stat().st_mode) == 0o666 & ~_umask()
    assert isinstance(render_all(built("lab")), Rendered)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# --------------------------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    "path",
    [
        "/etc/x",
        "../x",
        "configs/../../x",
        "a/..",
        "./a",
        "a//b",
        "a/",
        "",
        "lab\n",
        "configs/leaf\x00/x",
        "configs/a\rb",
        "esc\x1b[2J",
        "line\u2028sep",
        "tab\there",
        "bidi\u202e",
        "surrogate\udc80",
        "back\\slash",
        MARKER,
    ],
)
def test_paths_that_could_leave_the_output_are_refused(tmp_path: Path, path: str) -> None:
    (tmp_path / "out").mkdir()
    write_outputs(OTHER, tmp_path / "out", "d")
    before = tree(tmp_path)
    with pytest.raises(OutputError, match="refusing to write output path"):
        write_outputs(Rendered({"fine.txt": b"", path: b"evil"}, private=()), tmp_path / "out", "d")
    assert tree(tmp_path) == before  # nothing written anywhere, the old output kept
    assert siblings(tmp_path / "out") == []


def test_an_unprintable_output_directory_or_design_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="not a directory name of printable text"):
        write_outputs(OTHER, tmp_path / "lab\n", "lab")
    with pytest.raises(OutputError, match="design name"):
        write_outputs(OTHER, tmp_path / "out", "lab\nevil")
    assert list(tmp_path.iterdir()) == []


def _plant(monkeypatch: pytest.MonkeyPatch, plant: str, target: Path) -> None:
    """Plant a symlink in the staging tree as soon as the writer creates it (as a concurrent attacker could)."""
    original = atomic._write_file

    def write_file(dir_fd: int, name: str, data: bytes, mode: int) -> None:
        if name == MARKER:
            os.symlink(target, plant, dir_fd=dir_fd)
        original(dir_fd, name, data, mode)

    monkeypatch.setattr(atomic, "_write_file", write_file)


@pytest.mark.parametrize("plant", ["configs", "a.txt"])
def test_a_symlink_in_the_staging_tree_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.txt").write_bytes(b"keep")
    write_outputs(OTHER, tmp_path / "out", "d")
    _plant(monkeypatch, plant, elsewhere / "a.txt" if plant == "a.txt" else elsewhere)
    with pytest.raises(OutputError, match=r"a symlink (or a file )?is in the way|exists already"):
        write_outputs(FILES, tmp_path / "out", "d")
    assert tree(elsewhere) == {"a.txt": b"keep"}
    assert tree(tmp_path / "out") == {**written(OTHER)}
    assert siblings(tmp_path / "out") == []


# --------------------------------------------------------------------------------------------- failures


def test_an_exception_mid_write_keeps_the_old_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = write_outputs(OTHER, tmp_path / "out", "d")
    original = atomic._write_file
    calls: list[str] = []

    def failing(dir_fd: int, name: str, data: bytes, mode: int) -> None:
        calls.append(name)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        original(dir_fd, name, data, mode)

    monkeypatch.setattr(atomic, "_write_file", failing)
    with pytest.raises(OutputError, match="No space left on device"):
        write_outputs(FILES, out, "d")
    assert len(calls) == 3
    assert tree(out) == written(OTHER) and siblings(out) == []


def test_short_writes_are_continued_until_every_byte_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write
    sizes: list[int] = []

    def short(fd: int, data: bytes | memoryview) -> int:  # at most 3 bytes a call, as a signal may cut a write
        sizes.append(len(data))
        return real_write(fd, bytes(data[:3]))

    monkeypatch.setattr(atomic.os, "write", short)
    files = Rendered({"a.txt": b"0123456789a", "b/c.txt": b""}, private=())
    out = write_outputs(files, tmp_path / "out", "d")
    monkeypatch.undo()
    assert tree(out) == written(files)
    at = sizes.index(11)  # a.txt (the marker's 31 bytes went 31, 28, …, 1), then its rest, 3 bytes at a time
    assert sizes[at : at + 4] == [11, 8, 5, 2] and sizes.count(0) == 1  # (the empty file: one call)


def test_text_is_written_a_slice_at_a_time_with_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A render worker hands ASCII text to the staging tree, which encodes it a slice at a time (no second copy
    of a big file in fresh memory): the file holds its bytes, across slice ends, a short write within a slice
    continued, and empty text is an empty file."""
    from fabric.render.engine.pool import Sink
    from fabric.write.atomic import Staging

    real_write = os.write
    sizes: list[int] = []

    def short_once(fd: int, data: bytes | memoryview) -> int:  # the second slice's first call writes 5 bytes
        sizes.append(len(data))
        return real_write(fd, bytes(data[:5]) if len(sizes) == 2 else data)

    text = "".join(f"{n:07d},leaf{n % 97:03d}\n" for n in range(20_000))  # 320,000 characters: 5 slices
    assert len(text) == 320_000 and text.isascii()
    staging = Staging(tmp_path / "out", "d")
    sink: Sink = staging.write
    monkeypatch.setattr(atomic.os, "write", short_once)
    sink("big.csv", text, False)
    monkeypatch.undo()
    sink("empty.txt", "", True)
    sink("zurich.txt", "Zürich " * 20_000, False)  # (any text a caller gives is written as UTF-8)
    staging.commit()
    assert (tmp_path / "out" / "big.csv").read_bytes() == text.encode()
    whole, rest = divmod(320_000, atomic._SLICE)
    assert (whole, rest) == (4, 57_856)
    assert sizes == [atomic._SLICE, atomic._SLICE, atomic._SLICE - 5, atomic._SLICE, atomic._SLICE, rest]
    assert (tmp_path / "out" / "empty.txt").read_bytes() == b""
    assert (tmp_path / "out" / "zurich.txt").read_bytes() == ("Zürich " * 20_000).encode()
    assert stat.S_IMODE((tmp_path / "out" / "empty.txt").stat().st_mode) == 0o600


def test_a_write_that_makes_no_progress_is_an_error_not_a_spin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write
    calls: list[int] = []

    def stuck(fd: int, data: bytes | memoryview) -> int:  # the marker written, then a byte of a.txt, then nothing
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, data)
        return real_write(fd, bytes(data[:1])) if len(calls) == 2 else 0

    out = write_outputs(OTHER, tmp_path / "out", "d")
    monkeypatch.setattr(atomic.os, "write", stuck)
    with pytest.raises(OutputError, match=r"a\.txt.*made no progress"):
        write_outputs(FILES, out, "d")
    monkeypatch.undo()
    assert calls == [31, 4, 3] and tree(out) == written(OTHER) and siblings(out) == []  # the old output stays


def test_an_interrupt_mid_write_keeps_the_old_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = write_outputs(OTHER, tmp_path / "out", "d")

    def interrupted(dir_fd: int, name: str, data: bytes, mode: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic, "_write_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_outputs(FILES, out, "d")
    assert tree(out) == written(OTHER) and siblings(out) == []


def test_without_renameat2_two_renames_replace_the_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = write_outputs(OTHER, tmp_path / "out", "d")
    exchanges: list[tuple[Path, Path]] = []

    def no_exchange(a: Path, b: Path) -> bool:
        exchanges.append((a, b))
        return False

    monkeypatch.setattr(atomic, "_exchange", no_exchange)
    write_outputs(FILES, out, "d")
    assert len(exchanges) == 1
    assert tree(out) == written(FILES) and siblings(out) == []


def test_without_renameat2_a_failed_second_rename_restores_the_old_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = write_outputs(OTHER, tmp_path / "out", "d")
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    original = os.rename
    renames: list[str] = []

    def rename(src: Path, dst: Path) -> None:
        renames.append(Path(src).name)
        if len(renames) == 2:
            raise OSError(5, "Input/output error")
        original(src, dst)

    monkeypatch.setattr(atomic.os, "rename", rename)
    with pytest.raises(OSError, match="Input/output error"):
        write_outputs(FILES, out, "d")
    assert renames[0] == "out" and renames[1].startswith(".out.new-") and renames[2].startswith(".out.old-")
    assert tree(out) == written(OTHER) and siblings(out) == []


def _record(monkeypatch: pytest.MonkeyPatch, syncfs: bool) -> list[str]:
    events: list[str] = []
    fsync, exchange, real_syncfs = os.fsync, atomic._exchange, atomic._SYNCFS

    def record_fsync(fd: int) -> None:
        events.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        fsync(fd)

    def record_syncfs(fd: int) -> int:
        events.append("syncfs")
        return real_syncfs(fd) if real_syncfs else 0

    def record_exchange(a: Path, b: Path) -> bool:
        events.append("exchange")
        return exchange(a, b)

    monkeypatch.setattr(atomic.os, "fsync", record_fsync)
    monkeypatch.setattr(atomic, "_exchange", record_exchange)
    monkeypatch.setattr(atomic, "_SYNCFS", record_syncfs if syncfs else None)
    return events


def test_the_tree_is_synced_at_once_before_the_exchange(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = write_outputs(OTHER, tmp_path / "out", "d")
    events = _record(monkeypatch, syncfs=True)
    write_outputs(FILES, out, "d")
    assert events == ["syncfs", "exchange", "dir"]  # the whole staging filesystem, then the parent directory
    assert tree(out) == written(FILES)


def test_without_syncfs_every_file_and_directory_is_fsynced_before_the_exchange(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = write_outputs(OTHER, tmp_path / "out", "d")
    events = _record(monkeypatch, syncfs=False)
    write_outputs(FILES, out, "d")
    before = events[: events.index("exchange")]
    assert before.count("file") == len(FILES) + 2  # every file, the marker and the manifest
    assert before.count("dir") == 3  # configs/leaf1, configs, the staging root
    assert events[events.index("exchange") + 1 :] == ["dir"]  # the parent, after the exchange
    assert tree(out) == written(FILES)


def test_a_failed_sync_keeps_the_old_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = write_outputs(OTHER, tmp_path / "out", "d")
    monkeypatch.setattr(atomic, "_SYNCFS", lambda fd: -1)
    with pytest.raises(OSError):
        write_outputs(FILES, out, "d")
    assert tree(out) == written(OTHER) and siblings(out) == []


# --------------------------------------------------------------------------------------------- stale staging


def test_stale_staging_directories_are_removed_by_the_next_build(tmp_path: Path) -> None:
    out = write_outputs(OTHER, tmp_path / "out", "d")
    stale = tmp_path / ".out.new-abc123"
    (stale / "configs").mkdir(parents=True)
    (stale / MARKER).write_text("written by fabric for design d\n")
    (stale / "configs" / "half").write_bytes(b"par")
    old = tmp_path / ".out.old-xyz"
    old.mkdir()
    (old / MARKER).write_text("x")
    empty = tmp_path / ".out.new-empty1"  # killed between mkdtemp and the marker
    empty.mkdir()
    foreign = tmp_path / ".out.new-foreign"  # not ours: no marker
    foreign.mkdir()
    (foreign / "data").write_bytes(b"keep")
    target = tmp_path / "target"
    target.mkdir()
    (target / MARKER).write_text("x")
    (tmp_path / ".out.new-link").symlink_to(target)  # a symlink is never followed
    other = tmp_path / ".other.new-abc"  # another output's staging
    other.mkdir()
    (other / MARKER).write_text("x")
    write_outputs(FILES, out, "d")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".other.new-abc",
        ".out.new-foreign",
        ".out.new-link",
        "out",
        "target",
    ]
    assert tree(foreign) == {"data": b"keep"} and tree(target) == {MARKER: b"x"}


def test_a_staging_directory_a_running_build_holds_is_kept(tmp_path: Path) -> None:
    running = tmp_path / ".out.new-running"
    running.mkdir()
    (running / MARKER).write_text("x")
    fd = os.open(running, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert remove_stale(tmp_path, "out") == []
        assert running.exists()
    finally:
        os.close(fd)
    assert remove_stale(tmp_path, "out") == [running] and not running.exists()


# --------------------------------------------------------------------------------------------- kill -9


# A real `fabric build` whose writer pauses briefly before each file and says when it starts writing, so that
# a kill lands inside the write phase; everything else is the command as users run it.
DRIVER = """
import os, sys, time
import fabric.write.atomic as atomic
from fabric.cli import main
original, flag = atomic._write_file, sys.argv.pop(1)
def slow(dir_fd, name, data, mode):
    if not os.path.exists(flag):
        open(flag, "w").close()
    time.sleep(0.005)
    original(dir_fd, name, data, mode)
atomic._write_file = slow
main()
"""


@pytest.mark.slow
def test_a_build_killed_while_writing_leaves_the_old_or_the_new_tree(tmp_path: Path) -> None:
    text = (DESIGNS / "lab.yaml").read_text()
    specs = {}
    for version in ("one", "two"):
        specs[version] = tmp_path / f"{version}.yaml"
        specs[version].write_text(text.replace("\ndescription: ", f"\ndescription: version {version}, ", 1))
        assert f"version {version}" in specs[version].read_text()
    out = tmp_path / "out"
    expected = {}
    for version, spec in specs.items():
        result = subprocess.run([sys.executable, "-m", "fabric.cli", "build", str(spec), "-o", str(out)], cwd=REPO)
        assert result.returncode == 0
        expected[version] = tree(out)
    assert expected["one"] != expected["two"]
    assert len(expected["one"]) == len(render_all(build_fabric(specs["one"]))) + 2  # every output, marker, manifest
    rng = random.Random(7)
    outcomes: dict[str, int] = {"one": 0, "two": 0}
    leftovers = 0
    for i in range(12):
        flag = tmp_path / f"writing-{i}"
        spec = specs["two" if i % 2 else "one"]
        command = [sys.executable, "-c", DRIVER, str(flag), "build", str(spec), "-o", str(out)]
        process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while not flag.exists() and process.poll() is None:
                time.sleep(0.005)
            assert process.poll() is None, "the build ended before it started writing"
            time.sleep(rng.uniform(0, 0.3))
            process.send_signal(signal.SIGKILL)
        finally:
            process.kill()
            process.wait()
        now = tree(out)
        outcome = next(v for v, files in expected.items() if files == now)  # old or new, complete
        outcomes[outcome] += 1
        left = siblings(out)
        assert len(left) <= 1, f"earlier builds' staging directories survived: {left}"
        leftovers += len(left)
    assert leftovers >= 1, "no kill landed inside the write phase"
    assert sum(outcomes.values()) == 12
    result = subprocess.run([sys.executable, "-m", "fabric.cli", "build", str(specs["one"]), "-o", str(out)], cwd=REPO)
    assert result.returncode == 0 and tree(out) == expected["one"] and siblings(out) == []


def test_the_command_refuses_an_escaping_path_and_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    import fabric.render
    from fabric.cli import app

    hostile = Rendered({"cabling.csv": b"x", "configs/../../../../x1/frr.conf": b"owned"}, private=())

    def render_into(build: object, sink: Callable[[str, bytes, bool], None], step: object, workers: object) -> None:
        for path, data in hostile.items():
            sink(path, data, False)

    monkeypatch.setattr(fabric.render, "render_into", render_into)
    out = tmp_path / "a" / "b" / "out"
    result = CliRunner().invoke(app, ["build", str(DESIGNS / "lab.yaml"), "-o", str(out)])
    assert result.exit_code == 2
    assert "output-refused -: refusing to write output path 'configs/../../../../x1/frr.conf'" in result.output
    assert not (tmp_path / "a").exists() and not list(tmp_path.rglob("x1"))  # refused, and nothing left behind


@pytest.mark.parametrize("name", ["../../etc", "a/b", "x\ny", ".."])
def test_the_lab_never_puts_state_outside_its_directory(name: str) -> None:
    from fabric.tools.lab import LabError, state_name

    with pytest.raises(LabError, match="refusing"):
        state_name(name)
    assert state_name("leaf01") == "leaf01"


def test_syncing_flushes_while_the_tree_is_written_and_commit_still_syncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the background flush starts the disk writes early; the commit's own sync (and its errors) stay
    import threading

    from fabric.write.atomic import Staging

    calls: list[int] = []
    written_once = threading.Event()

    def record(fd: int) -> int:
        calls.append(fd)
        written_once.set()
        return 0

    monkeypatch.setattr(atomic, "_SYNCFS", record)
    staging = Staging(tmp_path / "out", "d")
    with staging.syncing(every=0.01):
        staging.write("a.txt", b"a\n", False)
        assert written_once.wait(5)  # the thread flushed at least once while the block ran
    during = len(calls)
    assert during >= 1 and not [t for t in threading.enumerate() if t.name == "fabric-sync"]  # joined
    staging.commit()
    assert len(calls) == during + 1  # commit's own sync
    assert (tmp_path / "out" / "a.txt").read_bytes() == b"a\n"
    monkeypatch.setattr(atomic, "_SYNCFS", None)
    plain = Staging(tmp_path / "plain", "d")
    with plain.syncing(every=0.01):  # without syncfs each file is fsynced as written: no thread
        assert not [t for t in threading.enumerate() if t.name == "fabric-sync"]
    plain.abort()


@pytest.mark.parametrize("kept_open", [atomic.DIRS_OPEN, 10**6])
def test_more_directories_than_a_process_may_keep_open_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept_open: int
) -> None:
    """A million GPUs' host files are 125,000 directories: the writer keeps the most recently used DIRS_OPEN of them
    open, not all (the build stopped at "Too many open files"). Under a descriptor limit of 256, 600 directories,
    each written twice (the second time after it was closed), hold every file; the open descriptors stay bounded.
    Keeping every one open (the negative case) runs out of descriptors."""
    import resource

    monkeypatch.setattr(atomic, "DIRS_OPEN", kept_open)
    files = {f"hosts/node{i:03d}/{name}": f"{i} {name}\n" for i in range(600) for name in ("a.env", "b.conf")}
    order = sorted(files, key=lambda rel: (rel.rsplit("/", 1)[1], rel))  # every directory, then every one again
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    staging = atomic.Staging(tmp_path / "out", "d")
    try:
        most = 0
        for rel in order:
            staging.write(rel, files[rel], private=False)
            most = max(most, len(os.listdir("/proc/self/fd")))
        out = staging.commit()
    except OutputError as exc:
        staging.abort()
        assert kept_open > 256 and "Too many open files" in str(exc)
        return
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert kept_open == atomic.DIRS_OPEN == 64
    assert most < 256 and len(staging._dirs) <= atomic.DIRS_OPEN + 1
    assert {str(p.relative_to(out)): p.read_text() for p in out.glob("hosts/*/*")} == files
