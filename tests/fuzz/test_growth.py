"""Growth properties: fabric's own allocation never collides with itself.

Designs are grown by count step by step, each step built with the lock of the one before (moves allowed, so
that every step builds): the bundled designs, and random realistic ones — rail-optimized or plain compute
fabrics, with or without storage, in-band and out-of-band fabrics. In every build no address, cable end, cable
id, leaf ASN or device is held twice; and a step that builds with no `lock-move` finding only added (every cable,
address and ASN of the step before is there unchanged: the lock's promise). With every fabric's spines sized for
the final build, a random design's steps never move anything (the lock keeps where nodes are cabled).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fabric.pipeline import Build, build_fabric
from fabric.render.outputs.lock import lock_json
from fabric.spec.loader import Design, load_spec, load_spec_text
from fabric.spec.lock import LOCK_FILE, LockInput, parse_lock
from tests.conftest import DESIGNS, examples

GROWTH = settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def held_twice(build: Build) -> list[str]:
    """What the build holds twice: addresses, cable ends, cable ids, leaf (and host) ASNs; empty when nothing."""
    alloc = build.allocation
    found = []
    counts = {
        "address": Counter(str(r.address.ip) for r in alloc.addresses),
        "cable end": Counter(e for c in alloc.cables for e in ((c.link.a, c.link.a_port), (c.link.b, c.link.b_port))),
        "cable id": Counter(c.cable_id for c in alloc.cables),
        "ASN": Counter(r.asn for r in alloc.asns if r.layer in ("leaf", "node")),
        "ASN of a device": Counter(r.device for r in alloc.asns),
    }
    for what, counter in counts.items():
        found += [f"{what} {value}" for value, n in counter.items() if n > 1][:3]
    return found


def kept(old: Build, new: Build) -> list[str]:
    """What of `old` is not in `new` as it was: cables (id and ends), addresses (device, interface, address), ASNs."""

    def cables(b: Build) -> set[tuple[str, ...]]:
        return {(c.cable_id, c.link.a, c.link.a_port, c.link.b, c.link.b_port) for c in b.allocation.cables}

    def addresses(b: Build) -> set[tuple[str, ...]]:
        return {(r.device, r.interface, str(r.address)) for r in b.allocation.addresses}

    def asns(b: Build) -> set[tuple[str, int]]:
        return {(r.device, r.asn) for r in b.allocation.asns}

    gone = [*(cables(old) - cables(new)), *(addresses(old) - addresses(new)), *(asns(old) - asns(new))]
    return [str(g) for g in gone[:3]]


def grow_step(old: Build, design: Design) -> Build:
    lock = parse_lock(lock_json(old), LOCK_FILE)
    return build_fabric(replace(design, lock=LockInput(lock, LOCK_FILE, allow_moves=True)))


def collisions(build: Build) -> list[str]:
    """Findings that fabric gave something twice (a design check of the grown spec, e.g. bisection, may fail)."""
    return [f.format() for f in build.findings if f.code.startswith("duplicate-") or f.code == "lock-invalid"]


def check_steps(designs: list[Design], events: bool = False) -> list[Build]:
    builds = [build_fabric(designs[0])]
    assert builds[0].allocation.cables and collisions(builds[0]) == [] and held_twice(builds[0]) == []
    for design in designs[1:]:
        new = grow_step(builds[-1], design)
        assert new.allocation.cables and collisions(new) == [], f"{design.spec.name}: {collisions(new)[:2]}"
        assert held_twice(new) == [], f"{design.spec.name}: held twice"
        moved = any(f.code == "lock-move" for f in new.findings)
        if events:  # (inside a Hypothesis test)
            event("step: " + ("errors" if new.errors else "moves" if moved else "only adds"))
        if not new.errors and not moved:  # (a pool too small: rows left out)
            assert kept(builds[-1], new) == [], "no lock-move finding, yet something of the step before changed"
        builds.append(new)
    return builds


def grown(design: Design, factor: float) -> Design:
    """The design with every node group's count × factor (at least one more)."""
    nodes = [n.model_copy(update={"count": max(n.count + 1, round(n.count * factor))}) for n in design.spec.nodes]
    return replace(design, spec=design.spec.model_copy(update={"nodes": nodes}))


# --------------------------------------------------------------------------------------------- bundled designs

BUNDLED = sorted(p.stem for p in DESIGNS.glob("*.yaml"))


@pytest.mark.slow
@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_designs_grown_step_by_step_never_hold_anything_twice(name: str) -> None:
    design = load_spec(DESIGNS / f"{name}.yaml")
    if any(type(f.topology).__name__ != "ClosTopology" for f in design.spec.fabrics.values()):
        pytest.skip("an explicit or CSV topology does not grow by count")
    builds = check_steps([design, grown(design, 1.25), unpinned(grown(grown(design, 1.25), 1.25))])
    assert len(builds[2].allocation.cables) > len(builds[0].allocation.cables)


def unpinned(design: Design) -> Design:
    """The design with no fabric's spine count pinned: grown past the size its spines were pinned for (the SuperPOD
    designs' 16 compute spines end at 4 SU), a user lifts the pin and lets fabric size the spines again."""
    fabrics = {
        key: f.model_copy(update={"topology": f.topology.model_copy(update={"spines": None})})
        if getattr(f.topology, "spines", None)
        else f
        for key, f in design.spec.fabrics.items()
    }
    return replace(design, spec=design.spec.model_copy(update={"fabrics": fabrics}))


