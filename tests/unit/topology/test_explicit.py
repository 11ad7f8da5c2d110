"""Fabrics given by hand (fabric/explicit.py): `topology: {kind: explicit}` in the spec, and
`topology: {kind: cabling-csv}` imported from fabric's own cabling.csv. Bad input must give findings
with the right code and path, never exceptions."""

from __future__ import annotations

import copy
import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabric import Build, Finding, Severity, build_fabric, load_spec_text, render_all
from tests.conftest import DESIGNS, built, has_name

# --------------------------------------------------------------------------------------------- helpers

# Two leaves with two servers each, two spines, one 100G link from every leaf to every spine: 1:1.
BASE: dict[str, Any] = {
    "name": "explicit",
    "racks": {"rows": ["A"]},
    "nodes": [{"group": "srv", "type": "linux-server", "count": 4, "name": "srv{index}"}],
    "fabrics": {
        "compute": {
            "technology": "ethernet",
            "switches": {"leaf": "sn4600c", "spine": "sn4600c"},
            "attach": [{"group": "srv", "ports": "data"}],
            "topology": {
                "kind": "explicit",
                "switches": [
                    {"name": "leaf1", "model": "sn4600c", "layer": "leaf"},
                    {"name": "leaf2", "model": "sn4600c", "layer": "leaf"},
                    {"name": "spine1", "model": "sn4600c", "layer": "spine"},
                    {"name": "spine2", "model": "sn4600c", "layer": "spine"},
                ],
                "links": [
                    {"a": "srv1:eth1", "b": "leaf1:swp1"},
                    {"a": "srv2:eth1", "b": "leaf1:swp2"},
                    {"a": "srv3:eth1", "b": "leaf2:swp1"},
                    {"a": "srv4:eth1", "b": "leaf2:swp2"},
                    {"a": "leaf1:swp31", "b": "spine1:swp1"},
                    {"a": "leaf1:swp32", "b": "spine2:swp1"},
                    {"a": "leaf2:swp31", "b": "spine1:swp2"},
                    {"a": "leaf2:swp32", "b": "spine2:swp2"},
                ],
            },
        }
    },
}


def build_text(text: str, base_dir: str | Path = ".") -> Build:
    return build_fabric(load_spec_text(text, base_dir=base_dir))


def explicit(change: Callable[[dict[str, Any]], None] | None = None, base_dir: str | Path = ".") -> Build:
    """BASE, changed in place by `change` (it gets the spec and may edit anything)."""
    spec = copy.deepcopy(BASE)
    if change is not None:
        change(spec)
    return build_text(json.dumps(spec, indent=1), base_dir)  # JSON is YAML


def topo(spec: dict[str, Any]) -> dict[str, Any]:
    return spec["fabrics"]["compute"]["topology"]


def with_code(build: Build, code: str) -> list[Finding]:
    return [f for f in build.findings if f.code == code]


def one(build: Build, code: str, severity: Severity = Severity.ERROR) -> Finding:
    found = with_code(build, code)
    assert len(found) == 1, [f.format() for f in build.findings]
    assert found[0].severity == severity
    return found[0]


def csv_spec(file: str, extra: str = "") -> str:
    """BASE's nodes and fabric, with the topology imported from `file`."""
    spec = copy.deepcopy(BASE)
    topo_entry: dict[str, Any] = {"kind": "cabling-csv", "file": file}
    spec["fabrics"]["compute"]["topology"] = topo_entry
    return json.dumps(spec, indent=1) + extra


def read_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def write_rows(path: Path, rows: list[dict[str, str]], columns: list[str] | None = None) -> None:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns or list(rows[0]), lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")


def test_base_explicit_fabric_is_clean() -> None:
    build = explicit()
    assert not build.findings, [f.format() for f in build.findings]
    fig = build.figures["compute"]
    assert fig.switches == {"leaf": 2, "spine": 2, "core": 0}
    assert fig.links == {"node-leaf": 4, "leaf-spine": 4, "spine-core": 0}
    assert fig.bisection_gbps == fig.full_bisection_gbps == 200
    assert fig.min_ecmp_width == 2


# --------------------------------------------------------------------------------------------- CSV round trip

SUPERPOD_1SU = DESIGNS / "superpod-h100-1su.yaml"
GENERATED_TOPOLOGY = "topology: {kind: fat-tree, rail_optimized: true, scalable_unit: 32, tiers: auto}"


