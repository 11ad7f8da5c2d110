"""The Jinja environment: templates get ready data and compute nothing, and interpolate nothing that is
not a single line of printable text (`safety.one_line`). In Markdown templates (`*.md.j2`) every value is
also HTML-escaped (`<`, `>`, `&`): a description `<img onerror=…>` is text in report.md, never raw HTML that a
Markdown viewer would run; a value shown as code goes through the `code` filter (a code span shows its text
literally, so it is not escaped, unless it holds a backtick that would end the span)."""

from __future__ import annotations

import html
from functools import cache, partial
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from fabric.render.engine.safety import UnsafeText, one_line
from fabric.spec.resources import templates_dir

# templates whose files quote names, and the quote a value must not hold
QUOTED = {"opensm/": '"'}


def _environment(**options: object) -> Environment:
    return Environment(
        loader=FileSystemLoader(str(templates_dir())),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # templates do not change while a build renders: no stat of the file per render
        **options,  # type: ignore[arg-type]
    )


@cache
def environment(quote: str = "") -> Environment:
    # one_line itself where no quote is barred: a partial's call costs three times the check (100,000 values
    # in a 260-switch EOS fabric's configs)
    return _environment(autoescape=False, finalize=partial(one_line, quote=quote) if quote else one_line)


MARKDOWN = ".md.j2"


def markdown_text(value: Any) -> Any:
    """Jinja `finalize` of the Markdown templates: one line of printable text, HTML-escaped."""
    value = one_line(value)
    if isinstance(value, str) and not isinstance(value, Markup):
        return html.escape(value, quote=False)
    return value


def code_span(value: Any) -> Markup:
    """A value as a Markdown code span (shown literally), or as escaped text if it holds a backtick."""
    text = str(one_line(value))
    return Markup(f"`{text}`") if "`" not in text else Markup(html.escape(text, quote=False))


@cache
def markdown_environment() -> Environment:
    env = _environment(autoescape=False, finalize=markdown_text)
    env.filters["code"] = code_span
    return env


def quote_of(template: str) -> str:
    """The quote a value of this template must not hold ("" for none)."""
    return next((q for prefix, q in QUOTED.items() if template.startswith(prefix)), "")


def render(template: str, **context: object) -> str:
    try:
        env = markdown_environment() if template.endswith(MARKDOWN) else environment(quote_of(template))
        return env.get_template(template).render(**context)
    except UnsafeText as exc:
        raise UnsafeText(f"{template}: a value {exc.reason}") from None


@cache
def html_environment() -> Environment:
    """For HTML: every value escaped unless marked safe (inline SVG, script JSON)."""
    return _environment(autoescape=True)


def render_html(template: str, **context: object) -> str:
    return html_environment().get_template(template).render(**context)
