"""Stage 6, render: a Build in, every output file in memory out (path → bytes, and which hold secrets).

Renderers are discovered: each module under `fabric/render/` that declares `OUTPUTS` (see registry.py)
contributes its outputs. Templates get ready data and compute nothing; JSON and YAML are serialized
from data. No file I/O here: the writer (fabric/write/) writes what this returns.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from fabric.pipeline import Build
from fabric.render.registry import Output


class Rendered(dict[str, bytes]):
    """Output files, path → bytes; `private` names those that carry secrets (written mode 0600)."""

    private: frozenset[str] = frozenset()


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


def render_all(build: Build) -> Rendered:
    """Every output file, path relative to the output directory → bytes, in path order."""
    files: dict[str, bytes] = {}
    private: set[str] = set()
    for output in outputs():
        for path, text in output.render(build).items():
            if path in files:
                raise AssertionError(f"output {output.name} writes {path} again")
            files[path] = text.encode("utf-8")
        private.update(output.private(build))
    out = Rendered(sorted(files.items()))
    out.private = frozenset(private)
    return out


__all__ = ["Output", "Rendered", "outputs", "render_all"]
