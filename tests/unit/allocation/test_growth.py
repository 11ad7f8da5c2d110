"""Growth keeps what runs: a build of a grown spec with the earlier build's lock only adds.

Checked on the OUTPUTS (cabling.csv, inventory.csv, ip-plan.csv, asn-plan.csv rendered from each build):
every row of the earlier build is in the later one unchanged, never by trusting the lock. A disruptive
change is reported item by item (tests/golden/growth).
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli import app
from fabric.model.findings import FabricError, Severity
from fabric.pipeline import Build, build_fabric
from fabric.render.outputs.lock import lock_data, lock_json
from fabric.spec.loader import load_spec
from fabric.spec.lock import LOCK_FILE, LockInput, parse_lock, read_lock
from fabric.tools.diff import TABLES, Outputs, diff_outputs, grown, outputs_of
from tests.conftest import REPO, built

GROWTH = REPO / "tests" / "data" / "growth"
GOLDEN = REPO / "tests" / "golden" / "growth"
runner = CliRunner()


def grow(old: Build, spec: Path, allow_moves: bool = False) -> Build:
    """Build `spec` keeping `old`'s assignments, the lock going through its JSON text and validation."""
    lock = parse_lock(lock_json(old), LOCK_FILE)
    return build_fabric(replace(load_spec(spec), lock=LockInput(lock, LOCK_FILE, allow_moves)))


@cache
def _built(name: str) -> Build:
    return build_fabric(GROWTH / f"{name}.yaml")


@cache
def _chain(*names: str) -> tuple[Build, ...]:
    """Each spec built with the lock of the one before."""
    builds = [_built(names[0])]
    for name in names[1:]:
        builds.append(grow(builds[-1], GROWTH / f"{name}.yaml"))
    return tuple(builds)


def _rows(out: Outputs, table: str) -> set[tuple[str, ...]]:
    return {tuple(r.values()) for r in out.rows(table)}


def _assert_only_adds(old: Build, new: Build) -> dict[str, int]:
    """Every row of old's tables is in new's, unchanged; returns how many rows each table gained."""
    assert [f for f in new.errors] == []
    before, after = outputs_of(old, "old"), outputs_of(new, "new")
    gained = {}
    for table in TABLES:
        a, b = _rows(before, table), _rows(after, table)
        assert a or table in ("ip-plan.csv", "asn-plan.csv"), f"{table} of the earlier build is empty"
        assert a <= b, f"{table}: {len(a - b)} rows moved, e.g. {sorted(a - b)[:2]}"
        gained[table] = len(b) - len(a)
    diff = diff_outputs(before, after)
    assert not diff.disruptive and diff.exit_code == 0
    return gained


def test_superpod_grows_from_2_to_3_to_4_su_adding_only() -> None:
    two, three, four = _chain("superpod-2su", "superpod-3su", "superpod-4su")
    assert _assert_only_adds(two, three)["cabling.csv"] == 512  # 8 leaves: 256 node-leaf + 256 leaf-spine cables
    gained = _assert_only_adds(three, four)
    assert gained["cabling.csv"] == 512 and gained["inventory.csv"] == 32 + 8
    assert len(four.allocation.cables) == 2048  # the RA's 4-SU count: 1,024 node-leaf + 1,024 leaf-spine
    assert _assert_only_adds(two, four)["cabling.csv"] == 1024


def test_without_the_lock_the_same_growth_renumbers() -> None:
    """The lock is what keeps them: the index-based allocator alone shifts cable ids, switch positions and
    the switches' management addresses (they come after the nodes' BMCs)."""
    diff = diff_outputs(outputs_of(_built("superpod-2su"), "2"), outputs_of(_built("superpod-3su"), "3"))
    assert diff.disruptive
    assert len(diff.cables_relabel) == 512 and len(diff.devices_move) == 32 and len(diff.addresses_change) == 32


def test_roce_grows_from_256_to_512_gpus_adding_only() -> None:
    small, large = _chain("roce-256", "roce-512")
    gained = _assert_only_adds(small, large)
    assert gained["cabling.csv"] == 256 and gained["inventory.csv"] == 32
    assert gained["asn-plan.csv"] == 0  # the 8 rail leaves and 4 spines were there at 256 GPUs