def imported_1su(tmp_path: Path, rows: list[dict[str, str]] | None = None) -> Build:
    """The 1-SU SuperPOD's nodes and racks, with its compute fabric imported from a cabling CSV
    (the generated one, or `rows`)."""
    text = render_all(built("superpod-h100-1su"))["cabling.csv"].decode("utf-8")
    if rows is None:
        (tmp_path / "cabling.csv").write_text(text, encoding="utf-8")
    else:
        write_rows(tmp_path / "cabling.csv", rows, list(read_rows(text)[0]))
    spec = SUPERPOD_1SU.read_text(encoding="utf-8")
    assert spec.count(GENERATED_TOPOLOGY) == 1
    spec = spec.replace(GENERATED_TOPOLOGY, "topology: {kind: cabling-csv, file: cabling.csv}")
    return build_text(spec, tmp_path)


def test_csv_round_trip_gives_the_same_fabric(tmp_path: Path) -> None:
    generated = built("superpod-h100-1su")
    imported = imported_1su(tmp_path)
    assert not imported.errors, [f.format() for f in imported.errors]
    gen, imp = generated.figures["compute"], imported.figures["compute"]
    assert imp.switches == gen.switches == {"leaf": 8, "spine": 4, "core": 0}
    assert imp.links == gen.links == {"node-leaf": 252, "leaf-spine": 256, "spine-core": 0}
    assert imp.tiers == gen.tiers == 2
    assert imp.bisection_gbps == gen.bisection_gbps
    assert imp.min_ecmp_width == gen.min_ecmp_width == 32
    assert gen.worst_failure is not None and imp.worst_failure is not None
    assert imp.worst_failure.bisection_gbps == pytest.approx(gen.worst_failure.bisection_gbps)
    assert imp.worst_failure.element == gen.worst_failure.element

    def ends(build: Build) -> set[tuple[str, str, str, str, str]]:
        return {(c.tier, c.a, c.a_port, c.b, c.b_port) for c in build.topology.fabrics["compute"].links}

    assert ends(imported) == ends(generated)
    # switches stay where the CSV puts them (and the nodes fill the same racks around them)
    for name, dev in generated.topology.devices.items():
        assert (imported.topology.devices[name].rack, imported.topology.devices[name].u) == (dev.rack, dev.u), name


def test_csv_round_trip_renders_the_same_cabling_csv(tmp_path: Path) -> None:
    original = render_all(built("superpod-h100-1su"))["cabling.csv"].decode("utf-8")
    again = render_all(imported_1su(tmp_path))["cabling.csv"].decode("utf-8")
    assert again.splitlines() == original.splitlines()


def test_damaged_csv_gives_honest_figures(tmp_path: Path) -> None:
    rows = read_rows(render_all(built("superpod-h100-1su"))["cabling.csv"].decode("utf-8"))
    # su1-rail0-leaf also carries a 200G UFM port: 31 x 400G + 200G = 12,600 Gb/s down over 32 x 400G up.
    leaf = "su1-rail0-leaf"
    uplink = next(r for r in rows if r["tier"] == "leaf-spine" and r["a_device"] == leaf)
    # and a node port on another leaf (rail 7), so the damaged leaf keeps all its endpoints
    node_row = next(r for r in rows if r["tier"] == "node-leaf" and r["b_device"] == "su1-rail7-leaf")
    damaged = [r for r in rows if r is not uplink and r is not node_row]
    build = imported_1su(tmp_path, damaged)

    node_rows = [r for r in damaged if r["tier"] == "node-leaf"]
    endpoint_gbps = sum(int(r["speed_gbps"]) for r in node_rows)
    down = sum(int(r["speed_gbps"]) for r in node_rows if r["b_device"] == leaf)
    up_links = sum(1 for r in damaged if r["tier"] == "leaf-spine" and r["a_device"] == leaf)
    up = 400 * up_links
    assert (endpoint_gbps, down, up_links) == (99_600, 12_600, 31)
    # Every split of the endpoints in two halves loses what the damaged leaf cannot send up.
    fig = build.figures["compute"]
    assert fig.full_bisection_gbps == endpoint_gbps / 2
    assert fig.bisection_gbps == pytest.approx(endpoint_gbps / 2 - (down - up))  # 49,600 of 49,800
    assert fig.min_ecmp_width == up_links  # the damaged leaf reaches any other over its 31 uplinks
    assert fig.ecmp_worst_pair is not None and fig.ecmp_worst_pair[0] == leaf
    assert fig.links == {"node-leaf": 251, "leaf-spine": 255, "spine-core": 0}

    unconnected = one(build, "unconnected")
    assert has_name(unconnected.message, f"{node_row['a_device']}:{node_row['a_port']}")
    assert unconnected.path == "fabrics.compute.attach[0]"
    uneven = one(build, "uneven-spread", Severity.WARNING)
    assert leaf in uneven.message
    bisection = one(build, "bisection")
    assert bisection.path == "fabrics.compute"
    assert "49,600" in bisection.message


