"""keep_locked's shortcut (fabric/allocation/lock.py): when the lock holds every cable and address as the
allocator gives them again (a rebuild of an unchanged spec), the plan is kept as it is, without looking each
row up; it must be what the row-by-row keeping gives, and must not be taken when that would differ."""

from __future__ import annotations

import json
from dataclasses import replace
from ipaddress import ip_interface
from pathlib import Path
from typing import Any

import pytest

from fabric.allocation import lock as keeping
from fabric.allocation.allocate import Allocation, allocate, interface_at
from fabric.render.engine.iptext import text
from fabric.render.outputs.lock import lock_json
from fabric.spec.loader import Design, load_spec
from fabric.spec.lock import Lock, LockInput, parse_lock
from fabric.topology.build import build_topology
from tests.conftest import REPO, built
from tests.unit.allocation.test_growth import GROWTH, _built


def _row_by_row(design: Design, plan: Allocation, monkeypatch: pytest.MonkeyPatch) -> tuple[Allocation, Allocation]:
    """keep_locked as it is, and with its shortcuts refused (every row looked up in the lock)."""
    topo = build_topology(design)
    kept = keeping.keep_locked(design, topo, plan)
    with monkeypatch.context() as patch:
        patch.setattr(keeping, "_same", lambda *args: False)
        return kept, keeping.keep_locked(design, topo, plan)


def _with_lock(spec: Path, lock: Lock) -> Design:
    return replace(load_spec(spec), lock=LockInput(lock, "x.json", allow_moves=True))


CASES = [
    ("lab rebuilt", REPO / "designs/lab.yaml", "lab"),
    ("lab with host routing rebuilt", REPO / "designs/lab-dual.yaml", "lab-dual"),
    ("RoCE rebuilt", GROWTH / "roce-256.yaml", "roce-256"),
    ("RoCE grown", GROWTH / "roce-512.yaml", "roce-256"),
    ("spines added", GROWTH / "lab-4-spines.yaml", "lab"),
    ("InfiniBand grown", GROWTH / "superpod-3su.yaml", "superpod-2su"),
]


@pytest.mark.parametrize(("case", "spec", "old"), CASES, ids=[c[0] for c in CASES])
def test_the_shortcut_keeps_what_row_by_row_keeping_keeps(
    case: str, spec: Path, old: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    previous = built(old) if old.startswith("lab") else _built(old)
    design = _with_lock(spec, parse_lock(lock_json(previous), "x.json"))
    plan = allocate(design, build_topology(design))
    fast, slow = _row_by_row(design, plan, monkeypatch)
    assert fast == slow and len(fast.addresses) == len(plan.addresses) > 0
    # the allocator's address runs go with a kept plan (check_unique_addresses then reads its rows)
    assert plan.address_runs is not None and fast.address_runs is None and slow.address_runs is None
    rebuilt = "rebuilt" in case
    if rebuilt:  # nothing moves: the plan is the allocator's
        assert fast.cables == plan.cables and fast.addresses == plan.addresses and fast.findings == plan.findings
    # taken by a rebuild, with host routing too (a host's loopback and links lie in the switches' pools)
    shortcut = keeping._as_locked(design, plan.addresses, design.lock.lock)  # type: ignore[union-attr]
    taken = rebuilt
    assert (shortcut is not None) == taken
    # the texts the shortcut compared reach the renderers (ip-plan.csv, NetBox, the lock): each row's, as text()
    assert plan.address_texts is None and slow.address_texts is None
    if taken:
        assert fast.address_texts == tuple(text(r.address) for r in plan.addresses)
    else:
        assert fast.address_texts is None


def _lock_of(plan: Allocation) -> Lock:
    """A lock holding `plan` as it is (its cables, addresses and ASNs), the rest as the lab's build."""
    return parse_lock(lock_json(replace(built("lab"), allocation=plan)), "x.json")


def test_the_shortcut_is_not_taken_when_two_rows_share_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Row by row, two rows of one device, interface and family both find the lock's later entry: the first
    would take the second's address. The shortcut must see that and leave it to the rows."""
    design = load_spec(REPO / "designs/lab.yaml")
    plan = allocate(design, build_topology(design))
    first = plan.addresses[0]
    other = replace(first, address=interface_at(int(first.address) + 5, first.address.network.prefixlen, 4))
    twice = replace(plan, addresses=(*plan.addresses, other))
    design = replace(design, lock=LockInput(_lock_of(twice), "x.json", allow_moves=True))
    assert keeping._as_locked(design, twice.addresses, design.lock.lock) is None  # type: ignore[union-attr]
    fast, slow = _row_by_row(design, twice, monkeypatch)
    assert fast == slow and fast.addresses[0].address == other.address != first.address


def test_the_shortcut_is_not_taken_when_two_cables_share_an_end(monkeypatch: pytest.MonkeyPatch) -> None:
    design = load_spec(REPO / "designs/lab.yaml")
    plan = allocate(design, build_topology(design))
    again = replace(plan.cables[0], cable_id="compute-999")
    twice = replace(plan, cables=(*plan.cables, again))
    design = replace(design, lock=LockInput(_lock_of(twice), "x.json", allow_moves=True))
    fast, slow = _row_by_row(design, twice, monkeypatch)
    assert fast == slow and fast.cables[0].cable_id == "compute-999" != plan.cables[0].cable_id


def test_a_changed_address_in_the_lock_is_kept_from_the_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    """One entry differs from the allocator's (a lock from a build before a change): not the shortcut; that
    row keeps the lock's value."""
    design = load_spec(REPO / "designs/lab.yaml")
    plan = allocate(design, build_topology(design))
    rows: list[Any] = list(plan.addresses)
    i = next(k for k, r in enumerate(rows) if r.purpose == "mgmt" and r.address.version == 4)
    moved = replace(rows[i], address=interface_at(int(rows[i].address) + 200, rows[i].address.network.prefixlen, 4))
    lock = _lock_of(replace(plan, addresses=(*rows[:i], moved, *rows[i + 1 :])))
    design = replace(design, lock=LockInput(lock, "x.json", allow_moves=True))
    assert keeping._as_locked(design, plan.addresses, lock) is None
    fast, slow = _row_by_row(design, plan, monkeypatch)
    assert fast == slow and fast.addresses[i].address == moved.address != plan.addresses[i].address


@pytest.mark.parametrize("edge", ["network", "broadcast"])
def test_a_locked_host_address_on_its_subnet_s_edge_is_refused_not_kept(edge: str) -> None:
    data = json.loads(lock_json(built("lab")))
    row = next(a for a in data["addresses"] if a["purpose"] == "server" and ":" not in a["address"])
    subnet = ip_interface(row["address"]).network
    row["address"] = f"{subnet.network_address if edge == 'network' else subnet.broadcast_address}/{subnet.prefixlen}"
    design = _with_lock(REPO / "designs/lab.yaml", parse_lock(json.dumps(data), "x.json"))
    plan = allocate(design, build_topology(design))
    kept = keeping.keep_locked(design, build_topology(design), plan)
    (refused,) = [f for f in kept.findings if f.code == "lock-invalid"]
    assert refused.severity.label == "error" and refused.file == "x.json" and row["device"] in refused.message
    mine = next(
        a for a in kept.addresses if (a.device, a.interface, a.address.version) == (row["device"], row["interface"], 4)
    )
    assert str(mine.address) != row["address"] and mine.address.network == subnet
