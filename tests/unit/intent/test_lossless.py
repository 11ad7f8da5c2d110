"""The lossless-consistency check (intent/checks.py check_lossless): every hop of a RoCE path agrees on the lossless
profile and the MTU chain holds. The spec cannot make hops differ (one `qos` and one `mtu` per fabric feed the
switches and the servers' NICs alike, the host MTU is min(9000, `mtu`) ≤ the switches' `mtu`), so each case here
alters one hop of a bundled design's intents, as a builder bug or a future per-layer override would."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from fabric.intent import checks
from fabric.intent.checks import check_lossless
from fabric.intent.context import IntentContext
from fabric.intent.ethernet.model import DeviceIntent
from fabric.intent.hosts import RoceHost
from fabric.model.findings import Finding
from fabric.pipeline import Build
from tests.conftest import REPO, built
from tests.unit.allocation.test_allocation import three_tiers


def _findings(
    build: Build, intents: dict[str, DeviceIntent] | None = None, roce: dict[str, RoceHost] | None = None
) -> list[Finding]:
    ctx = IntentContext(
        build.design,
        build.topology,
        build.figures,
        build.allocation,
        {**build.intents, **(intents or {})},
        build.infiniband.subnets,
        {**build.roce, **(roce or {})},
    )
    return list(check_lossless(ctx))


def _qos(device: DeviceIntent, **changes: Any) -> DeviceIntent:
    assert device.qos is not None
    return dataclasses.replace(device, qos=dataclasses.replace(device.qos, **changes))


def _first_nic_and_leaf(build: Build) -> tuple[RoceHost, DeviceIntent]:
    host = next(iter(build.roce.values()))
    return host, build.intents[host.nics[0].leaf]


def _spine(build: Build) -> DeviceIntent:
    return next(d for d in build.intents.values() if d.layer == "spine")


def test_bundled_roce_designs_are_lossless_on_every_hop() -> None:
    for name in ("roce-512", "sonic-th5-512", "eos-roce-1024", "lab"):
        build = built(name)
        assert [f for f in build.findings if f.code == "lossless-mismatch"] == [], name
        assert _findings(build) == []
    assert len(built("roce-512").roce) == 64  # the check had servers to walk


def test_the_hop_by_hop_walk_finds_nothing_either_on_a_clean_design(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bulk test (every profile equal, PFC on every used port, MTUs) skips the walk; the walk agrees."""
    monkeypatch.setattr(checks, "_agrees", lambda *_: False)
    for build in (built("roce-512"), three_tiers()):
        assert _findings(build) == []


def test_a_leaf_with_another_lossless_priority_is_the_first_hop_from_the_host() -> None:
    build = built("roce-512")
    host, leaf = _first_nic_and_leaf(build)
    nic = host.nics[0]
    found = _findings(build, {leaf.hostname: _qos(leaf, roce_tc=4)})
    assert len(found) == 1  # one per fabric
    f = found[0]
    assert (f.code, f.path, f.severity.label) == ("lossless-mismatch", "fabrics.compute.qos", "error")
    first = next(n for h in build.roce.values() for n in h.nics if n.leaf == leaf.hostname)
    owner = next(h.hostname for h in build.roce.values() if first in h.nics)
    assert f"the first hop that breaks it, {owner}:{first.name} → {leaf.hostname}:{first.leaf_port}:" in f.message
    assert "lossless priority (PFC and ECN queue) 3 on the NIC" in f.message and f"4 on {leaf.hostname}" in f.message
    assert "more hops" in f.message  # its other servers and its uplinks break too
    assert nic.qos.roce_tc == 3


def test_a_spine_with_another_dscp_is_named_at_its_first_uplink() -> None:
    build = built("roce-512")
    spine = _spine(build)
    found = _findings(build, {spine.hostname: _qos(spine, roce_dscp=24, cnp_tc=7)})
    assert len(found) == 1
    message = found[0].message
    uplink = next(
        (d, p)
        for d in build.intents.values()
        if d.layer == "leaf"
        for p in d.used_ports
        if p.peer_device == spine.hostname
    )
    assert f"{uplink[0].hostname}:{uplink[1].name} → {spine.hostname}:{uplink[1].peer_port}" in message
    assert f"RoCE DSCP 26 on {uplink[0].hostname}, 24 on {spine.hostname}" in message
    assert f"CNP priority 6 on {uplink[0].hostname}, 7 on {spine.hostname}" in message
    assert "on the NIC" not in message  # the hosts' hops agree


def test_a_port_without_pfc_breaks_its_hop() -> None:
    build = built("roce-512")
    host, leaf = _first_nic_and_leaf(build)
    nic = host.nics[0]
    assert leaf.qos is not None
    ports = tuple(p for p in leaf.qos.ports if p != nic.leaf_port)
    found = _findings(build, {leaf.hostname: _qos(leaf, ports=ports)})
    assert len(found) == 1
    assert f"PFC is not enabled on {leaf.hostname}:{nic.leaf_port}" in found[0].message


