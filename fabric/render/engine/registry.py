"""What a renderer module declares: its outputs, as plain data.

A module anywhere under `fabric/render/` that defines `OUTPUTS: tuple[Output, ...]` is picked up by
`render_all`; adding an output touches its own module (and templates and tests), no list elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabric.model.rendered import TextPieces

if TYPE_CHECKING:
    from fabric.pipeline import Build

# text is written as UTF-8, bytes as they are, TextPieces piece by piece (as made)
Content = str | bytes | TextPieces
Renderer = Callable[["Build"], Mapping[str, Content]]
# shard k of n of an output (k in range(n)): together the shards hold exactly what the whole render holds
Sharded = Callable[["Build", int, int], Mapping[str, Content]]


def file_bytes(content: Content) -> bytes:
    """A rendered file's bytes, whole (as the writer writes them; for callers that compare or time outputs)."""
    if isinstance(content, TextPieces):
        content = content.text()
    return content.encode() if isinstance(content, str) else content


def _no_secrets(build: Build) -> Iterable[str]:
    return ()


@dataclass(frozen=True)
class Output:
    """One output: a Build in, {relative path: text or bytes} out; `private` names the paths that hold secrets.

    For the worker pool of render_all: `shard` renders a part of a big output (per switch) so that the parts
    spread over the workers; outputs with the same `together` key share per-build work (memo.per_build) and so
    render in the same worker; `weight` is its rough CPU time in seconds at 100k GPUs (the larger of the
    InfiniBand and RoCE benchmarks): the pool starts the heaviest tasks first, so that none starts alone at the
    end. It orders work only: it never changes a byte."""

    name: str
    render: Renderer
    private: Callable[[Build], Iterable[str]] = _no_secrets
    shard: Sharded | None = None
    together: str = ""
    weight: float = 0.1


def one_file(
    name: str, path: str, render: Callable[[Build], Content], together: str = "", weight: float = 0.1
) -> Output:
    """An output that is a single file."""
    return Output(name, lambda build: {path: render(build)}, together=together, weight=weight)
