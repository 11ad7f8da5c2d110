"""Mixed-mode cages (issue 25, deployment review B2): the links in one cage share one signalling. An HDR 200G UFM
port (50G-PAM4) cannot link into an NDR twin-port cage (100G-PAM4) that a DGX port shares: `cage-mixed-mode`; the
planner gives such a device a cage of its own where a leaf has one free."""

from __future__ import annotations

from typing import Any

from fabric.allocation.optics import mixed_cages, port_lane_rates
from fabric.pipeline import Build
from fabric.spec.catalog import builtin_catalog, node_lane_gbps
from tests.conftest import built
from tests.support.design_variants import variant


def _mixed(build: Build) -> list[Any]:
    return [f for f in build.findings if f.code == "cage-mixed-mode"]


def _ufm_links(build: Build) -> list[tuple[str, str, str]]:
    return sorted(
        (link.b, link.b_port, link.a) for link in build.topology.fabrics["compute"].links if link.a.startswith("ufm")
    )


def test_signalling_of_the_catalogs_ports() -> None:
    nodes = builtin_catalog().nodes
    assert node_lane_gbps(nodes["ufm-appliance"].ports["ib"]) == 50  # HDR: 4 x 50G-PAM4 on QSFP56
    assert node_lane_gbps(nodes["dgx-h100"].ports["compute"]) == 100  # NDR: twin-port OSFP, 4 lanes a port
    assert node_lane_gbps(nodes["storage-server"].ports["storage"]) == 100  # single-port OSFP adapter: 4 lanes
    leaf = built("superpod-h100-1su").topology.devices["su1-rail0-leaf"]
    rates = port_lane_rates(builtin_catalog(), leaf)
    assert rates["sw16p1"] == ("16", 100) and rates["sw16p2"] == ("16", 100)


def test_the_superpod_designs_ufm_shares_a_dgx_cage_and_is_reported() -> None:
    """31 DGX in an SU of 32 leave one port a rail leaf, beside the last DGX's: no cage of its own to give."""
    build = built("superpod-h100-1su")
    findings = _mixed(build)
    assert len(findings) == 4 and all(f.severity.name == "WARNING" for f in findings)
    assert "su1-rail0-leaf cage 16" in findings[0].message
    assert "sw16p1 to dgx031 at 100G a lane, sw16p2 to ufm001 at 50G a lane" in findings[0].message
    assert "aoc-osfp-2x200g" in findings[0].hint
    assert _ufm_links(build)[0] == ("su1-rail0-leaf", "sw16p2", "ufm001")


def test_the_planner_gives_the_ufm_a_cage_of_its_own_where_one_is_free() -> None:
    def twenty_nine(data: dict[str, Any]) -> None:
        data["nodes"][0]["count"] = 29  # three DGX slots a rail leaf free: sw15p2 beside dgx029, and cage 16 whole

    build = variant("superpod-h100-1su", twenty_nine)
    assert _mixed(build) == []
    links = _ufm_links(build)
    # the lowest free port, sw15p2 (where the planner put it before), is in dgx029's NDR cage: cage 16 instead
    assert len(links) == 4 and all(port == "sw16p1" for _, port, _ in links)
    for leaf, _, ufm in links:
        others = [
            link.a
            for link in build.topology.fabrics["compute"].links
            if link.b == leaf and link.b_port.startswith("sw16")
        ]
        assert others == [ufm]
        assert not [
            link for link in build.topology.fabrics["compute"].links if (link.b, link.b_port) == (leaf, "sw15p2")
        ]  # the cage's other port stays empty: no DGX NDR port beside the HDR one
    assert mixed_cages(build.design.catalog, build.topology) == ()


def test_two_devices_of_one_signalling_share_a_cage() -> None:
    """The rule is one signalling a cage, not one device: DGX ports pair in cages as before (no finding)."""
    build = built("superpod-h100-4su")
    per_cage: dict[tuple[str, str], set[str]] = {}
    for link in build.topology.fabrics["compute"].links:
        if link.a.startswith("dgx"):
            per_cage.setdefault((link.b, link.b_port[:-2]), set()).add(link.a)
    assert sum(1 for devices in per_cage.values() if len(devices) == 2) > 400
    assert len(_mixed(build)) == 4
