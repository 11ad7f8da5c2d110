"""Splitter cables (issue 25): one plug in a switch's twin-port cage, a leg to each of two single-port cages.

Copper: NVIDIA MCP7Y00 (passive, 1-3 m) and its ACC version (4-5 m), twin-port OSFP finned (switch) to 2 x 400G
single-port OSFP flat (ConnectX-7): "The single port OSFP use is only with ConnectX-7/OSFP network adapters"
(https://docs.nvidia.com/networking/display/MCP7Y00NXXX800pub/Use+Cases). Fibre: MFP7E20, one MPO-12/APC to two,
one 400G port of a twin-port module as two 200G links (the DGX SuperPOD H100 RA's UFM links). And the QSFP112-ended
MCP7Y10 (2 x 400G) and the 1:4 MCP7Y50 (4 x 200G OSFP) and MCP7Y40 (4 x 200G QSFP112), in a small variant. The
BOM counts one cable per split end (its legs); the physical sheet has one row per cable with all its legs."""

from __future__ import annotations

import tempfile
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric import build_fabric, load_spec_text
from fabric.allocation.optics import cage_plugs, misfits, physical_cables
from fabric.costing import costing
from fabric.pipeline import Build
from fabric.spec.catalog import builtin_catalog
from tests.conftest import built
from tests.support.design_variants import spec_data, variant

SWITCH = ("osfp", "finned", 2)  # Quantum-2 / Spectrum-4 twin-port cage
NIC = ("osfp", "flat", 1)  # ConnectX-7 single-port OSFP (riding heat sink)
DGX = ("osfp", "flat", 2)  # DGX H100 twin-port flat cage
QSFP112 = ("qsfp112", None, 1)


def _short(data: dict[str, Any]) -> None:
    """lab-ib with no slack, service loop or tray rise: its storage servers' links come to 5 m."""
    data["cabling"] = {"slack_pct": 0, "service_loop_m": 0, "tray_height_m": 0}


def _compute(build: Build) -> Counter[tuple[str, float | None]]:
    return Counter((c.media, c.length_m) for c in build.allocation.cables if c.link.fabric == "compute")


def test_the_splitters_plugs() -> None:
    media = builtin_catalog().media
    for key in ("dac-osfp-2x400g-split", "acc-osfp-2x400g-split"):
        m = media[key]
        assert m.fits(SWITCH, NIC) and m.fits(NIC, SWITCH)
        assert not m.fits(SWITCH, SWITCH)  # switch to switch: the twin-port DAC/ACC
        assert not m.fits(SWITCH, DGX)  # the DGX's twin-port flat cage takes a twin-port module or cable
        assert not m.fits(NIC, NIC) and not m.fits(SWITCH, QSFP112)  # QSFP112 ends are MCP7Y10's
    assert media["dac-osfp-2x400g-split"].part.startswith("MCP7Y00") and media["dac-osfp-2x400g-split"].reach_m == 3
    assert media["acc-osfp-2x400g-split"].lengths_m == [4, 5]
    # the QSFP112-ended (MCP7Y10, MCP7Y40) and 1:4 (MCP7Y50, MCP7Y40) splitters: twin-port switch cage to NIC cages
    assert media["dac-qsfp112-2x400g-split"].fits(SWITCH, QSFP112) and not media["dac-qsfp112-2x400g-split"].fits(
        SWITCH, NIC
    )
    assert media["dac-osfp-4x200g-split"].fits(SWITCH, NIC) and not media["dac-osfp-4x200g-split"].fits(SWITCH, DGX)
    assert media["dac-qsfp112-4x200g-split"].fits(QSFP112, SWITCH)
    assert not media["dac-qsfp112-4x200g-split"].fits(SWITCH, SWITCH)
    assert [
        max(e.plugs for e in media[k].ends or ()) for k in ("dac-osfp-4x200g-split", "dac-qsfp112-4x200g-split")
    ] == [
        4,
        4,
    ]
    assert media["dac-qsfp112-4x200g-split"].unverified  # named in two datasheets, none of its own read
    split = media["mmf-200g-split"]
    assert split.fits(SWITCH, NIC) and split.fits(SWITCH, QSFP112) and not split.fits(SWITCH, SWITCH)


