"""`fabric lab up|status|down`: a live digital twin of an Ethernet fabric in network namespaces."""

# No `from __future__ import annotations` in a command module: typer reads the parameters' annotations.
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer

from fabric.cli.app import SpecArg, app
from fabric.cli.loading import load_build
from fabric.cli.views.findings import print_findings
from fabric.model.findings import FabricError

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

    result = load_build(spec, False)
    if result.errors:
        print_findings(result.errors)
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
        print_findings(exc.findings)
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
        name = load_build(spec, False).name
        selected = {k: v for k, v in labs.items() if k == name}
    if not selected:
        print("no lab is running" + (f" for {spec}" if spec else ""), file=sys.stderr)
        raise typer.Exit(2)
    return selected
