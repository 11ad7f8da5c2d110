"""`fabric build` and `fabric diagram`: a design's outputs, or only its pictures, written into a directory."""

# No `from __future__ import annotations` in a command module: typer reads the parameters' annotations.
import sys
from pathlib import Path
from typing import Annotated

import typer

from fabric.cli.app import QuietOpt, SpecArg, StrictOpt, app, parse_workers_option
from fabric.cli.loading import load_build
from fabric.cli.lock_choice import LockChoice
from fabric.cli.views.findings import print_findings
from fabric.cli.views.progress import stages
from fabric.model.findings import FabricError
from fabric.model.text import printable
from fabric.spec.resources import default_spec

# A build of more than this many links is kept out of later collections' way (fabric.fast.collector.keep_for_good)
FREEZE_LINKS = 20_000


def dot_note() -> None:
    """A note on stderr when graphviz's `dot` is missing (the pictures are then DOT sources only)."""
    from fabric.render.outputs.diagrams.dot import INSTALL_HINT, have_dot

    if not have_dot():
        print(f"note: graphviz's `dot` is not installed: {INSTALL_HINT}", file=sys.stderr)


@app.command()
def build(
    spec: SpecArg = None,
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Output directory. Default: output/<design name>/.")
    ] = None,
    strict: StrictOpt = False,
    quiet: QuietOpt = False,
    lock: Annotated[
        Path | None,
        typer.Option(
            "--lock",
            help="Keep the assignments of this allocations.lock.json. Default: the output directory's, if any.",
            metavar="FILE",
        ),
    ] = None,
    no_lock: Annotated[bool, typer.Option("--no-lock", help="Keep no earlier build's assignments.")] = False,
    allow_moves: Annotated[
        bool,
        typer.Option("--allow-moves", help="Write even if the change moves locked cables, addresses, ASNs or names."),
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            parser=parse_workers_option,
            metavar="N",
            help="Processes to build and render in (same bytes whatever the count; at most 4 per core). Default: "
            "$FABRIC_WORKERS, else "
            "the cores for large designs (from 5,000 links and a fabric of over 320 switches the analysis runs "
            "beside allocation and intent, from 4,000 cables the outputs render in a pool), else 1.",
        ),
    ] = None,
) -> None:
    """Validate, then write every output into the output directory (atomically), diagrams under diagrams/.

    allocations.lock.json records every assignment; the next build into the same directory (or one given
    --lock) keeps them: a grown spec only adds, and what it would move is an error (lock-move) per cause.
    """
    from fabric.cli.output_dir import check_inputs_outside, check_out_path, design_inputs, refuse
    from fabric.fast.collector import keep_for_good
    from fabric.fast.process import ended_like_an_interrupt
    from fabric.render import render_into
    from fabric.render.engine.pool import WorkerDied
    from fabric.write.atomic import OutputError, Staging, path_error

    if lock is not None and no_lock:
        print("error: give --lock FILE or --no-lock, not both", file=sys.stderr)
        raise typer.Exit(2)
    if out is not None:  # before anything is read or written: a path the filesystem holds, not the spec's home
        check_out_path(out)
        check_inputs_outside(out, [spec or default_spec()], lock)
    refused: FabricError | None = None

    def steps() -> int:
        from fabric.render.outputs import OUTPUTS  # the renderers load when the build renders

        return len(OUTPUTS) + 2

    # SIGTERM and SIGHUP end the build as SIGINT does: the staging tree is removed, the old output stays
    with ended_like_an_interrupt(), stages(quiet, steps) as step:
        result = load_build(spec, strict, lock=LockChoice(lock, no_lock, allow_moves, out), workers=workers, jobs=True)
        if sum(len(ft.links) for ft in result.topology.fabrics.values()) > FREEZE_LINKS:
            # The build lives until the process ends: collections while rendering need not walk its objects
            # again (docs/dev/performance.md). Small builds skip it: tests run many in one process.
            keep_for_good()
        step("rendering")
        if not result.errors:
            target = out or Path("output") / result.name
            check_out_path(target)
            check_inputs_outside(target, design_inputs(result.design, spec or default_spec()), lock)
            # render workers write each file into the staging tree as they make it; the old output stays
            # until the commit exchanges the two, and an error leaves it as it was
            try:
                staging = Staging(target, result.name)
            except OutputError as exc:
                refuse(exc)
            except OSError as exc:
                refuse(path_error(target, exc))
            try:
                with staging.syncing():  # the disk writes while the cores render
                    files = render_into(result, staging.write, lambda name: step(f"rendering {name}"), workers=workers)
                step("writing")
                written = staging.commit()
            except WorkerDied as exc:  # killed (the OOM killer, a signal): not the design's fault, exit 3
                staging.abort()
                print_findings(exc.findings)
                print(f"{printable(result.name)}: a render worker died; nothing was written", file=sys.stderr)
                raise typer.Exit(3) from None
            except FabricError as exc:  # a value that would split a config line (the loader should have refused it)
                staging.abort()
                refused = exc
            except OutputError as exc:
                staging.abort()
                refuse(exc)
            except OSError as exc:
                staging.abort()
                refuse(path_error(target, exc))
            except BaseException:
                staging.abort()
                raise
    print_findings(result.findings)
    if result.errors:
        print(f"{printable(result.name)}: {len(result.errors)} error(s); nothing was written", file=sys.stderr)
        raise typer.Exit(1)
    if refused is not None:
        print_findings(refused.findings)
        print(
            f"{printable(result.name)}: {len(refused.findings)} value(s) cannot be rendered safely; "
            "nothing was written",
            file=sys.stderr,
        )
        raise typer.Exit(1)
    dot_note()
    print(f"{printable(result.name)}: wrote {len(files)} files to {written}")


@app.command()
def diagram(
    spec: SpecArg = None,
    view: Annotated[
        list[str] | None,
        typer.Option("--view", help="topology, rails, racks or floor (repeatable). Default: all.", metavar="VIEW"),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Output directory. Default: output/<design name>-diagrams/.")
    ] = None,
    strict: StrictOpt = False,
) -> None:
    """Draw the design's pictures (DOT sources, and SVG and PNG with graphviz's dot) into a directory."""
    from fabric.cli.output_dir import check_inputs_outside, check_out_path, design_inputs, refuse
    from fabric.model.rendered import Rendered
    from fabric.render.outputs.diagrams import VIEWS, diagrams, draw, files
    from fabric.write.atomic import OutputError, path_error, write_outputs

    views = tuple(view or VIEWS)
    unknown = [v for v in views if v not in VIEWS]
    if unknown:
        print(f"error: unknown view {', '.join(unknown)}; views: {', '.join(VIEWS)}", file=sys.stderr)
        raise typer.Exit(2)
    result = load_build(spec, strict)
    if result.errors:
        print_findings(result.errors)
        print(f"{result.name}: {len(result.errors)} error(s); nothing was drawn", file=sys.stderr)
        raise typer.Exit(1)
    drawn = files(draw(diagrams(result, views)))
    dot_note()
    rendered = {
        path.removeprefix("diagrams/"): (v if isinstance(v, bytes) else v.encode()) for path, v in drawn.items()
    }
    target = out or Path("output") / f"{result.name}-diagrams"
    check_out_path(target)
    check_inputs_outside(target, design_inputs(result.design, spec or default_spec()))
    try:
        written = write_outputs(Rendered(rendered, private=()), target, result.name)
    except OutputError as exc:
        refuse(exc)
    except OSError as exc:
        refuse(path_error(target, exc))
    print(f"{result.name}: wrote {len(rendered)} files to {written}")
