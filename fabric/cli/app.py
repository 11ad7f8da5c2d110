"""The command line: files and exit codes, no logic (that lives in the pipeline).

Exit codes: 0 clean or warnings only; 1 design errors; 2 the spec is unreadable or invalid; 3 an internal
error (a bug in fabric: an exception no stage turned into a finding), never reported as a design error.
"""

# No `from __future__ import annotations`: typer would compile every parameter's annotation string at each start.
import json
import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from fabric.model.findings import FabricError, Finding, Severity, sort_findings
from fabric.model.kinds import Tier
from fabric.model.text import printable
from fabric.spec.resources import default_spec

if TYPE_CHECKING:  # the pipeline loads when a command runs, not for `--help`; rich when a command prints with it
    from rich.console import Console
    from rich.table import Table

    from fabric.pipeline import Build
    from fabric.spec.loader import Design


def _click_exception() -> type[Exception] | None:
    """click's exception base (older typer uses click itself; newer typer vendors it as TyperException)."""
    try:
        import click
    except ImportError:
        return None
    return click.ClickException


INTERNAL_ERROR = 3
# what the command-line framework raises on purpose (exit codes, usage errors): not internal errors
_FRAMEWORK = tuple(
    t for t in (typer.Exit, typer.Abort, getattr(typer, "TyperException", None), _click_exception()) if t is not None
)


class _Guarded(TyperGroup):
    """Every command runs inside this: an exception no stage turned into a finding is an internal error,
    exit 3, with a hint to report it — never a traceback with exit 1, the design-error code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except _FRAMEWORK:
            raise
        except Exception as exc:
            report_internal_error(exc)
            raise typer.Exit(INTERNAL_ERROR) from None


def report_internal_error(exc: BaseException) -> None:
    """Name the exception and where in fabric it was raised; not its message, which may quote input."""
    package = Path(__file__).resolve().parent.parent  # the fabric package
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename).resolve()
        if path.is_relative_to(package):
            where = f" at {path.relative_to(package.parent)}:{frame.lineno}"
    print(f"internal error: {type(exc).__name__}{where}", file=sys.stderr)
    print(
        "this is a bug in fabric, not a problem of your spec: please report it with the command line and the spec "
        "(FABRIC_TRACEBACK=1 prints the traceback)",
        file=sys.stderr,
    )
    if os.environ.get("FABRIC_TRACEBACK") == "1":
        traceback.print_exception(exc, file=sys.stderr)


app = typer.Typer(
    cls=_Guarded,
    add_completion=False,
    no_args_is_help=True,
    help="Compile a GPU-cluster fabric spec into a checked, addressed and cabled plan.",
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


@cache
def _console() -> "Console":
    """stdout's console for the tables of show, plan and catalog: made on first use (rich takes ~20 ms to load)."""
    from rich.console import Console

    return Console(soft_wrap=False)


SpecArg = Annotated[
    Path | None,
    typer.Argument(help="Spec file (YAML). Default: the bundled 4-SU DGX SuperPOD H100 design.", show_default=False),
]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Treat warnings as errors.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")]


@contextmanager
def _stages(quiet: bool, total: Callable[[], int]) -> Iterator[Callable[[str], None]]:
    """A progress display per stage on a terminal, shown once a build has taken a second (gone when done);
    silent when stderr is not a terminal or with --quiet. Yields `step(description)`. `total()`: the steps."""
    if quiet:  # nothing to show: rich is not even loaded, nor the outputs counted (a refused spec never renders)
        yield lambda description: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    err = Console(stderr=True)
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )
    task = progress.add_task("checking the design", total=total())
    timer = threading.Timer(1.0, progress.start)
    timer.daemon = True
    if not progress.disable:
        timer.start()
    try:
        yield lambda description: progress.update(task, advance=1, description=description)
    finally:
        timer.cancel()
        if timer.is_alive():
            timer.join()
        progress.stop()


def _dot_note() -> None:
    from fabric.render.outputs.diagrams.dot import INSTALL_HINT, have_dot

    if not have_dot():
        print(f"note: graphviz's `dot` is not installed: {INSTALL_HINT}", file=sys.stderr)


def _print_findings(findings: list[Finding]) -> None:
    for severity, title in ((Severity.ERROR, "Errors"), (Severity.WARNING, "Warnings"), (Severity.INFO, "Notes")):
        group = [f for f in findings if f.severity == severity]
        if group:
            print(f"{title} ({len(group)}):")
            for finding in group:  # a finding may quote a discovered name: escaped, never raw
                print("\n".join("  " + printable(line) for line in finding.format().split("\n")))