# --------------------------------------------------------------------------------------------- explicit bad input


def test_unknown_switch_model() -> None:
    def change(spec: dict[str, Any]) -> None:
        topo(spec)["switches"][2]["model"] = "sn4600"

    finding = one(explicit(change), "unknown-part")
    assert finding.path == "fabrics.compute.topology.switches[2].model"
    assert "sn4600" in finding.message
    for valid in ("sn4600c", "sn5600", "qm9700"):
        assert valid in finding.hint


def test_unknown_device_in_a_link() -> None:
    def change(spec: dict[str, Any]) -> None:
        topo(spec)["links"][4]["b"] = "spine9:swp1"

    finding = one(explicit(change), "unknown-device")
    assert finding.path == "fabrics.compute.topology.links[4].b"
    assert "spine9" in finding.message


@pytest.mark.parametrize(
    ("end", "value", "path"),
    [("b", "leaf1:swp99", "links[0].b"), ("a", "srv1:eth7", "links[0].a")],
    ids=["switch-port", "node-port"],
)
def test_unknown_port(end: str, value: str, path: str) -> None:
    def change(spec: dict[str, Any]) -> None:
        topo(spec)["links"][0][end] = value

    build = explicit(change)
    finding = one(build, "unknown-port")
    assert finding.path == f"fabrics.compute.topology.{path}"
    assert value.split(":")[1] in finding.message


def test_port_used_twice() -> None:
    def change(spec: dict[str, Any]) -> None:
        topo(spec)["links"][1]["b"] = "leaf1:swp1"  # srv2 onto srv1's leaf port

    finding = one(explicit(change), "port-budget")
    assert finding.path == "fabrics.compute.topology.links[1]"
    assert has_name(finding.message, "leaf1:swp1")


def test_link_that_skips_a_tier() -> None:
    def change(spec: dict[str, Any]) -> None:
        topo(spec)["links"][3]["b"] = "spine1:swp10"  # node straight to a spine

    finding = one(explicit(change), "tier-skip")
    assert finding.path == "fabrics.compute.topology.links[3]"
    assert "srv4" in finding.message and "spine1" in finding.message


def test_cage_used_native_and_as_breakout() -> None:
    def change(spec: dict[str, Any]) -> None:
        topo(spec)["links"][2]["b"] = "leaf2:swp5"
        topo(spec)["links"][3]["b"] = "leaf2:swp5s2"

    finding = one(explicit(change), "port-budget")
    assert finding.path == "fabrics.compute.topology.links[3].b"
    assert "cage 5" in finding.message and "leaf2" in finding.message


def test_four_way_breakout_uses_one_mode() -> None:
    # SN4600C cages break out 4 x 25G as swpNs1..swpNs4; using s1 and s3 of one cage is one mode
    def change(spec: dict[str, Any]) -> None:
        topo(spec)["links"][2]["b"] = "leaf2:swp5s1"
        topo(spec)["links"][3]["b"] = "leaf2:swp5s3"

    build = explicit(change)
    assert not with_code(build, "port-budget"), [f.format() for f in build.findings]
    speeds = {link.b_port: link.speed_gbps for link in build.topology.fabrics["compute"].links if link.b == "leaf2"}
    assert speeds["swp5s1"] == speeds["swp5s3"] == 25


def test_infiniband_switch_in_an_ethernet_fabric() -> None:
    def change(spec: dict[str, Any]) -> None:
        topo(spec)["switches"][3]["model"] = "qm9700"

    finding = one(explicit(change), "technology-mismatch")
    assert finding.path == "fabrics.compute.topology.switches[3].model"
    assert "qm9700" in finding.message


