"""Test helpers: a bundled design re-built with every Ethernet switch on one platform, or with other tweaks."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import yaml

from fabric import Build, build_fabric, load_spec_text
from fabric.render.platforms import PLATFORMS
from fabric.spec.yamlio import parse_yaml
from tests.conftest import DESIGNS

ETHERNET_DESIGNS = ("lab", "roce-512", "superpod-h100-4su")


def spec_data(design: str) -> dict[str, Any]:
    # read as fabric reads a spec (YAML 1.2: `yes` stays text), written back by PyYAML, which quotes such text
    data: dict[str, Any] = parse_yaml((DESIGNS / f"{design}.yaml").read_text(), design).data
    return data


def build_data(data: dict[str, Any], name: str = "<variant>") -> Build:
    return build_fabric(load_spec_text(yaml.safe_dump(data, sort_keys=False), name, DESIGNS))


def variant(design: str, change: Callable[[dict[str, Any]], None]) -> Build:
    data = spec_data(design)
    change(data)
    return build_data(data, f"{design}.yaml")


@cache
def on_platform(design: str, platform: str, unnumbered: bool = False, bgp_password_env: str | None = None) -> Build:
    """`design` with every switch of its Ethernet fabrics on `platform` (and BGP unnumbered, or with a BGP
    password from an environment variable, if asked)."""
    assert platform in PLATFORMS

    def change(data: dict[str, Any]) -> None:
        for fabric in data["fabrics"].values():
            if fabric["technology"] != "ethernet":
                continue
            fabric["platform"] = platform
            for layer in ("leaf", "spine", "core"):
                choice = fabric["switches"].get(layer)
                if isinstance(choice, dict):
                    choice.pop("platform", None)
            if unnumbered:
                fabric.setdefault("routing", {})["bgp_unnumbered"] = True
            if bgp_password_env:
                fabric.setdefault("routing", {})["bgp_password"] = {"env": bgp_password_env}

    return variant(design, change)


@cache
def roce_two_su() -> Build:
    """designs/roce-512.yaml cut to the smallest fabric that still has what its hosts' routing is for: 2 scalable
    units of 2 servers (8 rail NICs each), so every one of the 8 rails has 2 leaves and same-rail traffic between
    the SUs crosses the spines; 2 spines, 2 uplinks per leaf; switches on FRR so the lab boots them (18 switches,
    4 servers, 32 rail NICs). At full size (24 switches of 128 ports, 1056 links) it exceeds the lab's limits."""

    def change(data: dict[str, Any]) -> None:
        data["nodes"][0].update(count=4, per_rack=2)
        fabric = data["fabrics"]["compute"]
        fabric["topology"].update(scalable_unit=2, spines=2, uplinks=2, downlinks=2)
        fabric.pop("oversubscription", None)
        fabric["platform"] = "frr"
        fabric["qos"]["pfc_watchdog"] = False  # as designs/lab.yaml: Linux has no PFC watchdog

    return variant("roce-512", change)
