"""Rendering in a pool of workers: the same bytes whatever the worker count; who renders in one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric import render_all
from fabric.fast.parallel import WorkersError, max_workers
from fabric.render.engine.pool import POOL_ABOVE, SHARDS_PER_WORKER, Task, tasks, worker_count
from fabric.render.outputs import OUTPUTS
from tests.conftest import REPO, built


@pytest.mark.parametrize("design", ["lab", "lab-ib"])
def test_worker_count_does_not_change_bytes(design: str) -> None:
    build = built(design)
    alone = render_all(build, workers=1)
    for workers in (2, 3):
        pooled = render_all(build, workers=workers)
        assert list(pooled) == list(alone)  # the same paths in the same order
        changed = [path for path in alone if pooled[path] != alone[path]]
        assert not changed, f"{workers} workers changed {changed[:5]}"
        assert pooled.private == alone.private


def test_a_worker_that_forgets_its_memos_after_every_task_writes_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A million GPUs' workers forget their tasks' memos (past FORGET_ABOVE resident): made again by a later task
    that reads them, they give the same bytes. Here this process renders as a worker does, every task forgetting
    (the limit at 0); the same with the limit out of reach forgets nothing."""
    from fabric import build_fabric
    from fabric.fast import memo
    from fabric.render.engine import pool

    alone = render_all(built("lab-ib"), workers=1)
    build = build_fabric(REPO / "designs" / "lab-ib.yaml")  # a build no memo holds yet
    memo.inherit()
    forgot: list[int] = []
    real = memo.forget_if_large
    monkeypatch.setattr(memo, "forget_if_large", lambda: forgot.append(real()) or forgot[-1])
    monkeypatch.setattr(pool, "_WORKER", True)
    for limit in (2**62, 0):
        forgot.clear()
        monkeypatch.setattr(memo, "FORGET_ABOVE", limit)
        again = render_all(build, workers=1)
        assert dict(again) == dict(alone)
        assert len(forgot) == len(tasks(OUTPUTS, 1))  # after every task
        assert (sum(forgot) > 0) == (limit == 0), limit  # the report's content, the cage columns, ...


def test_tasks_shard_per_switch_outputs_and_keep_shared_work_together() -> None:
    every = OUTPUTS
    todo = tasks(every, 2)
    configs = [t for t in todo if t.names == ("configs",)]
    assert [(t.part, t.parts) for t in configs] == [(k, 2 * SHARDS_PER_WORKER) for k in range(2 * SHARDS_PER_WORKER)]
    report = [t for t in todo if "report-html" in t.names]
    assert len(report) == 1 and set(report[0].names) == {
        "bom",
        "diagrams",
        "power",
        "report-html",
        "report-md",
        "summary",
    }
    addresses = [t for t in todo if "lock" in t.names]  # every address of the plan becomes text once
    assert len(addresses) == 1 and set(addresses[0].names) == {"ip-plan", "lock", "netbox"}
    named = [name for t in todo if t.parts == 1 for name in t.names]
    sharded = ["cabling-xlsx", "configs", "eos-structured-config"]
    assert sorted([*named, *sharded]) == sorted(o.name for o in every)
    # the heaviest first, by declared weight (a shard weighs its part): the addresses (7.5 s at 100k GPUs) lead
    weight = {o.name: o.weight for o in every}
    weights = [sum(weight[n] for n in t.names) / t.parts for t in todo]
    assert weights == sorted(weights, reverse=True)
    assert todo[0] == addresses[0]
    assert todo.index(report[0]) < todo.index(configs[0]) < todo.index(Task(("inventory",)))
    assert all(t.parts == 1 for t in tasks(every, 1))  # one worker: nothing is sharded


def test_worker_count(monkeypatch: pytest.MonkeyPatch) -> None:
    small = built("lab")
    assert len(small.allocation.cables) < POOL_ABOVE
    monkeypatch.delenv("FABRIC_WORKERS", raising=False)
    assert worker_count(small, None) == 1  # too small to pay for a fork
    assert worker_count(small, 3) == 3  # asked for
    monkeypatch.setenv("FABRIC_WORKERS", "2")
    assert worker_count(small, None) == 2
    assert worker_count(small, 1) == 1  # the argument wins over the environment
    monkeypatch.setenv("FABRIC_WORKERS", "many")
    with pytest.raises(WorkersError, match="FABRIC_WORKERS must be a count"):  # not a count: refused, not ignored
        worker_count(small, None)
    monkeypatch.setenv("FABRIC_WORKERS", "")
    assert worker_count(small, None) == 1  # blank: as if unset
    assert worker_count(small, 10_000) == max_workers()  # a caller's count is capped


