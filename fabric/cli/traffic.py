"""`fabric traffic`: what a collective gets of the NIC rate per GPU under the fabric's routing (analysis/traffic)."""

# No `from __future__ import annotations` in a command module: typer reads the parameters' annotations.
import json
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any

import typer

from fabric.cli.app import SpecArg, app
from fabric.cli.loading import load_build


class Pattern(StrEnum):
    all_reduce = "all-reduce"
    all_to_all = "all-to-all"
    shift = "shift"


class Routing(StrEnum):
    ecmp = "ecmp"
    adaptive = "adaptive"
    sm = "sm"


@app.command()
def traffic(
    spec: SpecArg = None,
    fabric: Annotated[
        str | None, typer.Option("--fabric", help="Which fabric (default: the scheduler's, as job bandwidth).")
    ] = None,
    pattern: Annotated[
        list[Pattern] | None, typer.Option("--pattern", help="Collective pattern; repeat for several (default: all).")
    ] = None,
    nodes: Annotated[
        int | None, typer.Option("--nodes", min=2, help="Job size in nodes, placed compactly (default: all).")
    ] = None,
    distance: Annotated[
        int | None, typer.Option("--distance", min=1, help="Shift distance in nodes (default: half the job).")
    ] = None,
    routing: Annotated[
        list[Routing] | None,
        typer.Option(
            "--routing",
            help="Routing; repeat for several (default: ecmp, adaptive). sm: the InfiniBand subnet manager's "
            "routes (ftree, updn).",
        ),
    ] = None,
    qps: Annotated[
        int | None,
        typer.Option(
            "--qps", min=1, max=64, help="Queue pairs per connection (default: the spec's traffic.qps, else 1)."
        ),
    ] = None,
    seeds: Annotated[int, typer.Option("--seeds", min=1, max=4096, help="ECMP hash seeds.")] = 16,
    no_pxn: Annotated[bool, typer.Option("--no-pxn", help="All-to-all without NCCL's PXN (NIC to every NIC).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Delivered bandwidth per GPU, as % of its NIC rate, of ring all-reduce, all-to-all and shift permutations
    under static ECMP (QPs hashed per hop, over seeds: mean, median, 5th percentile), adaptive routing (packet
    spraying: the ideal) and, on an InfiniBand fabric routed by ftree or updn, the subnet manager's own routes
    (`--routing sm`: OpenSM's tables, modelled), max-min fair (a fluid model)."""
    from fabric.analysis.traffic.jobs import ALL_TO_ALL_PORTS, fabric_nodes, largest_job, nic_ports, run
    from fabric.cli.views.summary import traffic_table
    from fabric.render.outputs.summary import traffic_row

    routings = [r.value for r in routing or [Routing.ecmp, Routing.adaptive]]
    result = load_build(spec, False, as_json)
    chosen = fabric_nodes(result.design, result.topology, fabric)
    if chosen is None:
        known = ", ".join(result.topology.fabrics)
        typer.echo(f"fabric traffic: no fabric {fabric or '(scheduler)'} in {result.name}: {known}", err=True)
        raise typer.Exit(2)
    key, placed = chosen
    if len(placed) < 2 or (nodes is not None and nodes > len(placed)):
        typer.echo(
            f"fabric traffic: {key} has {len(placed)} GPU node(s): a job needs 2 or more, at most that", err=True
        )
        raise typer.Exit(2)
    job = placed[: nodes or len(placed)]
    patterns = [p.value for p in pattern or list(Pattern)]
    ports = nic_ports(result.topology, key, job)
    if "all-to-all" in patterns and ports > ALL_TO_ALL_PORTS:
        most = largest_job(result.topology, key, placed, ALL_TO_ALL_PORTS)
        typer.echo(
            f"fabric traffic: an all-to-all of {len(job):,} nodes ({ports:,} NIC ports) is beyond what the model "
            f"runs in bounded memory ({ALL_TO_ALL_PORTS:,} NIC ports); left out: give --nodes {most:,} or fewer "
            "for its figures",
            err=True,
        )
        patterns.remove("all-to-all")
        if not patterns:
            raise typer.Exit(2)
    sm = None
    if "sm" in routings:
        sm = _sm_tables(result, key)
    try:
        figures = run(
            result.design,
            result.topology,
            job,
            key,
            patterns=patterns,
            routings=routings,
            qps=qps if qps is not None else result.design.spec.traffic.qps,
            seeds=seeds,
            distance=distance,
            pxn=not no_pxn,
            sm=sm,
        )
    except MemoryError:  # the machine's memory, not a bug: say which job was too large and what to ask instead
        typer.echo(
            f"fabric traffic: the model ran out of memory for {len(job):,} nodes ({ports:,} NIC ports), "
            f"{', '.join(patterns)} under {', '.join(routings)} with {seeds} seed(s): ask for fewer --nodes, "
            "fewer --seeds, or one --pattern and --routing at a time",
            err=True,
        )
        raise typer.Exit(2) from None
    data = {"design": result.name, "fabric": key, "nodes": len(job), "traffic": [traffic_row(f) for f in figures]}
    if as_json:
        typer.echo(json.dumps(data, indent=2))
    else:
        from fabric.cli.views.console import console

        console().print(traffic_table(data))


def _sm_tables(result: Any, key: str) -> Callable[[Any], Any]:
    """The modelled forwarding tables of fabric `key`'s subnets, for routing `sm`; exits 2 where there are none
    (not InfiniBand) or the model does not reproduce the SM's engine (not ftree or updn)."""
    from fabric.analysis.traffic.sm import NotModelled
    from fabric.intent.infiniband.routes import sm_tables

    subnets = [s for s in result.infiniband.subnets if s.fabric == key]
    try:
        return sm_tables(subnets, result.topology.fabrics[key])
    except NotModelled as exc:
        typer.echo(f"fabric traffic: --routing sm: {exc}", err=True)
        raise typer.Exit(2) from None