def test_adding_a_storage_fabric_adds_only() -> None:
    _, before, after = _chain("roce-256", "roce-512", "roce-512-storage")
    gained = _assert_only_adds(before, after)
    assert gained["inventory.csv"] == 8 + 10  # 8 storage servers, 10 storage switches
    assert gained["asn-plan.csv"] == 10 and gained["cabling.csv"] == len(after.allocation.cables) - len(
        before.allocation.cables
    )
    asns = [r.asn for r in after.allocation.asns if r.layer == "leaf"]
    assert len(asns) == len(set(asns)) == 8 + 6  # the new leaves' ASNs continue after the locked ones
    addresses = [str(r.address.ip) for r in after.allocation.addresses]
    assert len(addresses) == len(set(addresses)) > 4000


def test_a_disruptive_change_is_reported_grouped_by_cause_with_its_items(golden) -> None:  # type: ignore[no-untyped-def]
    build = grow(built("lab"), GROWTH / "lab-4-spines.yaml")
    moves = [f for f in build.findings if f.code == "lock-move"]
    cables, addresses = moves  # one finding per cause and kind: the cables, and the /31 and /127 ends they carry
    assert len(cables.items) == 8 and all(i.startswith("cable ") for i in cables.items)  # leaf:swp63/64, spines 3, 4
    assert cables.message.startswith("8 locked cables of fabric compute would move") and len(addresses.items) == 28
    assert "pin `spines: 4` in fabrics.compute.topology of the first build" in cables.hint
    assert all(f.severity == Severity.ERROR and "2 → 4 spine switches" in f.message for f in moves)
    assert [f.as_dict()["items"] for f in moves] == [list(f.items) for f in moves]
    text = "".join(f.format() + "\n" for f in moves).replace(f"{REPO}/", "")
    golden(GOLDEN / "lab-4-spines.txt", text)
    allowed = grow(built("lab"), GROWTH / "lab-4-spines.yaml", allow_moves=True)
    assert allowed.errors == [] and sum(f.code == "lock-move" for f in allowed.findings) == len(moves)


def test_diff_is_the_work_order_of_a_disruptive_change(golden) -> None:  # type: ignore[no-untyped-def]
    old = built("lab")
    new = build_fabric(grown(old, load_spec(GROWTH / "lab-4-spines.yaml")))
    diff = diff_outputs(outputs_of(old, "lab"), outputs_of(new, "lab-4-spines"))
    assert diff.exit_code == 1 and len(diff.cables_move) == 8 and len(diff.cables_add) == 8
    assert {m["to"]["b_device"] for m in diff.cables_move} == {"spine3", "spine4"}
    assert [d["device"] for d in diff.devices_add] == ["spine3", "spine4"]
    golden(GOLDEN / "lab-4-spines-diff.txt", diff.text())
    data = json.loads(json.dumps(diff.as_dict()))
    assert data["counts"]["cables_move"] == 8 and data["only_adds"] is False


# --------------------------------------------------------------------------------------------- the lock


def test_the_lock_round_trips_and_names_every_assignment() -> None:
    build = built("lab")
    lock = parse_lock(lock_json(build), LOCK_FILE)
    assert lock.as_data() == lock_data(build)
    assert len(lock.cables) == len(build.allocation.cables) == 8 + 8
    assert len(lock.addresses) == len(build.allocation.addresses) and len(lock.asns) == 6
    assert {d.name for d in lock.devices} == set(build.topology.devices)
    assert lock.spec.fabrics["compute"].spine == 2 and lock.spec.nodes == {"srv": 8}


def test_a_lock_of_an_infiniband_fabric_holds_its_guids() -> None:
    lock = parse_lock(lock_json(_built("superpod-2su")), LOCK_FILE)
    assert len(lock.guids) == 16 + 16 + 64 * 8  # switches, and an HCA per compute port
    assert all(g.guid.startswith("0xfab0") for g in lock.guids)  # placeholders (no inventory)


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("{not json", ""),
        ('{"format": "fabric-allocations-lock", "version": 2}', "lock.version"),
        ("[1, 2]", "lock"),
    ],
)
def test_a_bad_lock_is_a_finding_that_does_not_echo_it(text: str, path: str) -> None:
    with pytest.raises(FabricError) as caught:
        parse_lock(text, "old.lock.json")
    findings = caught.value.findings
    assert findings and all(f.code == "lock-invalid" and f.file == "old.lock.json" for f in findings)
    assert path in {f.path for f in findings} or not path
    assert all("not json" not in f.message for f in findings)


