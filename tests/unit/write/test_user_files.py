"""No user file is ever lost (issue 24): a rebuild replaces only what fabric wrote (its marker and manifest) and
refuses a directory holding anything else; an output directory may not hold an input of the build; `plan --write`
writes its spec file and nothing else; a name too long for the filesystem is a finding."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fabric.cli import app
from fabric.model.rendered import Rendered
from fabric.write.atomic import (
    MANIFEST,
    MANIFEST_BYTES,
    MARKER,
    OutputError,
    Staging,
    foreign_entries,
    modified_entries,
    write_new_files,
    write_outputs,
)
from tests.conftest import DESIGNS, examples

runner = CliRunner()
FILES = Rendered(
    {"a.txt": b"one\n", "configs/leaf1/frr.conf": b"x\n", "configs/leaf2/frr.conf": b"y\n", "cabling.csv": b"c\n"},
    private=(),
)
OTHER = Rendered({"a.txt": b"two\n", "configs/leaf1/frr.conf": b"z\n"}, private=())


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------------------------- the property

_NAME = st.sampled_from(["NOTES.txt", ".git", "a.txt.orig", "configs", "leaf1", "frr.conf", "x", ".hidden", "b"])
_USER_PATH = st.lists(_NAME, min_size=1, max_size=4).map("/".join)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    user=st.dictionaries(_USER_PATH, st.binary(max_size=8), max_size=5),
    edits=st.dictionaries(st.sampled_from(sorted(FILES)), st.binary(max_size=8), max_size=2),
)
def test_a_rebuild_never_removes_a_file_fabric_did_not_write(
    tmp_path_factory: pytest.TempPathFactory, user, edits
) -> None:  # type: ignore[no-untyped-def]
    """... nor one fabric wrote that was edited since: an edited file is the user's."""
    out = tmp_path_factory.mktemp("prop") / "out"
    write_outputs(FILES, out, "d")
    placed: dict[str, bytes] = {}
    for path, data in edits.items():
        (out / path).write_bytes(data)
        if data != FILES[path]:  # (the same bytes again is no edit)
            placed[path] = data
    for path, data in user.items():
        target = out / path
        if path in FILES or any(str(p) in placed for p in Path(path).parents):
            continue  # a path fabric wrote, or under a file the user placed
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir():
                (target / "kept").write_bytes(data)
                placed[f"{path}/kept"] = data
            else:
                target.write_bytes(data)
                placed[path] = data
        except (NotADirectoryError, FileExistsError, IsADirectoryError):
            continue  # a file fabric wrote is in the way of the user's directory
    try:
        write_outputs(OTHER, out, "d")
        refused = False
    except OutputError as exc:
        refused = True
        assert exc.code in ("output-foreign", "output-modified")
    after = tree(out)
    for path, data in placed.items():
        assert after.get(path) == data, (path, refused)
    assert refused == bool(placed)
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]


# --------------------------------------------------------------------------------------------- the manifest


def sha1sum(files: dict[str, bytes]) -> bytes:
    """What `sha1sum` prints for `files`, by path: the manifest's format."""
    return b"".join(f"{hashlib.sha1(files[p]).hexdigest()}  {p}\n".encode() for p in sorted(files))


def test_the_manifest_lists_every_file_written_and_a_rebuild_removes_only_those(tmp_path: Path) -> None:
    out = write_outputs(FILES, tmp_path / "out", "d")
    assert (out / MANIFEST).read_bytes() == sha1sum(FILES)
    out = write_outputs(OTHER, out, "d")  # files of the old output the new one lacks go: fabric wrote them
    assert tree(out) == {
        **OTHER,
        MARKER: b"written by fabric for design d\n",
        MANIFEST: sha1sum(dict(OTHER)),
    }


def test_a_file_fabric_wrote_and_the_user_edited_refuses_the_rebuild(tmp_path: Path) -> None:
    out = write_outputs(FILES, tmp_path / "out", "d")
    (out / "configs/leaf1/frr.conf").write_bytes(b"x\n! my change\n")
    (out / "cabling.csv").write_bytes(b"C\n")  # the same size: the bytes are compared, not the size
    before = tree(out)
    assert modified_entries(out) == ["cabling.csv", "configs/leaf1/frr.conf"]
    with pytest.raises(OutputError, match="changed since") as caught:
        write_outputs(OTHER, out, "d")
    assert caught.value.code == "output-modified"
    assert "'cabling.csv', 'configs/leaf1/frr.conf'" in str(caught.value)
    assert "delete the file" in caught.value.hint and "move the file out" in caught.value.hint
    assert tree(out) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]  # no staging tree left either
    # the way on, as the hint says: an edit moved out, the other given up
    (out / "configs/leaf1/frr.conf").rename(tmp_path / "frr.conf.mine")
    (out / "cabling.csv").unlink()
    assert modified_entries(out) == []
    out = write_outputs(OTHER, out, "d")
    assert tree(out)["configs/leaf1/frr.conf"] == b"z\n"
    assert (tmp_path / "frr.conf.mine").read_bytes() == b"x\n! my change\n"