def test_switch_without_links_is_a_warning() -> None:
    def change(spec: dict[str, Any]) -> None:
        topo(spec)["switches"].append({"name": "spine3", "model": "sn4600c", "layer": "spine"})

    build = explicit(change)
    finding = one(build, "unconnected", Severity.WARNING)
    assert finding.path == "fabrics.compute.topology.switches[4]"
    assert "spine3" in finding.message


def test_all_explicit_problems_at_once_never_raise() -> None:
    def change(spec: dict[str, Any]) -> None:
        t = topo(spec)
        t["switches"][0]["model"] = "nosuch"  # leaf1 unknown: its links name an unknown device
        t["switches"][3]["model"] = "qm9700"  # spine2 refused: likewise
        t["links"][2]["b"] = "leaf2:swp99"
        t["links"].append({"a": "srv4:eth1", "b": "leaf2:swp3"})  # srv4:eth1 again
        t["links"].append({"a": "srv3:eth1", "b": "spine1:swp9"})

    build = explicit(change)
    codes = {f.code for f in build.findings}
    assert {
        "unknown-part",
        "technology-mismatch",
        "unknown-device",
        "unknown-port",
        "port-budget",
        "tier-skip",
    } <= codes


# --------------------------------------------------------------------------------------------- CSV bad input


def test_csv_missing_required_columns(tmp_path: Path) -> None:
    (tmp_path / "cabling.csv").write_text("a_device,a_port,b_device\nsrv1,eth1,leaf1\n", encoding="utf-8")
    build = build_text(csv_spec("cabling.csv"), tmp_path)
    finding = one(build, "csv-invalid")
    assert finding.path == "fabrics.compute.topology.file"
    assert "tier" in finding.message and "b_port" in finding.message


def test_csv_row_with_a_bad_tier_points_into_the_csv(tmp_path: Path) -> None:
    rows = [
        {"tier": "node-leaf", "a_device": "srv1", "a_port": "eth1", "b_device": "leaf1", "b_port": "swp1"},
        {"tier": "leaf-core", "a_device": "leaf1", "a_port": "swp31", "b_device": "spine1", "b_port": "swp1"},
        {"tier": "leaf-spine", "a_device": "leaf1", "a_port": "swp32", "b_device": "spine1", "b_port": "swp2"},
    ]
    write_rows(tmp_path / "links.csv", rows)
    build = build_text(csv_spec("links.csv"), tmp_path)
    finding = one(build, "csv-invalid")
    assert finding.path == "fabrics.compute.topology.file"
    assert (finding.file, finding.line) == (str(tmp_path / "links.csv"), 3)  # the header is line 1
    assert "leaf-core" in finding.message


def test_csv_file_missing(tmp_path: Path) -> None:
    build = build_text(csv_spec("nowhere.csv"), tmp_path)
    finding = one(build, "csv-unreadable")
    assert finding.path == "fabrics.compute.topology.file"
    assert "nowhere.csv" in finding.message


@pytest.mark.parametrize(("model", "code"), [("nosuch", "unknown-part"), ("qm9700", "technology-mismatch")])
def test_csv_models_with_a_bad_model_give_a_finding(tmp_path: Path, model: str, code: str) -> None:
    rows = [
        {"tier": "node-leaf", "a_device": "srv1", "a_port": "eth1", "b_device": "leaf1", "b_port": "swp1"},
        {"tier": "leaf-spine", "a_device": "leaf1", "a_port": "swp31", "b_device": "spine1", "b_port": "swp1"},
    ]
    write_rows(tmp_path / "links.csv", rows)
    spec = json.loads(csv_spec("links.csv"))
    spec["fabrics"]["compute"]["topology"]["models"] = {"leaf1": model}
    build = build_text(json.dumps(spec), tmp_path)
    finding = one(build, code)
    assert (finding.file, finding.line) == (str(tmp_path / "links.csv"), 2)  # where leaf1 first appears


# --------------------------------------------------------------------------------------------- racks, rails


