"""The one text rule, shared by the loader and every renderer, and text from outside shown on a terminal.

Text is one line of printable characters (Python's `str.isprintable`: no Unicode "Other" — controls, format
characters such as zero-width spaces and bidi overrides, surrogates, private use, unassigned — and no "Separator"
but the ASCII space). Before that check the loader normalises the space separators (category Zs: the no-break
space U+00A0 common from copy-paste, U+2009, U+3000, …) to the ASCII space, so `validate` accepts exactly what
the renderers then accept (render/engine/safety.py checks with `first_refused` again, without normalising)."""

from __future__ import annotations

import unicodedata


def normalise(text: str) -> str:
    """`text` with every space separator (Unicode category Zs) written as the ASCII space."""
    if text.isprintable():
        return text
    return "".join(" " if c != " " and unicodedata.category(c) == "Zs" else c for c in text)


def first_refused(text: str) -> str | None:
    """The first character the text rule refuses (after `normalise`, if the caller normalises), or None."""
    if text.isprintable():
        return None
    return next(c for c in text if not c.isprintable())


def printable(text: str) -> str:
    """`text` with every character that is not printable shown as its Python escape (`\\x1b`, `\\n`, `\\u2028`),
    so discovered names cannot move the cursor, recolour the terminal or forge a line of a report."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
