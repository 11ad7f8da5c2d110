"""Line shapes: a template macro that lays out one line (or a node's few), rendered once and filled per row.

The big files for machines and people (topology.net, the GUID files, the per-rack cabling tables) repeat a few
line shapes hundreds of thousands of times; Jinja took some 15 steps and 7 `finalize` calls per line. Here the
template still holds every character of the syntax, in a macro per shape: the macro is rendered once with a
placeholder per argument, which gives a format string, and `str.format` fills it per row in C. What the rows
bring is checked as `finalize` checks it (one line of printable text, without the syntax's quote), all of a
file's values in one pass.

A shape's macro prints its arguments as they are, as every template does (no filter, test or condition on them:
the placeholders would pass through one unchanged); tests/unit/render/test_lines.py compares every shape with Jinja's
rendering of its macro.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cache
from itertools import chain, starmap
from typing import Any

from fabric.render.engine.safety import UnsafeText, first_unsafe
from fabric.render.engine.templating import environment, quote_of

# a placeholder: printable (so that `finalize` lets it through), and a bracket no template writes
_OPEN, _CLOSE = "\u2983", "\u2984"


class Shapes:
    """A template rendered with its context (`text`), and its macros as line shapes (`shape(name)`)."""

    def __init__(self, template: str, **context: object) -> None:
        self.template = template
        self.quote = quote_of(template)
        try:
            self._module = environment(self.quote).get_template(template).make_module(dict(context))
            self.text = str(self._module)
        except UnsafeText as exc:
            raise UnsafeText(f"{template}: a value {exc.reason}") from None

    def shape(self, name: str) -> Callable[..., str]:
        """The macro `name` as a function of its arguments (strings), without checking them: see `check`."""
        macro: Any = getattr(self._module, name)
        count = len(macro.arguments)
        text = str(macro(*(f"{_OPEN}{i}{_CLOSE}" for i in range(count))))
        text = text.replace("{", "{{").replace("}", "}}")
        for i in range(count):
            text = text.replace(f"{_OPEN}{i}{_CLOSE}", f"{{{i}}}")
        if _OPEN in text or _CLOSE in text:
            raise AssertionError(f"{self.template}: macro {name} writes a placeholder bracket itself")
        return text.format

    def check(self, values: Iterable[str]) -> None:
        """Refuse, as `finalize` would, any value that is not one line of printable text (or holds the quote)."""
        text = "".join(values)
        if not text.isprintable() or (self.quote and self.quote in text):
            raise UnsafeText(f"{self.template}: a value {first_unsafe(text, self.quote)}")

    def fill(self, name: str, rows: Sequence[Sequence[str]]) -> str:
        """Macro `name` laid out once per row, the rows' values checked first."""
        self.check(chain.from_iterable(rows))
        return "".join(starmap(self.shape(name), rows))


@cache
def lines_of(template: str) -> Shapes:
    """A template of macros only (`_*.j2`), made once: rendered without context, so that none of its macros can
    depend on one (StrictUndefined), and its shapes the same for every file that fills them."""
    return Shapes(template)


@cache
def line_shape(template: str, name: str) -> Callable[..., str]:
    return lines_of(template).shape(name)


def fill(template: str, name: str, rows: Sequence[Sequence[str]]) -> str:
    """Macro `name` of a template of macros only, laid out once per row, the rows' values checked first."""
    lines_of(template).check(chain.from_iterable(rows))
    return "".join(starmap(line_shape(template, name), rows))
