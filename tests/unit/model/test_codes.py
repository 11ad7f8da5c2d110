"""The registry of finding codes (fabric/model/codes.py) is the truth: every code raised is declared with
its severity, every declared code is raised by a golden bad input or broken design (or a case here), no
finding can carry an undeclared code, and docs/checks.md's table is generated from the registry."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest

from fabric import FabricError, build_fabric, load_spec
from fabric.analysis.checks import Context, check_bisection
from fabric.cli.views.reference_pages import checks_page, checks_table
from fabric.model.codes import BY_CODE, CODES
from fabric.model.findings import Finding, Severity
from fabric.render.engine.safety import unsafe_values
from fabric.tools.ibnetdiscover import parse_ibnetdiscover
from fabric.tools.lldp import parse_lldp_text
from tests.conftest import REPO, built

CASES = [p for d in ("errors", "broken", "hostile") for p in sorted((REPO / "tests" / d).glob("*.yaml"))]
CHECKS_PAGE = REPO / "docs" / "checks.md"


def _findings(case: Path) -> tuple[Finding, ...]:
    try:
        return build_fabric(load_spec(case)).findings
    except FabricError as exc:
        return tuple(exc.findings)


def _bisection_mismatch() -> Iterator[Finding]:
    """A generated fabric whose graph gives less bisection than its Clos formula (a generator bug)."""
    build = built("lab")
    figures = {
        k: dataclasses.replace(f, bisection_analytic_gbps=2 * f.bisection_gbps) for k, f in build.figures.items()
    }
    yield from check_bisection(Context(build.design, build.topology, figures))


def _discovered_format() -> Iterator[Finding]:
    yield from parse_ibnetdiscover("Switch 36 nonsense\n", "bad.txt").findings
    yield from parse_lldp_text("{not json", "leaf1.json", "leaf1")[2]


def _diff_input_invalid() -> Iterator[Finding]:
    """An output directory `fabric diff` cannot compare (tests/hostile/diff-* show each kind in full)."""
    from fabric.tools.diff import DiffError, parse_table

    try:
        parse_table("cable_id,fabric\nc1,compute\n", "cabling.csv", "cabling.csv")
    except DiffError as exc:
        yield exc.finding


def _render_unsafe_value() -> Iterator[Finding]:
    """A value that bypassed the loader (a notebook building intents by hand) reaches the renderers."""
    build = built("lab")
    name, intent = next(iter(build.intents.items()))
    hostile = dataclasses.replace(intent, hostname=intent.hostname + "\nusername evil")
    yield from unsafe_values(dataclasses.replace(build, intents={**build.intents, name: hostile}))


def _lock_invalid() -> Iterator[Finding]:
    from fabric.spec.lock import parse_lock

    try:
        parse_lock('{"format": "fabric-allocations-lock", "version": 2}', "allocations.lock.json")
    except FabricError as exc:
        yield from exc.findings


def _lock_move() -> Iterator[Finding]:
    """A change that moves locked cables (the growth goldens, tests/golden/growth, show it in full)."""
    from tests.unit.allocation.test_growth import GROWTH, grow

    yield from (f for f in grow(built("lab"), GROWTH / "lab-4-spines.yaml").findings if f.code == "lock-move")


def _lock_design() -> Iterator[Finding]:
    """Another design's lock given with --lock (tests/hostile/lock-other-design shows it in full), kept with
    --allow-moves (a warning) and without (an error)."""
    import tempfile

    from fabric.cli.lock_choice import LockChoice, with_lock
    from fabric.render.outputs.lock import lock_json

    with tempfile.TemporaryDirectory() as tmp:
        given = Path(tmp) / "allocations.lock.json"
        given.write_text(lock_json(built("lab-dual")), encoding="utf-8")
        lab = load_spec(REPO / "designs" / "lab.yaml")
        for allow in (False, True):
            design = with_lock(lab, LockChoice(given, ignore=False, allow_moves=allow, out=Path(tmp) / "out"))
            yield from (n for n in design.notes if n.code == "lock-design")


# codes no golden case can show, each raised by a case here
def _output(code: str) -> Callable[[], Iterator[Finding]]:
    """A refused write (docs/safety.md): a rebuild over a user's file, an input inside -o, a name too long."""

    def make() -> Iterator[Finding]:
        import tempfile

        from fabric.cli.output_dir import finding, inputs_inside, out_path_problem
        from fabric.model.rendered import Rendered
        from fabric.write.atomic import OutputError, write_outputs

        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            problem: OutputError | None = None
            if code in ("output-foreign", "output-modified"):
                write_outputs(Rendered({"a.txt": b"a"}, private=()), out, "d")
                (out / "NOTES.txt" if code == "output-foreign" else out / "a.txt").write_text("mine")
            try:
                if code == "output-holds-input":
                    problem = inputs_inside(out, [out / "lab.yaml"])
                elif code == "output-path":
                    problem = out_path_problem(out / ("x" * 300))
                else:
                    write_outputs(
                        Rendered({"a.txt": b"b"} if code != "output-refused" else {"../a": b""}, private=()), out, "d"
                    )
            except OutputError as exc:
                problem = exc
            assert problem is not None
            yield finding(problem)

    return make


