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
from fabric.render.registry import Output
from fabric.render.safety import CODE, HINT, RenderRefused, UnsafeText, describe, unsafe_values


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


def render_all(build: Build, step: Callable[[str], None] | None = None) -> Rendered:
    """Every output file, path relative to the output directory → bytes, in path order. Raises RenderRefused
    (with findings) if a value would split a line of an output. `step` is told the name of each output
    before it renders (a progress display)."""
    problems = unsafe_values(build)
    if problems:
        raise RenderRefused(problems)
    files: dict[str, bytes] = {}
    private: set[str] = set()
    for output in outputs():
        if step is not None:
            step(output.name)
        try:
            rendered = output.render(build)
        except UnsafeText as exc:  # name the fields if they are in the plan, else the template
            found = unsafe_values(build, infiniband=True)
            raise RenderRefused(found or [error(CODE, f"outputs.{output.name}", exc.reason, HINT)]) from None
        for path, content in rendered.items():
            if path in files:
                raise AssertionError(f"output {output.name} writes {path} again")
            if isinstance(content, bytes):
                files[path] = content
                continue
            try:
                files[path] = content.encode("utf-8")
            except UnicodeEncodeError as exc:  # a lone surrogate: not text
                message = f"{path}: holds {describe(exc.object[exc.start])}, which is not text"
                raise RenderRefused([error(CODE, f"outputs.{output.name}", message, HINT)]) from None
        private.update(output.private(build))
    return Rendered(files, private=private)


__all__ = ["Output", "RenderRefused", "Rendered", "outputs", "render_all"]
