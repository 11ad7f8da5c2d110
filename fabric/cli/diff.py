"""`fabric diff`: the floor's work order between two builds (output directories or specs)."""

# No `from __future__ import annotations` in a command module: typer reads the parameters' annotations.
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from fabric.cli.app import app
from fabric.cli.loading import load_build
from fabric.cli.views.findings import print_findings
from fabric.model.findings import FabricError


@app.command()
def diff(
    old: Annotated[Path, typer.Argument(help="The earlier build: an output directory, or a spec.", show_default=False)],
    new: Annotated[Path, typer.Argument(help="The later build: an output directory, or a spec.", show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print the work order as JSON.")] = False,
    work_order: Annotated[
        Path | None,
        typer.Option(
            "--work-order",
            metavar="DIR",
            help="Also write the floor's work order to this directory: work-order.csv and work-order.xlsx, one row "
            "per action (add, move, remove or relabel a cable with both ends, rack, move or unrack a device), sorted "
            "by rack and U, to split by rack or shift. The directory is replaced as a whole (empty, or written by "
            "fabric).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """The floor's work order from OLD to NEW: cables to add, move and remove (rack, U, device, port, labels),
    devices and racks to add, addresses and ASNs that change, a unified diff per switch config. With
    `--work-order DIR`, also as work-order.csv and work-order.xlsx: one row per floor action, by rack and U.

    Two specs are built, NEW keeping OLD's assignments as `fabric build --lock` would. Exit 0 when NEW only
    adds to OLD, 1 when it moves, removes or renumbers something, 2 when OLD or NEW cannot be read or built.
    """
    from fabric.tools.diff import DiffError, diff_outputs, grown, outputs_of, read_output_dir

    if old.is_dir() != new.is_dir():
        print("error: give two output directories or two specs", file=sys.stderr)
        raise typer.Exit(2)
    try:
        if old.is_dir():
            before, after = read_output_dir(old), read_output_dir(new)
        else:
            from fabric.pipeline import build_fabric
            from fabric.spec.loader import load_spec

            first = load_build(old, False)
            if first.errors:
                print_findings(first.errors)
                print(f"{old}: the design has errors", file=sys.stderr)
                raise typer.Exit(2)
            try:
                second = build_fabric(grown(first, load_spec(new)))
            except FabricError as exc:
                print_findings(exc.findings)
                raise typer.Exit(2) from None
            if second.errors:
                print_findings(second.errors)
                print(f"{new}: the design has errors", file=sys.stderr)
                raise typer.Exit(2)
            before, after = outputs_of(first, str(old)), outputs_of(second, str(new))
    except DiffError as exc:
        print_findings([exc.finding])
        raise typer.Exit(2) from None
    result = diff_outputs(before, after)
    if work_order is not None:
        from fabric.cli.output_dir import refuse
        from fabric.tools.work_order import CSV_FILE, XLSX_FILE
        from fabric.tools.work_order import work_order as work_order_files
        from fabric.write.atomic import OutputError, path_error, write_outputs

        try:
            written = write_outputs(work_order_files(result), work_order, "work order")
        except OutputError as exc:  # a user's file or edit in the directory: a finding, nothing written
            refuse(exc)
        except OSError as exc:
            refuse(path_error(work_order, exc))
        print(f"wrote {written / CSV_FILE} and {written / XLSX_FILE}", file=sys.stderr)
    if as_json:
        print(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(result.text())
    raise typer.Exit(result.exit_code)
