"""The physical cabling sheet (fabric/allocation/optics.py `physical_cables`, cabling-physical.csv) against the BOM
and the catalog, over every bundled design: every optical end's transceiver fits its cage (connector, thermal top,
ports per cage) and carries the link's medium and speed; the BOM's transceivers are the cages the sheet fills; its
cables are the sheet's rows, part by part; no cage carries more links than it has ports. The cage of each end is
looked up here from the catalog itself (port group → connector, top, ports per cage), not through optics.py."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter, defaultdict
from dataclasses import replace
from functools import cache

import pytest

from fabric.allocation.allocate import Allocation
from fabric.allocation.optics import (
    OPTICAL,
    CableEnd,
    PhysicalCable,
    cage_plugs,
    misfits,
    optics,
    physical_cables,
)
from fabric.costing import costing
from fabric.pipeline import Build
from fabric.render.outputs.tables import CABLING_COLUMNS, PHYSICAL_COLUMNS, cabling_csv, cabling_physical_csv
from fabric.spec.catalog import port_candidates
from tests.conftest import DESIGNS, built
from tests.support.design_variants import cx8_at_800g

BUNDLED = sorted(p.stem for p in DESIGNS.glob("*.yaml"))

Cage = tuple[str, str | None, int | None, int]  # connector, top, ports per cage, logical ports per cage


AT_800G = "@800g"  # a bundled HGX B300 design as it was at 800GbE (tests/support/design_variants.cx8_at_800g)


def _built(design: str) -> Build:
    return cx8_at_800g(design.removesuffix(AT_800G)) if design.endswith(AT_800G) else built(design)


@cache
def _sheet(design: str) -> tuple[PhysicalCable, ...]:
    build = _built(design)
    return physical_cables(build.design.catalog, build.topology, build.allocation)


def _cage(build: Build, end: CableEnd, port: str, speed: int) -> Cage:
    """The cage an end's port sits in, from the catalog: the node's port group, or the switch port group of the
    port in the mode that runs at the link's speed."""
    catalog, device = build.design.catalog, build.topology.devices[end.device]
    if device.layer == "node":
        for group in catalog.nodes[device.model].ports.values():
            if port in {p.name for p in group.port_list()}:
                return group.connector, group.top, group.ports_per_cage, group.ports_per_cage or 1
        raise AssertionError(f"{end.device} {port}: not a port of {device.model}")
    model = catalog.switches[device.model]
    found = port_candidates(model, device.platform).get(port)
    if not found:  # the management port, outside the port groups: an RJ45 jack
        return "rj45", None, 1, 1
    p = next((x for x in found if x.speed_gbps == speed), found[0])
    group = next(g for g in model.ports if g.group == p.group)
    return group.connector, group.top, group.ports_per_cage, p.breakout


def is_switch(build: Build, end: CableEnd) -> bool:
    return build.topology.devices[end.device].layer != "node"


def test_the_sheet_is_every_bundled_design() -> None:
    assert len(BUNDLED) >= 13 and {"roce-512", "sonic-th5-512", "superpod-h100-4su", "lab"} <= set(BUNDLED)


