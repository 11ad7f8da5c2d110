"""Findings that save money: `overbuild` (uplinks sized above the connected downlinks) and `no-subnet-manager`,
each with the setting that avoids it checked to avoid it; and the connected ratio `fabric show` and the report
state beside the design ratio."""

from __future__ import annotations

from pathlib import Path

import yaml

from fabric.model.findings import Finding
from fabric.pipeline import build_fabric
from fabric.render.outputs.summary import oversubscription_shown, summary
from tests.conftest import REPO, built

BROKEN = REPO / "tests" / "broken"


def _variant(tmp_path: Path, source: Path, change: dict[str, object], fabric: str = "compute") -> Path:
    spec = yaml.safe_load(source.read_text())
    spec["fabrics"][fabric].update(change)
    out = tmp_path / source.name
    out.write_text(yaml.safe_dump(spec))
    return out


def _codes(path: Path, code: str) -> list[Finding]:
    return [f for f in build_fabric(path).findings if f.code == code]


def test_overbuild_names_the_spines_and_the_setting_that_avoids_it(tmp_path: Path) -> None:
    (finding,) = _codes(BROKEN / "overbuild.yaml", "overbuild")
    assert "needing 32 of its 64 uplinks" in finding.message and "about 2 of the 4 spines" in finding.message
    assert "256 uplink cables" in finding.message
    assert "`topology.uplinks: 32`" in finding.hint and "`scalable_unit: 64`" in finding.hint
    topology = yaml.safe_load((BROKEN / "overbuild.yaml").read_text())["fabrics"]["compute"]["topology"]
    for fix in ({"uplinks": 32}, {"scalable_unit": 64, "partial_su": "populated"}):
        fixed = _variant(tmp_path, BROKEN / "overbuild.yaml", {"topology": topology | fix})
        build = build_fabric(fixed)
        assert [f.code for f in build.findings if f.code == "overbuild"] == [] and build.errors == []
        assert build.figures["compute"].links["leaf-spine"] == 512 - 256  # the 256 uplink cables it cost
    fixed = _variant(tmp_path, BROKEN / "overbuild.yaml", {"topology": topology | {"uplinks": 32}})
    assert build_fabric(fixed).figures["compute"].switches["spine"] == 2  # and the 2 spines


def test_a_partly_filled_last_su_is_told_to_keep_only_what_its_ports_need(tmp_path: Path) -> None:
    growth = REPO / "tests" / "data" / "growth" / "roce-256.yaml"  # 32 nodes in an SU of 64
    (finding,) = _codes(growth, "overbuild")
    assert "`partial_su: populated`" in finding.hint and "scalable_unit:" not in finding.hint
    topology = yaml.safe_load(growth.read_text())["fabrics"]["compute"]["topology"]
    assert _codes(_variant(tmp_path, growth, {"topology": topology | {"partial_su": "populated"}}), "overbuild") == []


def test_spare_uplinks_short_of_a_spine_are_no_finding() -> None:
    """The SuperPOD's rail leaves keep one port for the UFM appliances (31 of 32 down, 32 up): no spine to save."""
    build = built("superpod-h100-1su")
    assert any(ld.up_gbps > ld.down_gbps for ld in build.figures["compute"].loads if ld.layer == "leaf")
    assert [f for f in build.findings if f.code == "overbuild"] == []


def test_no_subnet_manager_names_the_attached_appliances(tmp_path: Path) -> None:
    case = BROKEN / "no-subnet-manager.yaml"
    (finding,) = _codes(case, "no-subnet-manager")
    assert "[ufm001, ufm002]" in finding.hint and "INIT" in finding.message
    named = _variant(tmp_path, case, {"infiniband": {"sm": {"hosts": ["ufm001", "ufm002"]}}})
    assert _codes(named, "no-subnet-manager") == []
    assert [f for f in built("lab-ib").findings if f.code == "no-subnet-manager"] == []


def test_show_and_the_report_state_the_connected_ratio_where_it_differs() -> None:
    data = summary(build_fabric(BROKEN / "overbuild.yaml"))["fabrics"]["compute"]
    assert oversubscription_shown(data, " / ") == "leaf 1:1 (1:2 connected)"
    full = summary(built("superpod-h100-1su"))["fabrics"]["compute"]  # 31 of 32 ports: within a tenth
    assert oversubscription_shown(full, " / ") == "leaf 1:1"
