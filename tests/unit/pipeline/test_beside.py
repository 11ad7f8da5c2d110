"""The analysis beside allocation and intent (fabric/fast/parallel.py's `beside`, as the pipeline uses it): a forked
child gives the same build as one process, its errors reach the caller, and nothing is left running."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from pathlib import Path

import pytest

import fabric.pipeline as pipeline
from fabric import build_fabric
from fabric.allocation.checks import ALLOCATION_CHECKS, AllocationContext
from fabric.analysis.jobs import job_bandwidth
from fabric.fast.lazy import LazyMapping
from fabric.fast.parallel import beside
from tests.conftest import DESIGNS, REPO

BROKEN = REPO / "tests" / "broken"


@pytest.mark.parametrize("design", ["superpod-h100-2su", "lab-dual"])
def test_beside_gives_the_build_of_one_process(design: str, monkeypatch: pytest.MonkeyPatch) -> None:
    alone = build_fabric(DESIGNS / f"{design}.yaml")
    assert "jobs" not in vars(alone)  # one process: the table is made on first read
    monkeypatch.setattr(pipeline, "BESIDE_ABOVE", 0)  # fork even for a small design
    monkeypatch.setattr(pipeline, "BESIDE_SWITCHES", 0)
    forked = build_fabric(DESIGNS / f"{design}.yaml", workers=2, jobs=True)
    assert forked.figures == alone.figures
    assert forked.findings == alone.findings
    assert forked.allocation.cables == alone.allocation.cables
    table = job_bandwidth(alone.design, alone.topology)
    assert table is not None and len(table.rows) >= 3
    assert vars(forked)["jobs"] == table  # made beside, and what render reads
    assert alone.jobs == table  # made on first read
    assert multiprocessing.active_children() == []


def test_graph_findings_made_beside_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    # the graph checks run in the child with the figures: their findings come back with the file and line
    from fabric import load_spec_text
    from tests.unit.analysis.test_figures import explicit_spec

    text = explicit_spec(drop={(1, 1, 0)})  # a missing link: bisection error, uneven-spread warning
    alone = build_fabric(load_spec_text(text))
    monkeypatch.setattr(pipeline, "BESIDE_ABOVE", 0)
    monkeypatch.setattr(pipeline, "BESIDE_SWITCHES", 0)
    forked = build_fabric(load_spec_text(text), workers=2, jobs=True)
    codes = sorted(f.code for f in forked.findings)
    assert "bisection" in codes and "uneven-spread" in codes
    assert forked.findings == alone.findings
    assert all(f.line for f in forked.findings if f.code == "bisection")


def test_one_worker_or_no_jobs_forks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "BESIDE_ABOVE", 0)
    monkeypatch.setattr(pipeline, "BESIDE_SWITCHES", 0)
    forks: list[int] = []
    real = multiprocessing.get_context

    def counting(method: str) -> object:
        forks.append(1)
        return real(method)

    monkeypatch.setattr(multiprocessing, "get_context", counting)
    assert "jobs" not in vars(build_fabric(DESIGNS / "lab.yaml", workers=1, jobs=True))
    assert forks == []
    assert "jobs" not in vars(build_fabric(DESIGNS / "lab.yaml", workers=2))  # figures beside, no table
    assert forks == [1]


def _fails() -> int:
    raise ZeroDivisionError("in a child")


def _answers() -> int:
    return 42


def test_an_error_beside_reaches_the_caller_and_stops_the_children() -> None:
    with beside(_answers) as answer:
        assert answer.result() == 42
    with pytest.raises(ZeroDivisionError, match="in a child"), beside(_fails) as failing:
        failing.result()
    assert multiprocessing.active_children() == []
    with beside(_answers, fork=False) as inline:  # not forked: computed at result()
        assert inline.result() == 42
    # an error on this side while the child still computes: its result is taken, then the pool ends
    with pytest.raises(KeyError, match="here"), beside(_slowly):
        raise KeyError("here")
    assert multiprocessing.active_children() == []


def _slowly() -> int:
    import time

    time.sleep(0.3)
    return 7


def test_the_analysis_forks_only_where_it_pays(monkeypatch: pytest.MonkeyPatch) -> None:
    # 4 x 256 EOS has 13,312 links but 260 switches: its analysis takes the pure-Python path (~0.03 s), less than
    # a fork costs; a fabric above BESIDE_SWITCHES switches also loads numpy and scipy beside
    build = build_fabric(DESIGNS / "superpod-h100-2su.yaml")
    switches = len(build.topology.fabrics["compute"].switches)
    assert 0 < switches <= pipeline.BESIDE_SWITCHES
    monkeypatch.setattr(pipeline, "BESIDE_ABOVE", 0)
    assert not pipeline.beside_pays(build.topology)  # enough links, too few switches
    monkeypatch.setattr(pipeline, "BESIDE_SWITCHES", switches - 1)
    assert pipeline.beside_pays(build.topology)
    monkeypatch.setattr(pipeline, "BESIDE_ABOVE", sum(len(ft.links) for ft in build.topology.fabrics.values()) + 1)
    assert not pipeline.beside_pays(build.topology)  # too few links


ALLOCATION_FINDINGS = ["addressing", "cage-mixed-mode", "cage-plugs", "optics-missing", "optics-signalling", "speeds"]


@pytest.mark.parametrize(
    "spec",
    [
        *(DESIGNS / f"{d}.yaml" for d in ("superpod-h100-2su", "lab-dual", "lab")),
        *(BROKEN / f"{b}.yaml" for b in ALLOCATION_FINDINGS),
    ],
    ids=lambda p: p.stem,
)
def test_validate_runs_the_allocation_checks_beside_with_the_same_findings(
    spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`fabric validate` (nothing renders the build): the allocation checks run in a second child, forked once the
    allocation is made, before the figures are back; the findings are one process's."""
    alone = build_fabric(spec)
    monkeypatch.setattr(pipeline, "BESIDE_ABOVE", 0)
    monkeypatch.setattr(pipeline, "BESIDE_SWITCHES", 0)
    forks: list[str] = []
    real = pipeline.beside

    def counting(compute: Callable[[], object], fork: bool = True) -> object:
        forks.append("fork" if fork else "here")
        return real(compute, fork)

    monkeypatch.setattr(pipeline, "beside", counting)
    forked = build_fabric(spec, workers=2, rendered=False)
    assert forks == ["fork", "fork"]
    assert forked.findings == alone.findings
    assert multiprocessing.active_children() == []
    rendered = build_fabric(spec, workers=2)  # a build that renders keeps the checks' memos here: no second child
    assert forks[2:] == ["fork", "here"]
    assert rendered.findings == alone.findings


