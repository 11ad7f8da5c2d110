"""Switch classes (intent/ethernet/build.py's Alike): the intent checks read one switch of each class, and
`fabric validate` makes only those (the others when first read). Every switch of the bundled designs reads, to
the checks, as its class's first; the first switches made alone are the switches made with all; and the checks give
the same findings from the classes as from every switch, also where a class breaks the lossless profile."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fabric import build_fabric
from fabric.fast.lazy import LazyMapping
from fabric.intent.checks import run_intent_checks
from fabric.intent.context import IntentContext
from fabric.intent.ethernet.build import alike, build_intents, switches
from fabric.intent.ethernet.index import pairs_of
from fabric.intent.ethernet.model import DeviceIntent
from fabric.pipeline import Build
from tests.conftest import DESIGNS, REPO

BROKEN = REPO / "tests" / "broken"
ETHERNET = sorted(p for p in DESIGNS.glob("*.yaml") if "technology: ethernet" in p.read_text())
# broken specs the intent checks find something in (an MLAG pair or a feature a platform cannot do), and one whose
# plan fails (addresses missing where a switch looks them up)
INTENT_BROKEN = [BROKEN / f"{b}.yaml" for b in ("mlag-platform", "platform-capability")]
PLAN_BROKEN = [BROKEN / "addressing.yaml"]


def _checked(intent: DeviceIntent) -> tuple[object, ...]:
    """What intent/checks.py reads of a switch, but its name."""
    return (
        intent.fabric,
        intent.platform,
        intent.qos,
        intent.bgp is not None and intent.bgp.unnumbered,
        intent.mlag is not None,
        tuple((p.name, p.breakout, p.mtu) for p in intent.used_ports),
    )


def _context(build: Build, classes: tuple[DeviceIntent, ...] | None) -> IntentContext:
    return IntentContext(
        build.design,
        build.topology,
        build.figures,
        build.allocation,
        build.intents,
        build.infiniband.subnets,
        build.roce,
        classes,
    )


def test_there_are_ethernet_designs_to_compare() -> None:
    assert len(ETHERNET) >= 7, [p.stem for p in ETHERNET]


@pytest.mark.parametrize("spec", ETHERNET, ids=lambda p: p.stem)
def test_every_switch_reads_as_its_class_first(spec: Path) -> None:
    build = build_fabric(spec)
    full = build_intents(build.design, build.topology, build.allocation)
    pairs = pairs_of(build.design, build.topology)
    first: dict[object, str] = {}  # class → its first switch
    for key, _, name, links in switches(build.topology):
        head = first.setdefault(alike(build.topology, pairs, key, name, links), name)
        assert _checked(full.devices[name]) == _checked(full.devices[head]), name
    assert [c.hostname for c in full.classes] == list(first.values())
    assert len(full.classes) < len(full.devices)  # fewer classes than switches: something to save


@pytest.mark.parametrize("spec", [*ETHERNET, *INTENT_BROKEN, *PLAN_BROKEN], ids=lambda p: p.stem)
def test_validate_makes_the_first_switches_as_a_build_does(spec: Path) -> None:
    rendered = build_fabric(spec)
    checked = build_fabric(spec, rendered=False)
    assert checked.findings == rendered.findings
    few = build_intents(checked.design, checked.topology, checked.allocation, every=False)
    full = build_intents(rendered.design, rendered.topology, rendered.allocation)
    assert few.classes == full.classes  # each made with only the addresses it reads: the same intent
    assert few.findings == full.findings
    assert isinstance(few.devices, LazyMapping) and not few.devices.built
    assert dict(few.devices) == full.devices  # every switch, when read


@pytest.mark.parametrize("spec", [*ETHERNET, *INTENT_BROKEN], ids=lambda p: p.stem)
def test_the_checks_find_the_same_in_the_classes_as_in_every_switch(spec: Path) -> None:
    build = build_fabric(spec)
    every = run_intent_checks(_context(build, None))
    classes = build_intents(build.design, build.topology, build.allocation).classes
    assert run_intent_checks(_context(build, classes)) == every
    assert every or spec not in INTENT_BROKEN  # the broken specs have findings to compare


def test_a_class_that_breaks_the_profile_is_found_from_its_first_switch() -> None:
    # the negative case: a spine class without PFC on its ports, read through the classes only
    build = build_fabric(DESIGNS / "roce-512.yaml")
    intents = build_intents(build.design, build.topology, build.allocation)
    spine = next(c for c in intents.classes if c.layer == "spine")
    assert spine.qos is not None
    broken = dataclasses.replace(spine, qos=dataclasses.replace(spine.qos, ports=()))
    classes = tuple(broken if c is spine else c for c in intents.classes)
    devices = {**build.intents, spine.hostname: broken}
    ctx = dataclasses.replace(_context(build, classes), intents=devices)
    found = [f for f in run_intent_checks(ctx) if f.code == "lossless-mismatch"]
    assert len(found) == 1 and "PFC is not enabled on " + spine.hostname in found[0].message
    assert run_intent_checks(_context(build, intents.classes)) == []  # and none without the break
