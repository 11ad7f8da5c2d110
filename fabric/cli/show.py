"""`fabric show`: a design's summary in the terminal (the tables are in views/summary.py)."""

# No `from __future__ import annotations` in a command module: typer reads the parameters' annotations.
import typer

from fabric.cli.app import SpecArg, StrictOpt, app
from fabric.cli.loading import load_build
from fabric.cli.views.console import console
from fabric.cli.views.findings import counts


@app.command()
def show(spec: SpecArg = None, strict: StrictOpt = False) -> None:
    """Print a summary of every fabric: switches, links, oversubscription, bisection, ECMP, failures, cables."""
    from fabric.cli.views.summary import (
        cost_line,
        fabrics_tables,
        headline,
        job_table,
        job_traffic_table,
        media_table,
        tco_table,
    )
    from fabric.render.outputs.summary import cables_by_media, summary

    result = load_build(spec, strict)
    data = summary(result)
    console().print(headline(data))
    for table in fabrics_tables(data, console().width):
        console().print(table)
    per_fabric = {key: cables_by_media(result, key) for key in result.topology.fabrics}
    console().print(media_table(data["cables_by_media"], per_fabric))
    console().print(tco_table(data["cost"], console().width))
    console().print(cost_line(data["cost"]))
    if data["job_bandwidth"] is not None:
        console().print(job_table(data["job_bandwidth"]))
        collectives = job_traffic_table(data["job_bandwidth"])
        if collectives is not None:
            console().print(collectives)
    found = counts(result.findings)
    console().print(
        f"{found['errors']} error(s), {found['warnings']} warning(s), {found['infos']} note(s)"
        + (" — run `fabric validate` for details" if len(result.findings) else "")
    )
    raise typer.Exit(1 if result.errors else 0)
