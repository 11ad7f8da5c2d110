"""Spec models: ratios, templates, defaults and what one field can tell on its own."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from fabric.spec.schema import Fabric, NodeGroup, Spec, format_ratio, parse_ratio

FABRIC = {"technology": "infiniband", "topology": {"kind": "fat-tree"}, "switches": {"leaf": "qm9700"}}


@pytest.mark.parametrize(("text", "value"), [("1:1", 1.0), ("4:3", 4 / 3), (" 3 : 1 ", 3.0), (2, 2.0), ("1.5:1", 1.5)])
def test_parse_ratio(text: object, value: float) -> None:
    assert parse_ratio(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["1-1", "0:1", "a:b", -1, True])
def test_bad_ratios(text: object) -> None:
    with pytest.raises(ValueError):
        parse_ratio(text)


def test_format_ratio() -> None:
    assert [format_ratio(v) for v in (1.0, 4 / 3, 9 / 7, 3.0, 1.0156)] == ["1:1", "4:3", "9:7", "3:1", "1.02:1"]


def test_oversubscription_forms() -> None:
    assert Fabric.model_validate({**FABRIC, "oversubscription": "2:1"}).oversubscription.spine == 2.0
    layered = Fabric.model_validate({**FABRIC, "oversubscription": {"leaf": "4:3"}})
    assert (layered.oversubscription.leaf, layered.oversubscription.spine) == (pytest.approx(4 / 3), 1.0)


def test_switch_choice_forms() -> None:
    ethernet = {**FABRIC, "technology": "ethernet", "platform": "cumulus"}
    fabric = Fabric.model_validate(
        {**ethernet, "switches": {"leaf": "sn4600c", "spine": {"model": "sn5600", "platform": "sonic"}}}
    )
    assert fabric.switches.for_layer("leaf").model == "sn4600c"
    assert fabric.switches.for_layer("spine").platform == "sonic"
    assert fabric.switches.for_layer("core").model == "sn5600"  # core defaults to the spine model
    assert fabric.platform_of("spine", "frr") == "sonic"  # the layer's platform wins
    assert fabric.platform_of("leaf", "frr") == "cumulus"  # then the fabric's
    assert Fabric.model_validate({**FABRIC, "technology": "ethernet"}).platform_of("leaf", "frr") == "frr"


def test_models_are_frozen_and_strict() -> None:
    group = NodeGroup(group="gpu", type="dgx-h100", count=4)
    with pytest.raises(ValidationError):
        group.count = 5  # type: ignore[misc]
    with pytest.raises(ValidationError):
        NodeGroup.model_validate({"group": "gpu", "type": "dgx-h100", "count": 4, "colour": "green"})


def test_technology_specific_fields() -> None:
    with pytest.raises(ValidationError, match="Ethernet fabrics only"):
        Fabric.model_validate({**FABRIC, "qos": {}})
    with pytest.raises(ValidationError, match="InfiniBand fabrics only"):
        Fabric.model_validate({**FABRIC, "technology": "ethernet", "infiniband": {}})


def test_later_issue_fields_validate() -> None:
    spec = Spec.model_validate(
        {
            "name": "x",
            "nodes": [{"group": "gpu", "type": "dgx-h100", "count": 1}],
            "fabrics": {
                "compute": {
                    **FABRIC,
                    "infiniband": {"partitions": [{"name": "p", "pkey": 0x10}], "sm": {"hosts": ["gpu001"]}},
                },
                "roce": {
                    "role": "compute",
                    "technology": "ethernet",
                    "topology": {"kind": "spine-leaf"},
                    "switches": {"leaf": {"model": "sn5600", "platform": "sonic"}},
                    "qos": {"ecn_min_kb": 100},
                    "routing": {"bgp_unnumbered": True},
                    "mtu": 9216,
                },
            },
            "management": {"ntp": ["10.0.0.1"], "snmp_community": {"env": "SNMP_RO"}},
        }
    )
    assert spec.fabrics["roce"].qos is not None and spec.fabrics["roce"].qos.roce_dscp == 26
    assert spec.fabric_role("roce") == "compute"
    with pytest.raises(ValidationError, match="exactly one"):
        Spec.model_validate({**spec.model_dump(mode="json"), "management": {"snmp_community": {}}})


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("subnet_prefix", "0xfe80", "16 hex digits"), ("routing_engine", ["ftreee"], "unknown routing engine")],
)
def test_infiniband_settings(field: str, value: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Fabric.model_validate({**FABRIC, "infiniband": {field: value}})