@pytest.mark.parametrize("design", [*BUNDLED, f"sonic-th5-512{AT_800G}"])
def test_every_link_is_on_the_sheet_once_and_its_optics_fit_their_cages(design: str) -> None:
    build = _built(design)
    catalog = build.design.catalog
    sheet = _sheet(design)
    # every logical link is carried: by one cable, or by each of its fibres
    carried = Counter(c.cable_id for p in sheet for c in p.links)
    fibres = {c.cable_id: p.fibres for p in sheet for c in p.links}
    assert carried == {c.cable_id: fibres[c.cable_id] for c in build.allocation.cables}
    checked = missing = 0
    for p in sheet:
        kinds = {c.media_kind for c in p.links}
        assert len(kinds) == 1 and len({c.media for c in p.links}) == 1
        if p.links[0].media != "mmf-200g-split":  # a splitter's legs may need two lengths: it takes the longer
            assert len({c.part for c in p.links}) == 1 and len({c.length_m for c in p.links}) == 1
        kind = kinds.pop()
        for side, b in ((p.a, False), (p.b, True)):
            for end in side:
                ports = [(c.link.b_port if b else c.link.a_port, c.link.speed_gbps) for c in p.links]
                for port, speed in ports:
                    connector, top, per_cage, _ = _cage(build, end, port, speed)
                    if kind not in OPTICAL:
                        assert end.transceiver == "", (p.physical_id, end)  # DAC, ACC, AOC, copper: no optic
                        continue
                    if not end.transceiver:  # reported: optics-missing (counted against the optics below)
                        missing += 1
                        continue
                    part = catalog.transceivers[end.transceiver]
                    assert part.connector == connector, (p.physical_id, end.device, port)
                    assert top is None or part.top in (None, top), (p.physical_id, end.device, port, top)
                    assert per_cage is None or part.ports_per_cage == per_cage, (p.physical_id, end.device)
                    assert kind in part.media_kinds and speed in part.speeds_gbps, (p.physical_id, speed)
                    assert end.transceiver_part == part.part
                    checked += 1
    # every end of every optical cable was checked, once per link it carries
    optical = _optical(sheet)
    assert checked + missing == sum(len(p.links) * (len(p.a) + len(p.b)) for p in optical)
    assert (checked > 0) == bool(optical)
    # an end without a transceiver is one the optics report (per fibre on the sheet; per link end in the count),
    # and only the known case has any: the hgx-b300's ConnectX-8 single-port flat-top OSFP cage at 800G (the
    # bundled designs as they were), for which the catalog has no module (the switches' finned twin-port one does
    # not fit); the bundled designs run ConnectX-8 as 2 x 400GbE in a twin-port flat-top cage, which has one
    unmatched = optics(catalog, build.topology, build.allocation).unmatched
    per_link = sum(len(p.links) for p in optical if any(not e.transceiver for e in p.a + p.b) and p.fibre <= 1)
    assert sum(u.ends for u in unmatched) == per_link
    assert {(u.device_model, u.cage) for u in unmatched} <= {("hgx-b300", ("osfp", "flat", 1))}
    assert bool(unmatched) == design.endswith(AT_800G)


def _optical(sheet: tuple[PhysicalCable, ...]) -> list[PhysicalCable]:
    return [p for p in sheet if p.links[0].media_kind in OPTICAL]


@pytest.mark.parametrize("design", BUNDLED)
def test_the_boms_cables_are_the_sheets_rows_and_its_transceivers_the_cages_filled(design: str) -> None:
    build = built(design)
    lines = costing(build).lines
    sheet = _sheet(design)
    bom_cables = Counter()
    for line in lines:
        if line.category == "cable":
            bom_cables[(line.fabric, line.model, line.detail)] += line.count
    rows = Counter()
    for p in sheet:
        c = p.links[0]
        detail = f"{c.media} {c.length_m:g} m" if c.length_m is not None else (c.media or "none")
        rows[(c.link.fabric, c.part or c.media or "none", detail)] += 1
    assert rows == bom_cables
    assert sum(rows.values()) == len(sheet)
    # transceivers: one per (device, cage) holding one, per fabric, side and part
    filled: dict[tuple[str, str, str], set[tuple[str, str]]] = defaultdict(set)
    for p in sheet:
        for side in (p.a, p.b):
            for end in side:
                if end.transceiver:
                    node = build.topology.devices[end.device].layer == "node"
                    key = (p.links[0].link.fabric, "node side" if node else "switch side", end.transceiver)
                    filled[key].add((end.device, end.cage))
    bom_optics = {(x.fabric, x.detail, x.model): x.count for x in lines if x.category == "transceiver"}
    assert bom_optics == {k: len(v) for k, v in filled.items()}


