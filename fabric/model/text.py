"""Text from outside shown on a terminal: never a raw control character, escape sequence or line break."""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with every character that is not printable shown as its Python escape (`\\x1b`, `\\n`, `\\u2028`),
    so discovered names cannot move the cursor, recolour the terminal or forge a line of a report."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
