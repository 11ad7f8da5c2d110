"""Optical signalling (issue 25): both transceivers of an optical link put one lane rate on the fibre, and each runs
its cage's electrical lanes (catalog transceivers `lane_gbps`, `host_lane_gbps`; fabric/allocation/optics.py,
`unlinkable`; the error `optics-signalling`). A table of cases from NVIDIA LinkX documents, each with its source; the
old GB200 in-band mistake (a 100G QSFP28 host on an SN5600 cage) as a golden finding (tests/broken/
optics-signalling.yaml); and no bundled design with such a link."""

from __future__ import annotations

import pytest

from fabric.allocation.optics import link_rate, signalling_meets, unlinkable
from fabric.spec.catalog import Transceiver, builtin_catalog
from tests.conftest import DESIGNS, built
from tests.support.design_variants import with_hdr_ufm

LINKX_100G_PAM4 = "https://docs.nvidia.com/networking/display/400g100gpam4ovpub/linkx-100g-pam4-product-line-overview"
MMA4Z00_NS = "https://docs.nvidia.com/networking/display/800GMMA4Z00NS/Overview"
MMA4Z00_NS400 = "https://docs.nvidia.com/networking/display/MMA4Z00NS400T/Connectivity+Scenarios"
MMA1Z00_NS400 = "https://docs.nvidia.com/networking/display/MMA1Z00NS400T/Overview"


def _part(number: str) -> Transceiver:
    return next(t for t in builtin_catalog().transceivers.values() if t.part == number)


# (a part, its cage's native lane rate, b part, its cage's, links?, source)
CASES = [
    # switch to switch at 400G (and 800G): twin-port 2 x SR4 on both ends, 100G-PAM4
    ("MMA4Z00-NS", 100, "MMA4Z00-NS", 100, True, MMA4Z00_NS),
    # a 100G QSFP28 SR4 host (4 x 25G NRZ) on an SN5600 cage with the twin-port module (100G-PAM4 only): the old
    # GB200 in-band mistake; the link would run 25G lanes, which the twin-port module does not
    ("MMA1B00-C100D", 25, "MMA4Z00-NS", 100, False, MMA4Z00_NS),
    # HDR (50G-PAM4) to NDR (100G-PAM4): "cannot be directly linked ... cannot downshift"
    ("MMA1T00-HS", 50, "MMA4Z00-NS", 100, False, LINKX_100G_PAM4),
    # NDR200 (ConnectX-7 at 2 x 100G-PAM4) on the single-port flat-top module, 1:2 splitter fibre MFP7E20, to the
    # switch's twin-port module (the UFM's link in the DGX SuperPOD H100 RA)
    ("MMA4Z00-NS400", 100, "MMA4Z00-NS", 100, True, MMA4Z00_NS400),
    # QSFP112 400G SR4 (ConnectX-7/BlueField-3) to the switch's twin-port module
    ("MMA1Z00-NS400", 100, "MMA4Z00-NS", 100, True, MMA1Z00_NS400),
    # HDR to HDR: both 50G-PAM4
    ("MMA1T00-HS", 50, "MMA1T00-HS", 50, True, LINKX_100G_PAM4),
    # a DGX H100 at NDR on an XDR cage (200G lanes) with the twin-port NDR module, and two XDR cages with NDR
    # modules: the faster cage goes down to the modules' 100G-PAM4 (the model's rule: the Q3400's 400G mode)
    ("MMA4Z00-NS-FLT", 100, "MMA4Z00-NS", 200, True, MMA4Z00_NS),
    ("MMA4Z00-NS", 200, "MMA4Z00-NS", 200, True, MMA4Z00_NS),
    # a 100G-PAM4 module in a cage of 50G lanes (an HDR port) cannot go up
    ("MMA4Z00-NS400", 50, "MMA4Z00-NS", 100, False, LINKX_100G_PAM4),
    # a gearbox: 100G DR1 QSFP28 (4 x 25G NRZ to the cage, one 100G-PAM4 lambda) to a DR8 twin-port lane
    # (catalog `unverified`: 100GBASE-DR, no datasheet read); not in a cage of 50G lanes, nor to a 25G SR4 optic
    ("MMS1V00-WM", 25, "MMS4X00-NM", 100, True, "IEEE 802.3 100GBASE-DR (unverified)"),
    ("MMS1V00-WM", 50, "MMS4X00-NM", 100, False, "IEEE 802.3 100GBASE-DR (unverified)"),
    ("MMS1V00-WM", 25, "MMA1B00-C100D", 25, False, "IEEE 802.3 100GBASE-DR (unverified)"),
]


@pytest.mark.parametrize(("a", "a_lanes", "b", "b_lanes", "links", "source"), CASES)
def test_compatibility_table(a: str, a_lanes: int, b: str, b_lanes: int, links: bool, source: str) -> None:
    assert source
    assert signalling_meets(_part(a), a_lanes, _part(b), b_lanes) is links
    assert signalling_meets(_part(b), b_lanes, _part(a), a_lanes) is links  # symmetric
    assert (link_rate(_part(a), a_lanes, _part(b), b_lanes) in (25, 50, 100)) is links


def test_every_bundled_transceiver_declares_its_lane_rates() -> None:
    for key, part in builtin_catalog().transceivers.items():
        assert part.lane_gbps, key


def test_the_old_gb200_mistake_is_an_error_naming_both_ends() -> None:
    """tests/broken/optics-signalling.yaml: 100G QSFP28 control-plane hosts on SN5600 leaves (golden findings in
    its .txt); here the parts and rates of the finding's ends."""
    from fabric.pipeline import build_fabric

    build = build_fabric(DESIGNS.parent / "tests" / "broken" / "optics-signalling.yaml")
    (bad,) = unlinkable(build.design.catalog, build.topology, build.allocation)
    assert bad.links == 4
    assert (bad.a.part, bad.a.native, bad.b.part, bad.b.native) == ("MMA1B00-C100D", 25, "MMA4Z00-NS", 100)
    assert bad.why == "MMA1B00-C100D runs 25G lanes on the fibre, MMA4Z00-NS 100G"
    errors = [f for f in build.findings if f.code == "optics-signalling"]
    assert len(errors) == 1 and errors[0].severity.name == "ERROR"
    assert "cage 1" in errors[0].message and "MMA1B00-C100D" in errors[0].message


def test_an_hdr_port_on_an_ndr_module_is_an_error() -> None:
    build = with_hdr_ufm()
    found = unlinkable(build.design.catalog, build.topology, build.allocation)
    assert found and {(u.a.part, u.b.part) for u in found} == {("MMA1T00-HS", "MMA4Z00-NS")}


@pytest.mark.parametrize("design", sorted(p.stem for p in DESIGNS.glob("*.yaml")))
def test_no_bundled_design_has_an_unlinkable_optical_link(design: str) -> None:
    build = built(design)
    assert unlinkable(build.design.catalog, build.topology, build.allocation) == ()
    assert not [f for f in build.findings if f.code == "optics-signalling"]
