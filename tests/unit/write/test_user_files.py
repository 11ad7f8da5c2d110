"""No user file is ever lost (issue 24): a rebuild replaces only what fabric wrote (its marker and manifest) and
refuses a directory holding anything else; an output directory may not hold an input of the build; `plan --write`
writes its spec file and nothing else; a name too long for the filesystem is a finding."""

from __future__ import annotations

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
    foreign_entries,
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
@given(user=st.dictionaries(_USER_PATH, st.binary(max_size=8), min_size=1, max_size=5))
def test_a_rebuild_never_removes_a_file_fabric_did_not_write(tmp_path_factory: pytest.TempPathFactory, user) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("prop") / "out"
    write_outputs(FILES, out, "d")
    placed: dict[str, bytes] = {}
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
        assert exc.code == "output-foreign"
    after = tree(out)
    for path, data in placed.items():
        assert after.get(path) == data, (path, refused)
    assert refused == bool(placed)
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]


# --------------------------------------------------------------------------------------------- the manifest


def test_the_manifest_lists_every_file_written_and_a_rebuild_removes_only_those(tmp_path: Path) -> None:
    out = write_outputs(FILES, tmp_path / "out", "d")
    assert (out / MANIFEST).read_text().splitlines() == sorted(FILES)
    out = write_outputs(OTHER, out, "d")  # files of the old output the new one lacks go: fabric wrote them
    assert tree(out) == {
        **OTHER,
        MARKER: b"written by fabric for design d\n",
        MANIFEST: b"a.txt\nconfigs/leaf1/frr.conf\n",
    }


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
