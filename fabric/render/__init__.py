"""Stage 6, render: a Build in, every output file in memory out (path → bytes, and which hold secrets).

`engine/` holds the machinery (the registry, the templating, the worker pool, the safety check) and
`outputs/` the outputs, one module or package per family, listed in `outputs/__init__.py` (loaded when a build
renders). Templates get ready data and compute nothing; JSON and YAML are serialized from data. No file I/O
here: the writer (fabric/write/) writes what this returns, or what render_into
hands its sink (the writer's staging tree) as each file is made.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from typing import TYPE_CHECKING, Any

from fabric.model.findings import error
from fabric.model.rendered import Rendered
from fabric.pipeline import Build
from fabric.render.engine.registry import Output
from fabric.render.engine.safety import CODE, HINT, RenderRefused, unsafe_values

if TYPE_CHECKING:  # the pool (and multiprocessing) load when a build renders, not with each renderer module
    from fabric.render.engine.pool import Sink


def render_all(build: Build, step: Callable[[str], None] | None = None, workers: int | None = None) -> Rendered:
    """Every output file, path relative to the output directory → bytes, in path order. Raises RenderRefused
    (with findings) if a value would split a line of an output. `step` is told the name of each output
    as it renders (a progress display). `workers`: processes to render in (see pool.py; default: the cores,
    for designs big enough to pay); the bytes are the same whatever the count."""
    from fabric.render.outputs import OUTPUTS

    files: dict[str, bytes] = {}
    _render(build, step, workers, None, files)
    private: set[str] = set()
    for output in OUTPUTS:
        private.update(output.private(build))
    return Rendered(files, private=private)


def render_into(
    build: Build, sink: Sink, step: Callable[[str], None] | None = None, workers: int | None = None
) -> list[str]:
    """render_all, each file handed to `sink(path, bytes, private)` in the process that rendered it (the
    writer's staging tree: no file travels back from a worker, and no process holds them all). Returns the
    paths, in path order. Raises RenderRefused as render_all does, maybe after some files went to the sink."""
    return sorted(_render(build, step, workers, sink, {}))


def _render(
    build: Build, step: Callable[[str], None] | None, workers: int | None, sink: Sink | None, files: dict[str, bytes]
) -> set[str]:
    def check() -> None:
        """Every intent string: before anything renders, or while the pool's workers start (a big design's
        workers need not wait for it; what they wrote goes with the refused staging tree)."""
        problems = unsafe_values(build)
        if problems:
            raise RenderRefused(problems)

    from fabric.render.engine.pool import render_tasks, worker_count
    from fabric.render.outputs import OUTPUTS

    paths: set[str] = set()
    # closed on the way out: the pool's workers end before the caller (say, removing the staging tree) goes on
    tasks = render_tasks(build, OUTPUTS, worker_count(build, workers), step, sink, meanwhile=check)
    with closing(tasks) as results:
        for done in results:
            if done.refused is not None:
                name, reason, in_plan = done.refused
                found = unsafe_values(build, infiniband=True) if in_plan else []  # name the fields if in the plan
                raise RenderRefused(found or [error(CODE, f"outputs.{name}", reason, HINT)])
            for path in (*done.files, *done.sunk):
                if path in paths:
                    raise AssertionError(f"outputs {', '.join(done.names)} write {path} again")
                paths.add(path)
            files.update(done.files)
    return paths


def __getattr__(name: str) -> Any:
    if name == "Sink":
        from fabric.render.engine.pool import Sink

        return Sink
    raise AttributeError(f"module 'fabric.render' has no attribute {name!r}")


__all__ = ["Output", "RenderRefused", "Rendered", "Sink", "render_all", "render_into"]