def test_unpinned_lifts_only_the_spine_pins() -> None:
    design = load_spec(DESIGNS / "superpod-h100-4su.yaml")
    pinned = {k: getattr(f.topology, "spines", None) for k, f in design.spec.fabrics.items()}
    assert pinned == {"compute": 16, "storage": 4, "inband": 2, "oob": 2}
    after = unpinned(design).spec
    assert {k: getattr(f.topology, "spines", None) for k, f in after.fabrics.items()} == dict.fromkeys(pinned)
    assert after.fabrics["compute"].topology.reserved_slots == 1 and after.nodes == design.spec.nodes


# --------------------------------------------------------------------------------------------- random designs


def _spec(
    gpus: int,
    storage: int,
    rail: bool,
    su: int,
    fabrics: tuple[bool, bool, bool],
    spines: dict[str, int] | None = None,
    layout: str = "sequential",
) -> str:
    """A DGX H200 cluster: compute (RoCE on SN5600 at 400G), and a storage, in-band and OOB fabric as chosen;
    `spines`: the spine count of each fabric, else left to fabric; `layout`: the racks' (the superpod layout also
    orders the other fabrics' attachments unit by unit)."""
    with_storage, inband, oob = fabrics
    topology = f"{{kind: spine-leaf, rail_optimized: true, scalable_unit: {su}}}" if rail else "{kind: spine-leaf}"
    text = f"""
name: grow-prop
racks: {{rows: [A, B, C, D], rack_units: 48, power_kw: 45, layout: {layout}}}
nodes:
  - {{group: gpu, type: dgx-h200, count: {gpus}, per_rack: 4, name: "dgx{{index:03d}}"}}
  - {{group: storage, type: storage-server, count: {storage}, name: "stor{{index:02d}}"}}
fabrics:
  compute:
    technology: ethernet
    topology: {topology}
    switches: {{leaf: sn5600, spine: sn5600}}
    speed_gbps: 400
    attach:
      - {{group: gpu, ports: compute}}
"""
    if with_storage:
        text += """  storage:
    technology: ethernet
    topology: {kind: spine-leaf}
    switches: {leaf: sn5600, spine: sn5600}
    speed_gbps: 400
    oversubscription: "4:3"
    attach:
      - {group: gpu, ports: storage}
      - {group: storage, ports: storage}
"""
    if inband:
        text += """  inband:
    technology: ethernet
    topology: {kind: spine-leaf}
    switches: {leaf: sn4600c, spine: sn4600c}
    oversubscription: "3:1"
    attach:
      - {group: gpu, ports: inband}
      - {group: storage, ports: inband}
"""
    if oob:
        text += """  oob:
    technology: ethernet
    topology: {kind: spine-leaf, spines: 2}
    switches: {leaf: sn2201, spine: sn4600c}
    attach:
      - {group: gpu, ports: bmc}
      - {group: storage, ports: bmc}
      - {switch_mgmt: all}
"""
    for key, count in (spines or {}).items():
        text = text.replace(
            f"  {key}:\n    technology: ethernet\n    topology: {{kind: spine-leaf",
            f"  {key}:\n    technology: ethernet\n    topology: {{kind: spine-leaf, spines: {count}",
            1,
        )
    return (
        text
        + """addressing:
  loopback: 10.0.0.0/16
  p2p: 10.1.0.0/16
  servers: 10.2.0.0/15
  mgmt: 192.168.0.0/19
asn: {scheme: rfc7938, spine: 65000, leaf_start: 65100}
"""
    )


@GROWTH
@given(
    gpus=st.integers(4, 40),
    storage=st.integers(1, 8),
    rail=st.booleans(),
    su=st.sampled_from([8, 16, 32]),
    fabrics=st.tuples(st.booleans(), st.booleans(), st.booleans()),
    steps=st.lists(st.tuples(st.integers(0, 24), st.integers(0, 4)), min_size=1, max_size=3),
    layout=st.sampled_from(["sequential", "superpod"]),
)
def test_random_designs_grown_step_by_step_never_hold_anything_twice(
    gpus: int,
    storage: int,
    rail: bool,
    su: int,
    fabrics: tuple[bool, bool, bool],
    steps: list[tuple[int, int]],
    layout: str,
) -> None:
    counts = [(gpus, storage)]
    for more_gpus, more_storage in steps:
        counts.append((counts[-1][0] + more_gpus, counts[-1][1] + more_storage))
    designs = [
        load_spec_text(_spec(g, s, rail, su, fabrics, layout=layout), "grow-prop.yaml", Path(".")) for g, s in counts
    ]
    check_steps(designs, events=True)
    # the spines of every fabric sized for the final build (as fabric sizes them for it): every step only adds
    final = build_fabric(designs[-1])
    spines = Counter(d.fabric for d in final.topology.devices.values() if d.layer == "spine")
    assume(final.errors == [] and not any(d.layer == "core" for d in final.topology.devices.values()))
    pinned = {k: n for k, n in spines.items() if k != "oob"}
    sized = [
        load_spec_text(_spec(g, s, rail, su, fabrics, pinned, layout), "grow-prop.yaml", Path(".")) for g, s in counts
    ]
    for step in check_steps(sized)[1:]:
        assert not [f.format() for f in step.findings if f.code == "lock-move"], "spines sized for the final build"


def test_the_checks_can_fail() -> None:
    """held_twice and kept see what they look for (a build with a cable and an address given twice, one dropped)."""
    build = build_fabric(DESIGNS / "lab.yaml")
    alloc = build.allocation
    twice = replace(
        build,
        allocation=replace(
            alloc, cables=(*alloc.cables, alloc.cables[0]), addresses=(*alloc.addresses, alloc.addresses[0])
        ),
    )
    assert any(t.startswith("address ") for t in held_twice(twice))
    assert any(t.startswith("cable id ") for t in held_twice(twice))
    less = replace(build, allocation=replace(alloc, cables=alloc.cables[1:]))
    assert held_twice(build) == [] and kept(build, less) != [] and kept(less, build) == []
