"""The Jinja environment: templates get ready data and compute nothing."""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from fabric.spec.resources import templates_dir


@cache
def environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(templates_dir())),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(template: str, **context: object) -> str:
    return environment().get_template(template).render(**context)


@cache
def html_environment() -> Environment:
    """For HTML: every value escaped unless marked safe (inline SVG, script JSON)."""
    return Environment(
        loader=FileSystemLoader(str(templates_dir())),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=True,
    )


def render_html(template: str, **context: object) -> str:
    return html_environment().get_template(template).render(**context)