@pytest.mark.parametrize("design", BUNDLED)
def test_no_cage_carries_more_links_than_it_has_ports(design: str) -> None:
    """A cage carries at most its logical ports (ports per cage where the catalog gives it; a switch cage's mode:
    2 x 400G, 1 x 800G …), and each port in it once."""
    build = built(design)
    per_cage: dict[tuple[str, str], set[str]] = defaultdict(set)
    limit: dict[tuple[str, str], int] = {}
    places: dict[tuple[str, str], set[int]] = defaultdict(set)
    for p in _sheet(design):
        for side, b in ((p.a, False), (p.b, True)):
            for end in side:
                for c in p.links:
                    port = c.link.b_port if b else c.link.a_port
                    if port not in end.ports:
                        continue
                    *_, logical = _cage(build, end, port, c.link.speed_gbps)
                    key = (end.device, end.cage)
                    per_cage[key].add(port)
                    # a switch cage's mode says its logical ports (4 x 200G in a twin-port cage: a twin-port
                    # module on 1:2 splitter fibres, "Linking Twin-port transceivers with 1:2 fiber splitter cables
                    # to 400G transceivers automatically creates 200Gb/s transceivers": MMA4Z00-NS overview); a
                    # node cage its ports per cage
                    limit[key] = logical
                places[(end.device, end.cage)].update(end.subs)
    over = {k: sorted(v) for k, v in per_cage.items() if len(v) > limit[k]}
    assert not over, f"{design}: cages over their ports: {dict(list(over.items())[:5])}"
    assert all(len(places[k]) == len(v) for k, v in per_cage.items() if places[k])  # one place in the cage each


def test_a_twin_port_cable_is_one_row_with_both_ports_of_both_cages() -> None:
    """roce-512's leaf-spine: the two 400G halves of leaf cage 33 go to spine cage 1 on one OSFP-to-OSFP twin-port
    DAC (LinkX overview: "Twin port, 2x400G OSFP plugs for transceivers, copper DACs and ACCs"): one row, ports 1/2
    and lanes 1-4, 5-8 on both ends, no transceiver; the logical links stay two rows of cabling.csv."""
    build = built("roce-512")
    rows = list(csv.DictReader(io.StringIO(cabling_physical_csv(build))))
    assert tuple(rows[0]) == PHYSICAL_COLUMNS
    twin = next(r for r in rows if r["physical_id"] == "compute-0513")
    assert twin["links"] == "compute-0513 compute-0514"
    assert (twin["a_device"], twin["a_cage"], twin["a_cage_ports"], twin["a_cage_lanes"]) == (
        "su1-rail0-leaf",
        "33",
        "1/2",
        "1-4 5-8",
    )
    assert (twin["b_device"], twin["b_cage"], twin["b_cage_ports"]) == ("spine01", "1", "1/2")
    assert twin["a_interfaces"] == "swp33s0 swp33s1" and twin["a_transceiver_part"] == ""
    assert twin["a_label"].endswith("su1-rail0-leaf cage 33 port 1/2 > B08-U17 spine01 cage 1 port 1/2")
    assert not any(r["physical_id"] == "compute-0514" for r in rows)  # the second link has no cable of its own
    leaf_spine = [r for r in rows if r["tier"] == "leaf-spine"]
    assert len(leaf_spine) == 256 and all(len(r["links"].split()) == 2 for r in leaf_spine)
    # a node-leaf fibre: one link, one fibre, the single-port flat module at the NIC and the finned twin-port at the
    # leaf, in port 1 of cage 1 (lanes 1-4)
    first = rows[0]
    assert (first["links"], first["fibre"], first["a_transceiver_part"], first["b_transceiver_part"]) == (
        "compute-0001",
        "",
        "MMA4Z00-NS400",
        "MMA4Z00-NS",
    )
    assert (first["b_cage"], first["b_cage_ports"], first["b_cage_lanes"]) == ("1", "1", "1-4")


