"""The switches and servers AI fabrics are built from: the catalog's Arista, Tomahawk 5, SN5610 and ConnectX-8
parts, and the two example designs that use them (eos-roce-1024 on EOS, sonic-th5-512 on SONiC)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from fabric import render_all
from fabric.spec.catalog import SwitchPortGroup, builtin_catalog, switch_ports
from tests.conftest import built
from tests.live.test_eos_avd import leaf_25g
from tests.support.design_variants import build_data, variant

NEW_SWITCHES = (
    "arista-7060x6-64pe",
    "arista-7808r4",
    "arista-7060dx5-64s",
    "arista-7050sx3-48yc8",
    "edgecore-as9817-64o",
    "sn5610",
)


@pytest.mark.parametrize(
    ("model", "speed", "ports"),
    [
        ("arista-7060x6-64pe", 800, 64),
        ("arista-7060x6-64pe", 400, 128),
        ("arista-7060x6-64pe", 200, 256),
        ("arista-7060x6-64pe", 100, 512),
        ("arista-7808r4", 800, 288),
        ("arista-7060dx5-64s", 400, 64),
        ("arista-7060dx5-64s", 100, 256),
        ("edgecore-as9817-64o", 800, 64),
        ("edgecore-as9817-64o", 400, 128),
        ("sn5610", 400, 128),
    ],
)
def test_port_counts_per_breakout(model: str, speed: int, ports: int) -> None:
    layout = switch_ports(builtin_catalog().switches[model], speed)
    assert sum(1 for p in layout if p.speed_gbps == speed) == ports


def test_new_switches_name_ports_as_their_platform_does() -> None:
    catalog = builtin_catalog()
    assert {catalog.switches[m].platform for m in NEW_SWITCHES} == {"eos", "sonic", "cumulus"}
    eos = switch_ports(catalog.switches["arista-7060x6-64pe"], 400, "eos")
    assert [p.name for p in eos[:3]] == ["Ethernet1/1", "Ethernet1/5", "Ethernet2/1"]
    leaf = switch_ports(catalog.switches["arista-7050sx3-48yc8"], 25, "eos")
    # a single-lane SFP28 cage is EthernetN; the 100G cages follow at 49
    assert leaf[0].name == "Ethernet1" and leaf[47].name == "Ethernet48" and leaf[48].name.startswith("Ethernet49")
    sonic = switch_ports(catalog.switches["edgecore-as9817-64o"], 800, "sonic")
    assert [p.name for p in sonic[:2]] == ["Ethernet0", "Ethernet8"] and sonic[-1].name == "Ethernet504"


def test_tomahawk5_lane_map_is_port_config_ini() -> None:
    """Accton-AS9817-64O/port_config.ini: Ethernet0 sits on ASIC lanes 25-32, Ethernet8 on 9-16, Ethernet256 on 1-8."""
    ports = {p.name: p for p in switch_ports(builtin_catalog().switches["edgecore-as9817-64o"], 800, "sonic")}
    assert (ports["Ethernet0"].asic_lane, ports["Ethernet8"].asic_lane, ports["Ethernet256"].asic_lane) == (25, 9, 1)
    firsts = sorted(p.asic_lane or 0 for p in ports.values())
    assert firsts == list(range(1, 513, 8))  # every one of the 512 SerDes lanes, once
    broken_out = {p.name: p for p in switch_ports(builtin_catalog().switches["edgecore-as9817-64o"], 400, "sonic")}
    assert (broken_out["Ethernet0"].asic_lane, broken_out["Ethernet4"].asic_lane) == (25, 29)


def test_a_lane_map_must_cover_every_cage_once() -> None:
    group: dict[str, Any] = {
        "group": "osfp",
        "connector": "osfp",
        "cages": 2,
        "lanes": 8,
        "modes": [{"ports": 1, "speed_gbps": 800, "name": "swp{cage}"}],
    }
    assert SwitchPortGroup.model_validate({**group, "lane_map": [9, 1]}).lane_map == (9, 1)
    with pytest.raises(ValidationError, match="2 cages"):
        SwitchPortGroup.model_validate({**group, "lane_map": [1]})
    with pytest.raises(ValidationError, match="two cages one lane"):
        SwitchPortGroup.model_validate({**group, "lane_map": [1, 1]})
    with pytest.raises(ValidationError, match="two cages one lane"):
        SwitchPortGroup.model_validate({**group, "lane_map": [1, 5]})  # 8 lanes each: 5 is inside the first


def test_eos_roce_1024_design() -> None:
    """128 HGX B300, each ConnectX-8 2 x 400GbE (one port to each plane): per plane 2 SUs x 8 rails = 16 leaves of
    64 x 400G down + 64 up, 16 x 64 / 128 = 8 spines, 64 / 8 = 8 links from each leaf to each spine of its plane."""
    build = built("eos-roce-1024")
    assert not build.findings, [f.format() for f in build.findings]
    fig = build.figures["compute"]
    assert fig.switches == {"leaf": 32, "spine": 16, "core": 0}
    assert fig.endpoints == 2048 == 128 * 16 and fig.bisection_pct == pytest.approx(100.0) and fig.min_ecmp_width == 64
    links = build.topology.fabrics["compute"].links
    per_pair = Counter((link.a, link.b) for link in links if link.tier == "leaf-spine")
    assert len(per_pair) == 2 * 16 * 8 and set(per_pair.values()) == {8}
    assert {link.speed_gbps for link in links} == {400}
    assert {i.platform for i in build.intents.values()} == {"eos"}
    files = render_all(build)
    assert sum(1 for p in files if p.endswith("/structured-config.yaml")) == 48
    leaf = yaml.safe_load(files["configs/p1-su1-rail0-leaf/structured-config.yaml"])
    used = [i for i in leaf["ethernet_interfaces"] if not i["shutdown"]]
    assert len(used) == 128 and leaf["router_bgp"]["neighbor_interfaces"][0]["peer_group"] == "FABRIC"


def test_sonic_th5_512_design() -> None:
    """64 HGX B300, each ConnectX-8 2 x 400GbE (one port to each plane): per plane 1 SU x 8 rails = 8 leaves of
    64 x 400G down + 64 up, 8 x 64 / 128 = 4 spines; every leaf port a 2 x 400G breakout half of an 800G cage."""
    build = built("sonic-th5-512")
    assert not build.findings, [f.format() for f in build.findings]
    fig = build.figures["compute"]
    assert fig.switches == {"leaf": 16, "spine": 8, "core": 0} and fig.endpoints == 1024 == 64 * 16
    assert fig.bisection_pct == pytest.approx(100.0)
    planes = Counter(link.plane for link in build.topology.fabrics["compute"].links if link.a == "gpu001")
    assert planes == {1: 8, 2: 8}
    db = json.loads(render_all(build)["configs/p1-su1-rail0-leaf/config_db.json"])
    assert db["DEVICE_METADATA"]["localhost"]["hwsku"] == "Accton-AS9817-64O"
    assert db["PORT"]["Ethernet0"]["lanes"] == "25,26,27,28" and db["PORT"]["Ethernet4"]["lanes"] == "29,30,31,32"
    assert db["PORT"]["Ethernet8"]["lanes"] == "9,10,11,12"
    assert db["PORT"]["Ethernet0"]["speed"] == "400000" and len(db["PORT"]) == 128
    lanes = sorted(int(lane) for port in db["PORT"].values() for lane in port["lanes"].split(","))
    assert lanes == list(range(1, 513))


def test_dgx_b300_twin_planar_on_sn5610() -> None:
    """RA-11337's twin-planar Spectrum-X SU: 64 DGX B300, each GPU 2 x 400G to two planes; 16 leaves, 8 spines."""
    data: dict[str, Any] = {
        "name": "b300-su",
        "racks": {"rows": ["A", "B"], "rack_units": 48, "power_kw": 60},
        "nodes": [{"group": "gpu", "type": "dgx-b300", "count": 64, "per_rack": 4, "name": "dgx{index:03d}"}],
        "fabrics": {
            "compute": {
                "technology": "ethernet",
                "topology": {"kind": "spine-leaf", "rail_optimized": True, "scalable_unit": 64, "planes": 2},
                "switches": {"leaf": "sn5610", "spine": "sn5610"},
                "speed_gbps": 400,
                "oversubscription": "1:1",
                "attach": [{"group": "gpu", "ports": "compute"}],
            }
        },
        "addressing": {
            "loopback": "10.0.0.0/24",
            "p2p": "10.1.0.0/20",
            "servers": "10.2.0.0/18",
            "mgmt": "192.168.0.0/24",
        },
        "asn": {"scheme": "rfc7938", "spine": 65000, "leaf_start": 65100},
    }
    build = build_data(data)
    assert not build.errors, [f.format() for f in build.errors]
    fig = build.figures["compute"]
    assert fig.switches == {"leaf": 16, "spine": 8, "core": 0}
    links = build.topology.fabrics["compute"].links
    planes = {link.a_port: link.plane for link in links if link.a == "dgx001"}
    assert len(planes) == 16
    assert {p for port, p in planes.items() if port.endswith("a")} == {1}
    assert {p for port, p in planes.items() if port.endswith("b")} == {2}