FREEZE_LINKS = 20_000


@dataclass(frozen=True)
class _LockChoice:
    file: Path | None  # --lock FILE
    ignore: bool  # --no-lock
    allow_moves: bool
    out: Path | None  # where the build writes (its previous lock is read when no --lock is given)


def _with_lock(design: "Design", choice: _LockChoice) -> "Design":
    """The design with the lock to keep: --lock FILE, else the output directory's previous one of this design."""
    from dataclasses import replace

    from fabric.spec.lock import LOCK_FILE, LockInput, read_lock

    if choice.ignore:
        return design
    path = choice.file
    if path is None:
        previous = (choice.out or Path("output") / design.spec.name) / LOCK_FILE
        if not previous.is_file():
            return design
        path = previous
    lock = read_lock(path)
    if choice.file is None and lock.design != design.spec.name:
        print(f"note: {printable(str(path))} is the lock of another design; not kept", file=sys.stderr)
        return design
    return replace(design, lock=LockInput(lock, str(path), choice.allow_moves))


def _run(
    spec: Path | None,
    strict: bool,
    as_json: bool = False,
    lock: _LockChoice | None = None,
    workers: int | None = None,
    jobs: bool = False,
) -> "Build":
    """Build, or print why not and exit 2. Strict mode escalates warnings. `workers`, `jobs`: as build_fabric's
    (by default a large design's analysis runs beside the other stages on the spare cores)."""
    from fabric.fast.collector import gc_paused

    with gc_paused():  # importing the pipeline makes ~30,000 long-lived objects (see fabric/__init__.py)
        from fabric.pipeline import build_fabric
        from fabric.spec.loader import load_spec

    path = spec or default_spec()
    try:
        design = load_spec(path)
        if lock is not None:
            design = _with_lock(design, lock)
        build = build_fabric(design, workers=workers, jobs=jobs)
    except FabricError as exc:
        if as_json:
            print(
                json.dumps(
                    {"design": None, **_counts(exc.findings), "findings": [f.as_dict() for f in exc.findings]}, indent=2
                )
            )
        elif len(exc.findings) == 1 and exc.findings[0].code == "spec-unreadable":
            f = exc.findings[0]
            print(f"error: {f.location}: {f.message}", file=sys.stderr)
        else:
            _print_findings(exc.findings)
            print(f"{path}: the spec is invalid ({len(exc.findings)} problem(s)); nothing was built", file=sys.stderr)
        raise typer.Exit(2) from None
    if strict:
        from dataclasses import replace

        build = replace(build, findings=tuple(sort_findings(f.escalated() for f in build.findings)))
    return build


def _shown(text: str) -> str:
    """A name from the spec for a rich table: neither markup nor control characters."""
    from rich.markup import escape

    return escape(printable(text))


def _counts(findings: tuple[Finding, ...] | list[Finding]) -> dict[str, int]:
    return {s.label + "s": sum(1 for f in findings if f.severity == s) for s in Severity}


