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
    password from an environment variable, if asked). On a platform without MLAG a bonded fabric's nodes get a
    port per leaf instead (`dual_homing: none`; the SuperPODs' in-band bonds to MLAG pairs)."""
    assert platform in PLATFORMS
    mlag = "mlag" in PLATFORMS[platform].traits.supports

    def change(data: dict[str, Any]) -> None:
        for fabric in data["fabrics"].values():
            if fabric["technology"] != "ethernet":
                continue
            fabric["platform"] = platform
            if not mlag and fabric.get("dual_homing") == "bond":
                del fabric["dual_homing"]
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


@cache
def cx8_at_800g(design: str) -> Build:
    """A bundled HGX B300 design (sonic-th5-512, eos-roce-1024) as it was before issue 25's follow-up: every
    ConnectX-8 one 800GbE port (catalog hgx-b300), one plane of 800G links in scalable units of 32 nodes. ConnectX-8
    runs no 800GbE on one port (`nic-port-speed`) and no catalog module fits its cage at 800G (`optics-missing`):
    the negative case of both, and of the twin-port 800G fibre rows."""

    def change(data: dict[str, Any]) -> None:
        data["nodes"][0]["type"] = "hgx-b300"
        compute = data["fabrics"]["compute"]
        compute["speed_gbps"] = 800
        compute["topology"]["scalable_unit"] = 32
        del compute["topology"]["planes"]

    return variant(design, change)


# an HDR UFM appliance (ConnectX-6, QSFP56 200G: 4 lanes of 50G-PAM4), as fabric modelled the UFM before it followed
# the DGX SuperPOD H100 RA (a ConnectX-7 at NDR200): a part file for the cases of `cage-mixed-mode`
HDR_UFM_PART = """\
nodes:
  ufm-hdr:
    description: HDR UFM appliance (a test part)
    u: 1
    power_w: 600
    ports:
      ib: {technology: infiniband, speed_gbps: 200, connector: qsfp56, ports: [{name: ib0}]}
      inband: {technology: ethernet, speed_gbps: 100, connector: qsfp28, count: 2, name: "eth{n}"}
      bmc: {technology: ethernet, speed_gbps: 1, connector: rj45, ports: [{name: bmc}]}
"""


@cache
def with_hdr_ufm(dgx: int | None = None) -> Build:
    """superpod-h100-1su with its UFM appliances of the HDR part (and `dgx` DGX where given)."""
    import tempfile
    from pathlib import Path

    data = spec_data("superpod-h100-1su")
    for group in data["nodes"]:
        if group["group"] == "ufm":
            group["type"] = "ufm-hdr"
        if group["group"] == "gpu" and dgx is not None:
            group["count"] = dgx
    data["catalog"] = ["parts.yaml"]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "parts.yaml").write_text(HDR_UFM_PART)
        design = load_spec_text(yaml.safe_dump(data, sort_keys=False), "superpod-h100-1su.yaml", tmp)
    return build_fabric(design)
