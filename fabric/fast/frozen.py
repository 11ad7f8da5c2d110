"""Cheap construction of frozen slots dataclasses, for the few made by the hundred thousand (ports, neighbours).

A frozen dataclass's `__init__` sets every field through `object.__setattr__` (its own `__setattr__` refuses):
several times the cost of a plain dataclass. `maker(cls)` returns a constructor that stores the fields
in a bare instance of a plain class with the slots of `cls`, as a dataclass `__init__` would, and then makes
the object a `cls`: the result is an ordinary frozen instance (equality, hash, repr, `FrozenInstanceError` on
assignment all as `cls`). No `__post_init__` runs: only for classes without one, or (`skip_post_init=True`) for
callers that give every field it would fill.
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
    slots = cls.__slots__  # type: ignore[attr-defined]
    if tuple(f.name for f in fields) != tuple(slots):
        raise TypeError(f"{cls.__name__}: its slots are not its fields")
    # a plain class of the same slots (no dataclass of its own: make_dataclass is slow at import)
    twin = type(f"_{cls.__name__}Slots", (), {"__slots__": slots})
    probe: Any = object.__new__(twin)
    probe.__class__ = cls  # TypeError here, not at first use, if the layouts differ
    return _constructor(cls, twin, fields)


def _constructor(cls: type[T], twin: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., T]:
    """`def make(<the fields, with their defaults>)`: a bare twin, each slot stored, then made a `cls`. Written
    out and compiled as dataclasses writes `__init__` (calling the twin with `*args, **kwargs` and swapping its
    class cost half as much again: 70,000 calls at 4 x 256 EOS, millions at 100k GPUs)."""
    scope: dict[str, Any] = {"_fabric_new": object.__new__, "_fabric_twin": twin, "_fabric_cls": cls}
    scope["_fabric_no_value"] = object()  # a default_factory field not given
    params, body = [], ["    _fabric_obj = _fabric_new(_fabric_twin)"]
    for f in fields:
        if f.name.startswith("_fabric_") or f.kw_only or not f.init:
            raise TypeError(f"{cls.__name__}.{f.name}: maker() takes positional init fields only")
        if f.default_factory is not dataclasses.MISSING:
            scope[f"_fabric_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_fabric_no_value")
            body.append(f"    if {f.name} is _fabric_no_value: {f.name} = _fabric_factory_{f.name}()")
        elif f.default is not dataclasses.MISSING:
            scope[f"_fabric_default_{f.name}"] = f.default
            params.append(f"{f.name}=_fabric_default_{f.name}")
        else:
            params.append(f.name)
        body.append(f"    _fabric_obj.{f.name} = {f.name}")
    body += ["    _fabric_obj.__class__ = _fabric_cls", "    return _fabric_obj"]
    exec(f"def make({', '.join(params)}):\n" + "\n".join(body), scope)  # only the fields' own names
    make: Callable[..., T] = scope["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    return make