def test_a_switch_without_a_profile_on_a_lossless_fabric() -> None:
    build = built("roce-512")
    spine = _spine(build)
    found = _findings(build, {spine.hostname: dataclasses.replace(spine, qos=None)})
    assert len(found) == 1
    assert f"{spine.hostname} has no lossless profile" in found[0].message


def test_a_host_mtu_above_its_leaf_port_is_an_mtu_finding() -> None:
    build = built("roce-512")
    host, leaf = _first_nic_and_leaf(build)
    nics = (dataclasses.replace(host.nics[0], mtu=9216 + 1), *host.nics[1:])
    found = _findings(build, roce={host.hostname: dataclasses.replace(host, nics=nics)})
    assert len(found) == 1
    assert found[0].path == "fabrics.compute.mtu"
    assert f"host MTU 9217 above {leaf.hostname}:{host.nics[0].leaf_port}'s 9216" in found[0].message


def test_a_switch_mtu_below_the_host_mtu_on_an_uplink() -> None:
    build = built("roce-512")
    spine = _spine(build)
    ports = tuple(dataclasses.replace(p, mtu=4200) if p.admin_up else p for p in spine.ports)
    found = _findings(build, {spine.hostname: dataclasses.replace(spine, ports=ports)})
    assert len(found) == 1
    assert found[0].path == "fabrics.compute.mtu"
    assert "host MTU 9000 above the switch MTU" in found[0].message and f"{spine.hostname}:" in found[0].message


def test_the_mtu_a_platform_really_programs_counts() -> None:
    """EOS takes at most 9214 (its platform.yaml): a 9216-byte host MTU would pass the intent and break on it."""
    build = built("roce-512")
    host, leaf = _first_nic_and_leaf(build)
    nics = (dataclasses.replace(host.nics[0], mtu=9216), *host.nics[1:])
    roce = {host.hostname: dataclasses.replace(host, nics=nics)}
    assert _findings(build, {leaf.hostname: dataclasses.replace(leaf, platform="sonic")}, roce) == []
    found = _findings(build, {leaf.hostname: dataclasses.replace(leaf, platform="eos")}, roce)
    assert len(found) == 1 and "above" in found[0].message and "9214" in found[0].message


def test_the_spine_core_hop_is_checked_in_three_tiers() -> None:
    build = three_tiers()  # no bundled Ethernet design has cores
    assert build.roce and _findings(build) == []
    core = next(d for d in build.intents.values() if d.layer == "core")
    found = _findings(build, {core.hostname: _qos(core, ecn_min_bytes=1000)})
    assert len(found) == 1
    assert f"→ {core.hostname}:" in found[0].message and "ECN minimum threshold" in found[0].message


def test_every_difference_of_the_first_hop_is_named_once() -> None:
    build = built("roce-512")
    host, leaf = _first_nic_and_leaf(build)
    nics = (dataclasses.replace(host.nics[0], mtu=9300), *host.nics[1:])
    found = _findings(
        build, {leaf.hostname: _qos(leaf, cnp_dscp=46)}, {host.hostname: dataclasses.replace(host, nics=nics)}
    )
    assert len(found) == 1
    message = found[0].message
    assert found[0].path == "fabrics.compute.qos"  # the hop's first difference names the setting
    assert f"CNP DSCP 48 on the NIC {host.hostname}:{host.nics[0].name}, 46 on {leaf.hostname}" in message
    assert "; host MTU 9300 above" in message
    assert message.count(f"{host.hostname}:{host.nics[0].name} → ") == 1


def test_golden_findings(golden) -> None:  # type: ignore[no-untyped-def]
    """The findings of each way a hop can break, printed as `fabric validate` prints them, against
    tests/golden/lossless/findings.txt (review its diff under --update-golden)."""
    build = built("roce-512")
    host, leaf = _first_nic_and_leaf(build)
    spine = _spine(build)
    big = (dataclasses.replace(host.nics[0], mtu=9300), *host.nics[1:])
    assert leaf.qos is not None
    cases: dict[str, list[Finding]] = {
        "leaf lossless priority 4": _findings(build, {leaf.hostname: _qos(leaf, roce_tc=4)}),
        "spine RoCE DSCP 24, CNP priority 7": _findings(build, {spine.hostname: _qos(spine, roce_dscp=24, cnp_tc=7)}),
        "leaf port without PFC": _findings(
            build,
            {leaf.hostname: _qos(leaf, ports=tuple(p for p in leaf.qos.ports if p != host.nics[0].leaf_port))},
        ),
        "spine without a profile": _findings(build, {spine.hostname: dataclasses.replace(spine, qos=None)}),
        "host MTU 9300": _findings(build, roce={host.hostname: dataclasses.replace(host, nics=big)}),
        "clean": _findings(build),
    }
    text = "".join(f"## {name}\n" + "".join(f.format() + "\n" for f in found) for name, found in cases.items())
    golden(REPO / "tests" / "golden" / "lossless" / "findings.txt", text)
    assert [len(found) for found in cases.values()] == [1, 1, 1, 1, 1, 0]