def test_a_file_edited_while_the_build_renders_is_kept(tmp_path: Path) -> None:
    """The check is made again at the commit, hashing only files whose lstat changed since the first."""
    out = write_outputs(FILES, tmp_path / "out", "d")
    staging = Staging(out, "d")
    staging.write("a.txt", b"new\n", False)
    (out / "a.txt").write_bytes(b"mine\n")
    with pytest.raises(OutputError, match=r"'a\.txt'") as caught:
        staging.commit()
    assert caught.value.code == "output-modified"
    assert (out / "a.txt").read_bytes() == b"mine\n"
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]


def test_a_render_workers_digests_reach_the_manifest(tmp_path: Path) -> None:
    """A forked worker writes into the staging tree and records each digest in a file of its own there; the commit
    takes them into the manifest and leaves no such file in the output."""
    staging = Staging(tmp_path / "out", "d")
    staging.write("a.txt", b"one\n", False)
    pid = os.fork()
    if pid == 0:  # the worker
        try:
            staging.write("configs/leaf1/frr.conf", "x\n", False)
            staging.write("cabling.csv", b"c\n", False)
        finally:
            os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    recorded = [p for p in staging._path.iterdir() if p.name.startswith(".fabric-digests-")]
    assert [p.name for p in recorded] == [f".fabric-digests-{pid}"]
    assert recorded[0].read_text().count("\n") == 2
    out = staging.commit()
    files = {"a.txt": b"one\n", "configs/leaf1/frr.conf": b"x\n", "cabling.csv": b"c\n"}
    assert (out / MANIFEST).read_bytes() == sha1sum(files)
    assert sorted(tree(out)) == sorted([*files, MARKER, MANIFEST])
    with pytest.raises(OutputError, match="output marker"):
        write_outputs(Rendered({".fabric-digests-1": b""}, private=()), tmp_path / "other", "d")


def test_a_manifest_of_paths_alone_is_read_without_comparing_contents(tmp_path: Path) -> None:
    """An output of fabric before digests: its files are fabric's, their contents unknown."""
    out = write_outputs(FILES, tmp_path / "out", "d")
    (out / MANIFEST).write_text("".join(f"{p}\n" for p in sorted(FILES)))
    (out / "a.txt").write_bytes(b"edited\n")
    assert modified_entries(out) == []
    assert tree(write_outputs(OTHER, out, "d"))["a.txt"] == b"two\n"


@pytest.mark.parametrize(
    "manifest",
    [
        b"../outside\n",
        b"/etc/passwd\n",
        b"a.txt",  # no final newline
        b"a.txt\n\xff\n",
        b"a.txt\n\n",
        b"configs/./x\n",
        b"a" * (MANIFEST_BYTES + 1),
        b"a.txt\na.txt\n",  # a path twice
        b"%s  a.txt\ncabling.csv\n" % (b"0" * 40),  # a digest on some lines only
        b"cabling.csv\n%s  a.txt\n" % (b"0" * 40),
        b"%s  a.txt\n%s  a.txt\n" % (b"0" * 40, b"1" * 40),
        b"%s  ../a.txt\n" % (b"0" * 40),
        b"%s  a.txt\n%s  cabling.csv\n" % (b"0" * 40, b"A" * 40),  # not lowercase hex
        b"%s  a.txt\n" % (b"A" * 40),
        b"%s  a.txt\n%s  cabling.csv\n" % (b"0" * 40, b"0" * 39),  # too short
        b"%s  a.txt\n%s   cabling.csv\n" % (b"0" * 40, b"0" * 40),  # " cabling.csv" is no path fabric writes
    ],
)
def test_a_manifest_fabric_could_not_have_written_refuses_the_rebuild(tmp_path: Path, manifest: bytes) -> None:
    out = write_outputs(FILES, tmp_path / "out", "d")
    (out / MANIFEST).write_bytes(manifest)
    before = tree(out)
    with pytest.raises(OutputError, match="manifest") as caught:
        write_outputs(OTHER, out, "d")
    assert caught.value.code == "output-foreign"
    assert tree(out) == before


def test_a_symlinked_manifest_or_marker_is_not_followed(tmp_path: Path) -> None:
    out = write_outputs(FILES, tmp_path / "out", "d")
    (tmp_path / "list").write_text("NOTES.txt\n")
    (out / "NOTES.txt").write_text("mine")
    (out / MANIFEST).unlink()
    (out / MANIFEST).symlink_to(tmp_path / "list")
    with pytest.raises(OutputError, match="manifest"):
        write_outputs(OTHER, out, "d")
    assert (out / "NOTES.txt").read_text() == "mine"


def test_an_output_of_a_fabric_without_manifests_is_refused_with_its_files(tmp_path: Path) -> None:
    out = write_outputs(FILES, tmp_path / "out", "d")
    (out / MANIFEST).unlink()
    with pytest.raises(OutputError, match="without an output manifest") as caught:
        write_outputs(OTHER, out, "d")
    assert "'a.txt'" in str(caught.value) and "'configs'" in str(caught.value)
    assert foreign_entries(out) == ["a.txt", "cabling.csv", "configs"]