def _lossless_mismatch() -> Iterator[Finding]:
    """One `qos` per fabric feeds every hop, so no spec can show it (tests/unit/intent/test_lossless.py alters
    one hop's intent in every way it can differ)."""
    from tests.unit.intent.test_lossless import _findings, _first_nic_and_leaf, _qos

    build = built("roce-512")
    leaf = _first_nic_and_leaf(build)[1]
    yield from _findings(build, {leaf.hostname: _qos(leaf, roce_tc=4)})


def _render_worker_died() -> Iterator[Finding]:
    """A render worker killed (tests/unit/cli/test_build_worker_died.py kills one in a real `fabric build`)."""
    import os
    import signal

    import fabric.render.engine.pool as pool
    from fabric.render.engine.registry import Output

    def die(build: object) -> dict[str, str]:
        if pool._WORKER:  # (never the test's own process)
            os.kill(os.getpid(), signal.SIGKILL)
        return {}

    try:
        list(pool.render_tasks(built("lab"), (Output("doomed", die),), 2, None))
    except pool.WorkerDied as exc:
        yield from exc.findings


def _nic_port_speed() -> Iterator[Finding]:
    """sonic-th5-512 as it was (hgx-b300 nodes at 800G Ethernet on ConnectX-8 ports, which run at most 400GbE one
    port)."""
    from fabric.allocation.checks import AllocationContext, check_nic_speeds
    from tests.support.design_variants import cx8_at_800g

    build = cx8_at_800g("sonic-th5-512")
    yield from check_nic_speeds(AllocationContext(build.design, build.topology, build.figures, build.allocation))


def _cage_mixed_mode() -> Iterator[Finding]:
    """superpod-h100-1su with an HDR UFM appliance (a part file's QSFP56 port, 50G-PAM4) beside a DGX's NDR port in a
    leaf's twin-port cage (the bundled designs cable their UFM at NDR200, as the RA does)."""
    from fabric.allocation.checks import AllocationContext, check_cage_modes
    from tests.support.design_variants import with_hdr_ufm

    build = with_hdr_ufm()
    yield from check_cage_modes(AllocationContext(build.design, build.topology, build.figures, build.allocation))


EXTRA = {
    **{
        code: _output(code)
        for code in ("output-foreign", "output-holds-input", "output-modified", "output-path", "output-refused")
    },
    "bisection-mismatch": _bisection_mismatch,
    "cage-mixed-mode": _cage_mixed_mode,
    "diff-input-invalid": _diff_input_invalid,
    "discovered-format": _discovered_format,
    "lock-design": _lock_design,
    "lock-invalid": _lock_invalid,
    "lock-move": _lock_move,
    "lossless-mismatch": _lossless_mismatch,
    "nic-port-speed": _nic_port_speed,
    "render-unsafe-value": _render_unsafe_value,
    "render-worker-died": _render_worker_died,
}


@cache
def _raised() -> dict[str, set[str]]:
    """code → the severities it is raised with, over every case."""
    seen: dict[str, set[str]] = {}
    for case in CASES:
        for f in _findings(case):
            seen.setdefault(f.code, set()).add(f.severity.label)
    for code, make in EXTRA.items():
        found = list(make())
        assert {f.code for f in found} == {code}, f"the {code} case raises {sorted({f.code for f in found})}"
        for f in found:
            seen.setdefault(f.code, set()).add(f.severity.label)
    return seen


def test_codes_are_declared_once_with_a_stage_and_a_doc() -> None:
    assert len(CODES) == len(BY_CODE) >= 55
    for c in CODES:
        assert c.severities and set(c.severities) <= {"error", "warning", "info"}, c.code
        assert c.stages and c.checks and c.doc, c.code


def test_every_raised_code_is_declared_with_its_severity() -> None:
    raised = _raised()
    assert len(raised) >= 55
    for code, severities in raised.items():
        assert code in BY_CODE, f"{code} is raised but not declared"
        assert severities <= set(BY_CODE[code].severities), f"{code} is raised as {sorted(severities)}"


def test_every_declared_code_is_raised_by_a_case() -> None:
    missing = sorted(set(BY_CODE) - set(_raised()))
    assert missing == [], f"declared but raised by no bad input, broken design or EXTRA case: {missing}"


def test_an_undeclared_code_cannot_be_made() -> None:
    with pytest.raises(ValueError, match="not declared"):
        Finding(Severity.ERROR, "no-such-code", "", "message")


def _literal_codes() -> Iterator[tuple[str, str]]:
    """(code, where) for every string literal given as a code to a finding helper in fabric/."""
    helpers = {
        "error": 0,
        "warning": 0,
        "info": 0,
        "make": 0,
        "_fail": 0,
        "Finding": 1,
        "_finding": 1,
        "OutputError": 1,
    }
    for path in sorted((REPO / "fabric").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            index = helpers.get(name or "")
            if index is None or len(node.args) <= index:
                continue
            arg = node.args[index]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                yield arg.value, f"{path.relative_to(REPO)}:{node.lineno}"


def test_every_code_in_the_source_is_declared() -> None:
    found = list(_literal_codes())
    assert len(found) >= 80
    undeclared = [f"{code} ({where})" for code, where in found if code not in BY_CODE]
    assert undeclared == []


def test_the_checks_page_is_the_registry() -> None:
    text = CHECKS_PAGE.read_text(encoding="utf-8")
    assert text == checks_page(), "docs/checks.md is stale: run `./dev docs`"
    table = checks_table()
    assert table in text
    assert table.count("\n| `") == len(CODES)