def test_an_800g_link_between_twin_port_modules_is_two_fibre_rows() -> None:
    """sonic-th5-512 at 800G (as it was before its ConnectX-8 ran 2 x 400GbE): an 800G link between twin-port
    2 x SR4 modules is two 4-lane links over two MPO-12/APC fibres ("Twin-Port transceivers require ordering two
    fibers": MMS4X00-NM application overview): two rows, F1 and F2, each labelled; the 800G port is the whole cage
    (lanes 1-8). The bundled sonic-th5-512 at 400G: one row per fibre link, each a 4-lane half of its cage."""
    build = cx8_at_800g("sonic-th5-512")
    rows = list(csv.DictReader(io.StringIO(cabling_physical_csv(build))))
    first = [r for r in rows if r["links"] == "compute-0001"]
    assert [r["physical_id"] for r in first] == ["compute-0001-F1", "compute-0001-F2"]
    assert [r["fibre"] for r in first] == ["1/2", "2/2"]
    assert first[0]["b_cage_lanes"] == "1-8" and first[0]["b_cage_ports"] == "1"
    assert first[0]["a_label"].startswith("compute-0001-F1 ") and first[1]["a_label"].startswith("compute-0001-F2 ")
    # media named by the rate they run: the 800G links' fibres and copper say 800g (the same MFP7E10 / MCP4Y10 parts)
    assert Counter(r["media_name"] for r in rows) == {"mmf-800g": 1408, "dac-800g": 160, "acc-800g": 160}
    assert {r["media_name"] for r in first} == {"mmf-800g"} and first[0]["part"].startswith("MFP7E10-N")
    assert len(rows) == 1728  # 704 fibre links x 2 + 160 DAC + 160 ACC, as the BOM (test_optics)
    rows = list(csv.DictReader(io.StringIO(cabling_physical_csv(built("sonic-th5-512")))))
    assert not [r for r in rows if r["fibre"]]  # one fibre per link: no F1/F2 rows
    assert {r["b_cage_lanes"] for r in rows} == {"1-4", "5-8", "1-4 5-8"}  # a twin-port copper cable: both halves
    assert len(rows) == 1360 + 312 + 32  # fibre links, one row each; twin-port DAC, ACC cables (test_optics)


def test_a_dgx_cage_port_is_its_place_in_the_twin_port_cage() -> None:
    """DGX H100 user guide port map: OSFP4P2 is port 2 of cage OSFP4 (the flat-top twin-port module there)."""
    sheet = _sheet("superpod-h100-4su")
    end = sheet[0].a[0]
    assert (end.device, end.cage, end.ports, end.subs, end.transceiver_part) == (
        "dgx001",
        "OSFP4",
        ("OSFP4P2",),
        (2,),
        "MMA4Z00-NS-FLT",
    )


def test_an_ndr200_link_shows_the_two_lanes_it_runs_at_each_end() -> None:
    """The UFM appliance's NDR200 link (DGX SuperPOD H100 RA, RA-11333-001 table 8: a ConnectX-7 single-port OSFP
    on a 1:2 splitter fibre into half of a leaf's twin-port cage) runs 2 lanes of 100G-PAM4: lanes 5-6 of the leaf
    cage's second port (a twin-port module's 400G port "activating only 2-channels", MMS4X00-NS overview) and
    lanes 1-2 of the ConnectX-7's 4-lane cage; the DGX beside it in the cage runs all four of its half (1-4), and
    the DGX's own twin-port cage shows its port's half (5-8 for OSFP4P2)."""
    sheet = _sheet("superpod-h100-4su")
    ufm = [p for p in sheet if p.a[0].device.startswith("ufm") and p.links[0].link.fabric == "compute"]
    assert len(ufm) == 4 and {p.links[0].media for p in ufm} == {"mmf-200g-split"}
    for p in ufm:
        (a,), (b,) = p.a, p.b
        assert (a.cage, a.subs, a.lanes) == ("ib0", (1,), ((1, 2),)), p.physical_id
        assert (b.subs, b.lanes) == ((2,), ((5, 6),)), p.physical_id
    leaf, cage = ufm[0].b[0].device, ufm[0].b[0].cage
    beside = [e for p in sheet for e in (*p.a, *p.b) if (e.device, e.cage) == (leaf, cage) and e.subs == (1,)]
    assert [e.lanes for e in beside] == [((1, 4),)]
    dgx = sheet[0].a[0]
    assert (dgx.ports, dgx.lanes) == (("OSFP4P2",), ((5, 8),))