def test_a_symlink_fifo_or_directory_in_place_of_a_file_fabric_wrote_is_foreign(tmp_path: Path) -> None:
    out = write_outputs(FILES, tmp_path / "out", "d")
    (out / "a.txt").unlink()
    (out / "a.txt").symlink_to("/etc/hostname")
    os.mkfifo(out / "cabling.csv.fifo")
    (out / "configs/leaf2/frr.conf").unlink()
    (out / "configs/leaf2/frr.conf").mkdir()
    assert foreign_entries(out) == ["a.txt", "cabling.csv.fifo", "configs/leaf2/frr.conf"]


def test_the_refusal_names_twenty_entries_and_counts_the_rest(tmp_path: Path) -> None:
    out = write_outputs(FILES, tmp_path / "out", "d")
    for i in range(25):
        (out / f"mine{i:02}").write_text("x")
    with pytest.raises(OutputError, match="'mine19' and 5 more"):
        write_outputs(OTHER, out, "d")


# --------------------------------------------------------------------------------------------- the command


def test_a_spec_inside_the_output_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "OUT"
    out.mkdir()
    (out / "lab.yaml").write_bytes((DESIGNS / "lab.yaml").read_bytes())
    result = runner.invoke(app, ["build", str(out / "lab.yaml"), "-o", str(out)])
    assert result.exit_code == 2 and "output-holds-input" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["lab.yaml"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["OUT"]


def test_a_spec_fabric_wrote_into_the_output_is_refused_too(tmp_path: Path) -> None:
    """`plan --write D` then `build D/x.yaml -o D`: the spec is listed in no manifest now, but the rule is the
    input's, whatever wrote it."""
    out = write_new_files(tmp_path / "D", {"lab.yaml": (DESIGNS / "lab.yaml").read_bytes()})
    result = runner.invoke(app, ["build", str(out / "lab.yaml"), "-o", str(out)])
    assert result.exit_code == 2 and "output-holds-input" in result.output
    assert (out / "lab.yaml").exists()


def test_a_part_file_or_lock_inside_the_output_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert runner.invoke(app, ["build", str(DESIGNS / "lab.yaml"), "-o", str(out)]).exit_code == 0
    spec = tmp_path / "lab.yaml"
    spec.write_text((DESIGNS / "lab.yaml").read_text() + "\ncatalog: [out/parts.yaml]\n")
    result = runner.invoke(app, ["build", str(spec), "-o", str(out)])
    assert result.exit_code == 2, result.output
    # a lock given with --lock inside the output is an input too, unless it is the output's own
    (out.parent / "elsewhere").mkdir()
    other = tmp_path / "out2"
    assert runner.invoke(app, ["build", str(DESIGNS / "lab.yaml"), "-o", str(other)]).exit_code == 0
    result = runner.invoke(
        app, ["build", str(DESIGNS / "lab.yaml"), "--lock", str(other / "allocations.lock.json"), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        app, ["build", str(DESIGNS / "lab.yaml"), "--lock", str(out / "allocations.lock.json"), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("where", ["name", "inner"])
def test_a_name_too_long_is_a_finding(tmp_path: Path, where: str) -> None:
    long = "x" * 300
    out = tmp_path / long if where == "name" else tmp_path / long / "out"
    result = runner.invoke(app, ["build", str(DESIGNS / "lab.yaml"), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert "output-path" in result.output and "longer than the filesystem allows" in result.output
    assert list(tmp_path.iterdir()) == []


def test_plan_write_writes_its_spec_and_keeps_the_users_part_file(tmp_path: Path) -> None:
    out = tmp_path / "D"
    args = ["plan", "--gpus", "64", "--node", "dgx-h100", "--technology", "infiniband", "--switch", "qm9700"]
    args += ["--tiers", "2", "--json", "--workers", "1", "--write", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    (specs,) = [p.name for p in out.iterdir()]
    (out / "my-parts.yaml").write_text("switches: {}\n")
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output  # the same spec again: left as it is
    assert sorted(p.name for p in out.iterdir()) == sorted([specs, "my-parts.yaml"])
    (out / specs).write_text("name: edited by hand\n")
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "output-foreign" in refused.output
    assert (out / specs).read_text() == "name: edited by hand\n"
    assert (out / "my-parts.yaml").read_text() == "switches: {}\n"


def test_write_new_files_never_replaces(tmp_path: Path) -> None:
    d = write_new_files(tmp_path / "d", {"a.yaml": b"1"})
    with pytest.raises(OutputError, match="exists"):
        write_new_files(d, {"b.yaml": b"2", "a.yaml": b"other"})
    assert sorted(p.name for p in d.iterdir()) == ["a.yaml"]  # refused before anything was written
    with pytest.raises(OutputError, match="relative"):
        write_new_files(d, {"../x.yaml": b"1"})
