"""The spec reference (docs/spec/reference.md), generated from the models' field descriptions."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from fabric.spec.platforms import Choices
from fabric.spec.schema import Spec


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        choices = next((m for m in annotation.__metadata__ if isinstance(m, Choices)), None)
        return " | ".join(f"`{n}`" for n in choices.names()) if choices else _type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is typing.Literal:
        return " | ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is tuple:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"map of {_type_name(args[0])} → {_type_name(args[1])}"
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return getattr(annotation, "__name__", str(annotation))


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        out.extend(_models(arg))
    return out


def _default(field: Any) -> str:
    if field.default is not PydanticUndefined:
        value = field.default
    elif field.default_factory is not None:
        value = field.default_factory()
    else:
        return "required"
    if isinstance(value, BaseModel):
        return "see below"
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        return "see description"
    return f"`{value!s}`" if value not in (None, "") else ("`null`" if value is None else '`""`')


def spec_reference() -> str:
    lines = [
        "# Spec reference",
        "",
        "Generated from the pydantic models in `fabric/spec/schema/` by `fabric schema --markdown`; a test keeps",
        "this file in step with the code. Unknown keys are errors. `fabric schema` prints the JSON schema.",
        "",
    ]
    queue: list[type[BaseModel]] = [Spec]
    seen: set[type[BaseModel]] = set()
    while queue:
        model = queue.pop(0)
        if model in seen:
            continue
        seen.add(model)
        doc = (model.__doc__ or "").strip()
        lines += [f"## {model.__name__}", ""]
        if doc:
            lines += [" ".join(doc.split()), ""]
        lines += ["| key | type | default | description |", "|---|---|---|---|"]
        for name, field in model.model_fields.items():
            description = (field.description or "").replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{name}` | {_type_name(field.annotation)} | {_default(field)} | {description} |")
            queue.extend(m for m in _models(field.annotation) if m not in seen)
        lines.append("")
    return "\n".join(lines)
