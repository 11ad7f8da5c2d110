"""What a renderer module declares: its outputs, as plain data.

A module anywhere under `fabric/render/` that defines `OUTPUTS: tuple[Output, ...]` is picked up by
`render_all`; adding an output touches its own module (and templates and tests), no list elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabric.pipeline import Build

Renderer = Callable[["Build"], Mapping[str, str | bytes]]  # text is written as UTF-8, bytes as they are


def _no_secrets(build: Build) -> Iterable[str]:
    return ()


@dataclass(frozen=True)
class Output:
    """One output: a Build in, {relative path: text or bytes} out; `private` names the paths that hold secrets."""

    name: str
    render: Renderer
    private: Callable[[Build], Iterable[str]] = _no_secrets


def one_file(name: str, path: str, render: Callable[[Build], str | bytes]) -> Output:
    """An output that is a single file."""
    return Output(name, lambda build: {path: render(build)})
