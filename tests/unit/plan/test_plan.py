"""`fabric plan`: candidates built through the pipeline, checked against hand calculations.

Reference cases (catalog: QM9700 64 x 400G at $30,000; Q3400 288 x 400G (72 cages x 4) at $150,000; DGX H100
8 x 400G rails at $300,000):

1. 512 GPUs, QM9700, 2 tiers, rail-optimized: 64 nodes = 2 SUs of 32 → 2 x 8 rail leaves of 32 down + 32 up;
   16 x 32 = 512 uplinks over 64-port spines → 8 spines, full. Switches 24 x $30,000 = $720,000, nodes
   64 x $300,000 = $19,200,000. Headroom 0 (no free spine port, both SUs full); 2 tiers reach 64 leaves =
   8 SUs = 256 nodes = 2,048 GPUs.
2. 512 GPUs, Q3400, 2 tiers, rail-optimized: one SU of 144 node slots (144 down + 144 up per leaf), 64 used →
   8 rail leaves; 8 x 144 = 1,152 uplinks over 288-port spines → 4 spines, full. Switches 12 x $150,000 =
   $1,800,000. Headroom: the SU's 80 free slots = 640 GPUs; so growing to 1,024 GPUs re-cables nothing.
3. 4,096 GPUs, QM9700, 3 tiers, rail-optimized: 512 nodes = 16 SUs → 128 leaves of 32 up; a pod is 32 leaves
   under 32 spines (one link each, 32 down + 32 up per spine) → 4 pods, 128 spines; 128 x 32 = 4,096 core ports
   → 64 cores. Switches 320 x $30,000 = $9,600,000, nodes 512 x $300,000 = $153,600,000; headroom 0 (cores full).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import fabric.plan.document
from fabric import build_fabric, load_spec, load_spec_text
from fabric.cli import app
from fabric.costing import costing
from fabric.plan.candidates import Candidate, Request, enumerate_candidates
from fabric.plan.document import spec_data, spec_yaml
from fabric.plan.evaluate import evaluate
from fabric.plan.rank import as_data, rank
from fabric.plan.sweep import sweep
from fabric.spec.catalog import builtin_catalog

runner = CliRunner()
CATALOG = builtin_catalog()


def _candidate(switch: str, tiers: int, su: int) -> Candidate:
    found = [
        c
        for c in enumerate_candidates(CATALOG, Request(0, nodes=("dgx-h100",), technologies=("infiniband",)))
        if c.switch == switch and c.tiers == tiers and c.rail_optimized
    ]
    assert len(found) == 1 and found[0].scalable_unit == su
    return found[0]


def _bom(candidate: Candidate, gpus: int) -> dict[str, float]:
    build = build_fabric(load_spec_text(spec_yaml(candidate, gpus, CATALOG)))
    totals: dict[str, float] = {}
    for line in costing(build).lines:
        totals[line.category] = totals.get(line.category, 0.0) + line.total_usd
    return totals


@pytest.mark.parametrize(
    ("switch", "tiers", "su", "gpus", "switches", "switch_usd", "node_usd", "headroom", "two_tier_max"),
    [
        ("qm9700", 2, 32, 512, (16, 8, 0), 720_000, 19_200_000, 0, 2048),
        ("q3400", 2, 144, 512, (8, 4, 0), 1_800_000, 19_200_000, 640, None),
        ("qm9700", 3, 32, 4096, (128, 128, 64), 9_600_000, 153_600_000, 0, None),
    ],
)
def test_reference_cases_match_the_hand_calculation(
    switch: str,
    tiers: int,
    su: int,
    gpus: int,
    switches: tuple[int, int, int],
    switch_usd: int,
    node_usd: int,
    headroom: int,
    two_tier_max: int | None,
) -> None:
    candidate = _candidate(switch, tiers, su)
    outcome = evaluate(candidate, gpus)
    assert outcome.ok and outcome.errors == 0, outcome.ruling
    assert (outcome.gpus, outcome.nodes, outcome.tiers) == (gpus, gpus // 8, tiers)
    assert outcome.switches == switches
    bom = _bom(candidate, gpus)
    assert bom["switch"] == switch_usd and bom["node"] == node_usd
    assert outcome.capital_usd == pytest.approx(sum(bom.values()))
    assert outcome.headroom_gpus == headroom
    if two_tier_max is not None:
        assert outcome.two_tier_max_gpus == two_tier_max
    assert outcome.bisection_pct == 100.0
    # every job of a non-blocking fabric gets the full 400G per GPU
    assert outcome.jobs and all(j.intact_gbps_per_gpu == 400.0 for j in outcome.jobs)


def test_growth_re_cables_nothing_within_the_headroom_and_something_beyond() -> None:
    roomy = evaluate(_candidate("q3400", 2, 144), 512, grow_to=1024)  # 640 GPUs of headroom ≥ 512 more
    full = evaluate(_candidate("qm9700", 2, 32), 512, grow_to=1024)  # no headroom: spines must be added
    assert roomy.growth is not None and roomy.growth.ok and roomy.growth.recabled == 0
    assert roomy.growth.later_usd == pytest.approx(roomy.growth.capital_usd - roomy.capital_usd)
    assert full.growth is not None and full.growth.ok and full.growth.recabled > 0
    assert full.growth.switches_added > 0
    ranked = rank([full, roomy], grow_to=1024)
    by_path = sorted([full, roomy], key=lambda o: o.growth.capital_usd if o.growth else 0)
    assert [r.outcome for r in ranked] == by_path


@pytest.mark.parametrize("gpus", [512, 4096, pytest.param(32768, marks=pytest.mark.slow)])
def test_plan_ranks_candidates_at_each_scale(gpus: int) -> None:
    request = Request(
        gpus, nodes=("dgx-h100",), technologies=("infiniband",), switches=("qm9700",), rail_optimized=(True,)
    )
    candidates = enumerate_candidates(CATALOG, request)
    assert [c.tiers for c in candidates] == [2, 3]
    ranked = rank(sweep(candidates, gpus, workers=1))
    assert [r.rank for r in ranked] == [1, 2]
    two, three = (next(r for r in ranked if r.outcome.candidate.tiers == t) for t in (2, 3))
    assert three.status == "ok" and three.outcome.gpus == gpus and three.outcome.switches[2] > 0
    if gpus <= 2048:  # 2 tiers of 64-port spines reach 2,048 GPUs: cheaper, ranked first
        assert two.status == "ok" and ranked[0] is two
    else:  # beyond, 2 tiers are ruled out by the generator's finding and listed last
        assert two.status == "fails" and two.outcome.ruling.startswith("radix:") and ranked[-1] is two


def test_the_pool_gives_the_serial_result_in_candidate_order() -> None:
    request = Request(512, nodes=("dgx-h100", "dgx-a100"), technologies=("infiniband",), tiers=(2,))
    candidates = enumerate_candidates(CATALOG, request)
    assert len(candidates) >= 4
    serial = sweep(candidates, 512, workers=1)
    pooled = sweep(candidates, 512, workers=2)
    assert [o.candidate for o in pooled] == candidates
    assert as_data(rank(pooled), 512, None, None) == as_data(rank(serial), 512, None, None)


def test_a100_and_h200_are_candidates() -> None:
    request = Request(
        512, nodes=("dgx-a100", "dgx-h200"), technologies=("infiniband",), tiers=(2,), rail_optimized=(True,)
    )
    labels = {(c.node, c.switch, c.speed_gbps) for c in enumerate_candidates(CATALOG, request)}
    assert ("dgx-a100", "qm8700", 200) in labels and ("dgx-a100", "qm9700", 200) in labels
    assert ("dgx-h200", "qm9700", 400) in labels and ("dgx-h200", "qm8700", 200) not in labels


def test_the_spec_text_is_the_spec_data() -> None:
    candidate = _candidate("qm9700", 2, 32)
    text = spec_yaml(candidate, 512, CATALOG, "Rank 1 of 2.")
    assert yaml.safe_load(text) == spec_data(candidate, 512, CATALOG)
    assert text.startswith("# Written by `fabric plan --gpus 512`") and "# Rank 1 of 2." in text


def test_the_spec_text_through_libyaml_is_pythons(monkeypatch: pytest.MonkeyPatch) -> None:
    """The candidates' specs are written with libyaml's emitter: the same text as PyYAML's Python emitter writes,
    over GPU counts, ratios, planes, the whole cluster and a platform (a candidate's `why` comment too)."""
    from functools import partial

    from fabric.plan import document

    if document.DUMPER is yaml.SafeDumper:
        pytest.skip("PyYAML without libyaml: the Python emitter is the only one")
    cases = [
        (gpus, c, whole, platform)
        for gpus in (16, 1024, 100_000)
        for c in enumerate_candidates(CATALOG, Request(gpus, oversubscription=(1.0, 2.0, 1.5), planes=(1, 2)))[::5]
        for whole, platform in ((False, None), (True, None), (True, "sonic"))
    ]
    why = "why: rank 1\nof 3"
    fast = [spec_yaml(c, gpus, CATALOG, why, whole, platform) for gpus, c, whole, platform in cases]
    monkeypatch.setattr(document, "DUMPER", yaml.SafeDumper)
    monkeypatch.setattr(document, "_dump", partial(document._dump, dumper=yaml.SafeDumper))
    assert [spec_yaml(c, gpus, CATALOG, why, whole, platform) for gpus, c, whole, platform in cases] == fast
    assert len(cases) > 100 and len(set(fast)) > 100


def test_budget_ranks_what_it_cannot_buy_after() -> None:
    cheap, dear = evaluate(_candidate("qm9700", 2, 32), 512), evaluate(_candidate("q3400", 2, 144), 512)
    assert cheap.capital_usd < dear.capital_usd
    ranked = rank([dear, cheap], budget=(cheap.capital_usd + dear.capital_usd) / 2)
    assert [(r.outcome, r.status) for r in ranked] == [(cheap, "ok"), (dear, "over budget")]


def test_cli_plan_json_and_write_builds_as_it_is(tmp_path: Path) -> None:
    out = tmp_path / "chosen"
    args = ["plan", "--gpus", "512", "--node", "dgx-h100", "--technology", "infiniband", "--switch", "qm9700"]
    result = runner.invoke(app, [*args, "--tiers", "2", "--json", "--workers", "1", "--write", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # rail-optimized and flat: the same switches, cables and figures at 64 nodes, one row for both
    assert [(r["rank"], r["candidate"], r["identical_candidates"]) for r in data["candidates"]] == [(1, 1, [2])]
    first = data["candidates"][0]
    assert first["status"] == "ok" and first["switches"] == {"leaf": 16, "spine": 8, "core": 0}
    assert first["job_bandwidth"][-1]["nodes"] == 64
    written = out / f"{first['spec_name']}.yaml"
    build = build_fabric(load_spec(written))
    assert not build.errors
    # the whole cluster: the ranked compute fabric as it was built, and storage, in-band and out-of-band fabrics
    assert list(build.topology.fabrics) == ["compute", "storage", "inband", "oob"]
    assert build.figures["compute"].switches == first["switches"]
    assert len(build.topology.fabrics["compute"].links) == first["cables"]
    groups = {g.group: (g.type, g.count) for g in build.design.spec.nodes}
    assert groups == {"gpu": ("dgx-h100", 64), "mgmt": ("mgmt-host", 4), "storage": ("storage-server", 8)}
    assert costing(build).capital_usd > first["capital_usd"]  # the rest of the cluster costs on top


def test_cli_plan_writes_an_ethernet_cluster_on_the_platform_asked(tmp_path: Path) -> None:
    args = ["plan", "--gpus", "256", "--node", "dgx-b300", "--switch", "sn5600", "--tiers", "2", "--rail", "yes"]
    result = runner.invoke(app, [*args, "--workers", "1", "--write", str(tmp_path), "--platform", "sonic"])
    assert result.exit_code == 0, result.output
    (written,) = tmp_path.iterdir()
    build = build_fabric(load_spec(written))
    assert not build.errors
    platforms = {key: f.platform for key, f in build.design.spec.fabrics.items()}
    assert platforms == {
        "compute": "sonic",
        "inband": "sonic",
        "oob": "sonic",
        # no storage ports on a DGX B300 in the catalog (an HGX B300 at 800G has no optic: optics-missing)
    }
    refused = runner.invoke(app, [*args, "--write", str(tmp_path / "x"), "--platform", "ios"])
    assert refused.exit_code == 2 and "--platform 'ios'" in refused.output


def test_cli_plan_refuses_unknown_parts() -> None:
    result = runner.invoke(app, ["plan", "--gpus", "64", "--node", "dgx-z900", "--oversubscription", "x:1"])
    assert result.exit_code == 2
    assert "unknown node type 'dgx-z900'" in result.output and "--oversubscription 'x:1'" in result.output


def test_cli_plan_table_lists_what_is_ruled_out_and_why() -> None:
    args = ["plan", "--gpus", "4096", "--node", "dgx-h100", "--technology", "infiniband", "--switch", "qm9700"]
    result = runner.invoke(app, [*args, "--rail", "yes", "--workers", "1"])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "3T rail SU32" in line)
    assert "│ dgx-h100 / qm9700 / 3T rail SU32 / 1:1 @400G │ " in row and "│ 4,096 │      128/128/64 │" in row
    ruled_out = result.output.split("Ruled out (1):\n", 1)[1]
    assert ruled_out.startswith("  #2 candidate 1 dgx-h100 / qm9700 / 2T rail SU32 / 1:1 @400G: radix: 2 tiers")


def test_cli_plan_says_when_the_whole_cluster_it_wrote_does_not_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compute fabric was built and ranked, the rest of the cluster around it was not: `--write` builds the
    whole cluster it wrote and fails (exit 1, the first error on stderr) when it does not build. Here the out-of-band
    fabric is given a switch no catalog has; the same candidate with the real one builds (the negative case)."""
    args = ["plan", "--gpus", "128", "--node", "dgx-h100", "--switch", "qm9700", "--tiers", "2", "--rail", "yes"]
    assert runner.invoke(app, [*args, "--workers", "1", "--write", str(tmp_path / "fine")]).exit_code == 0
    monkeypatch.setitem(fabric.plan.document.OOB, "leaf", "sn9999")
    broken = runner.invoke(app, [*args, "--workers", "1", "--write", str(tmp_path / "broken")])
    assert broken.exit_code == 1, broken.output
    assert "the whole cluster written does not build: 1 error(s), first unknown-part" in broken.stderr, broken.stderr
    assert len(list((tmp_path / "broken").iterdir())) == 1  # written all the same: the user asked for it


def test_the_whole_cluster_builds_clean_at_32768_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the sequential layout the out-of-band and in-band leaves stood after every node rack: from 32,768 GPUs a
    BMC's copper ran past 100 m (`cable-reach`) and the in-band links took fibre their modules cannot signal on
    (`optics-signalling`). The whole cluster is written in the superpod layout, which stands them in each unit's
    network rack. The plug-per-cage pass gives each twin-port cage one kind of fibre (here 112 compute cages had an
    SR8 beside a DR8) and a cage of four links no splitter (one storage cage had two)."""
    import fabric.allocation.allocate as allocate_module

    text = spec_yaml(_candidate("q3400", 3, 144), 32768, CATALOG, "", whole=True)
    assert "  layout: superpod\n" in text
    build = build_fabric(load_spec_text(text))
    assert not build.errors
    assert {f.code for f in build.findings} == {"placeholder-guids"}  # as the bundled designs
    assert len(build.topology.devices) == 5_814  # 4,096 DGX, 4 head nodes, 512 storage servers, 1,202 switches
    sequential = build_fabric(load_spec_text(text.replace("  layout: superpod\n", "")))
    assert sorted(f.code for f in sequential.errors) == ["cable-reach", "optics-signalling"]
    # the pass as it was: a cage's fibres of two kinds left as they were
    monkeypatch.setattr(allocate_module, "_one_module", lambda kinds: kinds <= set(allocate_module.OPTICAL_KINDS))
    mixed = build_fabric(load_spec_text(text))
    (plugs,) = [f for f in mixed.findings if f.code == "cage-plugs"]
    assert plugs.message.startswith("112 cage(s) would take two plugs: ") and "dr8 + osfp-2x400g-sr8" in plugs.message