def test_a_25g_sfp28_leaf_on_eos_names_ports_by_cage(tmp_path: Path) -> None:
    """The new user's case: a 48 x 25G + 8 x 100G leaf; a single-lane SFP28 cage is EthernetN at `speed 25g`."""
    build = leaf_25g(tmp_path)
    assert not build.errors, [f.format() for f in build.errors]
    text = render_all(build)["configs/leaf01/startup-config"].decode()
    first = text.split("interface Ethernet1\n", 1)[1].split("\n!\n", 1)[0]
    assert "   speed 25g\n" in first + "\n" and "description srv" in first
    assert "interface Ethernet1/1\n" not in text and text.count("   speed 25g\n") == 40


def test_modular_7808r4_spines_under_7060x6_leaves() -> None:
    """2,048 GPUs, each ConnectX-8 2 x 400GbE over 2 planes: per plane 32 rail leaves of 64 x 400G down + 64 up under
    the fewest 576 x 400G (288 x 800G) chassis that take 32 x 64 uplinks and divide 64: 4, 512 ports used each,
    16 links from each leaf to each; 64 leaves and 8 spines in all."""

    def bigger(data: dict[str, Any]) -> None:
        data["nodes"][0]["count"] = 256
        data["racks"]["rows"] = ["A", "B", "C", "D", "E", "F", "G", "H"]
        data["fabrics"]["compute"]["switches"]["spine"] = "arista-7808r4"
        data["addressing"].update(servers="10.2.0.0/17", mgmt="192.168.0.0/22")

    build = variant("eos-roce-1024", bigger)
    assert not build.errors, [f.format() for f in build.errors]
    fig = build.figures["compute"]
    assert fig.switches == {"leaf": 64, "spine": 8, "core": 0} and fig.endpoints == 4096 == 256 * 16
    assert fig.bisection_pct == pytest.approx(100.0)
    spine = build.intents["p1-spine01"]
    assert len(spine.ports) == 576 and len(spine.used_ports) == 512
    links = build.topology.fabrics["compute"].links
    assert set(Counter((link.a, link.b) for link in links if link.tier == "leaf-spine").values()) == {16}
