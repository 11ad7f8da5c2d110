"""Splitter cables (issue 25): one plug in a switch's twin-port cage, a leg to each of two single-port cages.

Copper: NVIDIA MCP7Y00 (passive, 1-3 m) and its ACC version (4-5 m), twin-port OSFP finned (switch) to 2 x 400G
single-port OSFP flat (ConnectX-7): "The single port OSFP use is only with ConnectX-7/OSFP network adapters"
(https://docs.nvidia.com/networking/display/MCP7Y00NXXX800pub/Use+Cases). Fibre: MFP7E20, one MPO-12/APC to two,
one 400G port of a twin-port module as two 200G links (the DGX SuperPOD H100 RA's UFM links). The BOM counts one
cable per split end (two legs); the physical sheet has one row per cable with both legs."""

from __future__ import annotations

from collections import Counter
from typing import Any

from fabric.allocation.optics import cage_plugs, misfits, physical_cables
from fabric.costing import costing
from fabric.pipeline import Build
from fabric.spec.catalog import builtin_catalog
from tests.conftest import built
from tests.support.design_variants import variant

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
        assert not [c for c in built(design).allocation.cables if c.media.endswith("2x400g-split")], design


def test_a_splitters_legs_of_two_lengths_take_the_longer() -> None:
    """Fibre splitter legs from one MPO port (gb200-nvl72-1su's converged storage and in-band fabric at 200G: 4 x
    200G a twin-port cage): one cable per two legs, as long as its longer leg; the BOM counts the sheet's rows.
    Legs: the trays' 4 BlueField-3 ports (576) and the storage servers' 2 ports (32)."""
    build = built("gb200-nvl72-1su")
    legs = [c for c in build.allocation.cables if c.media == "mmf-200g-split"]
    rows = [
        p
        for p in physical_cables(build.design.catalog, build.topology, build.allocation)
        if p.links[0].media == "mmf-200g-split"
    ]
    assert len(legs) == 144 * 4 + 16 * 2 and len(rows) == len(legs) // 2 and all(len(p.links) == 2 for p in rows)
    bom = sum(x.count for x in costing(build).lines if x.category == "cable" and x.detail.startswith("mmf-200g-split"))
    assert bom == len(rows)
    mixed = [p for p in rows if len({c.length_m for c in p.links}) > 1]
    assert mixed  # some MPO ports serve trays at two distances
    by_part = Counter(max(p.links, key=lambda c: c.length_m or 0).part for p in rows)
    assert by_part == Counter({x.model: x.count for x in costing(build).lines if x.detail.startswith("mmf-200g-split")})