@pytest.mark.parametrize("design", ["sonic-th5-512", "roce-512", "eos-roce-1024", "lab", "superpod-h100-4su"])
def test_cabling_csv_gives_every_switch_port_its_faceplate_cage_and_lanes(design: str) -> None:
    """cabling.csv's added columns: each end's cage, place and lanes, and the physical cable carrying the link. Every
    switch end of a catalog port has them; SONiC's Ethernet264 is cage 34 port 1 lanes 1-4 (its alias etp34a:
    SONiC's port_config.ini names cages and halves), and a twin-port cable's second link names its first."""
    build = built(design)
    rows = list(csv.DictReader(io.StringIO(cabling_csv(build))))
    assert tuple(rows[0])[: len(CABLING_COLUMNS)] == CABLING_COLUMNS
    physical = {p.physical_id for p in _sheet(design)}
    for side in ("a", "b"):
        for r in rows:
            device = build.topology.devices[r[f"{side}_device"]]
            if device.layer != "node" and r[f"{side}_port"] != build.design.catalog.switches[device.model].mgmt_port:
                assert r[f"{side}_cage"].isdigit() and r[f"{side}_cage_port"].isdigit(), r["cable_id"]
                assert re.fullmatch(r"\d+-\d+", r[f"{side}_cage_lanes"]), r["cable_id"]
    assert {r["physical_id"] for r in rows} <= {p.removesuffix("-F1") for p in physical}
    if design == "sonic-th5-512":
        row = next(r for r in rows if r["a_port"] == "Ethernet264" and r["tier"] == "leaf-spine")
        assert (row["a_cage"], row["a_cage_port"], row["a_cage_lanes"]) == ("34", "1", "1-4")
        second = next(r for r in rows if r["cable_id"] == "compute-0514")
        assert (second["a_cage"], second["a_cage_port"], second["a_cage_lanes"]) == ("33", "2", "5-8")
        assert second["physical_id"] == "compute-0513"  # one twin-port cable carries 0513 and 0514
    if design == "superpod-h100-4su":
        ufm = [r for r in rows if r["a_device"].startswith("ufm") and r["fabric"] == "compute"]
        assert {(r["a_cage_lanes"], r["b_cage_port"], r["b_cage_lanes"]) for r in ufm} == {("1-2", "2", "5-6")}


def _plugs(design: str) -> dict[tuple[str, str], set[str]]:
    """(device, cage) → what is plugged into it: the transceiver, or the cable's medium kind for DAC/ACC/AOC."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for p in _sheet(design):
        for side in (p.a, p.b):
            for end in side:
                kind = p.links[0].media_kind
                plug = f"{kind} (no transceiver)" if kind in OPTICAL else f"{kind} {p.physical_id}"
                out[(end.device, end.cage)].add(end.transceiver or plug)
    return out


@pytest.mark.parametrize("design", BUNDLED)
def test_a_cage_holds_one_plug(design: str) -> None:
    """A cage takes one module or one cable's plug ("Twin port, 2x400G OSFP plugs for transceivers, copper DACs and
    ACCs": MMA4Z00-NS overview): no bundled design has a cage with two, and the check that reports one
    (`cage-plugs`, optics.cage_plugs) finds none either. roce-512's su1-rail7-leaf cage 32 had gpu063's fibre module
    in port 1 and gpu064 nic7's twin-port ACC in port 2: both now ride the one module."""
    build = built(design)
    mixed = {k: sorted(v) for k, v in _plugs(design).items() if len(v) > 1}
    assert mixed == {}
    assert cage_plugs(build.design.catalog, build.topology, build.allocation) == ()
    assert "cage-plugs" not in {f.code for f in build.findings}
    if design == "roce-512":
        assert _plugs(design)[("su1-rail7-leaf", "32")] == {"osfp-2x400g-sr8"}


def _forced_acc(build: Build) -> Allocation:
    """roce-512 with gpu064 nic7's link put back on the 5 m twin-port ACC, as the media choice had it before."""
    cables = tuple(
        replace(c, media_kind="acc", media="acc-400g", part="MCA4J80-N005", length_m=5.0)
        if (c.link.a, c.link.a_port) == ("gpu064", "nic7")
        else c
        for c in build.allocation.cables
    )
    assert cables != build.allocation.cables
    return replace(build.allocation, cables=cables)


