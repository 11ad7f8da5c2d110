"""The physical BOM counts (fabric/allocation/optics.py): transceivers chosen by the cage they plug into, fibres per
link, twin-port copper per cage pair, and the finding for an optical end no transceiver fits. Counts by hand."""

from __future__ import annotations

from collections import Counter

import pytest

from fabric.allocation.optics import optics, transceiver_for
from fabric.costing import costing
from fabric.plan.candidates import Request, enumerate_candidates
from fabric.plan.evaluate import evaluate
from fabric.spec.catalog import builtin_catalog
from tests.conftest import built
from tests.support.design_variants import cx8_at_800g

CATALOG = builtin_catalog()


def _bom(design: str) -> dict[tuple[str, str, str, str], int]:
    out: dict[tuple[str, str, str, str], int] = {}
    for line in costing(built(design)).lines:
        key = (
            line.category,
            line.model,
            line.fabric,
            line.detail.split()[0] if line.category == "cable" else line.detail,
        )
        out[key] = out.get(key, 0) + line.count
    return out


def _cables(design: str, medium: str, fabric: str = "compute") -> int:
    return sum(
        n for (cat, _, f, detail), n in _bom(design).items() if cat == "cable" and f == fabric and detail == medium
    )


# --------------------------------------------------------------------------------------------- which part fits


@pytest.mark.parametrize(
    ("cage", "kind", "speed", "part"),
    [
        # switch OSFP cage (twin-port, finned): the switch part, MMA4Z00-NS / MMS4X00-NM (LinkX overview: "Twin-port
        # OSFP IHS (finned) … switches only")
        (("osfp", "finned", 2), "mmf", 400, "MMA4Z00-NS"),
        (("osfp", "finned", 2), "mmf", 800, "MMA4Z00-NS"),
        (("osfp", "finned", 2), "smf", 400, "MMS4X00-NM"),
        # DGX H100/H200 system cage (twin-port, flat top, "Cedar7"): the flat-top twin-port part
        (("osfp", "flat", 2), "mmf", 400, "MMA4Z00-NS-FLT"),
        (("osfp", "flat", 2), "smf", 400, "MMS4X00-NS-FLT"),
        # ConnectX-7 OSFP card (single-port, flat top, riding heat sink): MMA4Z00-NS400 / MMS4X00-NS400 datasheets
        (("osfp", "flat", 1), "mmf", 400, "MMA4Z00-NS400"),
        (("osfp", "flat", 1), "smf", 400, "MMS4X00-NS400"),
        # QSFP112 ConnectX-7 card: the QSFP112 part (MMA1Z00-NS400 datasheet)
        (("qsfp112", None, None), "mmf", 400, "MMA1Z00-NS400"),
        # a single-port flat OSFP 400G module carries no 800G link; no QSFP-DD optic is in the catalog
        (("osfp", "flat", 1), "mmf", 800, None),
        (("qsfp-dd", None, 1), "mmf", 400, None),
        # a finned module does not fit a flat cage, nor a twin-port module a single-port cage: the flat parts differ
        (("osfp", "flat", 2), "mmf", 800, "MMA4Z00-NS-FLT"),
    ],
)
def test_the_transceiver_is_the_one_that_fits_the_cage(
    cage: tuple[str, str | None, int | None], kind: str, speed: int, part: str | None
) -> None:
    found = transceiver_for(CATALOG, cage, kind, speed)
    assert (found[1].part if found else None) == part
    if found:
        top, ports = cage[1], cage[2]
        assert top is None or found[1].top == top
        assert ports is None or found[1].ports_per_cage == ports


# --------------------------------------------------------------------------------------------- bundled designs