def test_a_cage_pair_within_reach_takes_one_acc_splitter() -> None:
    """lab-ib made short: fs1 and fs2 (storage servers, ConnectX-7 single-port OSFP) share leaf3's cage 1 and
    leaf4's cage 1 at 5 m: one ACC splitter each (2 cables for 4 links), no transceivers there; the compute nodes'
    links at 7 m stay on fibre."""
    build = variant("lab-ib", _short)
    media = _compute(build)
    assert media[("acc-osfp-2x400g-split", 5.0)] == 4
    assert media[("mmf-400g", 7.0)] == 6
    lines = {(x.category, x.model, x.detail): x.count for x in costing(build).lines if x.fabric == "compute"}
    assert lines[("cable", "MCA7J60-N005", "acc-osfp-2x400g-split 5 m")] == 2
    assert lines[("transceiver", "osfp-400g-sr4-flat", "node side")] == 6 + 2  # the compute nodes and the UFMs
    rows = [
        p for p in physical_cables(build.design.catalog, build.topology, build.allocation) if "acc" in p.links[0].media
    ]
    assert [(p.physical_id, len(p.links)) for p in rows] == [("compute-0007", 2), ("compute-0010", 2)]
    first = rows[0]
    assert [(e.device, e.cage) for e in first.a] == [("fs1", "stor1"), ("fs2", "stor1")]
    assert [(e.device, e.cage, e.subs, e.transceiver) for e in first.b] == [("leaf3", "1", (1, 2), "")]
    assert cage_plugs(build.design.catalog, build.topology, build.allocation) == ()
    assert misfits(build.design.catalog, build.topology, build.allocation) == ()
    assert not [f for f in build.findings if f.code in ("cage-plugs", "optics-missing", "cage-mixed-mode")]


def test_beyond_the_splitters_reach_the_links_take_fibre() -> None:
    """The negative case: as bundled, lab-ib's storage links need 7 m, past the ACC's 5 m: fibre with a module at
    each end, no splitter copper in any bundled design (their node links are 5 m or longer and their cage
    partners longer still)."""
    assert not [m for m, _ in _compute(built("lab-ib")) if m.endswith("2x400g-split")]
    for design in ("roce-512", "lab-ib", "superpod-h100-4su", "gb200-nvl72-1su"):
        assert not [c for c in built(design).allocation.cables if c.media_kind in ("dac", "acc") and "split" in c.media]


def test_a_splitters_legs_of_two_lengths_take_the_longer() -> None:
    """Fibre splitter legs from one MPO port (gb200-nvl72-1su's converged storage and in-band fabric at 200G: 4 x
    200G a twin-port cage): one cable per two legs, as long as its longer leg; the BOM counts the sheet's rows.
    Legs: the trays' 4 BlueField-3 ports (576), the storage servers' 2 ports (32) and the 8 control-plane hosts'
    2 in-band 200G ports (16, catalog mgmt-host-200g since commit 6d5de68)."""
    build = built("gb200-nvl72-1su")
    legs = [c for c in build.allocation.cables if c.media == "mmf-200g-split"]
    rows = [
        p
        for p in physical_cables(build.design.catalog, build.topology, build.allocation)
        if p.links[0].media == "mmf-200g-split"
    ]
    assert len(legs) == 144 * 4 + 16 * 2 + 8 * 2
    assert len(rows) == len(legs) // 2 and all(len(p.links) == 2 for p in rows)
    bom = sum(x.count for x in costing(build).lines if x.category == "cable" and x.detail.startswith("mmf-200g-split"))
    assert bom == len(rows)
    mixed = [p for p in rows if len({c.length_m for c in p.links}) > 1]
    assert mixed  # some MPO ports serve trays at two distances
    by_part = Counter(max(p.links, key=lambda c: c.length_m or 0).part for p in rows)
    assert by_part == Counter({x.model: x.count for x in costing(build).lines if x.detail.startswith("mmf-200g-split")})


# A NIC part for the copper splitters below: one Ethernet port per cage (a ConnectX-7 single-port flat OSFP, or a
# QSFP112 ConnectX-7 / BlueField-3), at 400G (4 x 100G-PAM4) or 200G (2 x 100G-PAM4: the 1:4 splitters' legs)
NIC_PART = """\
nodes:
  nic:
    description: A server with one ConnectX-7 port (a test part)
    u: 1
    power_w: 600
    ports:
      data: {technology: ethernet, speed_gbps: %d, connector: %s, %s ports: [{name: eth1}]}
      bmc: {technology: ethernet, speed_gbps: 1, connector: rj45, ports: [{name: bmc}]}
"""


