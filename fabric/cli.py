"""The command line: files and exit codes, no logic (that lives in the pipeline).

Exit codes: 0 clean or warnings only; 1 design errors; 2 the spec is unreadable or invalid.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from fabric.model.findings import FabricError, Finding, Severity, sort_findings
from fabric.pipeline import Build, build_fabric
from fabric.spec.resources import default_spec
from fabric.spec.schema import format_ratio

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Compile a GPU-cluster fabric spec into a checked, addressed and cabled plan.",
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
console = Console(soft_wrap=False)

SpecArg = Annotated[
    Path | None,
    typer.Argument(help="Spec file (YAML). Default: the bundled 4-SU DGX SuperPOD H100 design.", show_default=False),
]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Treat warnings as errors.")]


def _print_findings(findings: list[Finding]) -> None:
    for severity, title in ((Severity.ERROR, "Errors"), (Severity.WARNING, "Warnings"), (Severity.INFO, "Notes")):
        group = [f for f in findings if f.severity == severity]
        if group:
            print(f"{title} ({len(group)}):")
            for finding in group:
                print("  " + finding.format().replace("\n", "\n  "))


def _run(spec: Path | None, strict: bool, as_json: bool = False) -> Build:
    """Build, or print why not and exit 2. Strict mode escalates warnings."""
    path = spec or default_spec()
    try:
        build = build_fabric(path)
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
) -> None:
    """Validate, then write every output into the output directory (atomically)."""
    from fabric.render import render_all
    from fabric.write.atomic import OutputError, write_outputs

    result = _run(spec, strict)
    _print_findings(list(result.findings))
    if result.errors:
        print(f"{result.name}: {len(result.errors)} error(s); nothing was written", file=sys.stderr)
        raise typer.Exit(1)
    files = render_all(result)
    target = out or Path("output") / result.name
    try:
        written = write_outputs(files, target, result.name)
    except (OutputError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    print(f"{result.name}: wrote {len(files)} files to {written}")


@app.command()
def show(spec: SpecArg = None, strict: StrictOpt = False) -> None:
    """Print a summary of every fabric: switches, links, oversubscription, bisection, ECMP, failures, cables."""
    from fabric.render.summary import cables_by_media, summary

    result = _run(spec, strict)
    data = summary(result)
    console.print(
        f"[bold]{data['design']}[/bold]: {data['gpus']:,} GPUs, {data['nodes']:,} nodes, "
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
        ("node-leaf", "right"),
        ("leaf-spine", "right"),
        ("spine-core", "right"),
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
            key,
            f["technology"],
            str(f["tiers"]),
            *(str(f["switches"][k]) for k in ("leaf", "spine", "core")),
            *(str(f["links"][k]) for k in ("node-leaf", "leaf-spine", "spine-core")),
            over or "-",
            f"{(f['bisection_gbps'] or 0) / 1000:,.1f} Tb/s ({f['bisection_pct']}%)",
            str(f["min_ecmp_width"] if f["min_ecmp_width"] is not None else "-"),
            f"{failure}% ({f['worst_single_failure']})" if failure is not None else "-",
        )
    console.print(table)
    media = Table(title="Cables by media")
    media.add_column("media")
    keys = list(result.topology.fabrics)
    for key in keys:
        media.add_column(key, justify="right")
    media.add_column("total", justify="right")
    per_fabric = {key: cables_by_media(result, key) for key in keys}
    for name, total in data["cables_by_media"].items():
        media.add_row(name, *(str(per_fabric[k].get(name, 0)) for k in keys), str(total))
    console.print(media)
    counts = _counts(result.findings)
    console.print(
        f"{counts['errors']} error(s), {counts['warnings']} warning(s), {counts['infos']} note(s)"
        + (" — run `fabric validate` for details" if len(result.findings) else "")
    )
    raise typer.Exit(1 if result.errors else 0)


@app.command()
def schema(
    markdown: Annotated[bool, typer.Option("--markdown", help="The spec reference as Markdown.")] = False,
) -> None:
    """Print the spec's JSON schema (or, with --markdown, the spec reference)."""
    from fabric.render.spec_reference import spec_reference
    from fabric.spec.schema import Spec

    if markdown:
        sys.stdout.write(spec_reference())
    else:
        print(json.dumps(Spec.model_json_schema(), indent=2))


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
) -> None:
    """Compare a built fabric (ibnetdiscover output or LLDP neighbours) with the plan, cable by cable.

    Reports each missing cable, each cable in a wrong port (and where it should go), each unexpected cable and
    each link at a wrong width or speed, with the cable id, label and both ends as rack, U, device and port.
    Exit 0 when everything matches, 1 otherwise, 2 when the spec or the discovered data cannot be read.
    """
    from fabric.render.infiniband.netfile import parse_ibnetdiscover
    from fabric.spec.reading import ReadError, read_text
    from fabric.tools.lldp import read_lldp
    from fabric.tools.verify import choose_subnet, verify_ib, verify_lldp

    if (ibnetdiscover is None) == (not lldp):
        print("error: give either --ibnetdiscover FILE or --lldp PATH", file=sys.stderr)
        raise typer.Exit(2)
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
        report = verify_ib(result, subnet, discovered, ignore_speed=ignore_speed)
    else:
        data = read_lldp(lldp or [])
        if data.findings:
            _print_findings(list(data.findings))
            raise typer.Exit(2)
        if fabric is not None and fabric not in result.topology.fabrics:
            print(f"error: no fabric `{fabric}` in {result.name}", file=sys.stderr)
            raise typer.Exit(2)
        report = verify_lldp(result, data, fabric)
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        sys.stdout.write(report.text())
    raise typer.Exit(report.exit_code)


