"""Findings: what every stage reports instead of raising.

A finding names its severity, a short stable code (declared in codes.py), the YAML path it is about, where that path
sits in the user's file, a message and a hint. Stages collect findings and keep going, so the
user sees every problem of a run at once; the pipeline stops at stage boundaries.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from fabric.model.codes import BY_CODE


class Severity(enum.IntEnum):
    """Ordered so that `max()` gives the worst."""

    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem or note: severity, registered code, spec path, message and hint, with file and line once located."""

    severity: Severity
    code: str
    path: str
    message: str
    hint: str = ""
    file: str = ""
    line: int = 0
    items: tuple[str, ...] = ()  # what a grouped finding counts, item by item (in --json; the text quotes a few)

    def __post_init__(self) -> None:
        if self.code not in BY_CODE:
            raise ValueError(f"finding code {self.code!r} is not declared in fabric/model/codes.py")

    @property
    def location(self) -> str:
        if not self.file:
            return ""
        return f"{self.file}:{self.line}" if self.line else self.file

    def as_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity.label,
            "code": self.code,
            "path": self.path,
            "message": self.message,
            "hint": self.hint,
            "file": self.file,
            "line": self.line,
        } | ({"items": list(self.items)} if self.items else {})

    def format(self) -> str:
        """One finding as two lines of plain text; golden error files pin this format."""
        where = f" ({self.location})" if self.location else ""
        head = f"{self.severity.name:<7} {self.code} {self.path or '-'}: {self.message}{where}"
        return head + (f"\n        hint: {self.hint}" if self.hint else "")

    def escalated(self) -> Finding:
        """The same finding as an error (for --strict)."""
        return replace(self, severity=Severity.ERROR) if self.severity == Severity.WARNING else self


def error(code: str, path: str, message: str, hint: str = "") -> Finding:
    return Finding(Severity.ERROR, code, path, message, hint)


def warning(code: str, path: str, message: str, hint: str = "") -> Finding:
    return Finding(Severity.WARNING, code, path, message, hint)


def info(code: str, path: str, message: str, hint: str = "") -> Finding:
    return Finding(Severity.INFO, code, path, message, hint)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Worst first, then by file position and path; duplicates dropped (each finding once)."""
    unique = dict.fromkeys(findings)
    return sorted(unique, key=lambda f: (-f.severity, f.file, f.line, f.path, f.code, f.message))


class FabricError(Exception):
    """Raised at a stage boundary when a stage produced errors; carries every finding so far."""

    def __init__(self, findings: Sequence[Finding], *, spec_invalid: bool = False) -> None:
        self.findings = sort_findings(findings)
        self.spec_invalid = spec_invalid
        errors = [f for f in self.findings if f.severity == Severity.ERROR]
        first = errors[0].format() if errors else "no errors"
        super().__init__(f"{len(errors)} error(s); first: {first}")
