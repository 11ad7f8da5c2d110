"""A mapping or a tuple made on its first read: per-cable tables that only some outputs read (docs/dev/performance.md,
"Per-cable work that validate does not need"). What is made is a memo too: a render worker short of memory
forgets it (fast/memo.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TypeVar, overload

from fabric.fast import memo

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class LazyMapping(Mapping[K, V]):
    """The dict `make()` returns, made when first read and kept. `make` must be pure (the stages' values are
    frozen), so reading early or late gives the same mapping."""

    __slots__ = ("__weakref__", "_built", "_make")

    def __init__(self, make: Callable[[], dict[K, V]]) -> None:
        self._make = make
        self._built: dict[K, V] | None = None

    @property
    def built(self) -> bool:
        return self._built is not None

    def _data(self) -> dict[K, V]:
        data = self._built
        if data is None:
            data = self._built = self._make()
            memo.made_lazily(self)
        return data

    def forget(self) -> None:
        """Drop what was made (a render worker short of memory, fast/memo.py): made again if read again."""
        self._built = None

    def __getitem__(self, key: K) -> V:
        return self._data()[key]

    def get(self, key: K, default: V | None = None) -> V | None:  # type: ignore[override]
        return self._data().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._data()

    def __iter__(self) -> Iterator[K]:
        return iter(self._data())

    def __len__(self) -> int:
        return len(self._data())

    def __repr__(self) -> str:
        return f"LazyMapping({self._data()!r})"


def resolved(mapping: Mapping[K, V]) -> Mapping[K, V]:
    """The dict a LazyMapping holds (made now if it is not yet), else the mapping itself: for a loop that looks
    up a row's keys, where each LazyMapping lookup is two more Python calls (cabling.csv's InfiniBand ends,
    6,000,000 lookups at a million GPUs)."""
    return mapping._data() if isinstance(mapping, LazyMapping) else mapping


class LazyTuple(Sequence[T]):
    """The tuple `make()` returns, made when first read and kept (as LazyMapping). Equal to that tuple, and to a
    LazyTuple of the same items."""

    __slots__ = ("__weakref__", "_built", "_make")

    def __init__(self, make: Callable[[], tuple[T, ...]]) -> None:
        self._make = make
        self._built: tuple[T, ...] | None = None

    @property
    def built(self) -> bool:
        return self._built is not None

    def _data(self) -> tuple[T, ...]:
        data = self._built
        if data is None:
            data = self._built = self._make()
            memo.made_lazily(self)
        return data

    def forget(self) -> None:
        """Drop what was made (a render worker short of memory, fast/memo.py): made again if read again."""
        self._built = None

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self._data()[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self._data())

    def __len__(self) -> int:
        return len(self._data())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyTuple):
            other = other._data()
        return self._data() == other

    def __hash__(self) -> int:
        return hash(self._data())

    def __repr__(self) -> str:
        return f"LazyTuple({self._data()!r})"