lab_app = typer.Typer(
    no_args_is_help=True,
    help="A live digital twin: boot a fabric's generated FRR configs in network namespaces (root, Linux).",
)
app.add_typer(lab_app, name="lab")
PrefixOpt = Annotated[str, typer.Option("--prefix", help="Prefix of the lab's network namespace names.")]


def _lab_dir(name: str) -> Path:
    from fabric.tools.lab import STATE_ROOT

    return STATE_ROOT / name


@lab_app.command("up")
def lab_up(
    spec: SpecArg = None,
    fabric: Annotated[str | None, typer.Option("--fabric", help="Which Ethernet fabric (default: the first).")] = None,
    prefix: PrefixOpt = "fab-",
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for convergence (0: do not wait).")] = 90,
) -> None:
    """Boot the fabric: a namespace per switch and server, veth pairs as cabled, zebra and bgpd per switch."""
    from fabric.tools.lab import Lab, LabError, plan_lab, preflight, running_labs

    result = _run(spec, False)
    if result.errors:
        _print_findings(result.errors)
        print(f"{result.name}: the design has errors; fix them before booting it", file=sys.stderr)
        raise typer.Exit(1)
    try:
        plan = plan_lab(result, fabric, prefix)
        links = sum(1 for w in plan.wires if w.a_ns in plan.switches.values())
        preflight(len(plan.switches), links)
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
    print(
        f"{result.name}: {len(plan.switches)} switches and {len(plan.hosts)} servers up in {took:.1f} s"
        + (f", converged {converged:.1f} s after loading the configs" if converged is not None else "")
    )
    print("Reach a switch's shell or FRR:")
    for device, ns in sorted(plan.switches.items()):
        print(f"  ip netns exec {ns} bash    |  vtysh --vty_socket {lab.switch_dir(device)}")
    for device, ns in sorted(plan.hosts.items()):
        print(f"  ip netns exec {ns} bash    # server {device}")
    print("`fabric lab status` shows sessions and ECMP width; `fabric lab down` removes it all.")


@lab_app.command("status")
def lab_status_command(spec: SpecArg = None) -> None:
    """BGP sessions per switch and ECMP width per leaf of every running lab (or of SPEC's)."""
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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
