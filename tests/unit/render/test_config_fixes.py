"""The deployment review's config fixes (issue 26), each on the rendered configuration: EOS ETS really applied
(`no priority` on the scheduled queues), EOS route-maps that carry IPv6, the Cumulus PFC watchdog on every PFC
port, one BGP timer policy on every platform and BFD only when the spec asks for it."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest
import yaml

from fabric import Build, render_all
from fabric.intent.ethernet.model import BGP_TIMERS, DeviceIntent
from fabric.render.platforms import PLATFORMS
from fabric.render.platforms.eos_structured import structured_config
from tests.conftest import built
from tests.support.design_variants import variant

PLATFORM_NAMES = ("frr", "sonic", "cumulus", "eos")


def _lab(
    platform: str,
    *,
    unnumbered: bool = False,
    watchdog: bool | None = None,
    bfd: bool | None = None,
    ipv6: bool = True,
) -> Build:
    """The lab design with every switch on `platform` (and BGP unnumbered, the PFC watchdog, BFD, IPv4 only as
    asked)."""

    def change(data: dict[str, Any]) -> None:
        if not ipv6:
            data["addressing"]["ipv6"] = None
        fabric = data["fabrics"]["compute"]
        fabric["platform"] = platform
        routing = fabric.setdefault("routing", {})
        if unnumbered:
            routing["bgp_unnumbered"] = True
        if bfd is not None:
            routing["bfd"] = bfd
        if watchdog is not None:
            fabric["qos"] = {"pfc_watchdog": watchdog}

    return variant("lab", change)


def _render(build: Build, name: str) -> dict[str, str]:
    intent = build.intents[name]
    return PLATFORMS[intent.platform].render(intent)


def _blocks(text: str, header: str) -> dict[str, list[str]]:
    """The statements under each line starting with `header` (EOS indents a level by 3 spaces)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(header):
            current = out.setdefault(stripped, [])
            depth = len(line) - len(line.lstrip())
        elif current is not None:
            if stripped == "!" or len(line) - len(line.lstrip()) <= depth:
                current = None
            else:
                current.append(stripped)
    return out


# --- EOS ETS: the scheduled queues are round robin, only the CNP queue strict ---


def test_eos_scheduled_queues_say_no_priority_and_only_the_cnp_queue_is_strict() -> None:
    build = _lab("eos")
    intent = build.intents["leaf1"]
    assert intent.qos is not None
    queues = _blocks(_render(build, "leaf1")["startup-config"], "tx-queue ")
    roce, cnp = f"tx-queue {intent.qos.roce_tc}", f"tx-queue {intent.qos.cnp_tc}"
    assert set(queues) == {roce, cnp, "tx-queue 0"}
    for scheduled in (roce, "tx-queue 0"):
        assert queues[scheduled][0] == "no priority", queues[scheduled]
        assert any(s.startswith("bandwidth percent") for s in queues[scheduled])
    assert queues[cnp] == ["priority strict"]
    # the structured config says the same
    profile = structured_config(intent, build)["qos_profiles"][0]
    priority = {q["id"]: q.get("priority") for q in profile["tx_queues"]}
    assert priority == {intent.qos.roce_tc: "no priority", intent.qos.cnp_tc: "priority strict", 0: "no priority"}


# --- EOS route-maps: IPv6 routes pass the peer group's route-maps ---


@pytest.mark.parametrize("unnumbered", [True, False])
def test_eos_route_maps_match_the_ipv6_prefix_list_when_ipv6_is_exchanged(unnumbered: bool) -> None:
    build = _lab("eos", unnumbered=unnumbered)
    intent = build.intents["leaf1"]
    assert intent.bgp is not None and intent.bgp.ipv6
    text = _render(build, "leaf1")["startup-config"]
    maps = _blocks(text, "route-map ")
    for name in ("FABRIC-IN", "FABRIC-OUT"):
        assert maps[f"route-map {name} permit 10"] == ["match ip address prefix-list FABRIC"]
        assert maps[f"route-map {name} permit 20"] == ["match ipv6 address prefix-list FABRIC-V6"]
    assert "ipv6 prefix-list FABRIC-V6" in text
    structured = structured_config(intent, build)["route_maps"]
    for route_map in structured:
        assert [(e["sequence"], e["match"]) for e in route_map["sequence_numbers"]] == [
            (10, ["ip address prefix-list FABRIC"]),
            (20, ["ipv6 address prefix-list FABRIC-V6"]),
        ]


def test_eos_route_maps_of_an_ipv4_only_fabric_have_no_ipv6_entry() -> None:
    build = _lab("eos", ipv6=False)
    text = _render(build, "leaf1")["startup-config"]
    assert "FABRIC-V6" not in text
    assert "permit 20" not in text


# --- Cumulus: the PFC watchdog runs on every PFC port ---


def _nvue(build: Build, name: str) -> dict[str, Any]:
    data: list[dict[str, Any]] = yaml.safe_load(_render(build, name)["startup.yaml"])
    return data[0]["set"]


