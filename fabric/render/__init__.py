"""Stage 6, render: a Build in, every output file in memory out (path → bytes, and which hold secrets).

Renderers are discovered: each module under `fabric/render/` that declares `OUTPUTS` (see registry.py)
contributes its outputs. Templates get ready data and compute nothing; JSON and YAML are serialized
from data. No file I/O here: the writer (fabric/write/) writes what this returns.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import cache

from fabric.model.findings import error
from fabric.model.rendered import Rendered
from fabric.pipeline import Build
from fabric.render.pool import render_tasks, worker_count
from fabric.render.registry import Output
from fabric.render.safety import CODE, HINT, RenderRefused, unsafe_values


@cache
def outputs() -> tuple[Output, ...]:
    """Every declared output, in name order (each module under fabric.render that has `OUTPUTS`)."""
    found: dict[str, Output] = {}
    for info in sorted(pkgutil.walk_packages(__path__, __name__ + "."), key=lambda m: m.name):
        module = importlib.import_module(info.name)
        for output in getattr(module, "OUTPUTS", ()):
            if output.name in found:
                raise AssertionError(f"output {output.name} is declared twice (again in {info.name})")
            found[output.name] = output
    return tuple(found[name] for name in sorted(found))


def render_all(build: Build, step: Callable[[str], None] | None = None, workers: int | None = None) -> Rendered:
    """Every output file, path relative to the output directory → bytes, in path order. Raises RenderRefused
    (with findings) if a value would split a line of an output. `step` is told the name of each output
    as it renders (a progress display). `workers`: processes to render in (see pool.py; default: the cores,
    for designs big enough to pay); the bytes are the same whatever the count."""
    problems = unsafe_values(build)
    if problems:
        raise RenderRefused(problems)
    every = outputs()
    files: dict[str, bytes] = {}
    for done in render_tasks(build, every, worker_count(build, workers), step):
        if done.refused is not None:
            name, reason, in_plan = done.refused
            found = unsafe_values(build, infiniband=True) if in_plan else []  # name the fields if in the plan
            raise RenderRefused(found or [error(CODE, f"outputs.{name}", reason, HINT)])
        for path, content in done.files.items():
            if path in files:
                raise AssertionError(f"outputs {', '.join(done.names)} write {path} again")
            files[path] = content
    private: set[str] = set()
    for output in every:
        private.update(output.private(build))
    return Rendered(files, private=private)


__all__ = ["Output", "RenderRefused", "Rendered", "outputs", "render_all"]