def test_pinned_switches_keep_their_rack_positions_in_cabling_csv() -> None:
    def change(spec: dict[str, Any]) -> None:
        t = topo(spec)
        t["switches"][0].update(rack="A03", u=40)
        t["switches"][2].update(rack="A03", u=42)

    build = explicit(change)
    assert not build.errors, [f.format() for f in build.errors]
    rows = read_rows(render_all(build)["cabling.csv"].decode("utf-8"))
    ends = [(r[f"{s}_rack"], r[f"{s}_u"]) for r in rows for s in "ab" if r[f"{s}_device"] == "leaf1"]
    assert len(ends) == 4 and set(ends) == {("A03", "40")}
    ends = [(r[f"{s}_rack"], r[f"{s}_u"]) for r in rows for s in "ab" if r[f"{s}_device"] == "spine1"]
    assert len(ends) == 2 and set(ends) == {("A03", "42")}
    # the others were placed around them, not into A03's pinned units
    devices = build.topology.devices
    assert all(
        not (d.rack == "A03" and d.u in (40, 42)) for name, d in devices.items() if name not in ("leaf1", "spine1")
    )


def test_pinned_to_a_rack_outside_the_layout() -> None:
    def change(spec: dict[str, Any]) -> None:
        topo(spec)["switches"][1].update(rack="Z01", u=10)

    finding = one(explicit(change), "unknown-rack")
    assert finding.path == "fabrics.compute.topology.switches[1].rack"
    assert "Z01" in finding.message


def test_csv_rack_outside_the_layout_points_into_the_csv(tmp_path: Path) -> None:
    columns = ["tier", "a_device", "a_port", "b_rack", "b_u", "b_device", "b_port"]
    rows = [
        dict(zip(columns, ["node-leaf", "srv1", "eth1", "Z01", "5", "leaf1", "swp1"], strict=True)),
        dict(zip(columns, ["leaf-spine", "leaf1", "swp31", "", "", "spine1", "swp1"], strict=True)),
    ]
    write_rows(tmp_path / "links.csv", rows, columns)
    build = build_text(csv_spec("links.csv"), tmp_path)
    finding = one(build, "unknown-rack")
    assert "Z01" in finding.message
    assert finding.path == "fabrics.compute.topology.file"
    assert (finding.file, finding.line) == (str(tmp_path / "links.csv"), 2)


def _railed(rail_optimized: bool) -> dict[str, Any]:
    """Two 8-GPU servers; leaf1 takes NICs 0-3 of both, leaf2 NICs 4-7: each leaf mixes four rails."""
    links = [
        {"a": f"gpu{n}:nic{r}", "b": f"leaf{1 + r // 4}:swp{(n - 1) * 4 + r % 4 + 1}"} for n in (1, 2) for r in range(8)
    ]
    links += [
        {"a": f"leaf{leaf}:swp{33 + k}", "b": f"spine{1 + k % 2}:swp{(leaf - 1) * 2 + k // 2 + 1}"}
        for leaf in (1, 2)
        for k in range(4)
    ]
    return {
        "name": "railed",
        "nodes": [{"group": "gpu", "type": "hgx-8gpu", "count": 2, "name": "gpu{index}"}],
        "fabrics": {
            "compute": {
                "technology": "ethernet",
                "switches": {"leaf": "sn5600"},
                "attach": [{"group": "gpu", "ports": "compute"}],
                "topology": {
                    "kind": "explicit",
                    "rail_optimized": rail_optimized,
                    "switches": [
                        {"name": "leaf1", "model": "sn5600", "layer": "leaf"},
                        {"name": "leaf2", "model": "sn5600", "layer": "leaf"},
                        {"name": "spine1", "model": "sn5600", "layer": "spine"},
                        {"name": "spine2", "model": "sn5600", "layer": "spine"},
                    ],
                    "links": links,
                },
            }
        },
    }


def test_rail_optimized_explicit_leaf_mixing_rails_is_a_warning() -> None:
    build = build_text(json.dumps(_railed(True)))
    assert not build.errors, [f.format() for f in build.errors]
    finding = one(build, "rail-alignment", Severity.WARNING)
    assert finding.path == "fabrics.compute"
    assert finding.message.startswith("2 leaves")
    assert "leaf1" in finding.message and "0, 1, 2, 3" in finding.message


def test_rail_mixing_is_fine_when_not_rail_optimized() -> None:
    build = build_text(json.dumps(_railed(False)))
    assert not with_code(build, "rail-alignment")
    assert not build.errors