@pytest.mark.parametrize("name", ["leaf1", "spine1"])
def test_cumulus_enables_the_pfc_watchdog_on_every_pfc_port_and_only_there(name: str) -> None:
    build = _lab("cumulus", watchdog=True)
    intent = build.intents[name]
    assert intent.qos is not None and intent.qos.ports
    config = _nvue(build, name)
    assert "pfc-watchdog" in config["qos"]  # the global timers
    watched = {
        interface
        for interface, entry in config["interface"].items()
        if entry.get("qos", {}).get("pfc-watchdog") == {"state": "enable"}
    }
    assert watched == set(intent.qos.ports)
    assert all(config["interface"][p]["type"] == "swp" for p in watched)  # NVUE: physical ports only


def test_cumulus_without_the_watchdog_enables_it_nowhere() -> None:
    config = _nvue(_lab("cumulus", watchdog=False), "leaf1")
    assert "pfc-watchdog" not in config["qos"]
    assert not [i for i, entry in config["interface"].items() if "qos" in entry]


# --- one BGP timer policy, from the intent, on every platform ---


def _timers(platform: str, files: dict[str, str]) -> set[tuple[int, int]]:
    """(keepalive, hold) of every place the platform's files set them."""
    found: set[tuple[int, int]] = set()
    for name, text in files.items():
        if name in ("frr.conf", "startup-config"):
            found |= {(int(k), int(h)) for k, h in re.findall(r"^\s*timers bgp (\d+) (\d+)$", text, re.MULTILINE)}
        elif name == "config_db.json":
            found |= {
                (int(n["keepalive"]), int(n["holdtime"])) for n in json.loads(text).get("BGP_NEIGHBOR", {}).values()
            }
        elif name == "startup.yaml":
            bgp = yaml.safe_load(text)[0]["set"]["vrf"]["default"]["router"]["bgp"]
            found |= {(g["timers"]["keepalive"], g["timers"]["hold"]) for g in bgp["peer-group"].values()}
    return found


def test_every_platform_renders_the_intents_timers() -> None:
    assert BGP_TIMERS == (3, 9)
    for platform in PLATFORM_NAMES:
        files = _render(_lab(platform), "leaf1")
        assert _timers(platform, files) == {BGP_TIMERS}, platform
    # sonic: FRR's frr.conf and config_db.json both carry them
    sonic = _render(_lab("sonic"), "leaf1")
    assert "timers bgp 3 9" in sonic["frr.conf"]


def test_the_timers_are_one_declaration_every_platform_follows() -> None:
    for platform in PLATFORM_NAMES:
        intent: DeviceIntent = _lab(platform).intents["leaf1"]
        assert intent.bgp is not None
        changed = replace(intent, bgp=replace(intent.bgp, timers=(1, 4)))
        assert _timers(platform, PLATFORMS[platform].render(changed)) == {(1, 4)}, platform


# --- BFD only when the spec asks for it ---

BFD = {
    "frr": ("frr.conf", "neighbor FABRIC bfd"),
    "sonic": ("frr.conf", "neighbor FABRIC bfd"),
    "eos": ("startup-config", "neighbor FABRIC bfd"),
}


@pytest.mark.parametrize("platform", PLATFORM_NAMES)
def test_bfd_is_rendered_only_when_asked(platform: str) -> None:
    for asked in (False, True):
        build = _lab(platform, bfd=asked)
        assert build.intents["leaf1"].bgp is not None and build.intents["leaf1"].bgp.bfd is asked
        files = _render(build, "leaf1")
        if platform == "cumulus":
            groups = yaml.safe_load(files["startup.yaml"])[0]["set"]["vrf"]["default"]["router"]["bgp"]["peer-group"]
            assert list(groups) == ["FABRIC", "FABRIC-V6"]  # numbered with IPv6: the IPv6 sessions' group too
            assert [g.get("bfd") for g in groups.values()] == [{"enable": "on"} if asked else None] * 2
        else:
            name, line = BFD[platform]
            assert (line in [s.strip() for s in files[name].splitlines()]) is asked
            assert ("bfd" in files[name]) is asked


def test_bfd_reaches_the_structured_config_and_routed_hosts() -> None:
    build = _lab("eos", bfd=True)
    group = structured_config(build.intents["leaf1"], build)["router_bgp"]["peer_groups"][0]
    assert group["bfd"] is True
    assert "bfd" not in structured_config(_lab("eos").intents["leaf1"], _lab("eos"))["router_bgp"]["peer_groups"][0]

    def with_bfd(data: dict[str, Any]) -> None:
        data["fabrics"]["compute"].setdefault("routing", {})["bfd"] = True

    for build, asked in ((variant("lab-dual", with_bfd), True), (built("lab-dual"), False)):
        hosts = {
            k: v.decode() for k, v in render_all(build).items() if k.startswith("hosts/") and k.endswith("frr.conf")
        }
        assert hosts
        for text in hosts.values():
            assert ("neighbor FABRIC bfd" in text) is asked
            assert "timers bgp 3 9" in text
