"""Mixed-mode cages (issue 25, deployment review B2): the links in one cage share one signalling. An HDR 200G port
(50G-PAM4) cannot link into an NDR twin-port cage (100G-PAM4) that a DGX port shares: `cage-mixed-mode`; the planner
gives such a device a cage of its own where a leaf has one free.

The bundled SuperPOD designs cable their UFM appliances as NVIDIA's DGX SuperPOD H100 RA does (RA-11333-001 V11,
Appendix A, table 8): a ConnectX-7 OSFP port at NDR200 (2 lanes of 100G-PAM4, an MMA4Z00-NS400 module, 980-9I51S)
on a 1:2 splitter fibre (980-9I557, MFP7E20 class) from the leaf's twin-port module, beside a DGX at NDR in the same
cage: one signalling, no finding. An HDR device (a part file's, as the UFM appliance was modelled before) still
gets the warning."""

from __future__ import annotations

from collections import Counter
from typing import Any

from fabric.allocation.optics import mixed_cages, optics, port_lane_rates
from fabric.costing import costing
from fabric.pipeline import Build
from fabric.spec.catalog import builtin_catalog, node_lane_gbps
from tests.conftest import built
from tests.support.design_variants import with_hdr_ufm


def _mixed(build: Build) -> list[Any]:
    return [f for f in build.findings if f.code == "cage-mixed-mode"]


def _ufm_links(build: Build) -> list[tuple[str, str, str]]:
    return sorted(
        (link.b, link.b_port, link.a) for link in build.topology.fabrics["compute"].links if link.a.startswith("ufm")
    )


def test_signalling_of_the_catalogs_ports() -> None:
    nodes = builtin_catalog().nodes
    # NDR200 on a ConnectX-7: 2 lanes of 100G-PAM4 (the catalog's lane_gbps), not 4 of 50G (200 / 4)
    assert node_lane_gbps(nodes["ufm-appliance"].ports["ib"]) == 100
    assert nodes["ufm-appliance"].ports["ib"].speed_gbps == 200
    assert node_lane_gbps(nodes["dgx-a100"].ports["compute"]) == 50  # HDR: 4 x 50G-PAM4 on QSFP56
    assert node_lane_gbps(nodes["dgx-h100"].ports["compute"]) == 100  # NDR: twin-port OSFP, 4 lanes a port
    assert node_lane_gbps(nodes["storage-server"].ports["storage"]) == 100  # single-port OSFP adapter: 4 lanes
    leaf = built("superpod-h100-1su").topology.devices["su1-rail0-leaf"]
    rates = port_lane_rates(builtin_catalog(), leaf)
    assert rates["sw16p1"] == ("16", 100) and rates["sw16p2"] == ("16", 100)


def test_the_superpod_designs_ufm_shares_a_dgx_cage_at_one_signalling() -> None:
    """31 DGX in an SU of 32 leave one port a rail leaf, beside the last DGX's: the UFM's NDR200 link there shares
    the cage's 100G-PAM4 signalling (RA table 8), so no bundled SuperPOD design has a mixed cage."""
    for design in ("superpod-h100-1su", "superpod-h100-2su", "superpod-h100-3su", "superpod-h100-4su"):
        build = built(design)
        assert _mixed(build) == [], design
        assert mixed_cages(build.design.catalog, build.topology) == ()
        links = _ufm_links(build)
        assert links[0] == ("su1-rail0-leaf", "sw16p2", "ufm001"), design
        assert [(leaf, port) for leaf, port, _ in links] == [(f"su1-rail{r}-leaf", "sw16p2") for r in range(4)]
        dgx031 = {(link.b, link.b_port) for link in build.topology.fabrics["compute"].links if link.a == "dgx031"}
        assert ("su1-rail0-leaf", "sw16p1") in dgx031  # the cage's other port: a DGX at NDR


def test_the_ufm_link_is_ordered_as_the_ra_orders_it() -> None:
    """RA-11333-001 table 8, 4 SU: 4 "NDR Cables, 200 Gbps, UFM to leaf ports" (980-9I557, a 1:2 MPO splitter
    fibre), 4 "UFM System Transceivers" (980-9I51S-00NS00 = MMA4Z00-NS400, single-port flat-top OSFP), and no UFM
    module in the switch cage: the leaf's twin-port module already serves the DGX beside it (1,536 switch side)."""
    build = built("superpod-h100-4su")
    ufm = [c for c in build.allocation.cables if c.link.fabric == "compute" and c.link.a.startswith("ufm")]
    assert len(ufm) == 4
    assert {(c.link.speed_gbps, c.media, c.part.split("-N")[0]) for c in ufm} == {(200, "mmf-200g-split", "MFP7E20")}
    lines = {(x.category, x.model, x.fabric, x.detail): x.count for x in costing(build).lines}
    assert lines[("transceiver", "osfp-400g-sr4-flat", "compute", "node side")] == 4
    assert lines[("transceiver", "osfp-2x400g-sr8", "compute", "switch side")] == 1536
    assert not [k for k in lines if k[1] in ("qsfp56-200g-sr4", "aoc-osfp-2x200g") and k[2] == "compute"]
    assert optics(build.design.catalog, build.topology, build.allocation).unmatched == ()


def test_a_hand_made_hdr_port_in_an_ndr_cage_is_still_reported() -> None:
    """The negative case: an HDR UFM (QSFP56, 50G-PAM4) where the RA's NDR200 one sits: four warnings, one per rail
    leaf whose cage 16 holds it beside dgx031 at NDR, with the splitter AOC in the hint."""
    build = with_hdr_ufm()
    findings = _mixed(build)
    assert len(findings) == 4 and all(f.severity.name == "WARNING" for f in findings)
    assert "su1-rail0-leaf cage 16" in findings[0].message
    assert "sw16p1 to dgx031 at 100G a lane, sw16p2 to ufm001 at 50G a lane" in findings[0].message
    assert "aoc-osfp-2x200g" in findings[0].hint
    assert _ufm_links(build)[0] == ("su1-rail0-leaf", "sw16p2", "ufm001")


def test_the_planner_gives_an_hdr_device_a_cage_of_its_own_where_one_is_free() -> None:
    build = with_hdr_ufm(dgx=29)  # three DGX slots a rail leaf free: sw15p2 beside dgx029, cage 16 whole
    assert _mixed(build) == []
    links = _ufm_links(build)
    # the lowest free port, sw15p2, is in dgx029's NDR cage: cage 16 instead
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
    """The rule is one signalling a cage, not one device: DGX ports pair in cages as before (no finding), and so do
    a DGX and the RA's NDR200 UFM."""
    build = built("superpod-h100-4su")
    per_cage: dict[tuple[str, str], set[str]] = {}
    for link in build.topology.fabrics["compute"].links:
        per_cage.setdefault((link.b, link.b_port[:-2]), set()).add(link.a)
    assert sum(1 for devices in per_cage.values() if len(devices) == 2) > 400
    with_ufm = [devices for devices in per_cage.values() if any(d.startswith("ufm") for d in devices)]
    shared = Counter(tuple(sorted(d[:3] for d in devices)) for devices in with_ufm)
    assert shared == {("dgx", "ufm"): 4}
    assert _mixed(build) == []
