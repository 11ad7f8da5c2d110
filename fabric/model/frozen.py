"""Cheap construction of frozen slots dataclasses, for the few made by the hundred thousand (ports, neighbours).

A frozen dataclass's `__init__` sets every field through `object.__setattr__` (its own `__setattr__` refuses):
~2 µs for 15 fields, eight times a plain dataclass. `maker(cls)` returns a constructor that runs the `__init__`
of a plain slots twin of `cls` (same fields, defaults and slot layout) and then makes the object a `cls`: the
result is an ordinary frozen instance (equality, hash, repr, `FrozenInstanceError` on assignment all as `cls`).
No `__post_init__` runs: only for classes without one, or (`skip_post_init=True`) for callers that give every
field it would fill.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def maker(cls: type[T], *, skip_post_init: bool = False) -> Callable[..., T]:
    params = getattr(cls, dataclasses._PARAMS)  # type: ignore[attr-defined]
    if not (params.frozen and hasattr(cls, "__slots__")) or (hasattr(cls, "__post_init__") and not skip_post_init):
        raise TypeError(f"{cls.__name__}: maker() is for frozen slots dataclasses without __post_init__")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    twin: Any = dataclasses.make_dataclass(
        f"_{cls.__name__}Init",
        [(f.name, f.type, _copy(f)) for f in fields],
        slots=True,
        eq=False,
        repr=False,
        match_args=False,
    )
    if twin.__slots__ != cls.__slots__:  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__name__}: slot layout differs from its twin")

    def make(*args: Any, **kwargs: Any) -> T:
        obj = twin(*args, **kwargs)
        obj.__class__ = cls
        return obj  # type: ignore[no-any-return]

    return make


def _copy(f: dataclasses.Field[Any]) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=f.default_factory)
    if f.default is not dataclasses.MISSING:
        return dataclasses.field(default=f.default)
    return dataclasses.field()