@cache
def _nic_lab(speed: int, connector: str, rack_units: int = 16) -> Build:
    """lab with Spectrum-4 SN5600 switches (twin-port finned OSFP cages, 2 x 400G or 4 x 200G) and 8 servers of
    the NIC part (4 at 400G, a cage's two ports a leaf's worth), no slack, service loop or tray rise; 16-U racks
    bring the server-leaf links to 2 m (42-U racks: 5 m, past passive copper's 3 m)."""
    flat = "top: flat, ports_per_cage: 1," if connector == "osfp" else ""
    lane = "lane_gbps: 100," if speed == 200 else ""
    data = spec_data("lab")
    data["racks"]["rack_units"] = rack_units
    data["cabling"] = {"slack_pct": 0, "service_loop_m": 0, "tray_height_m": 0}
    data["nodes"][0].update(type="nic", count=8 if speed == 200 else 4)
    compute = data["fabrics"]["compute"]
    compute.update(switches={"leaf": "sn5600", "spine": "sn5600"}, platform="cumulus")
    compute["topology"]["leaves"] = 2
    data["catalog"] = ["parts.yaml"]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "parts.yaml").write_text(NIC_PART % (speed, connector, flat + lane))
        design = load_spec_text(yaml.safe_dump(data, sort_keys=False), "lab.yaml", tmp)
    return build_fabric(design)


@pytest.mark.parametrize(
    ("speed", "connector", "medium", "part", "legs"),
    [
        # MCP7Y10: twin-port OSFP to 2 x 400G QSFP112 (https://docs.nvidia.com/networking/display/MCP7Y10NXXX800Gpub)
        (400, "qsfp112", "dac-qsfp112-2x400g-split", "MCP7Y10-N002", 2),
        # MCP7Y50: twin-port OSFP to 4 x 200G OSFP, 2 x 100G-PAM4 a leg
        # (https://docs.nvidia.com/networking/display/mcp7y50nxxx800pub/use+cases)
        (200, "osfp", "dac-osfp-4x200g-split", "MCP7Y50-N002", 4),
        # MCP7Y40: twin-port OSFP to 4 x 200G QSFP112 (named in the MCP7Y00/MCP7Y10 datasheets; unverified part)
        (200, "qsfp112", "dac-qsfp112-4x200g-split", "MCP7Y40-N002", 4),
    ],
)
def test_short_nic_links_take_one_splitter_dac_per_switch_cage(
    speed: int, connector: str, medium: str, part: str, legs: int
) -> None:
    """Two leaves, each with one twin-port cage split to 2 x 400G or 4 x 200G NIC ports at 2 m: one splitter DAC
    per leaf cage (its legs the cage's links), no transceiver on either side, no plug or mode finding; the BOM
    counts the sheet's cables."""
    build = _nic_lab(speed, connector)
    nodes = [c for c in build.allocation.cables if c.link.tier == "node-leaf"]
    assert len(nodes) == 8 if speed == 200 else 4
    assert {(c.media, c.part, c.length_m) for c in nodes} == {(medium, part, 2.0)}
    rows = [p for p in physical_cables(build.design.catalog, build.topology, build.allocation) if p.links[0] in nodes]
    assert len(rows) == 2 and all(len(p.links) == legs for p in rows)
    for p in rows:
        (switch,) = p.b
        assert switch.subs == tuple(range(1, legs + 1)) and not switch.transceiver
        assert switch.lanes == tuple((1 + k * 8 // legs, (k + 1) * 8 // legs) for k in range(legs))
        assert [e.lanes for e in p.a] == [((1, 8 // legs),)] * legs  # a NIC cage's first 4 (400G) or 2 (200G) lanes
    lines = {(x.category, x.model): x.count for x in costing(build).lines}
    assert lines[("cable", part)] == 2
    assert not [x for x in costing(build).lines if x.category == "transceiver" and x.detail == "node side"]
    assert cage_plugs(build.design.catalog, build.topology, build.allocation) == ()
    assert misfits(build.design.catalog, build.topology, build.allocation) == ()
    assert not [f for f in build.findings if f.code in ("cage-plugs", "optics-missing", "cage-mixed-mode")]


def test_beyond_3_m_the_nic_links_take_fibre_not_a_splitter_dac() -> None:
    """The negative case: in 42-U racks the same links need 5 m, past the passive splitters' 3 m (no 1:4 or
    QSFP112 ACC part is in the catalog): the 200G legs ride 1:2 splitter fibre with a module at each end."""
    build = _nic_lab(200, "osfp", rack_units=42)
    nodes = [c for c in build.allocation.cables if c.link.tier == "node-leaf"]
    assert {(c.media, c.length_m) for c in nodes} == {("mmf-200g-split", 5.0)}
    lines = {(x.category, x.model, x.detail): x.count for x in costing(build).lines}
    assert lines[("transceiver", "osfp-400g-sr4-flat", "node side")] == 8