def test_roce_512_bom_by_hand() -> None:
    """roce-512: 64 hgx-8gpu (8 single-port 400G ConnectX-7 OSFP NICs each), 8 rail leaves and 4 spines of SN5600
    at 2 x 400G per cage. Node-leaf: 512 links, all on multimode fibre: the twin-port OSFP ACC (both ends finned
    twin-port plugs, for switches) does not go into a ConnectX-7 single-port flat-top cage, so gpu064 nic7 (5 m,
    on an ACC before) takes fibre like gpu063 nic7, which shares its leaf cage (su1-rail7-leaf swp32: one module).
    Leaf-spine: 8 leaves x 64 up links = 512 links on copper, the two 400G halves of each leaf up cage to the same
    spine cage, so 256 cage pairs: 256 twin-port DAC/ACC (not 512).
    Optics: node side one single-port flat-top SR4 per NIC (512); switch side one finned twin-port per used leaf
    down cage: 512 node links fill 256 cages. Fibres: one MPO-12/APC per 400G link: 512."""
    bom = _bom("roce-512")
    assert bom[("transceiver", "osfp-400g-sr4-flat", "compute", "node side")] == 512
    assert bom[("transceiver", "osfp-2x400g-sr8", "compute", "switch side")] == 256
    assert ("transceiver", "osfp-2x400g-sr8", "compute", "node side") not in bom  # the switch part is not the NIC's
    assert _cables("roce-512", "mmf-400g") == 512
    assert _cables("roce-512", "dac-400g") + _cables("roce-512", "acc-400g") == 256
    spine = [
        c for c in built("roce-512").allocation.cables if c.link.tier == "leaf-spine" and c.media_kind in ("dac", "acc")
    ]
    assert len(spine) == 512  # the logical links stay 512: only the cables to order halve


def test_sonic_th5_512_bom_by_hand() -> None:
    """sonic-th5-512: 64 HGX B300 (8 ConnectX-8, each 2 x 400GbE in one twin-port flat-top OSFP cage), two planes of
    8 rail leaves and 4 spines of AS9817-64O, every port at 400G. Node-leaf: 64 x 16 = 1024 links, all on fibre (no
    flat-top copper in the catalog), one MPO-12/APC each (a 400G link is one 4-lane link): 1024 fibres; node side one
    flat-top twin-port module per ConnectX-8 cage, 64 x 8 = 512; leaf down side one finned twin-port module per two
    node links, 1024 / 2 = 512. Leaf-spine: 1024 links (16 leaves x 64 up), two per cage pair; by distance 312
    twin-port DAC and 32 ACC cables (688 links), the other 336 links on fibre (one each) in 168 cage pairs, two
    switch modules each: 336. Switch side 512 + 336 = 848; fibres 1024 + 336 = 1360. At 800G (the design as it was,
    one 800GbE port per ConnectX-8) the node cage had no module (`optics-missing`) and the firmware no such speed
    (`nic-port-speed`)."""
    bom = _bom("sonic-th5-512")
    assert _cables("sonic-th5-512", "mmf-400g") == 1360 == 1024 + 336
    assert _cables("sonic-th5-512", "dac-400g") == 312
    assert _cables("sonic-th5-512", "acc-400g") == 32
    assert (312 + 32) * 2 + 336 == 1024
    assert bom[("transceiver", "osfp-2x400g-sr8", "compute", "switch side")] == 848 == 512 + 336
    assert bom[("transceiver", "osfp-2x400g-sr8-flat", "compute", "node side")] == 512 == 64 * 8
    assert sum(n for (cat, _, _, side), n in bom.items() if cat == "transceiver" and side == "node side") == 512
    links = [c for c in built("sonic-th5-512").allocation.cables if c.media_kind == "mmf"]
    assert len(links) == 1360 and {c.link.speed_gbps for c in links} == {400}
    assert not built("sonic-th5-512").findings
    codes = Counter(f.code for f in cx8_at_800g("sonic-th5-512").findings)
    assert codes["optics-missing"] == 1 and codes["nic-port-speed"] == 1


def test_4su_superpod_bom_is_nvidias_with_the_right_part_on_each_side() -> None:
    """RA-11333-001 Appendix A (4 SU, 127 DGX H100): 1536 switch-side and 508 node-side OSFP modules and 2040 fibres
    (1016 node-leaf + 1024 leaf-spine NDR 400G links, one MPO-12/APC each: a 400G link is one 4-lane link). The
    switch side takes the finned twin-port module, the DGX cages (127 x 4 twin-port flat-top cages) the flat one;
    the storage servers' single-port ConnectX-7 OSFP cards the single-port flat-top module (16 x 2)."""
    bom = _bom("superpod-h100-4su")
    assert bom[("transceiver", "osfp-2x400g-sr8", "compute", "switch side")] == 1536
    assert bom[("transceiver", "osfp-2x400g-sr8-flat", "compute", "node side")] == 508 == 127 * 4
    assert ("transceiver", "osfp-2x400g-sr8", "compute", "node side") not in bom
    assert bom[("transceiver", "osfp-400g-sr4-flat", "storage", "node side")] == 32
    assert _cables("superpod-h100-4su", "mmf-400g") == 2040
    assert _cables("superpod-h100-4su", "mmf-200g-split") == 4  # the UFM links (RA table 8: 980-9I557)
    assert bom[("transceiver", "osfp-400g-sr4-flat", "compute", "node side")] == 4  # 980-9I51S-00NS00


