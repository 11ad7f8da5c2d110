"""The terminal the tables print to, and the one rule for a spec's names inside them."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from fabric.model.text import printable

if TYPE_CHECKING:
    from rich.console import Console


@cache
def console() -> Console:
    """stdout's console for the tables of show, plan and catalog: made on first use (rich loads only when a command
    prints a table, not for `--help`)."""
    from rich.console import Console

    return Console(soft_wrap=False)


def shown(text: str) -> str:
    """A name from the spec for a rich table: neither markup nor control characters."""
    from rich.markup import escape

    return escape(printable(text))