def test_two_plugs_in_a_cage_and_a_plug_that_does_not_fit_are_findings() -> None:
    """The negative case, by hand: roce-512 with gpu064 nic7 on the twin-port ACC again. Leaf cage 32 then holds
    gpu063's fibre module and the ACC (two plugs), and the ACC's other end, a finned twin-port plug, is in the
    NIC's single-port flat-top cage (it does not fit): two `cage-plugs` warnings."""
    from fabric.allocation.checks import AllocationContext, check_cage_plugs

    build = built("roce-512")
    allocation = _forced_acc(build)
    catalog, topology = build.design.catalog, build.topology
    found = cage_plugs(catalog, topology, allocation)
    assert [(c.device, c.cage, c.plugs) for c in found] == [
        ("su1-rail7-leaf", "32", ("osfp-2x400g-sr8", "acc-400g compute-0512"))
    ]
    bad = misfits(catalog, topology, allocation)
    assert [(m.media, m.cage, m.ends, m.example) for m in bad] == [("acc-400g", ("osfp", "flat", 1), 1, "gpu064 nic7")]
    ctx = AllocationContext(build.design, topology, build.figures, allocation)
    findings = list(check_cage_plugs(ctx))
    assert [f.code for f in findings] == ["cage-plugs", "cage-plugs"]
    assert "su1-rail7-leaf cage 32" in findings[0].message and "gpu064 nic7" in findings[1].message


def _plugs_from_objects(build: Build, allocation: Allocation) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """cage_plugs the plain way, over the sheet's objects (as it was before it read the sheet's rows)."""
    plugs: dict[tuple[str, str], dict[str, None]] = defaultdict(dict)
    fabric: dict[tuple[str, str], str] = {}
    for p in physical_cables(build.design.catalog, build.topology, allocation):
        link = p.links[0]
        if not link.media:
            continue
        for e in (*p.a, *p.b):
            key = (e.device, e.cage)
            if e.transceiver:
                plug = e.transceiver
            elif link.media_kind in ("mmf", "smf"):
                plug = f"{link.media} (no transceiver)"
            else:
                plug = f"{link.media or 'none'} {link.cable_id}"
            plugs[key][plug] = None
            fabric.setdefault(key, link.link.fabric)
    return [(fabric[k], *k, tuple(v)) for k, v in plugs.items() if len(v) > 1]


@pytest.mark.parametrize("design", BUNDLED)
def test_the_cage_check_reads_the_sheets_rows_as_its_objects_give_them(design: str) -> None:
    """cage_plugs reads the sheet's rows without making its objects (1.2 million at 100k GPUs), each end's cage
    from its port (not the end's shape) and no key per end kept (fabric/fast/distinct.py): the same cages, plugs
    and order as over the objects, with two plugs in a cage (roce-512 with the forced ACC) and without."""
    build = built(design)
    allocations = [build.allocation, *([_forced_acc(build)] if design == "roce-512" else [])]
    for allocation in allocations:
        plain = _plugs_from_objects(build, allocation)
        fast = [
            (c.fabric, c.device, c.cage, c.plugs) for c in cage_plugs(build.design.catalog, build.topology, allocation)
        ]
        assert fast == plain
    if design == "roce-512":
        assert plain != []  # the forced ACC's cage: the comparison saw a cage with two plugs


@pytest.mark.parametrize("design", BUNDLED)
def test_every_cables_plugs_fit_its_cages(design: str) -> None:
    """Every DAC, ACC, AOC and copper cable's plugs (catalog media `ends`) fit the cages at both ends, looked up
    here from the catalog (`_cage`): a twin-port OSFP DAC/ACC only between finned twin-port cages (MCP4Y10: "both
    ends being finned-top connectors"), a QSFP56 cable never in an OSFP cage, Cat6 in RJ45 jacks; a 1:2 splitter
    fibre (mmf-200g-split) from a twin-port cage to single-port 400G modules."""
    build = built(design)
    catalog = build.design.catalog
    checked = 0
    for c in build.allocation.cables:
        medium = catalog.media.get(c.media)
        if medium is None or medium.ends is None:
            assert c.media_kind in OPTICAL or not c.media, (design, c.cable_id, c.media)  # fibre: its transceivers
            continue
        end_a = CableEnd(c.link.a, "", None, "", (), (), (), "", "")
        end_b = CableEnd(c.link.b, "", None, "", (), (), (), "", "")
        a = _cage(build, end_a, c.link.a_port, c.link.speed_gbps)[:3]
        b = _cage(build, end_b, c.link.b_port, c.link.speed_gbps)[:3]
        assert medium.fits(a, b), (design, c.cable_id, c.media, a, b)
        checked += 1
    copper = sum(1 for c in build.allocation.cables if c.media_kind in ("dac", "acc", "aoc", "copper"))
    split = sum(1 for c in build.allocation.cables if c.media == "mmf-200g-split")
    assert checked == copper + split
    assert misfits(catalog, build.topology, build.allocation) == ()