def test_every_optical_end_of_the_bundled_designs_has_a_transceiver() -> None:
    for design in ("roce-512", "superpod-h100-4su", "gb200-nvl72-1su", "sonic-th5-512", "eos-roce-1024"):
        build = built(design)
        assert optics(build.design.catalog, build.topology, build.allocation).unmatched == ()
        assert not [f for f in build.findings if f.code == "optics-missing"]
        assert costing(build).unmatched_optics == ()
    # known gap: the hgx-b300's ConnectX-8 cage (single-port flat-top OSFP) at 800G (sonic-th5-512 as it was) has
    # no catalog module; the switch's finned twin-port one went there before. Reported, never a silent zero.
    build = cx8_at_800g("sonic-th5-512")
    unmatched = optics(build.design.catalog, build.topology, build.allocation).unmatched
    assert [(u.device_model, u.cage, u.kind, u.speed_gbps, u.ends) for u in unmatched] == [
        ("hgx-b300", ("osfp", "flat", 1), "mmf", 800, 512)
    ]
    assert len([f for f in build.findings if f.code == "optics-missing"]) == 1


# --------------------------------------------------------------------------------------------- no optic: a finding


def test_qsfp_dd_cages_without_an_optic_are_a_finding_and_fail_the_plan_candidate() -> None:
    """The Arista 7060DX5-64S has QSFP-DD cages and the catalog no QSFP-DD 400G optic: its optical link ends get
    no transceiver. That is the finding optics-missing (not a BOM with zero optics), and `fabric plan` rules the
    candidate out."""
    request = Request(0, nodes=("dgx-h200",), technologies=("ethernet",))
    candidate = next(
        c
        for c in enumerate_candidates(CATALOG, request)
        if c.switch == "arista-7060dx5-64s" and c.tiers == 2 and c.rail_optimized
    )
    outcome = evaluate(candidate, 256)
    assert not outcome.ok
    assert outcome.ruling.startswith("optics-missing: ")
    assert "arista-7060dx5-64s" in outcome.ruling and "qsfp-dd" in outcome.ruling


def test_connectx8_runs_no_800gbe_on_one_port() -> None:
    """ConnectX-8 firmware release notes v40.44.0208: "supports 800Gb/s or XDR IB or 2 x 400GbE link speeds. Note:
    800GbE link speed is not supported on a single port" (catalog hgx-b300 `ethernet_max_gbps: 400`). The bundled
    Ethernet designs on HGX B300 as they were (hgx-b300, every node link at 800G): one `nic-port-speed` warning each,
    with the count; as they are (2 x 400GbE per ConnectX-8) none, nor a design on ConnectX-7 (roce-512, 400G)."""
    for design, ports in (("sonic-th5-512", 512), ("eos-roce-1024", 1024)):
        assert not [f for f in built(design).findings if f.code == "nic-port-speed"]
        found = [f for f in cx8_at_800g(design).findings if f.code == "nic-port-speed"]
        assert len(found) == 1, design
        assert found[0].message.startswith(f"{ports} hgx-b300 port(s) (e.g. gpu001 cx8-0) are planned at 800G")
    assert not [f for f in built("roce-512").findings if f.code == "nic-port-speed"]


def test_the_optics_of_an_allocation_made_from_cables_already_laid_are_found_again() -> None:
    """The optics are kept per cables object with its catalog and topology: an allocation made from cables already
    laid (`allocate(..., laid)`) finds them; another topology with the same cables does not."""
    from dataclasses import replace

    from fabric.allocation.allocate import Allocation, allocate, lay_cables
    from fabric.plan.document import spec_yaml
    from fabric.spec.loader import load_spec_text
    from fabric.topology.build import build_topology

    c = enumerate_candidates(CATALOG, Request(256, nodes=("dgx-h100",), switches=("qm9700",)))[0]
    design = load_spec_text(spec_yaml(c, 256, CATALOG), "c.yaml")
    topology = build_topology(design)
    laid = lay_cables(design, topology)
    first = optics(CATALOG, topology, Allocation(laid[0], (), (), ()))
    full = allocate(design, topology, laid)
    assert full.cables is laid[0] and optics(CATALOG, topology, full) is first
    assert full == allocate(design, topology)  # the same allocation as laying the cables again
    other = replace(topology)
    assert optics(CATALOG, other, full) is not first and optics(CATALOG, other, full) == first