@app.command()
def validate(
    spec: SpecArg = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
    strict: StrictOpt = False,
) -> None:
    """Load, validate, expand and check a spec; print findings grouped by severity."""
    build = _run(spec, strict, as_json)
    if as_json:
        print(
            json.dumps(
                {"design": build.name, **_counts(build.findings), "findings": [f.as_dict() for f in build.findings]},
                indent=2,
            )
        )
    else:
        _print_findings(list(build.findings))
        counts = _counts(build.findings)
        print(f"{build.name}: {counts['errors']} error(s), {counts['warnings']} warning(s), {counts['infos']} note(s)")
    raise typer.Exit(1 if build.errors else 0)


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
            min=1,
            metavar="N",
            help="Processes to build and render in (same bytes whatever the count). Default: $FABRIC_WORKERS, else "
            "the cores for large designs (from 5,000 links and a fabric of over 320 switches the analysis runs "
            "beside allocation and intent, from 4,000 cables the outputs render in a pool), else 1.",
        ),
    ] = None,
) -> None:
    """Validate, then write every output into the output directory (atomically), diagrams under diagrams/.

    allocations.lock.json records every assignment; the next build into the same directory (or one given
    --lock) keeps them: a grown spec only adds, and what it would move is an error (lock-move) per item.
    """
    from fabric.fast.collector import keep_for_good
    from fabric.render import render_into
    from fabric.write.atomic import OutputError, Staging

    if lock is not None and no_lock:
        print("error: give --lock FILE or --no-lock, not both", file=sys.stderr)
        raise typer.Exit(2)
    refused: FabricError | None = None

    def steps() -> int:
        from fabric.render.outputs import OUTPUTS  # the renderers load when the build renders

        return len(OUTPUTS) + 2

    with _stages(quiet, steps) as step:
        result = _run(spec, strict, lock=_LockChoice(lock, no_lock, allow_moves, out), workers=workers, jobs=True)
        if sum(len(ft.links) for ft in result.topology.fabrics.values()) > FREEZE_LINKS:
            # The build lives until the process ends: collections while rendering need not walk its objects
            # again (about 1 s per walk at 100k GPUs). Small builds skip it: tests run many in one process.
            keep_for_good()
        step("rendering")
        if not result.errors:
            # render workers write each file into the staging tree as they make it; the old output stays
            # until the commit exchanges the two, and an error leaves it as it was
            try:
                staging = Staging(out or Path("output") / result.name, result.name)
            except (OutputError, OSError) as exc:
                print(f"error: {printable(str(exc))}", file=sys.stderr)
                raise typer.Exit(2) from None
            try:
                with staging.syncing():  # the disk writes while the cores render
                    files = render_into(result, staging.write, lambda name: step(f"rendering {name}"), workers=workers)
                step("writing")
                written = staging.commit()
            except FabricError as exc:  # a value that would split a config line (the loader should have refused it)
                staging.abort()
                refused = exc
            except (OutputError, OSError) as exc:
                staging.abort()
                print(f"error: {printable(str(exc))}", file=sys.stderr)
                raise typer.Exit(2) from None
            except BaseException:
                staging.abort()
                raise
    _print_findings(list(result.findings))
    if result.errors:
        print(f"{printable(result.name)}: {len(result.errors)} error(s); nothing was written", file=sys.stderr)
        raise typer.Exit(1)
    if refused is not None:
        _print_findings(refused.findings)
        print(
            f"{printable(result.name)}: {len(refused.findings)} value(s) cannot be rendered safely; "
            "nothing was written",
            file=sys.stderr,
        )
        raise typer.Exit(1)
    _dot_note()
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
    from fabric.model.rendered import Rendered
    from fabric.render.outputs.diagrams import VIEWS, diagrams, draw, files
    from fabric.write.atomic import OutputError, write_outputs

    views = tuple(view or VIEWS)
    unknown = [v for v in views if v not in VIEWS]
    if unknown:
        print(f"error: unknown view {', '.join(unknown)}; views: {', '.join(VIEWS)}", file=sys.stderr)
        raise typer.Exit(2)
    result = _run(spec, strict)
    if result.errors:
        _print_findings(result.errors)
        print(f"{result.name}: {len(result.errors)} error(s); nothing was drawn", file=sys.stderr)
        raise typer.Exit(1)
    drawn = files(draw(diagrams(result, views)))
    _dot_note()
    rendered = {
        path.removeprefix("diagrams/"): (v if isinstance(v, bytes) else v.encode()) for path, v in drawn.items()
    }
    target = out or Path("output") / f"{result.name}-diagrams"
    try:
        written = write_outputs(Rendered(rendered, private=()), target, result.name)
    except (OutputError, OSError) as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        raise typer.Exit(2) from None
    print(f"{result.name}: wrote {len(rendered)} files to {written}")