def test_a_lock_with_a_hostile_name_is_refused_without_quoting_it() -> None:
    data = lock_data(built("lab"))
    data["devices"][0]["name"] = "../../etc/passwd"
    with pytest.raises(FabricError) as caught:
        parse_lock(json.dumps(data), "x.json")
    assert [f.path for f in caught.value.findings] == ["lock.devices.0.name"]
    assert "passwd" not in caught.value.findings[0].format()
    data = lock_data(built("lab"))
    data["spec"]["nodes"]["\x1b[2J evil"] = 1
    with pytest.raises(FabricError) as caught:
        parse_lock(json.dumps(data), "x.json")
    assert [f.path for f in caught.value.findings] == ["lock.spec.nodes.<key>.<key>"]
    assert "evil" not in caught.value.findings[0].format()


def test_a_lock_is_read_bounded(tmp_path: Path) -> None:
    with pytest.raises(FabricError) as caught:
        read_lock(tmp_path)
    assert caught.value.findings[0].code == "lock-invalid" and "directory" in caught.value.findings[0].message


# --------------------------------------------------------------------------------------------- the CLI


def test_build_keeps_the_previous_lock_of_its_output_directory(tmp_path: Path) -> None:
    out = tmp_path / "lab"
    assert runner.invoke(app, ["build", str(REPO / "designs/lab.yaml"), "-o", str(out), "-q"]).exit_code == 0
    assert (out / LOCK_FILE).is_file()
    refused = runner.invoke(app, ["build", str(GROWTH / "lab-4-spines.yaml"), "-o", str(out), "-q"])
    assert refused.exit_code == 1 and refused.stdout.count("lock-move") == 2  # cables; their /31 and /127 ends
    assert "8 locked cables" in refused.stdout and "28 locked addresses" in refused.stdout
    assert "nothing was written" in refused.stderr
    before = tmp_path / "before"
    assert runner.invoke(app, ["build", str(REPO / "designs/lab.yaml"), "-o", str(before), "-q"]).exit_code == 0
    allowed = runner.invoke(app, ["build", str(GROWTH / "lab-4-spines.yaml"), "-o", str(out), "-q", "--allow-moves"])
    assert allowed.exit_code == 0, allowed.stdout
    diff = runner.invoke(app, ["diff", str(before), str(out), "--json"])
    assert diff.exit_code == 1 and json.loads(diff.stdout)["counts"]["cables_move"] == 8
    fresh = runner.invoke(app, ["build", str(GROWTH / "lab-4-spines.yaml"), "-o", str(out), "-q", "--no-lock"])
    assert fresh.exit_code == 0
    same = runner.invoke(app, ["diff", str(out), str(out)])
    assert same.exit_code == 0 and "only adds; cables: 0 to add, 0 to move, 0 to remove" in same.stdout


def test_diff_of_two_specs_and_its_errors(tmp_path: Path) -> None:
    grown_ = runner.invoke(app, ["diff", str(GROWTH / "roce-256.yaml"), str(GROWTH / "roce-512.yaml")])
    assert grown_.exit_code == 0 and "only adds; cables: 256 to add, 0 to move" in grown_.stdout
    mixed = runner.invoke(app, ["diff", str(tmp_path), str(GROWTH / "roce-256.yaml")])
    assert mixed.exit_code == 2 and "two output directories or two specs" in mixed.stderr
    empty = runner.invoke(app, ["diff", str(tmp_path), str(tmp_path)])
    assert empty.exit_code == 2 and "diff-input-invalid" in empty.stdout and "no cabling.csv" in empty.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    both = runner.invoke(app, ["build", str(REPO / "designs/lab.yaml"), "--lock", str(bad), "--no-lock"])
    assert both.exit_code == 2
    invalid = runner.invoke(
        app, ["build", str(REPO / "designs/lab.yaml"), "--lock", str(bad), "-o", str(tmp_path / "o")]
    )
    assert invalid.exit_code == 2 and "lock-invalid" in invalid.stdout


