"""`fabric plan --closed-form`: a candidate's outcome from its closed form agrees with its build — the same
verdict (the same finding code where it fails), the same switch and link counts, a cost never above the built
one and within ~1 % of it at 1:1 — and the CLI picks it above 65,536 GPUs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import fabric.plan.closed
from fabric.cli.app import app
from fabric.plan.candidates import Request, enumerate_candidates
from fabric.plan.closed import closed_outcome
from fabric.plan.evaluate import evaluate
from fabric.spec.catalog import builtin_catalog

CATALOG = builtin_catalog()


@pytest.mark.slow
@pytest.mark.parametrize(("gpus", "step"), [(1024, 17), (4096, 41)])
def test_the_closed_form_agrees_with_the_build(gpus: int, step: int) -> None:
    verdicts, ratios = [], []
    for c in enumerate_candidates(CATALOG, Request(gpus, oversubscription=(1.0, 2.0)))[::step]:
        closed, built = closed_outcome(c, gpus), evaluate(c, gpus)
        assert closed.closed_form and not built.closed_form
        assert closed.ok == built.ok, (c.label, closed.ruling[:90], built.ruling[:90])
        verdicts.append(closed.ok)
        if not built.ok:
            assert closed.ruling.split(":")[0] == built.ruling.split(":")[0], (c.label, closed.ruling, built.ruling)
            continue
        assert (closed.switches, closed.cables, closed.gpus) == (built.switches, _links(c, gpus), built.gpus)
        assert closed.tco_usd <= built.tco_usd and closed.capital_usd <= built.capital_usd, c.label
        if c.oversubscription == 1.0:
            ratios.append(closed.tco_usd / built.tco_usd)
    assert True in verdicts and False in verdicts
    assert ratios and min(ratios) > 0.9 and max(ratios) > 0.99  # and a bound 1 % high would fail above


def _links(c: object, gpus: int) -> int:
    from fabric.plan.document import spec_yaml
    from fabric.spec.loader import load_spec_text
    from fabric.topology.build import build_topology

    topology = build_topology(load_spec_text(spec_yaml(c, gpus, CATALOG), "c.yaml"))  # type: ignore[arg-type]
    return sum(len(ft.links) for ft in topology.fabrics.values())


def test_an_hdr_node_on_an_ndr_fabric_is_ruled_out_unbuilt() -> None:
    """At 100,000 GPUs every DGX A100 link to a QM9700 fabric runs over fibre, where its HDR modules cannot meet
    the switch's NDR ones: the closed form rules it out as the build does (optics-signalling); NDR nodes on an
    NDR fabric of that size link up (the negative case)."""
    hdr = Request(100_000, nodes=("dgx-a100",), switches=("qm9700",), tiers=(3,), rail_optimized=(True,))
    ndr = Request(100_000, nodes=("dgx-h100",), switches=("q3400",), tiers=(3,), rail_optimized=(True,))
    (a100,), (h100,) = enumerate_candidates(CATALOG, hdr), enumerate_candidates(CATALOG, ndr)
    ruled = closed_outcome(a100, 100_000)
    assert not ruled.ok and ruled.ruling.startswith("optics-signalling: optical link gpu00001"), ruled.ruling
    fine = closed_outcome(h100, 100_000)
    assert fine.ok and fine.switches == (696, 720, 432) and fine.cables == 303_904, (fine.ruling, fine.switches)


def test_the_cli_ranks_the_closed_form_above_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    args = ["plan", "--gpus", "128", "--node", "dgx-h100", "--switch", "qm9700", "--tiers", "2", "--json"]
    built = json.loads(runner.invoke(app, args).stdout)
    assert {row["closed_form"] for row in built["candidates"]} == {False}
    monkeypatch.setattr(fabric.plan.closed, "CLOSED_FORM_ABOVE", 64)  # 128 GPUs are then above it
    closed = json.loads(runner.invoke(app, args).stdout)
    rows = [r for r in closed["candidates"] if r["status"] == "ok"]
    assert rows and all(r["closed_form"] and r["optics"] is None for r in rows)
    assert all(r["delivered_routing"] == "closed form" for r in rows)
    assert json.loads(runner.invoke(app, [*args, "--build"]).stdout)["candidates"][0]["closed_form"] is False
    refused = runner.invoke(app, [*args, "--closed-form", "--grow-to", "256"])
    assert refused.exit_code == 2 and "need builds" in refused.stderr
