"""`fabric validate`: the findings of a spec, as text or JSON."""

# No `from __future__ import annotations` in a command module: typer reads the parameters' annotations.
import json
from pathlib import Path
from typing import Annotated

import typer

from fabric.cli.app import SpecArg, StrictOpt, app
from fabric.cli.loading import load_build
from fabric.cli.lock_choice import LockChoice
from fabric.cli.views.findings import counts, print_findings


@app.command()
def validate(
    spec: SpecArg = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
    strict: StrictOpt = False,
    lock: Annotated[
        Path | None,
        typer.Option(
            "--lock",
            help="Check the spec against an earlier build's allocations.lock.json, as `build --lock` keeps it: what "
            "it would move (lock-move, grouped by cause; item by item under `items` with --json).",
            metavar="FILE",
        ),
    ] = None,
) -> None:
    """Load, validate, expand and check a spec; print findings grouped by severity."""
    build = load_build(
        spec, strict, as_json, lock=LockChoice(lock, False, False, None) if lock else None, rendered=False
    )
    if as_json:
        print(
            json.dumps(
                {"design": build.name, **counts(build.findings), "findings": [f.as_dict() for f in build.findings]},
                indent=2,
            )
        )
    else:
        print_findings(build.findings)
        found = counts(build.findings)
        print(f"{build.name}: {found['errors']} error(s), {found['warnings']} warning(s), {found['infos']} note(s)")
    raise typer.Exit(1 if build.errors else 0)
