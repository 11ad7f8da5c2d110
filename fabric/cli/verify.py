"""`fabric verify`: a built fabric's discovered cables (ibnetdiscover or LLDP) against the plan."""

# No `from __future__ import annotations` in a command module: typer reads the parameters' annotations.
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from fabric.cli.app import SpecArg, app
from fabric.cli.loading import load_build
from fabric.cli.views.findings import print_findings


@app.command()
def verify(
    spec: SpecArg = None,
    ibnetdiscover: Annotated[
        Path | None,
        typer.Option("--ibnetdiscover", help="Output of `ibnetdiscover` of a built InfiniBand fabric.", metavar="FILE"),
    ] = None,
    lldp: Annotated[
        list[Path] | None,
        typer.Option(
            "--lldp",
            help="LLDP neighbours of an Ethernet fabric: `lldpctl -f json` (or json0) per device in files named "
            "after the device, a JSON object of them by device, or a CSV local_device,local_port,remote_device,"
            "remote_port; files or directories, repeatable.",
            metavar="PATH",
        ),
    ] = None,
    fabric: Annotated[
        str | None, typer.Option("--fabric", help="The plan's fabric to compare with (default: the one that fits).")
    ] = None,
    ignore_speed: Annotated[
        bool,
        typer.Option("--ignore-speed", help="Compare link widths but not lane speeds (e.g. an ibsim simulation)."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    min_checked: Annotated[
        str,
        typer.Option(
            "--min-checked",
            help="Fail unless at least N planned cables were checked (`all`: every one). Default 1: discovered "
            "data that covers no planned cable is a failure, not a match.",
            metavar="N|all",
        ),
    ] = "1",
) -> None:
    """Compare a built fabric (ibnetdiscover output or LLDP neighbours) with the plan, cable by cable.

    Reports each missing cable, each cable in a wrong port (and where it should go), each unexpected cable and
    each link at a wrong width or speed, with the cable id, label and both ends as rack, U, device and port.
    Fewer checked cables than --min-checked (default 1) is a failure: no evidence is not a match.
    Exit 0 when everything matches, 1 otherwise, 2 when the spec or the discovered data cannot be read.
    """
    from fabric.spec.reading import ReadError, read_text
    from fabric.tools.ibnetdiscover import parse_ibnetdiscover
    from fabric.tools.lldp import read_lldp
    from fabric.tools.verify import choose_subnet, verify_ib, verify_lldp

    if (ibnetdiscover is None) == (not lldp):
        print("error: give either --ibnetdiscover FILE or --lldp PATH", file=sys.stderr)
        raise typer.Exit(2)
    if min_checked != "all" and not (min_checked.isascii() and min_checked.isdigit()):
        print("error: --min-checked takes a number of cables or `all`", file=sys.stderr)
        raise typer.Exit(2)
    required = None if min_checked == "all" else int(min_checked)
    result = load_build(spec, False)
    if result.errors:
        print_findings(result.errors)
        print(f"{result.name}: the design has errors; fix them before verifying against it", file=sys.stderr)
        raise typer.Exit(2)
    if ibnetdiscover is not None:
        try:
            text = read_text(ibnetdiscover, "ibnetdiscover")
        except ReadError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(2) from None
        discovered = parse_ibnetdiscover(text, str(ibnetdiscover))
        if discovered.findings:
            print_findings(discovered.findings)
            raise typer.Exit(2)
        subnet, why = choose_subnet(result, discovered, fabric)
        if subnet is None:
            print(f"error: {why}", file=sys.stderr)
            raise typer.Exit(2)
        report = verify_ib(result, subnet, discovered, ignore_speed=ignore_speed, min_checked=required)
    else:
        data = read_lldp(lldp or [])
        if data.findings:
            print_findings(data.findings)
            raise typer.Exit(2)
        if fabric is not None and fabric not in result.topology.fabrics:
            print(f"error: no fabric `{fabric}` in {result.name}", file=sys.stderr)
            raise typer.Exit(2)
        report = verify_lldp(result, data, fabric, min_checked=required)
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        sys.stdout.write(report.text())
    raise typer.Exit(report.exit_code)
