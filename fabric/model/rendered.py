"""Rendered outputs: what render hands the writer, as one frozen value.

The files (relative path → bytes) and the set of them that carry secrets travel together, so no copy or
filter can drop the private mark: the writer accepts only this type, and a plain dict made from it
(`dict(rendered)`) is refused there rather than written with the secrets world-readable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class TextPieces:
    """A text file that a renderer makes piece by piece and the writer writes as each piece comes: the biggest
    outputs (cabling.csv, cabling-physical.csv, the plan's Prometheus series: 1.1–1.6 GB each at a million GPUs)
    are never whole in a process's memory, nor the list of their lines. `make` gives the pieces in order (each
    call afresh); `text()` is the file whole, byte for byte what the pieces write."""

    make: Callable[[], Iterable[str]]

    def text(self) -> str:
        return "".join(self.make())


class Rendered(Mapping[str, bytes]):
    """Output files, path → bytes in path order; `private` names those that carry secrets (written 0600)."""

    __slots__ = ("_files", "_private")

    _files: Mapping[str, bytes]
    _private: frozenset[str]

    def __init__(self, files: Mapping[str, bytes], *, private: Iterable[str]) -> None:
        """`private` is required: whoever makes a Rendered says which files hold secrets (maybe none)."""
        copied = {}
        for path in sorted(files):
            data = files[path]
            if not isinstance(path, str) or not isinstance(data, bytes):
                raise TypeError(f"a rendered file is str → bytes, not {type(path).__name__} → {type(data).__name__}")
            copied[path] = data
        marked = frozenset(private)
        if not marked <= copied.keys():
            raise ValueError(f"private files that are not rendered: {', '.join(sorted(marked - copied.keys()))}")
        object.__setattr__(self, "_files", MappingProxyType(copied))
        object.__setattr__(self, "_private", marked)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Rendered is immutable")

    @property
    def files(self) -> Mapping[str, bytes]:
        return self._files

    @property
    def private(self) -> frozenset[str]:
        return self._private

    def __getitem__(self, path: str) -> bytes:
        return self._files[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def __repr__(self) -> str:
        return f"Rendered({len(self)} files, {len(self._private)} private)"
