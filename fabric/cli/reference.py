"""`fabric schema` and `fabric catalog`: reference material, the spec's schema and the hardware catalog."""

# No `from __future__ import annotations` in a command module: typer reads the parameters' annotations.
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from fabric.cli.app import app
from fabric.cli.views.findings import print_findings
from fabric.model.findings import FabricError


@app.command()
def schema(
    markdown: Annotated[bool, typer.Option("--markdown", help="The spec reference as Markdown.")] = False,
) -> None:
    """Print the spec's JSON schema (or, with --markdown, the spec reference)."""
    from fabric.cli.views.spec_reference import spec_reference
    from fabric.spec.schema import json_schema

    if markdown:
        sys.stdout.write(spec_reference())
    else:
        print(json.dumps(json_schema(), indent=2))


@app.command()
def catalog(
    name: Annotated[
        str | None, typer.Argument(help="One part: a switch, node type or medium. Default: every part.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the parts as JSON.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="The README's catalog tables.")] = False,
    spec: Annotated[
        Path | None,
        typer.Option("--spec", help="Also the part files (`catalog:`) of this spec.", metavar="SPEC"),
    ] = None,
) -> None:
    """List the hardware catalog: port groups, speeds, breakouts, U, power, placeholder prices, unverified values."""
    from fabric.cli.views.catalog_view import catalog_json, catalog_markdown, catalog_table, part_rows, part_text, parts
    from fabric.cli.views.console import console
    from fabric.spec.catalog import builtin_catalog

    known = builtin_catalog()
    if spec is not None:
        from fabric.spec.loader import load_spec

        try:
            known = load_spec(spec).catalog
        except FabricError as exc:
            print_findings(exc.findings)
            raise typer.Exit(2) from None
    names = [n for _, n, _ in parts(known)]
    if name is not None and name not in names:
        print(f"error: no part `{name}` in the catalog; parts: {', '.join(names)}", file=sys.stderr)
        raise typer.Exit(2)
    if as_json:
        print(json.dumps(catalog_json(known, name), indent=2))
        return
    if markdown:
        sys.stdout.write(catalog_markdown(known))
        return
    rows = part_rows(known, name)
    if name is not None:  # one part: every value on its own line
        print(part_text(rows[0]))
        return
    console().print(catalog_table(rows))
