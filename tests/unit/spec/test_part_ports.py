"""Part-file consistency (issue 24): a switch model names every port of a mode apart, in the catalog's names and in
every platform's; a node type names every port once. Violations are `catalog-duplicate-port` findings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabric import FabricError, load_spec_text
from fabric.spec.catalog import (
    NodeType,
    SwitchModel,
    builtin_catalog,
    node_port_clashes,
    port_candidates,
    switch_port_clashes,
    switch_ports,
)
from fabric.spec.platforms import platform_names

CATALOG = builtin_catalog()


def _switch(*groups: dict[str, Any], platform: str = "cumulus") -> SwitchModel:
    return SwitchModel.model_validate(
        {"description": "t", "technology": "ethernet", "u": 1, "power_w": 1, "platform": platform, "ports": groups}
    )


def _node(**groups: dict[str, Any]) -> NodeType:
    return NodeType.model_validate({"description": "t", "u": 1, "power_w": 1, "ports": groups})


def _group(name: str, template: str, *, cages: int = 4, ports: int = 1, first: int = 1) -> dict[str, Any]:
    return {
        "group": name,
        "cages": cages,
        "first_cage": first,
        "connector": "qsfp28",
        "modes": [{"ports": 1, "speed_gbps": 100, "name": "swp{cage}"}]
        if ports == 1 and template == "swp{cage}"
        else [{"ports": ports, "speed_gbps": 100 // ports, "name": template}],
    }


@pytest.mark.parametrize("model", sorted(CATALOG.switches))
def test_every_bundled_switch_names_its_ports_apart_in_every_platform(model: str) -> None:
    switch = CATALOG.switches[model]
    assert switch_port_clashes(switch) == []
    platforms = (None, *platform_names()) if switch.technology == "ethernet" else (None,)
    speeds = {None, *(m.speed_gbps for g in switch.ports for m in g.modes)}
    for platform in platforms:  # the check agrees with the ports the topology uses, speed by speed
        for speed in speeds:
            names = [p.name for p in switch_ports(switch, speed, platform)]
            assert len(names) == len(set(names)), (model, platform, speed)
        assert port_candidates(switch, platform)


@pytest.mark.parametrize("node", sorted(CATALOG.nodes))
def test_every_bundled_node_type_names_each_port_once(node: str) -> None:
    assert node_port_clashes(CATALOG.nodes[node]) == []
    names = [p.name for g in CATALOG.nodes[node].ports.values() for p in g.port_list()]
    assert len(names) == len(set(names))


def test_a_template_without_the_cage_number_clashes() -> None:
    (clash,) = switch_port_clashes(_switch(_group("p", "swp1")))
    assert clash.path == ("ports", 0, "modes", 0, "name")
    assert "two ports `swp1`" in clash.message and "`{cage}` or `{n}`" in clash.hint


def test_a_breakout_without_the_sub_port_clashes() -> None:
    (clash,) = switch_port_clashes(_switch(_group("p", "swp{cage}s", ports=4)))
    assert "4 x 25G" in clash.message and "`swp1s`" in clash.message
    assert "`{sub}` or `{sub0}`" in clash.hint


@pytest.mark.parametrize("template", ["swp{cage}s{sub0}", "swp{cage}s{sub}", "swp{n}"])
def test_a_breakout_naming_its_sub_ports_is_fine(template: str) -> None:
    assert switch_port_clashes(_switch(_group("p", template, ports=4))) == []


def test_two_groups_with_one_template_clash() -> None:
    (clash,) = switch_port_clashes(_switch(_group("a", "swp{cage}"), _group("b", "swp{cage}", first=3)))
    assert clash.path == ("ports", 1, "group") and "`a` and `b`" in clash.message and "`swp3`" in clash.message
    assert "as " not in clash.message  # the catalog's own names: no platform named


def test_groups_numbering_cages_alike_clash_as_eos_names_them() -> None:
    model = _switch(_group("a", "swp{cage}"), _group("b", "sfp{cage}"), platform="eos")
    (clash,) = switch_port_clashes(model)
    assert "as eos names them" in clash.message and "`Ethernet1/1`" in clash.message
    assert switch_port_clashes(_switch(_group("a", "swp{cage}"), _group("b", "sfp{cage}", first=5))) == []


def test_a_node_port_named_twice_clashes() -> None:
    (clash,) = node_port_clashes(_node(data={"speed_gbps": 100, "ports": [{"name": "eth1"}, {"name": "eth1"}]}))
    assert clash.path == ("ports", "data", "ports", 1, "name") and "`eth1` twice" in clash.message


def test_a_node_port_in_two_groups_clashes() -> None:
    node = _node(
        data={"speed_gbps": 100, "ports": [{"name": "eth1"}]}, bmc={"speed_gbps": 1, "ports": [{"name": "eth1"}]}
    )
    (clash,) = node_port_clashes(node)
    assert "`data` and `bmc`" in clash.message


def test_a_counted_template_without_n_clashes_once() -> None:
    (clash,) = node_port_clashes(_node(data={"speed_gbps": 100, "count": 8, "name": "eth"}))
    assert clash.path == ("ports", "data", "name") and "`{n}`" in clash.hint
    assert node_port_clashes(_node(data={"speed_gbps": 100, "count": 8, "name": "eth{n}"})) == []


def test_a_part_file_clash_is_a_finding_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "parts.yaml").write_text(
        "nodes:\n  twice:\n    description: t\n    u: 1\n    power_w: 1\n    ports:\n      data:\n"
        "        speed_gbps: 100\n        ports: [{name: eth1}, {name: eth1}]\n"
    )
    spec = (
        "name: t\ncatalog: [parts.yaml]\nnodes:\n  - {group: s, type: twice, count: 2, name: 's{index}'}\n"
        "fabrics:\n  compute:\n    technology: ethernet\n    topology: {kind: clos}\n    switches: {leaf: sn2201}\n"
        "    attach: [{group: s, ports: data}]\n"
    )
    with pytest.raises(FabricError) as err:
        load_spec_text(spec, base_dir=tmp_path)
    (finding,) = [f for f in err.value.findings if f.severity.name == "ERROR"]
    assert finding.code == "catalog-duplicate-port" and finding.line == 9 and finding.file.endswith("parts.yaml")
    assert "node type `twice`" in finding.message
