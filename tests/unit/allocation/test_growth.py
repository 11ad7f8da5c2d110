"""Growth keeps what runs: a build of a grown spec with the earlier build's lock only adds.

Checked on the OUTPUTS (cabling.csv, inventory.csv, ip-plan.csv, asn-plan.csv rendered from each build):
every row of the earlier build is in the later one unchanged, never by trusting the lock. A disruptive
change is reported item by item (tests/golden/growth).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli import app
from fabric.model.findings import FabricError, Severity
from fabric.pipeline import Build, build_fabric
from fabric.render.outputs.lock import lock_data, lock_json
from fabric.spec.loader import load_spec, load_spec_text
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


def _by_fabric(build: Build) -> Counter[str]:
    return Counter(c.link.fabric for c in build.allocation.cables)


def _held_once(build: Build) -> None:
    """No address, ASN, cabled port or device name is held twice (fabric's allocation never collides with itself)."""
    addresses = [str(r.address.ip) for r in build.allocation.addresses]
    assert len(addresses) == len(set(addresses)) > 0
    asns = [(r.asn, r.device) for r in build.allocation.asns if r.layer == "leaf"]
    assert len({a for a, _ in asns}) == len(asns)
    ends = [e for c in build.allocation.cables for e in ((c.link.a, c.link.a_port), (c.link.b, c.link.b_port))]
    assert len(ends) == len(set(ends))
    ids = [c.cable_id for c in build.allocation.cables]
    assert len(ids) == len(set(ids))


def test_1024_gpus_with_storage_and_oob_fabrics_grow_by_25_percent_adding_only() -> None:
    """128 → 160 DGX H200 on SONiC RoCE with a storage and an out-of-band fabric, built with the first build's
    lock: only additions (every row of cabling.csv, inventory.csv, ip-plan.csv and asn-plan.csv kept as it was).
    Before the lock kept the storage servers' and BMCs' leaf ports, the storage and OOB nodes were re-spread
    over the leaves (376 moves) and new BMCs took the management addresses of locked switches."""
    small, large = _chain("dgx-h200-1024", "dgx-h200-1280")
    gained = _assert_only_adds(small, large)
    assert gained["inventory.csv"] == 32 + 8 + 2 + 1  # DGX, rail leaves of SU 5, storage leaves, an OOB leaf
    added = _by_fabric(large) - _by_fabric(small)
    assert added == {
        "compute": 8 * (32 + 64),  # 8 rail leaves: 32 node ports and 64 uplinks each, to the 32 pinned spines
        "storage": 32 * 2 + 2 * 55,  # 2 storage ports per DGX; 2 new leaves' 55 uplinks (4:3)
        "oob": 32 + 10 + 4,  # BMCs; the 10 new compute and storage switches' management ports; the new leaf's uplinks
    }
    assert gained["cabling.csv"] == sum(added.values()) == 988
    for build in (small, large):
        _held_once(build)
    servers = {f"stor{i:02d}" for i in range(1, 17)}
    locked = {(c.link.a, c.link.a_port): c.link.b for c in small.allocation.cables if c.link.a in servers}
    assert len(locked) == 16 * 2 + 16  # storage ports and BMCs of the 16 storage servers, on the leaves they had
    assert {(c.link.a, c.link.a_port): c.link.b for c in large.allocation.cables if c.link.a in servers} == (locked)


def test_the_1024_gpu_growth_without_the_lock_moves_the_storage_and_oob_nodes() -> None:
    """The negative of the above: the same two specs built fresh re-spread the storage servers and BMCs."""
    diff = diff_outputs(outputs_of(_built("dgx-h200-1024"), "1024"), outputs_of(_built("dgx-h200-1280"), "1280"))
    assert diff.disruptive and len(diff.cables_move) > 200
    assert {m["to"]["fabric"] for m in diff.cables_move} == {"storage", "oob"}


def test_a_growth_the_locked_spines_cannot_carry_is_one_error_per_cause(tmp_path: Path) -> None:
    """Spines left to fabric at 128 DGX (the fewest: 16) cannot take 40 leaves' uplinks at 160: the uplinks
    re-spread over 32. Refused with one finding for the cables and one for their addresses, each with its count,
    the change and the setting that avoids it; every item in the finding's items (validate --lock --json)."""
    loose = [tmp_path / "1024.yaml", tmp_path / "1280.yaml"]
    for name, path in zip(("dgx-h200-1024", "dgx-h200-1280"), loose, strict=True):
        path.write_text((GROWTH / f"{name}.yaml").read_text().replace(", spines: 32}", "}"))
    first = build_fabric(loose[0])
    assert sum(1 for d in first.topology.devices.values() if d.fabric == "compute" and d.layer == "spine") == 16
    moves = [f for f in grow(first, loose[1]).findings if f.code == "lock-move"]
    assert [(f.path, len(f.items)) for f in moves] == [("fabrics.compute", 2046), ("addressing", 2556)]
    assert "16 → 32 spine switches" in moves[0].message and moves[0].message.startswith("2,046 locked cables")
    assert "pin `spines: 32` in fabrics.compute.topology of the first build" in moves[0].hint
    out = tmp_path / "out"
    built_ = runner.invoke(app, ["build", str(loose[0]), "-o", str(out), "-q"])
    assert built_.exit_code == 0
    refused = runner.invoke(app, ["build", str(loose[1]), "-o", str(out), "-q"])
    assert refused.exit_code == 1 and refused.stdout.count("lock-move") == 2
    assert len(refused.stdout.splitlines()) <= 12  # one screen (was 9,000+ lines)
    listed = runner.invoke(app, ["validate", str(loose[1]), "--lock", str(out / LOCK_FILE), "--json"])
    found = [f for f in json.loads(listed.stdout)["findings"] if f["code"] == "lock-move"]
    assert listed.exit_code == 1 and [len(f["items"]) for f in found] == [2046, 2556]


def test_the_lock_keeps_spines_the_spec_leaves_to_fabric() -> None:
    """A spine count the first build pinned stays when the spec leaves it to fabric (while the spines fit)."""
    text = (REPO / "designs" / "lab.yaml").read_text()
    loose = text.replace("spines: 2, uplinks: 2", "uplinks: 4")
    four = load_spec_text(text.replace("spines: 2, uplinks: 2", "spines: 4, uplinks: 4"), "lab4", REPO / "designs")
    old = build_fabric(four)
    lock = parse_lock(lock_json(old), LOCK_FILE)
    kept = build_fabric(replace(load_spec_text(loose, "lab", REPO / "designs"), lock=LockInput(lock, LOCK_FILE, False)))
    fresh = build_fabric(load_spec_text(loose, "lab", REPO / "designs"))
    spines = [sum(1 for d in b.topology.devices.values() if d.layer == "spine") for b in (old, kept, fresh)]
    assert spines == [4, 4, 1] and kept.errors == []  # fresh: the fewest that take 4 leaves × 4 uplinks
    _assert_only_adds(old, kept)


def test_a_leaf_added_to_the_spec_takes_the_new_nodes_and_the_locked_ones_stay() -> None:
    """lab (4 leaves, 8 servers) → lab-5-leaves (5 leaves, 10): the 8 locked servers keep their leaf ports, the 2
    new ones go to the new, least used leaf."""
    old = built("lab")
    new = grow(old, GROWTH / "lab-5-leaves.yaml")
    assert _assert_only_adds(old, new)["cabling.csv"] == 2 + 2  # 2 servers, leaf5's 2 uplinks
    on = {c.link.a: c.link.b for c in new.allocation.cables if c.link.a.startswith("srv")}
    assert on["srv9"] == on["srv10"] == "leaf5"
    assert sum(leaf == "leaf1" for leaf in on.values()) == 2  # not the first leaf with free ports (it would be 2:1)


def test_routing_hosts_added_take_free_loopbacks_links_and_asns() -> None:
    """`dual_homing: host_routing`: a new server's loopback, /31s and ASN are fresh values that locked servers hold
    (they come after the switches' and the servers' in order); each takes the next free one (was: duplicate-address
    on srv5:lo and srv3:lo, duplicate-asn 4210000002)."""
    old = built("lab-dual")
    text = (REPO / "designs" / "lab-dual.yaml").read_text().replace("count: 4", "count: 5")
    lock = parse_lock(lock_json(old), LOCK_FILE)
    new = build_fabric(replace(load_spec_text(text, "lab-dual", REPO / "designs"), lock=LockInput(lock, LOCK_FILE)))
    assert [f.code for f in new.findings if f.code.startswith(("duplicate", "lock-"))] == []
    _held_once(new)
    hosts = {r.device: r.asn for r in new.allocation.asns if r.layer == "node"}
    assert len(hosts) == 5 and len(set(hosts.values())) == 5 and hosts["srv5"] == max(hosts.values())
    before = {(r.device, r.interface, str(r.address)) for r in old.allocation.addresses}
    assert before <= {(r.device, r.interface, str(r.address)) for r in new.allocation.addresses}


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


def test_the_bundled_superpod_designs_grow_2_3_4_su_in_place() -> None:
    """designs/superpod-h100-{2,3,4}su.yaml, each built with the lock of the one before: every cabling, inventory,
    IP and ASN row of the earlier build is in the later one unchanged (spines at the 4-SU size in every fabric; the
    UFM appliances in the slot `reserved_slots` keeps in SU 1, which no DGX of a new SU takes)."""
    two = build_fabric(REPO / "designs" / "superpod-h100-2su.yaml")
    three = grow(two, REPO / "designs" / "superpod-h100-3su.yaml")
    four = grow(three, REPO / "designs" / "superpod-h100-4su.yaml")
    assert [f.code for f in three.findings if f.code == "lock-move"] == []
    # a new SU: 32 DGX and 8 compute rail leaves; at 3 SU also 2 storage, 2 in-band (an MLAG pair: 2 peer-link
    # cables) and 1 OOB leaf, at 4 SU 2 + 1; a DGX's in-band is one bond address (IPv4 and IPv6 rows)
    assert _assert_only_adds(two, three) == {
        "cabling.csv": 778,
        "inventory.csv": 45,
        "ip-plan.csv": 264,
        "asn-plan.csv": 3,
    }
    assert _assert_only_adds(three, four) == {
        "cabling.csv": 720,
        "inventory.csv": 43,
        "ip-plan.csv": 262,
        "asn-plan.csv": 3,
    }
    assert _assert_only_adds(two, four)["cabling.csv"] == 778 + 720
    # the in-band grown in place: every DGX bonded to the two leaves of one MLAG pair, the pairs' peer links
    inband = [c.link for c in four.allocation.cables if c.link.fabric == "inband"]
    pairs = {(int(b[-2:]) + 1) // 2 for b in (link.b for link in inband if link.tier == "node-leaf")}
    assert pairs == {1, 2, 3, 4} and sum(1 for link in inband if link.tier == "leaf-leaf") == 8
    dgx: dict[str, set[int]] = {}
    for link in inband:
        if link.tier == "node-leaf" and link.a.startswith("dgx"):
            dgx.setdefault(link.a, set()).add(int(link.b[-2:]))
    assert len(dgx) == 127 and all(len(v) == 2 and min(v) % 2 == 1 and max(v) == min(v) + 1 for v in dgx.values())
    assert len(four.bonded) == 127 + 4 + 4 + 16  # every node on the in-band (DGX, UFM, head, storage)

    # negative: spread over the pairs as without the lock (as bonded fabrics were before), 3 SU moves 94 of the
    # 2-SU in-band node cables onto the new pair
    def ends(build: Build) -> set[tuple[str, str, str, str]]:
        links = (c.link for c in build.allocation.cables if c.link.fabric == "inband" and c.link.tier == "node-leaf")
        return {(link.a, link.a_port, link.b, link.b_port) for link in links}

    assert len(ends(two) - ends(three)) == 0
    assert len(ends(two) - ends(build_fabric(REPO / "designs" / "superpod-h100-3su.yaml"))) == 94
    compute = [
        Counter(c.link.tier for c in b.allocation.cables if c.link.fabric == "compute") for b in (two, three, four)
    ]
    assert [c["node-leaf"] for c in compute] == [508, 764, 1020] and [c["leaf-spine"] for c in compute] == [
        512,
        768,
        1024,
    ]
    ufm = sorted((c.link.a, c.link.b, c.link.b_port) for c in four.allocation.cables if c.link.b.startswith("su"))
    ufm = [u for u in ufm if u[0].startswith("ufm")]
    assert ufm == [(f"ufm00{i + 1}", f"su1-rail{i}-leaf", "sw16p2") for i in range(4)]
    fig = four.figures["compute"]
    assert fig.switches == {"leaf": 32, "spine": 16, "core": 0}  # table 4 at 4 SU
    assert fig.links == {"node-leaf": 1020, "leaf-spine": 1024, "spine-core": 0}
    assert sum(1 for d in four.topology.devices.values() if d.group == "gpu") == 127


def test_without_reserved_slots_the_ufm_appliances_move_when_an_su_is_added() -> None:
    """The negative case: the same growth with the UFM appliances in the last SU's free slot (no `reserved_slots`)
    moves them, since the next SU's first DGX takes that slot."""
    old = load_spec_text((REPO / "designs" / "superpod-h100-2su.yaml").read_text().replace(", reserved_slots: 1", ""))
    new = load_spec_text((REPO / "designs" / "superpod-h100-3su.yaml").read_text().replace(", reserved_slots: 1", ""))
    before = build_fabric(old)
    lock = parse_lock(lock_json(before), LOCK_FILE)
    after = build_fabric(replace(new, lock=LockInput(lock, LOCK_FILE, False)))
    moves = [f for f in after.errors if f.code == "lock-move"]
    assert moves and "ufm001:ib0" in moves[0].message and "su2-rail0-leaf" in moves[0].message


def test_a_whole_cluster_fabric_plan_writes_grows_by_25_percent_adding_only() -> None:
    """The whole cluster `fabric plan --write` writes (racks in the superpod layout: the in-band, out-of-band and
    storage leaves by the units they serve, those fabrics attached unit by unit), its spines pinned for the final
    size as the lock-move hint says, grown from 128 to 160 DGX H100 with the first build's lock: only additions,
    the new SU in racks of its own side by side in one row. Unpinned, the same growth is refused, one error per
    fabric whose spines it re-spreads (the negative case)."""
    from fabric.plan.candidates import Request, enumerate_candidates
    from fabric.plan.document import spec_yaml
    from fabric.spec.catalog import builtin_catalog

    catalog = builtin_catalog()
    (candidate,) = [
        c
        for c in enumerate_candidates(catalog, Request(0, nodes=("dgx-h100",), technologies=("infiniband",)))
        if (c.switch, c.tiers, c.rail_optimized, c.planes) == ("qm9700", 2, True, 1)
    ]
    text = spec_yaml(candidate, 1024, catalog, "", whole=True)
    assert "  layout: superpod\n" in text and "count: 128, name" in text

    def spec(nodes: int, pinned: bool) -> str:
        out = text.replace("count: 128, name", f"count: {nodes}, name")
        if pinned:
            out = out.replace("scalable_unit: 32}", "scalable_unit: 32, spines: 32}")
            out = out.replace("topology: {kind: fat-tree}", "topology: {kind: fat-tree, spines: 7}")
        return out

    def grown_from(old: Build, new_text: str) -> Build:
        lock = parse_lock(lock_json(old), LOCK_FILE)
        return build_fabric(replace(load_spec_text(new_text), lock=LockInput(lock, LOCK_FILE, False)))

    small = build_fabric(load_spec_text(spec(128, True)))
    large = grown_from(small, spec(160, True))
    gained = _assert_only_adds(small, large)
    assert gained["inventory.csv"] == 32 + 8 + 2 + 1  # DGX, the SU's rail leaves, 2 storage leaves, an OOB leaf
    devices, racks = large.topology.devices, large.topology.racks
    new_racks = {devices[f"gpu{i:05d}"].rack for i in range(129, 161)} | {devices["su5-rail0-leaf"].rack}
    assert len(new_racks) == 9 and not new_racks & {d.rack for d in small.topology.devices.values()}
    assert len({racks[r or ""].row for r in new_racks}) == 1
    unpinned = grown_from(build_fabric(load_spec_text(spec(128, False))), spec(160, False))
    assert [(f.code, f.path) for f in unpinned.errors] == [
        ("lock-move", "fabrics.compute"),
        ("lock-move", "fabrics.storage"),
    ]
