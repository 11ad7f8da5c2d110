"""`fabric validate`: the findings of a spec, as text or JSON."""

# No `from __future__ import annotations` in a command module: typer reads the parameters' annotations.
import json
from typing import Annotated

import typer

from fabric.cli.app import SpecArg, StrictOpt, app
from fabric.cli.loading import load_build
from fabric.cli.views.findings import counts, print_findings


@app.command()
def validate(
    spec: SpecArg = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
    strict: StrictOpt = False,
) -> None:
    """Load, validate, expand and check a spec; print findings grouped by severity."""
    build = load_build(spec, strict, as_json)
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
