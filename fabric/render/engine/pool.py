"""Render on several cores: outputs (and shards of the big per-switch ones) as tasks of a pool of forked workers.

Workers are forked after the build, so they share it (nothing of it is pickled); each task returns its files as
bytes and the caller puts them in path order, so the output is byte-identical whatever the worker count or the
order tasks finish in. Given a sink (the writer's staging tree, made before the fork), a task hands it each
file as it is encoded, in the process that rendered it, and returns only the paths: no bytes cross a pipe
and no process holds more than one task's files. The pool pays from a few thousand cables or switches (below,
the fork and the pipe cost more than they save), or with one core, everything renders in this process.

The pool is concurrent.futures' ProcessPoolExecutor: a worker that dies (the OOM killer, a signal) breaks it, every
task not done fails at once and the build ends with `render-worker-died` (WorkerDied: which output the worker had
taken, its peak memory as last read), where multiprocessing.Pool waited for ever for the dead worker's task.

Worker count: the `workers` argument (`fabric build --workers N`), else the `FABRIC_WORKERS` environment variable,
else the usable cores (at most MAX_WORKERS), and one worker for designs below POOL_ABOVE.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from fabric.fast import memo
from fabric.fast.collector import after_task, shared_with_children, worker_collects_between_tasks
from fabric.fast.parallel import cores, env_workers, max_workers
from fabric.model.findings import FabricError, Finding, error
from fabric.model.rendered import TextPieces
from fabric.pipeline import Build
from fabric.render.engine.registry import Output

MAX_WORKERS = 8
SHARDS_PER_WORKER = 4  # smaller parts balance the workers and keep each result sent back (pickled) small
POOL_ABOVE = 4_000  # cables + 10 per Ethernet switch: smaller designs render in one process


@dataclass(frozen=True)
class Task:
    """Outputs rendered together (whole), or shard `part` of `parts` of one output."""

    names: tuple[str, ...]
    part: int = 0
    parts: int = 1


@dataclass(frozen=True)
class Done:
    """What a task made: files as bytes, or the reason rendering refused (an unsafe or unencodable value)."""

    names: tuple[str, ...]
    files: dict[str, bytes]
    refused: tuple[str, str, bool] | None = None  # (output, reason, whether a value of the plan may be named)
    sunk: tuple[str, ...] = ()  # the paths handed to the sink (not in files)


# (path, content, private): where files go as they are rendered; content is bytes, or text (ASCII: `run` encodes
# any other itself, to refuse a lone surrogate) that the writer encodes a slice at a time, so that a big file
# has no second copy in fresh memory, or texts (TextPieces' pieces) it writes as they are made (a lone surrogate
# among them raises UnicodeEncodeError from the sink)
Sink = Callable[[str, bytes | str | Iterable[str], bool], None]


def worker_count(build: Build, workers: int | None) -> int:
    if workers is None:
        workers = env_workers()
    if workers is not None:
        return min(max(1, workers), max_workers())
    size = len(build.allocation.cables) + 10 * len(build.intents)
    if size < POOL_ABOVE:
        return 1
    return min(MAX_WORKERS, cores(None))


def tasks(outputs: tuple[Output, ...], workers: int) -> list[Task]:
    """Shardable outputs in SHARDS_PER_WORKER parts a worker, outputs that go together as one task, the rest alone;
    the heaviest first (by the outputs' declared weights; a shard weighs its part), so that no worker starts a
    long one at the end alone. The order is the registry's among equals."""
    out: list[Task] = []
    groups: dict[str, list[str]] = {}
    weight = {o.name: o.weight for o in outputs}
    for output in outputs:
        if output.shard is not None and workers > 1:
            parts = workers * SHARDS_PER_WORKER
            out.extend(Task((output.name,), k, parts) for k in range(parts))
        elif output.together:
            if output.together not in groups:
                groups[output.together] = []
                out.append(Task(()))  # placeholder, filled below (keeps the group where its first output is)
            groups[output.together].append(output.name)
        else:
            out.append(Task((output.name,)))
    filled = iter(groups.values())
    out = [t if t.names else Task(tuple(next(filled))) for t in out]
    return sorted(out, key=lambda t: -sum(weight[n] for n in t.names) / t.parts)


_BUILD: Build | None = None  # the build a forked worker renders (inherited, not pickled)
_OUTPUTS: dict[str, Output] = {}
_SINK: Sink | None = None
_STOP: Any = None  # set when the caller stops early: the tasks not begun return at once (inherited Event)
_WORKER = False  # this process is a forked worker of the pool
_TAKEN: Any = None  # per task, the pid of the worker that took it (shared memory, inherited)


def _start_worker() -> None:
    """A worker collects garbage between its tasks, not during them: a render makes millions of short-lived
    containers and the collector's passes over them were 10–20 % of it (at 100k GPUs); cycles are rare, and
    each task's end collects what they left (and freezes what survives)."""
    global _WORKER
    _WORKER = True
    worker_collects_between_tasks()
    memo.inherit()


def run(
    task: Task, build: Build | None = None, by_name: dict[str, Output] | None = None, sink: Sink | None = None
) -> Done:
    """Render one task (in a worker, from the inherited build and sink)."""
    from fabric.render.engine.safety import UnsafeText, describe

    build = build or _BUILD
    by_name = by_name or _OUTPUTS
    sink = sink or _SINK
    assert build is not None
    if _WORKER and _STOP is not None and _STOP.is_set():
        return Done(task.names, {})  # the caller no longer wants it
    files: dict[str, bytes] = {}
    sunk: list[str] = []
    for name in task.names:
        output = by_name[name]
        try:
            if task.parts > 1 and output.shard is not None:
                rendered = output.shard(build, task.part, task.parts)
            else:
                rendered = output.render(build)
        except UnsafeText as exc:
            return Done(task.names, {}, (name, exc.reason, True))
        private = frozenset(output.private(build)) if sink is not None else frozenset()
        for path, content in rendered.items():
            if path in files:
                raise AssertionError(f"output {name} writes {path} again")
            if isinstance(content, TextPieces):
                if sink is None:
                    content = content.text()
                else:
                    try:
                        sink(path, content.make(), path in private)  # written piece by piece as made
                    except UnicodeEncodeError as exc:  # a lone surrogate: not text (what was written is discarded)
                        message = f"{path}: holds {describe(exc.object[exc.start])}, which is not text"
                        return Done(task.names, {}, (name, message, False))
                    sunk.append(path)
                    continue
            if sink is not None and isinstance(content, str) and content.isascii():
                sink(path, content, path in private)  # encoded as it is written
                sunk.append(path)
                continue
            if isinstance(content, bytes):
                data = content
            else:
                try:
                    data = content.encode("utf-8")
                except UnicodeEncodeError as exc:  # a lone surrogate: not text
                    message = f"{path}: holds {describe(exc.object[exc.start])}, which is not text"
                    return Done(task.names, {}, (name, message, False))
            if sink is None:
                files[path] = data
            else:
                sink(path, data, path in private)
                sunk.append(path)
    if _WORKER:
        # a worker grown large forgets its tasks' memos (later tasks make them again if they ask); then what the
        # task left is collected, and what survives (the memos later tasks read) goes out of later collections'
        # way: else each small task's collection walked the big ones' memos again
        forgot = memo.forget_if_large()
        after_task()
        if forgot:
            memo.give_back()
    return Done(task.names, files, sunk=tuple(sunk))


def render_tasks(
    build: Build,
    outputs: tuple[Output, ...],
    workers: int,
    step: Callable[[str], None] | None,
    sink: Sink | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> Generator[Done, None, None]:
    """Every task's result: in this process with one worker, else from a pool of forked workers (as they finish);
    with a sink, the files go there in the process that rendered them. `meanwhile` runs before the first task in
    this process, or here while the workers start on theirs (if it raises, the workers are stopped)."""
    global _BUILD, _OUTPUTS, _SINK, _STOP, _TAKEN
    by_name = {o.name: o for o in outputs}
    todo = tasks(outputs, workers)
    told: set[str] = set()

    def tell(names: tuple[str, ...]) -> None:
        for name in names:
            if step is not None and name not in told:
                step(name)
            told.add(name)

    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        if meanwhile is not None:
            meanwhile()
        for task in todo:
            tell(task.names)
            yield run(task, build, by_name, sink)
        return
    context = multiprocessing.get_context("fork")
    _BUILD, _OUTPUTS, _SINK, _STOP = build, by_name, sink, context.Event()
    _TAKEN = context.Array("q", len(todo), lock=False)  # the pid of the worker that took each task (0: none)
    try:
        # the workers' collectors leave the inherited objects alone: fewer shared pages copied
        with shared_with_children():
            executor = ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker)
            futures: dict[Future[Done], int] = {}
            workers_by_pid: dict[int, Any] = {}
            peak: dict[int, int] = {}  # pid -> peak resident memory (KiB), as last read from /proc
            try:
                for i, task in enumerate(todo):  # (a worker may die, and the pool break, before the last is sent)
                    futures[executor.submit(_run_at, i, task)] = i
                    workers_by_pid = workers_by_pid or dict(executor._processes or {})  # all forked at the first
                if meanwhile is not None:
                    meanwhile()
                yield from _results(futures, workers_by_pid, peak, tell)
            except BrokenProcessPool:
                # a worker died: the pool's own thread ends (SIGTERM) and reaps the others; read the exit codes
                # only after it is done, else a worker it is reaping reads as still running
                executor.shutdown(wait=True, cancel_futures=True)
                raise WorkerDied(_died(todo, futures, workers_by_pid, peak)) from None
            except (GeneratorExit, Exception):
                # Stopped early (a refusal, an error, a worker that died): the tasks not begun are cancelled or
                # return at once, the running ones are waited for (a broken pool's workers are gone already)
                _STOP.set()
                executor.shutdown(wait=True, cancel_futures=True)
                raise
            executor.shutdown(wait=True)
    finally:
        _BUILD, _OUTPUTS, _SINK, _STOP, _TAKEN = None, {}, None, None, None


WATCH_SECONDS = 0.5  # how often the parent reads its workers' peak memory while it waits


def _results(
    futures: dict[Future[Done], int],
    workers: dict[int, Any],
    peak: dict[int, int],
    tell: Callable[[tuple[str, ...]], None],
) -> Generator[Done, None, None]:
    """The tasks' results as they finish, reading the workers' peak memory meanwhile. A worker that dies (the OOM
    killer, a signal) breaks the pool: every task not done fails at once with BrokenProcessPool
    (concurrent.futures, where multiprocessing.Pool waited for ever)."""
    waiting = set(futures)
    while waiting:
        done, waiting = wait(waiting, timeout=WATCH_SECONDS, return_when=FIRST_COMPLETED)
        _read_peaks(workers, peak)
        for future in sorted(done, key=futures.__getitem__):
            result = future.result()
            tell(result.names)
            yield result


def _read_peaks(workers: dict[int, Any], peak: dict[int, int]) -> None:
    for pid in workers:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        peak[pid] = int(line.split()[1])
                        break
        except (OSError, ValueError):
            continue


def _died(
    todo: list[Task],
    futures: dict[Future[Done], int],
    workers: dict[int, Any],
    peak: dict[int, int],
) -> list[Finding]:
    """The findings of a broken pool: per worker that died on its own (not one the broken pool ended with
    SIGTERM; if none is known, every worker that ended by a signal), the task it had taken and not finished. Called
    after the broken pool has ended and reaped every worker."""
    codes = {pid: process.exitcode for pid, process in workers.items()}
    dead = [pid for pid, code in codes.items() if code not in (None, 0, -signal.SIGTERM)]
    dead = dead or [pid for pid, code in codes.items() if code]
    taken = _TAKEN
    finished = {i for f, i in futures.items() if f.done() and not f.cancelled() and f.exception() is None}
    findings: list[Finding] = []
    for pid in dead:
        tasks_of = [todo[i] for i in range(len(todo)) if taken is not None and taken[i] == pid and i not in finished]
        what = ", ".join(sorted({n for t in tasks_of for n in t.names})) or "(no task known)"
        last = tasks_of[-1] if tasks_of else None
        shard = f" (part {last.part + 1} of {last.parts})" if last is not None and last.parts > 1 else ""
        memory = f"{peak[pid] / 1024:,.0f} MiB" if pid in peak else "not known"
        ended = _ending(codes[pid])
        findings.append(
            error(
                DIED,
                f"outputs.{last.names[0]}" if last is not None else "outputs",
                f"a render worker (pid {pid}) {ended} while rendering {what}{shard}; its peak memory as last "
                f"read: {memory}",
                DIED_HINT,
            )
        )
    return findings or [error(DIED, "outputs", "a render worker died (which one is not known)", DIED_HINT)]


def _ending(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with {code}"


DIED = "render-worker-died"
DIED_HINT = (
    "nothing was written (the old output is kept); SIGKILL is most often the kernel's OOM killer (see `dmesg`): "
    "build with fewer workers (--workers 1) or on a machine with more memory"
)


class WorkerDied(FabricError):
    """A render worker ended before returning its task (killed by a signal, the OOM killer): the build is over."""


def _run_at(index: int, task: Task) -> Done:
    """run(task) in a worker, after noting which worker took task `index` (for the finding if it dies)."""
    if _TAKEN is not None:
        _TAKEN[index] = os.getpid()
    return run(task)