def test_a_refusal_in_a_worker_is_the_same_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import fabric.render
    from fabric.render import RenderRefused
    from tests.support.design_variants import on_platform

    monkeypatch.setattr(fabric.render, "unsafe_values", lambda build, infiniband=False: [])  # the template's check
    build = on_platform("lab", "sonic")
    intents = dict(build.intents)
    intents["leaf1"] = dataclasses.replace(intents["leaf1"], hostname="\nrouter bgp 666")
    hostile = dataclasses.replace(build, intents=intents)
    found = []
    for workers in (1, 2):
        with pytest.raises(RenderRefused) as refused:
            render_all(hostile, workers=workers)
        found.append([f.format() for f in refused.value.findings])
    assert found[0] == found[1] and len(found[0]) == 1 and "outputs.configs" in found[0][0]


def test_build_with_workers_writes_the_same_tree(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fabric.cli import app

    trees = []
    for workers in ("1", "2"):
        out = tmp_path / workers
        result = CliRunner().invoke(
            app, ["build", str(REPO / "designs" / "lab.yaml"), "-o", str(out), "--workers", workers]
        )
        assert result.exit_code == 0, result.output
        trees.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert len(trees[0]) > 30 and trees[0] == trees[1]
    assert CliRunner().invoke(app, ["build", str(REPO / "designs" / "lab.yaml"), "--workers", "0"]).exit_code == 2


@pytest.mark.parametrize("workers", [1, 2])
def test_workers_writing_into_the_staging_tree_write_what_render_all_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    from fabric.render import render_into
    from fabric.write.atomic import Staging
    from tests.support.design_variants import on_platform

    monkeypatch.setenv("FABRIC_BGP_KEY", "s3cret")
    build = on_platform("lab", "sonic", bgp_password_env="FABRIC_BGP_KEY")
    rendered = render_all(build, workers=1)
    assert rendered.private  # the configs hold the BGP password
    staging = Staging(tmp_path / "out", build.name)
    paths = render_into(build, staging.write, workers=workers)
    out = staging.commit()
    assert paths == list(rendered)
    on_disk = {
        str(p.relative_to(out)): p
        for p in out.rglob("*")
        if p.is_file() and p.name not in (".fabric-output", ".fabric-manifest")
    }
    assert sorted(on_disk) == paths
    assert [path for path in paths if on_disk[path].read_bytes() != rendered[path]] == []
    private = {path for path, p in on_disk.items() if p.stat().st_mode & 0o077 == 0}
    assert private == rendered.private


def test_a_refusal_in_a_worker_leaves_no_staging_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import fabric.render
    from fabric.render import RenderRefused, render_into
    from fabric.write.atomic import Staging
    from tests.support.design_variants import on_platform

    monkeypatch.setattr(fabric.render, "unsafe_values", lambda build, infiniband=False: [])  # the template's check
    build = on_platform("lab", "sonic")
    intents = dict(build.intents)
    intents["leaf1"] = dataclasses.replace(intents["leaf1"], hostname="\nrouter bgp 666")
    staging = Staging(tmp_path / "out", build.name)
    with pytest.raises(RenderRefused):
        render_into(dataclasses.replace(build, intents=intents), staging.write, workers=2)
    staging.abort()  # as the build command does: the workers are gone by now, nothing writes after it
    assert list(tmp_path.iterdir()) == []


def test_stopping_early_skips_the_tasks_not_begun_and_takes_every_result(monkeypatch: pytest.MonkeyPatch) -> None:
    # a refusal stops the pool without terminating a worker in the middle of sending a result (that left the
    # pool's reader waiting for the rest of it): the tasks not begun return nothing, and no worker is left
    import multiprocessing

    import fabric.render.engine.pool as pool
    from fabric.render import RenderRefused

    build = built("lab")
    stop = multiprocessing.get_context("fork").Event()
    stop.set()
    monkeypatch.setattr(pool, "_STOP", stop)
    monkeypatch.setattr(pool, "_WORKER", True)
    skipped = pool.run(Task(("cabling",)), build, {o.name: o for o in OUTPUTS})
    assert (skipped.files, skipped.sunk, skipped.refused) == ({}, (), None)
    monkeypatch.setattr(pool, "_WORKER", False)
    monkeypatch.setattr(pool, "_STOP", None)

    def refuse() -> None:
        raise RenderRefused([])

    every = OUTPUTS
    results = pool.render_tasks(build, every, 2, None, meanwhile=refuse)
    with pytest.raises(RenderRefused):
        next(results)
    assert multiprocessing.active_children() == []
    assert pool._STOP is None and pool._BUILD is None


def test_a_sink_gets_ascii_text_as_it_is_and_anything_else_as_utf8_bytes() -> None:
    """ASCII text goes to the sink as text (the writer encodes it a slice at a time); other text as its UTF-8
    bytes, bytes as they are; without a sink, every file comes back as bytes; a lone surrogate is refused."""
    from fabric.render.engine.pool import run
    from fabric.render.engine.registry import Output

    files: dict[str, str | bytes] = {"a.txt": "plain\n", "b.txt": "Zürich\n", "c.bin": b"\x00\xff"}
    made = Output("made", lambda build: files)
    got: list[tuple[str, bytes | str, bool]] = []
    done = run(Task(("made",)), build=built("lab"), by_name={"made": made}, sink=lambda *a: got.append(a))
    assert done.refused is None and done.sunk == ("a.txt", "b.txt", "c.bin") and done.files == {}
    assert got == [("a.txt", "plain\n", False), ("b.txt", "Zürich\n".encode(), False), ("c.bin", b"\x00\xff", False)]
    back = run(Task(("made",)), build=built("lab"), by_name={"made": made})
    assert back.files == {"a.txt": b"plain\n", "b.txt": "Zürich\n".encode(), "c.bin": b"\x00\xff"}
    bad = Output("bad", lambda build: {"d.txt": "a\ud800b"})
    refused = run(Task(("bad",)), build=built("lab"), by_name={"bad": bad}, sink=lambda *a: got.append(a))
    assert refused.refused is not None and "d.txt" in refused.refused[1] and len(got) == 3


def test_text_pieces_go_to_the_writer_piece_by_piece_and_come_back_whole(tmp_path: Path) -> None:
    """A TextPieces file reaches the sink as its pieces (never whole) and the staging tree holds them joined;
    without a sink it comes back as the joined bytes; a lone surrogate in a piece refuses the output."""
    from fabric.model.rendered import TextPieces
    from fabric.render.engine.pool import run
    from fabric.render.engine.registry import Output
    from fabric.write.atomic import Staging

    pieces = ["head\n", "x" * 100_000, "Zürich\n"]
    made = Output("made", lambda build: {"big.txt": TextPieces(lambda: iter(pieces))})
    got: list[tuple[str, object, bool]] = []
    done = run(
        Task(("made",)), build=built("lab"), by_name={"made": made}, sink=lambda p, c, x: got.append((p, list(c), x))
    )  # type: ignore[arg-type]
    assert done.refused is None and done.sunk == ("big.txt",) and got == [("big.txt", pieces, False)]
    back = run(Task(("made",)), build=built("lab"), by_name={"made": made})
    assert back.files == {"big.txt": "".join(pieces).encode()}
    bad = Output("bad", lambda build: {"d.txt": TextPieces(lambda: iter(["fine\n", "a\ud800b"]))})
    refused = run(
        Task(("bad",)), build=built("lab"), by_name={"bad": bad}, sink=lambda p, c, x: list(map(str.encode, c))
    )  # type: ignore[arg-type]
    assert refused.refused is not None and "d.txt" in refused.refused[1] and "not text" in refused.refused[1]
    # the writer: each piece encoded as it comes, the file its pieces joined
    staging = Staging(tmp_path / "out", "d")
    staging.write("big.txt", iter(pieces), False)
    staging.commit()
    assert (tmp_path / "out" / "big.txt").read_bytes() == "".join(pieces).encode()