# --------------------------------------------------------------------------------------------- diff, by hand


HEADER = "cable_id,fabric,a_rack,a_u,a_device,a_port,b_rack,b_u,b_device,b_port,a_label,b_label\n"


def _out(name: str, cables: list[str], ips: list[str], asns: list[str], config: str) -> Outputs:
    return Outputs(
        name,
        {
            "cabling.csv": HEADER + "".join(c + "\n" for c in cables),
            "inventory.csv": "device,layer,model,rack,u\nleaf1,leaf,m,A01,1\nspine1,spine,m,A01,2\n",
            "ip-plan.csv": "device,interface,address\n" + "".join(r + "\n" for r in ips),
            "asn-plan.csv": "device,asn\n" + "".join(r + "\n" for r in asns),
            "configs/leaf1/frr.conf": config,
        },
    )


def test_diff_sorts_cables_into_add_move_remove_and_relabel() -> None:
    old = _out(
        "old",
        [
            "c-1,c,A01,1,leaf1,p1,A01,2,spine1,p1,l1,l2",  # kept
            "c-2,c,A01,1,leaf1,p2,A01,2,spine1,p2,l1,l2",  # re-plugged at the spine
            "c-3,c,A01,1,leaf1,p3,A01,2,spine1,p3,l1,l2",  # removed
            "c-4,c,A01,1,leaf1,p4,A01,2,spine1,p4,l1,l2",  # renumbered
        ],
        ["leaf1,lo,10.0.0.1/32", "leaf1,p1,10.1.0.1/31"],
        ["leaf1,65100"],
        "hostname leaf1\nrouter bgp 65100\n",
    )
    new = _out(
        "new",
        [
            "c-1,c,A01,1,leaf1,p1,A01,2,spine1,p1,l1,l2",
            "c-5,c,A01,1,leaf1,p2,A01,2,spine1,p9,l1,l2",
            "c-6,c,A01,1,leaf1,p4,A01,2,spine1,p4,l1,l2",
            "c-7,c,A01,1,leaf1,p7,A01,2,spine1,p7,l1,l2",
        ],
        ["leaf1,lo,10.0.0.9/32", "leaf1,p1,10.1.0.1/31", "leaf1,p7,10.1.0.7/31"],
        ["leaf1,65101"],
        "hostname leaf1\nrouter bgp 65101\n",
    )
    diff = diff_outputs(old, new)
    assert [c["cable_id"] for c in diff.cables_add] == ["c-7"]
    assert [(m["from"]["b_port"], m["to"]["b_port"]) for m in diff.cables_move] == [("p2", "p9")]
    assert [c["cable_id"] for c in diff.cables_remove] == ["c-3"]
    assert [{k: r[k] for k in ("from", "to", "ends")} for r in diff.cables_relabel] == [
        {"from": "c-4", "to": "c-6", "ends": "leaf1:p4 — spine1:p4"}
    ]
    assert diff.cables_relabel[0]["cable"]["b_port"] == "p4"
    assert diff.addresses_change == [
        {"device": "leaf1", "interface": "lo", "family": "ipv4", "from": "10.0.0.1/32", "to": "10.0.0.9/32"}
    ]
    assert len(diff.addresses_add) == 1 and diff.asns_change == [{"device": "leaf1", "from": "65100", "to": "65101"}]
    assert list(diff.configs) == ["configs/leaf1/frr.conf"]
    assert "-router bgp 65100\n+router bgp 65101\n" in diff.configs["configs/leaf1/frr.conf"]
    assert diff.exit_code == 1 and diff_outputs(old, old).exit_code == 0
    assert diff_outputs(old, old).counts() == dict.fromkeys(diff.counts(), 0)


def test_a_build_with_its_own_lock_renders_the_same_outputs() -> None:
    build = built("lab")
    again = grow(build, REPO / "designs" / "lab.yaml")
    assert again.findings == build.findings
    assert outputs_of(again, "again").files == outputs_of(build, "lab").files
    assert lock_json(again) == lock_json(build)
