"""The build a command starts from: the spec loaded, the lock chosen, the pipeline run. A spec that cannot be
read or is invalid is reported here, with exit 2, the same way for every command."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fabric.cli.lock_choice import LockChoice, with_lock
from fabric.cli.views.findings import counts, print_findings
from fabric.fast.process import keep_to_the_end
from fabric.model.findings import FabricError, sort_findings
from fabric.spec.resources import default_spec

if TYPE_CHECKING:  # the pipeline loads when a command runs, not for `--help`
    from fabric.pipeline import Build


def load_build(
    spec: Path | None,
    strict: bool,
    as_json: bool = False,
    lock: LockChoice | None = None,
    workers: int | None = None,
    jobs: bool = False,
    rendered: bool = True,
) -> Build:
    """Build, or print why not and exit 2. Strict mode escalates warnings. `workers`, `jobs`, `rendered`: as
    build_fabric's (by default a large design's analysis runs beside the other stages on the spare cores)."""
    from fabric.fast.collector import gc_paused

    with gc_paused():  # importing the pipeline makes ~30,000 long-lived objects (see fabric/__init__.py)
        from fabric.pipeline import build_fabric
        from fabric.spec.loader import load_spec

    path = spec or default_spec()
    try:
        design = load_spec(path)
        if lock is not None:
            design = with_lock(design, lock)
        build = build_fabric(design, workers=workers, jobs=jobs, rendered=rendered)
    except FabricError as exc:
        if as_json:
            print(
                json.dumps(
                    {"design": None, **counts(exc.findings), "findings": [f.as_dict() for f in exc.findings]}, indent=2
                )
            )
        elif len(exc.findings) == 1 and exc.findings[0].code == "spec-unreadable":
            f = exc.findings[0]
            print(f"error: {f.location}: {f.message}", file=sys.stderr)
        else:
            print_findings(exc.findings)
            print(f"{path}: the spec is invalid ({len(exc.findings)} problem(s)); nothing was built", file=sys.stderr)
        raise typer.Exit(2) from None
    if strict:
        from dataclasses import replace

        build = replace(build, findings=tuple(sort_findings(f.escalated() for f in build.findings)))
    return keep_to_the_end(build)  # (a command that ends at once does not free it first)
