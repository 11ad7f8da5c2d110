"""`fabric plan`: candidate designs for a GPU count, ranked (the table is in views/plan_table.py)."""

# No `from __future__ import annotations` in a command module: typer reads the parameters' annotations.
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from fabric.cli.app import app, parse_workers_option
from fabric.model.text import printable


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
    metric: Annotated[
        str,
        typer.Option(
            "--metric",
            help="Ranking: tco-per-delivered-pflops (TCO over dense compute x the bandwidth the fabric delivers "
            "the whole-cluster job), tco-per-pflops, tco-per-gpu or capital-per-gpu.",
        ),
    ] = "tco-per-delivered-pflops",
    precision: Annotated[
        str, typer.Option("--precision", help="Compute figure: bf16 or fp8 (dense tensor TFLOPS, catalog).")
    ] = "bf16",
    delivered: Annotated[
        str,
        typer.Option(
            "--delivered",
            help="What the fabric delivers, for tco-per-delivered-pflops: bisection (max-flow of the whole-cluster "
            "job), ecmp (the traffic model under static ECMP, 1 QP per connection: the worst of all-reduce, "
            "all-to-all and shift for the largest job `fabric show` models), adaptive (the same under packet "
            "spraying) or static (the subnet manager's modelled routes on InfiniBand, ECMP on Ethernet). The "
            "traffic model runs for each built candidate: slower.",
        ),
    ] = "bisection",
    build_all: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Build and list every candidate. Default without --node: each node type's best, the candidates "
            "whose lower bound cannot beat it left unbuilt.",
        ),
    ] = False,
    closed: Annotated[
        bool | None,
        typer.Option(
            "--closed-form/--build",
            help="Rank each candidate from its closed form, none built (switch counts, racks and cable lengths "
            "computed, costs at least, within ~1 % of a build's; no optics count, failure, ECMP, headroom or job "
            "figures), or build them. Default: the closed form above 65,536 GPUs, where a build takes 10 s or more.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ranked candidates as JSON.")] = False,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            help="Write the chosen candidate as a whole cluster's spec into this directory: its compute fabric, head "
            "nodes, storage servers and fabric, in-band and out-of-band fabrics; then build it unless ranked by the "
            "closed form (exit 1 if it fails).",
        ),
    ] = None,
    platform: Annotated[
        str | None,
        typer.Option("--platform", help="With --write: network OS of the Ethernet fabrics (cumulus, sonic, eos, frr)."),
    ] = None,
    pick: Annotated[
        int | None, typer.Option("--pick", min=1, help="With --write: the candidate number (default: rank 1).")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            parser=parse_workers_option,
            help="Processes for the sweep (at most 4 per core). Default: the machine's cores.",
        ),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Run the sweep on a Dask distributed scheduler (tcp://host:8786)."),
    ] = None,
) -> None:
    """Rank candidate designs for a GPU count: each candidate from the catalog built through the pipeline."""
    from rich.console import Console

    from fabric.cli.output_dir import check_out_path, refuse
    from fabric.cli.views.console import console
    from fabric.cli.views.plan_table import plan_table, ruled_out
    from fabric.plan.candidates import enumerate_candidates
    from fabric.plan.closed import CLOSED_FORM_ABOVE
    from fabric.plan.delivered import DELIVERED
    from fabric.plan.document import spec_name, spec_yaml
    from fabric.plan.metrics import METRICS, PRECISIONS
    from fabric.plan.rank import as_data, rank
    from fabric.plan.sweep import SchedulerError, closed_sweep, pruned_sweep, sweep
    from fabric.spec.catalog import builtin_catalog
    from fabric.spec.platforms import platform_names
    from fabric.write.atomic import OutputError, path_error, write_new_files

    if grow_to is not None and grow_to < gpus:
        print("error: --grow-to must be at least --gpus", file=sys.stderr)
        raise typer.Exit(2)
    if metric not in METRICS or precision not in PRECISIONS:
        print(f"error: --metric: one of {', '.join(METRICS)}; --precision: bf16 or fp8", file=sys.stderr)
        raise typer.Exit(2)
    if delivered not in DELIVERED:
        print(f"error: --delivered {printable(delivered)!r}: one of {', '.join(DELIVERED)}", file=sys.stderr)
        raise typer.Exit(2)
    if platform is not None and platform not in platform_names():
        print(f"error: --platform {printable(platform)!r}: one of {', '.join(platform_names())}", file=sys.stderr)
        raise typer.Exit(2)
    needs_builds = grow_to is not None or delivered != "bisection"
    if closed is None:
        closed = gpus > CLOSED_FORM_ABOVE and not needs_builds
    elif closed and needs_builds:
        print("error: --closed-form builds nothing: --grow-to and --delivered need builds (--build)", file=sys.stderr)
        raise typer.Exit(2)
    request = _plan_request(
        gpus, node or [], technology, switch or [], oversubscription or [], tiers or [], rail, planes or [], su or []
    )
    catalog = builtin_catalog()
    candidates = enumerate_candidates(catalog, request)
    if not candidates:
        print("error: no candidate: no switch of the catalog serves these node types and options", file=sys.stderr)
        raise typer.Exit(2)
    # each node type's best is what the table shows without --node: the rest need not be built (a budget or a
    # growth target ranks by other figures, so those build everything)
    best_only = not (node or build_all or budget is not None or grow_to)
    pruned: list[tuple[int, str, float]] = []
    try:
        if closed:
            outcomes = closed_sweep(candidates, gpus, workers=workers, scheduler=scheduler)
        elif best_only:
            outcomes, pruned = pruned_sweep(
                candidates, gpus, metric, precision, workers=workers, scheduler=scheduler, delivered=delivered
            )
        else:
            outcomes = sweep(candidates, gpus, grow_to, workers=workers, scheduler=scheduler, delivered=delivered)
    except SchedulerError as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        raise typer.Exit(2) from None
    ranked = rank(outcomes, budget, grow_to, metric, precision, catalog)
    data = as_data(
        ranked,
        gpus,
        grow_to,
        budget,
        metric=metric,
        precision=precision,
        pruned=pruned,
        catalog=catalog,
        delivered=delivered,
    )
    if as_json:
        print(json.dumps(data, indent=2))
    else:  # a wide table: print it whole rather than fold every cell into a narrow terminal
        wide = Console(soft_wrap=False, width=max(console().width, 260))
        wide.print(plan_table(data, best_only))
        for line in ruled_out(data):
            wide.print(line)
        if closed:
            wide.print(
                f"Closed form: none of the {len(candidates)} candidates built (the default above "
                f"{CLOSED_FORM_ABOVE:,} GPUs, where a build takes 10 s or more); --build builds them. `fabric "
                f"validate` checks a spec --write writes."
            )
        if pruned:
            wide.print(
                f"Not built ({len(pruned)} of {len(candidates)}): their lower bound (the nodes, the fewest switches, "
                f"racks, the cheapest cable and optics per link; else the same from their topology's placement, or "
                f"their exact cost from topology and cables) "
                f"cannot beat their node type's best; --all or --node builds them."
            )
    passing = [r for r in ranked if r.status == "ok"]
    if write is not None:
        chosen = (
            next((r for r in ranked if pick == r.outcome.candidate.index + 1 or pick in r.identical), None)
            if pick
            else None
        )
        if pick and chosen is None and any(i + 1 == pick for i, _, _ in pruned):
            print(f"error: candidate {pick} was not built (its bound could not rank): add --all", file=sys.stderr)
            raise typer.Exit(1)
        chosen = chosen or (passing[0] if passing else None)
        if chosen is None or not chosen.outcome.ok:
            print("error: no candidate that builds to write", file=sys.stderr)
            raise typer.Exit(1)
        # an identical twin picked by its own number is written as itself (its rail setting, its name)
        c = candidates[pick - 1] if pick and pick in chosen.identical else chosen.outcome.candidate
        why = f"Rank {chosen.rank} of {len(ranked)}" + (f" for growth to {grow_to} GPUs" if grow_to else "") + "."
        text = spec_yaml(c, gpus, catalog, why, whole=True, platform=platform)
        filename = f"{spec_name(c, gpus)}.yaml"
        check_out_path(write)
        try:  # the spec file only: the directory and whatever else is in it stay as they are
            written = write_new_files(write, {filename: text.encode()})
        except OutputError as exc:
            refuse(exc)
        except OSError as exc:
            refuse(path_error(write, exc))
        print(f"wrote {written / filename}", file=sys.stderr)
        if closed:
            print(f"not built (closed form): `fabric validate {written / filename}` checks it", file=sys.stderr)
        elif _whole_cluster_fails(text, filename):
            raise typer.Exit(1)
    raise typer.Exit(0 if passing else 1)


def _whole_cluster_fails(text: str, filename: str) -> bool:
    """Build the whole cluster just written (its compute fabric was built and ranked, the storage, in-band and
    out-of-band fabrics around it were not) and say on stderr what fails, if anything does."""
    from fabric.model.findings import FabricError, Severity
    from fabric.pipeline import build_fabric
    from fabric.spec.loader import load_spec_text

    try:
        errors = build_fabric(load_spec_text(text, filename)).errors
    except FabricError as exc:
        errors = [f for f in exc.findings if f.severity == Severity.ERROR]
    if not errors:
        return False
    first = errors[0]
    print(
        f"error: the whole cluster written does not build: {len(errors)} error(s), first {first.code} at "
        f"{first.path}: {printable(first.message)[:300]} (`fabric validate` lists them all)",
        file=sys.stderr,
    )
    return True