def test_a_medium_fits_by_its_ends() -> None:
    """The fit rule on the catalog's parts, both ways round, and a medium without ends (fibre) fitting any cage."""
    media = built("roce-512").design.catalog.media
    twin, nic, qsfp = ("osfp", "finned", 2), ("osfp", "flat", 1), ("qsfp112", None, None)
    assert media["acc-400g"].fits(twin, twin) and not media["acc-400g"].fits(twin, nic)
    assert not media["dac-400g"].fits(nic, twin) and not media["dac-200g"].fits(twin, qsfp)
    assert media["aoc-osfp-2x200g"].fits(twin, ("qsfp56", None, None))
    assert media["aoc-osfp-2x200g"].fits(("qsfp56", None, None), twin)
    assert not media["aoc-osfp-2x200g"].fits(twin, twin)
    assert media["mmf-400g"].ends is None and media["mmf-400g"].fits(nic, qsfp)
    assert media["cat6"].fits(("rj45", None, None), ("rj45", None, None)) and not media["cat6"].fits(qsfp, qsfp)


def test_several_far_ends_share_a_row_cell_by_cell() -> None:
    """A splitter (one twin-port cage to two single-port cages: no bundled design plans one, the catalog has no
    splitter part) is one row: its side's cells list each far end, separated by "; "."""
    from fabric.render.outputs.tables import _side_cells

    ends = (
        CableEnd("gpu001", "A01", 1, "nic0", ("nic0",), (1,), (), "", ""),
        CableEnd("gpu002", "A01", 9, "nic0", ("nic0",), (1,), (), "", ""),
    )
    cells = _side_cells(ends, {"gpu001": "hgx-8gpu", "gpu002": "hgx-8gpu"})
    assert cells[:4] == ("A01; A01", "1; 9", "gpu001; gpu002", "hgx-8gpu; hgx-8gpu")
    assert _side_cells(ends[:1], {"gpu001": "hgx-8gpu"})[:3] == ("A01", 1, "gpu001")


@pytest.mark.parametrize("design", [*BUNDLED, f"sonic-th5-512{AT_800G}"])
def test_every_cables_medium_is_named_by_the_rate_it_runs(design: str) -> None:
    """Media names by their real rate: a medium named `-<n>g` (`aoc-100g`, `mmf-400g`, `mmf-200g-split`) or
    `<k>x<n>g` (a splitter's legs) carries links of n Gb/s. The 100G in-band and lab links take the 100G QSFP28
    AOC/DAC (MFA1A00-C, MCP1600-C), not the HDR 200G MFS1S00-H / MCP1650-H they were planned on."""
    for c in _built(design).allocation.cables:
        rate = re.search(r"(?:-|\dx)(\d+)g(?:-|$)", c.media or "")
        if rate:
            assert int(rate.group(1)) == c.link.speed_gbps, (design, c.cable_id, c.media, c.link.speed_gbps)


def test_a_100g_link_takes_the_100g_parts() -> None:
    build = built("superpod-h100-2su")
    inband = Counter((c.media, c.part[:9]) for c in build.allocation.cables if c.link.speed_gbps == 100)
    assert set(inband) == {("aoc-100g", "MFA1A00-C"), ("dac-100g", "MCP1600-C")}
    assert not [c for c in build.allocation.cables if c.part.startswith(("MFS1S00-H", "MCP1650-H"))]
