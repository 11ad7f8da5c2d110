"""Findings as the commands print them: grouped by severity, a discovered name escaped, never raw."""

from __future__ import annotations

from collections.abc import Iterable

from fabric.model.findings import Finding, Severity
from fabric.model.text import printable


def print_findings(findings: Iterable[Finding]) -> None:
    findings = list(findings)
    for severity, title in ((Severity.ERROR, "Errors"), (Severity.WARNING, "Warnings"), (Severity.INFO, "Notes")):
        group = [f for f in findings if f.severity == severity]
        if group:
            print(f"{title} ({len(group)}):")
            for finding in group:  # a finding may quote a discovered name: escaped, never raw
                print("\n".join("  " + printable(line) for line in finding.format().split("\n")))


def counts(findings: Iterable[Finding]) -> dict[str, int]:
    """`{"errors": n, "warnings": n, "infos": n}`."""
    findings = list(findings)
    return {s.label + "s": sum(1 for f in findings if f.severity == s) for s in Severity}