@app.command()
def show(spec: SpecArg = None, strict: StrictOpt = False) -> None:
    """Print a summary of every fabric: switches, links, oversubscription, bisection, ECMP, failures, cables."""
    from rich.table import Table

    from fabric.render.outputs.summary import cables_by_media, summary
    from fabric.spec.schema import format_ratio

    result = _run(spec, strict)
    data = summary(result)
    _console().print(
        f"[bold]{_shown(data['design'])}[/bold]: {data['gpus']:,} GPUs, {data['nodes']:,} nodes, "
        f"{data['switches']:,} switches, {data['racks']} racks, {data['cables']:,} cables"
    )
    table = Table(title="Fabrics", show_lines=False)
    for column, justify in (
        ("fabric", "left"),
        ("tech", "left"),
        ("tiers", "right"),
        ("leaf", "right"),
        ("spine", "right"),
        ("core", "right"),
        (Tier.NODE_LEAF, "right"),
        (Tier.LEAF_SPINE, "right"),
        (Tier.SPINE_CORE, "right"),
        ("oversub.", "right"),
        ("bisection", "right"),
        ("ECMP", "right"),
        ("worst failure", "right"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for key, f in data["fabrics"].items():
        over = " / ".join(f"{layer} {format_ratio(v)}" for layer, v in f["oversubscription"].items() if v is not None)
        failure = f["worst_single_failure_bisection_pct"]
        table.add_row(
            _shown(key),
            f["technology"],
            str(f["tiers"]),
            *(str(f["switches"][k]) for k in ("leaf", "spine", "core")),
            *(str(f["links"][k]) for k in (Tier.NODE_LEAF, Tier.LEAF_SPINE, Tier.SPINE_CORE)),
            over or "-",
            f"{(f['bisection_gbps'] or 0) / 1000:,.1f} Tb/s ({f['bisection_pct']}%)",
            str(f["min_ecmp_width"] if f["min_ecmp_width"] is not None else "-"),
            f"{failure}% ({_shown(f['worst_single_failure'])})" if failure is not None else "-",
        )
    _console().print(table)
    media = Table(title="Cables by media")
    media.add_column("media")
    keys = list(result.topology.fabrics)
    for key in keys:
        media.add_column(_shown(key), justify="right")
    media.add_column("total", justify="right")
    per_fabric = {key: cables_by_media(result, key) for key in keys}
    for name, total in data["cables_by_media"].items():
        media.add_row(_shown(name), *(str(per_fabric[k].get(name, 0)) for k in keys), str(total))
    _console().print(media)
    cost = data["cost"]
    tco = Table(title=f"Total cost of ownership, {len(cost['tco_years'])} years (USD; {cost['note']})")
    for column in ("year", "capital", "energy", "space", "support", "total", "cumulative"):
        tco.add_column(column, justify="right")
    for y in cost["tco_years"]:
        tco.add_row(
            str(y["year"]),
            *(
                f"{y[k]:,.0f}"
                for k in ("capital_usd", "energy_usd", "space_usd", "support_usd", "total_usd", "cumulative_usd")
            ),
        )
    _console().print(tco)
    per_gpu = cost["capital_per_gpu_usd"]
    _console().print(
        f"capital ${cost['capital_usd']:,.0f}"
        + (f" (${per_gpu:,.0f} per GPU)" if per_gpu is not None else "")
        + f", power {cost['power_kw']:,.1f} kW (heat {cost['heat_kw']:,.1f} kW), TCO ${cost['tco_usd']:,.0f}"
        + (f" = ${cost['tco_per_gpu_hour_usd']:.2f} per GPU-hour" if cost["tco_per_gpu_hour_usd"] is not None else "")
    )
    if data["job_bandwidth"] is not None:
        _console().print(_job_table(data["job_bandwidth"]))
    counts = _counts(result.findings)
    _console().print(
        f"{counts['errors']} error(s), {counts['warnings']} warning(s), {counts['infos']} note(s)"
        + (" — run `fabric validate` for details" if len(result.findings) else "")
    )
    raise typer.Exit(1 if result.errors else 0)


def _plan_request(
    gpus: int,
    nodes: list[str],
    technology: str,
    switches: list[str],
    ratios: list[str],
    tiers: list[int],
    rail: str,
    planes: list[int],
    sus: list[int],
) -> Any:
    """The plan's request from the options, or an error message and exit 2."""
    from fabric.plan.candidates import TECHNOLOGIES, Request
    from fabric.spec.catalog import builtin_catalog
    from fabric.spec.schema import parse_ratio

    catalog = builtin_catalog()
    problems = [f"unknown node type {printable(n)!r}" for n in nodes if n not in catalog.nodes]
    problems += [f"{printable(n)!r} has no GPUs" for n in nodes if n in catalog.nodes and not catalog.nodes[n].gpus]
    problems += [f"unknown switch model {printable(m)!r}" for m in switches if m not in catalog.switches]
    if technology not in (*TECHNOLOGIES, "both"):
        problems.append("--technology must be infiniband, ethernet or both")
    if rail not in ("yes", "no", "both"):
        problems.append("--rail must be yes, no or both")
    problems += [f"--tiers {t}: 2 or 3" for t in tiers if t not in (2, 3)]
    problems += [f"--planes {p}: 1 to 8" for p in planes if not 1 <= p <= 8]
    problems += [f"--su {n}: at least 1" for n in sus if n < 1]
    parsed: list[float] = []
    for text in ratios:
        try:
            parsed.append(parse_ratio(text))
        except ValueError as exc:
            problems.append(f"--oversubscription {printable(text)!r}: {exc}")
    if problems:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        raise typer.Exit(2)
    return Request(
        gpus=gpus,
        nodes=tuple(dict.fromkeys(nodes)),
        technologies=TECHNOLOGIES if technology == "both" else (technology,),
        switches=tuple(dict.fromkeys(switches)),
        tiers=tuple(dict.fromkeys(tiers)) or (2, 3),
        rail_optimized={"yes": (True,), "no": (False,), "both": (True, False)}[rail],
        planes=tuple(dict.fromkeys(planes)) or (1,),
        scalable_units=tuple(dict.fromkeys(sus)),
        oversubscription=tuple(dict.fromkeys(parsed)) or (1.0,),
    )


def _plan_table(data: Mapping[str, Any]) -> "Table":
    from rich.table import Table

    grow = data["grow_to"]
    title = f"fabric plan: {data['gpus']:,} GPUs" + (f", grown to {grow:,}" if grow else "") + f" ({data['note']})"
    table = Table(title=title)
    columns = ["#", "cand.", "design", "GPUs", "leaf/spine/core", "optics", "cables", "capital", "$/GPU", "kW"]
    columns += ["TCO", "bisect.", "worst fail.", "ECMP", "headroom", "job GB/s/GPU"]
    columns += ["later", "re-cabled"] if grow else []
    for column in columns:
        table.add_column(column, justify="left" if column in ("design",) else "right", overflow="fold")
    for row in data["candidates"]:
        first = [str(row["rank"]), str(row["candidate"]), _shown(row["label"])]
        if row["status"] == "fails":  # listed under the table with the finding that rules them out
            continue
        whole = row["job_bandwidth"][-1] if row["job_bandwidth"] else None
        cells = [
            f"{row['gpus']:,}",
            "/".join(str(row["switches"][k]) for k in ("leaf", "spine", "core")),
            f"{row['optics']:,}",
            f"{row['cables']:,}",
            f"${row['capital_usd'] / 1e6:,.2f}M",
            f"${row['capital_per_gpu_usd']:,.0f}",
            f"{row['power_kw']:,.0f}",
            f"${row['tco_usd'] / 1e6:,.1f}M",
            f"{row['bisection_pct']:g}%",
            f"{row['worst_single_failure_pct']:g}%" if row["worst_single_failure_pct"] is not None else "-",
            str(row["min_ecmp_width"] if row["min_ecmp_width"] is not None else "-"),
            f"{row['headroom_gpus']:,}" if row["headroom_gpus"] is not None else "-",
            f"{whole['intact_gbps_per_gpu'] / 8:g}/{whole['worst_single_failure_gbps_per_gpu'] / 8:g}"
            if whole
            else "-",
        ]
        if grow:
            g = row.get("growth") or {}
            cells += (
                [f"${g['later_usd'] / 1e6:,.2f}M", f"{g['recabled']:,}"]
                if g.get("ok")
                else [f"fails: {_shown(g.get('ruling_finding') or '')}", ""]
            )
        if row["status"] != "ok":
            cells[0] = f"[yellow]{row['status']}[/yellow] {cells[0]}"
        table.add_row(*first, *cells)
    return table


@app.command()
def plan(
    gpus: Annotated[
        int, typer.Option("--gpus", min=1, max=1_000_000, help="GPUs to plan for (rounded up to whole nodes).")
    ],
    node: Annotated[
        list[str] | None, typer.Option("--node", help="Node type (repeatable). Default: every GPU node type.")
    ] = None,
    technology: Annotated[str, typer.Option("--technology", help="infiniband, ethernet or both.")] = "both",
    switch: Annotated[
        list[str] | None, typer.Option("--switch", help="Switch model (repeatable). Default: every one that fits.")
    ] = None,
    oversubscription: Annotated[
        list[str] | None, typer.Option("--oversubscription", help='Leaf down:up target, e.g. "2:1" (repeatable).')
    ] = None,
    tiers: Annotated[list[int] | None, typer.Option("--tiers", help="2 or 3 (repeatable). Default: both.")] = None,
    rail: Annotated[str, typer.Option("--rail", help="Rail-optimized: yes, no or both.")] = "both",
    planes: Annotated[list[int] | None, typer.Option("--planes", help="Planes (repeatable). Default: 1.")] = None,
    su: Annotated[
        list[int] | None, typer.Option("--su", help="Nodes per SU (repeatable). Default: as many as fill a leaf.")
    ] = None,
    budget: Annotated[
        float | None, typer.Option("--budget", min=0, help="Capital budget, USD: candidates above it rank after.")
    ] = None,
    grow_to: Annotated[
        int | None, typer.Option("--grow-to", min=1, help="Rank by the cost of growing to this many GPUs.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ranked candidates as JSON.")] = False,
    write: Annotated[
        Path | None, typer.Option("--write", help="Write the chosen candidate's spec into this directory.")
    ] = None,
    pick: Annotated[
        int | None, typer.Option("--pick", min=1, help="With --write: the candidate number (default: rank 1).")
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Processes for the sweep. Default: the machine's cores.")
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Run the sweep on a Dask distributed scheduler (tcp://host:8786)."),
    ] = None,
) -> None:
    """Rank candidate designs for a GPU count: each candidate from the catalog built through the pipeline."""
    from rich.console import Console

    from fabric.model.rendered import Rendered
    from fabric.plan.candidates import enumerate_candidates
    from fabric.plan.document import spec_yaml
    from fabric.plan.rank import as_data, rank
    from fabric.plan.sweep import SchedulerError, sweep
    from fabric.spec.catalog import builtin_catalog
    from fabric.write.atomic import OutputError, write_outputs

    if grow_to is not None and grow_to < gpus:
        print("error: --grow-to must be at least --gpus", file=sys.stderr)
        raise typer.Exit(2)
    request = _plan_request(
        gpus, node or [], technology, switch or [], oversubscription or [], tiers or [], rail, planes or [], su or []
    )
    catalog = builtin_catalog()
    candidates = enumerate_candidates(catalog, request)
    if not candidates:
        print("error: no candidate: no switch of the catalog serves these node types and options", file=sys.stderr)
        raise typer.Exit(2)
    try:
        outcomes = sweep(candidates, gpus, grow_to, workers=workers, scheduler=scheduler)
    except SchedulerError as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        raise typer.Exit(2) from None
    ranked = rank(outcomes, budget, grow_to)
    data = as_data(ranked, gpus, grow_to, budget)
    if as_json:
        print(json.dumps(data, indent=2))
    else:  # a wide table: print it whole rather than fold every cell into a narrow terminal
        wide = Console(soft_wrap=False, width=max(_console().width, 200))
        wide.print(_plan_table(data))
        failing = [row for row in data["candidates"] if row["status"] == "fails"]
        if failing:
            wide.print(f"Ruled out ({len(failing)}):")
            for row in failing:
                wide.print(
                    f"  #{row['rank']} candidate {row['candidate']} {_shown(row['label'])}: "
                    f"{_shown(row['ruling_finding'] or 'invalid spec')}"
                )
    passing = [r for r in ranked if r.status == "ok"]
    if write is not None:
        chosen = next((r for r in ranked if r.outcome.candidate.index + 1 == pick), None) if pick else None
        chosen = chosen or (passing[0] if passing else None)
        if chosen is None or not chosen.outcome.ok:
            print("error: no candidate that builds to write", file=sys.stderr)
            raise typer.Exit(1)
        c = chosen.outcome.candidate
        why = f"Rank {chosen.rank} of {len(ranked)}" + (f" for growth to {grow_to} GPUs" if grow_to else "") + "."
        text = spec_yaml(c, gpus, catalog, why)
        try:
            written = write_outputs(
                Rendered({f"{chosen.outcome.name}.yaml": text.encode()}, private=()), write, chosen.outcome.name
            )
        except (OutputError, OSError) as exc:
            print(f"error: {printable(str(exc))}", file=sys.stderr)
            raise typer.Exit(2) from None
        print(f"wrote {written / (chosen.outcome.name + '.yaml')}", file=sys.stderr)
    raise typer.Exit(0 if passing else 1)


def _job_table(jobs: Mapping[str, Any]) -> "Table":
    from rich.table import Table

    title = f"Job bandwidth on {_shown(jobs['fabric'])}: Gb/s per GPU across a compact job's worst bisection"
    table = Table(title=title)
    for column in ("nodes", "GPUs", "within", "NIC", "intact", "worst failure"):
        table.add_column(column, justify="left" if column == "within" else "right")
    for job in jobs["jobs"]:
        element = job["worst_single_failure"]
        table.add_row(
            f"{job['nodes']:,}",
            f"{job['gpus']:,}",
            _shown(job["span"] or "-"),
            f"{job['nic_gbps_per_gpu']:g}",
            f"{job['intact_gbps_per_gpu']:g} ({job['intact_pct']:g}%)",
            f"{job['worst_single_failure_gbps_per_gpu']:g}" + (f" ({_shown(element)})" if element else ""),
        )
    return table


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
    from rich.table import Table

    from fabric.cli.views.catalog_view import PRICES, catalog_json, catalog_markdown, node_ports, parts, switch_ports
    from fabric.spec.catalog import Media, NodeType, SwitchModel, builtin_catalog

    known = builtin_catalog()
    if spec is not None:
        from fabric.spec.loader import load_spec

        try:
            known = load_spec(spec).catalog
        except FabricError as exc:
            _print_findings(list(exc.findings))
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
    rows = []
    for kind, part_name, part in parts(known):
        if name is not None and part_name != name:
            continue
        if isinstance(part, SwitchModel):
            ports, u, watts, price = switch_ports(part), str(part.u), str(part.power_w), part.list_price_usd
            kind += f", {part.platform}" if part.platform else ""
        elif isinstance(part, NodeType):
            ports, u, watts, price = node_ports(part), str(part.u), str(part.power_w), part.list_price_usd
        else:
            assert isinstance(part, Media)
            speeds = ", ".join(f"{s}G" for s in part.speeds_gbps)
            ports, u, watts, price = [f"{speeds}, reach {part.reach_m:g} m"], "", "", part.price_usd
        rows.append((part_name, kind, part.description, ports, u, watts, f"{price:g}", list(part.unverified)))
    if name is not None:  # one part: every value on its own line
        part_name, kind, description, ports, u, watts, cost, doubts = rows[0]
        print(f"{part_name} ({kind}): {description}")
        print("  " + "\n  ".join(ports))
        print(f"  {f'U {u}, {watts} W, ' if u else ''}price {cost} USD ({PRICES})")
        print(f"  unverified: {'; '.join(doubts) or 'nothing'}")
        return
    table = Table(title=f"Hardware catalog ({PRICES})", show_lines=True)
    for column in ("part", "kind", "description", "ports", "U", "W", "price", "unverified"):
        table.add_column(column, justify="right" if column in ("U", "W", "price") else "left", overflow="fold")
    for part_name, kind, description, ports, u, watts, cost, doubts in rows:
        table.add_row(part_name, kind, description, "\n".join(ports), u, watts, cost, "\n".join(doubts) or "—")
    _console().print(table)


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
    result = _run(spec, False)
    if result.errors:
        _print_findings(result.errors)
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
            _print_findings(list(discovered.findings))
            raise typer.Exit(2)
        subnet, why = choose_subnet(result, discovered, fabric)
        if subnet is None:
            print(f"error: {why}", file=sys.stderr)
            raise typer.Exit(2)
        report = verify_ib(result, subnet, discovered, ignore_speed=ignore_speed, min_checked=required)
    else:
        data = read_lldp(lldp or [])
        if data.findings:
            _print_findings(list(data.findings))
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


@app.command()
def diff(
    old: Annotated[Path, typer.Argument(help="The earlier build: an output directory, or a spec.", show_default=False)],
    new: Annotated[Path, typer.Argument(help="The later build: an output directory, or a spec.", show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print the work order as JSON.")] = False,
) -> None:
    """The floor's work order from OLD to NEW: cables to add, move and remove (rack, U, device, port, labels),
    devices and racks to add, addresses and ASNs that change, a unified diff per switch config.

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

            first = _run(old, False)
            if first.errors:
                _print_findings(first.errors)
                print(f"{old}: the design has errors", file=sys.stderr)
                raise typer.Exit(2)
            try:
                second = build_fabric(grown(first, load_spec(new)))
            except FabricError as exc:
                _print_findings(exc.findings)
                raise typer.Exit(2) from None
            if second.errors:
                _print_findings(second.errors)
                print(f"{new}: the design has errors", file=sys.stderr)
                raise typer.Exit(2)
            before, after = outputs_of(first, str(old)), outputs_of(second, str(new))
    except DiffError as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        raise typer.Exit(2) from None
    result = diff_outputs(before, after)
    if as_json:
        print(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(result.text())
    raise typer.Exit(result.exit_code)


lab_app = typer.Typer(
    no_args_is_help=True,
    help="A live digital twin: boot a fabric's generated FRR configs in network namespaces (root, Linux).",
)
app.add_typer(lab_app, name="lab")
PrefixOpt = Annotated[str, typer.Option("--prefix", help="Prefix of the lab's network namespace names.")]


def _lab_dir(name: str) -> Path:
    from fabric.tools.lab import STATE_ROOT, state_name

    return STATE_ROOT / state_name(name)


@lab_app.command("up")
def lab_up(
    spec: SpecArg = None,
    fabric: Annotated[str | None, typer.Option("--fabric", help="Which Ethernet fabric (default: the first).")] = None,
    prefix: PrefixOpt = "fab-",
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for convergence (0: do not wait).")] = 90,
) -> None:
    """Boot the fabric: a namespace per switch and server, veth pairs as cabled, zebra and bgpd per switch (and per
    server that routes on the host)."""
    from fabric.tools.lab import Lab, LabError, plan_lab, preflight, running_labs

    result = _run(spec, False)
    if result.errors:
        _print_findings(result.errors)
        print(f"{result.name}: the design has errors; fix them before booting it", file=sys.stderr)
        raise typer.Exit(1)
    try:
        plan = plan_lab(result, fabric, prefix)
        links = sum(1 for w in plan.wires if w.a_ns in plan.switches.values())
        preflight(len(plan.switches) + len(plan.bgp_hosts), links)  # a routing server runs FRR as a switch does
        if result.name in running_labs():
            raise LabError(f"a lab of {result.name} is running already: `fabric lab down {spec or ''}`".rstrip())
        lab = Lab(plan, _lab_dir(result.name))
        lab.check_free()
        try:
            took = lab.up()
            converged = lab.wait_converged(wait) if wait else None
        except BaseException:
            lab.down()
            raise
    except LabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    except FabricError as exc:  # rendering refused a value
        _print_findings(exc.findings)
        raise typer.Exit(1) from None
    print(
        f"{result.name}: {len(plan.switches)} switches and {len(plan.hosts)} servers up in {took:.1f} s"
        + (f", converged {converged:.1f} s after loading the configs" if converged is not None else "")
    )
    print("Reach a switch's shell or FRR:")
    for device, ns in sorted(plan.switches.items()):
        print(f"  ip netns exec {ns} bash    |  vtysh --vty_socket {lab.switch_dir(device)}")
    for device, ns in sorted(plan.hosts.items()):
        routing = f"  |  vtysh --vty_socket {lab.switch_dir(device)}" if device in plan.bgp_hosts else ""
        print(f"  ip netns exec {ns} bash    # server {device}{routing}")
    print("`fabric lab status` shows sessions and ECMP width; `fabric lab down` removes it all.")


@lab_app.command("status")
def lab_status_command(spec: SpecArg = None) -> None:
    """BGP sessions per switch, ECMP width per leaf, and why a session is not up, of every running lab (or SPEC's)."""
    from fabric.tools.lab import lab_status, running_labs

    converged = True
    for name, path in _selected_labs(spec, running_labs()).items():
        status = lab_status(path)
        converged &= status.converged
        print(f"{name}: {'converged' if status.converged else 'NOT converged'}")
        print(status.describe())
    raise typer.Exit(0 if converged else 1)


@lab_app.command("down")
def lab_down(spec: SpecArg = None) -> None:
    """Stop every running lab (or SPEC's): daemons, namespaces, state."""
    from fabric.tools.lab import running_labs, teardown

    for name, path in _selected_labs(spec, running_labs()).items():
        teardown(path)
        print(f"{name}: lab removed")


def _selected_labs(spec: Path | None, labs: Mapping[str, Path]) -> dict[str, Path]:
    selected = dict(labs)
    if spec is not None:
        name = _run(spec, False).name
        selected = {k: v for k, v in labs.items() if k == name}
    if not selected:
        print("no lab is running" + (f" for {spec}" if spec else ""), file=sys.stderr)
        raise typer.Exit(2)
    return selected


# Commands whose process ends at once when they are done (`os._exit` after flushing): a build's objects freed one
# by one at interpreter exit took 0.35 s of CPU for a 260-switch fabric, after everything was written. Nothing is
# left to clean up by then: the outputs are in place (written atomically), the render workers have been joined.
EXIT_AT_ONCE = frozenset({"build"})


def main() -> None:
    # numpy's BLAS would start a thread per core that spins for a while when the figures load it: ~0.15 s of CPU
    # the stages and render workers need, for no matrix product (fabric makes none); a user's setting wins
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if sys.argv[1:2] and sys.argv[1] in EXIT_AT_ONCE:
        try:
            app()
        except SystemExit as done:
            code = done.code
        else:
            code = 0
        if not isinstance(code, int):  # None, or a message (as sys.exit prints it)
            if code is not None:
                print(code, file=sys.stderr)
            code = 0 if code is None else 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    app()


if __name__ == "__main__":
    main()