@pytest.mark.parametrize(
    "spec",
    [*sorted(DESIGNS.glob("*.yaml")), *(BROKEN / f"{b}.yaml" for b in ALLOCATION_FINDINGS)],
    ids=lambda p: p.stem,
)
def test_no_allocation_check_reads_the_figures(spec: Path) -> None:
    """The allocation checks beside run before the figures are back: every check gives the same findings with
    figures that cannot be read, and reading them is an error that says where such a check belongs."""
    build = build_fabric(spec)
    for name, check in ALLOCATION_CHECKS.items():
        ctx = AllocationContext(build.design, build.topology, pipeline.FiguresNotBack(), build.allocation)
        assert list(check(ctx)) == list(
            check(AllocationContext(build.design, build.topology, build.figures, build.allocation))
        ), name
    with pytest.raises(RuntimeError, match="intent check"):
        pipeline.FiguresNotBack()["compute"]
    with pytest.raises(RuntimeError, match="intent check"):
        list(pipeline.FiguresNotBack().values())


@pytest.mark.parametrize("design", ["superpod-h100-2su", "lab-ib", "lab"])
def test_a_build_nothing_renders_makes_its_ib_hosts_when_read(design: str) -> None:
    """`fabric validate` reads no node's HCAs (ib_hosts, for the renderers): made on first read, the same mapping."""
    rendered = build_fabric(DESIGNS / f"{design}.yaml")
    assert not isinstance(rendered.ib_hosts, LazyMapping)
    checked = build_fabric(DESIGNS / f"{design}.yaml", rendered=False)
    assert isinstance(checked.ib_hosts, LazyMapping) and not checked.ib_hosts.built
    assert checked.findings == rendered.findings
    assert dict(checked.ib_hosts) == dict(rendered.ib_hosts) and checked.ib_hosts.built
    assert len(rendered.ib_hosts) > 0 or design != "superpod-h100-2su"  # a design that has them, compared
