"""The built-in catalog: the parts the issue names, their ports after breakout, media choice."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fabric import FabricError, load_spec_text
from fabric.spec.catalog import builtin_catalog, radix, switch_ports
from fabric.spec.schema import CablingPolicy
from fabric.spec.yamlio import parse_yaml
from fabric.topology.media import CablingRules, MediaChooser, length_code
from tests.conftest import REPO

CATALOG = builtin_catalog()
SPEC_DIR = REPO / "fabric" / "spec"


@pytest.mark.parametrize(
    ("model", "speed", "ports", "u"),
    [
        ("qm9700", 400, 64, 1),  # 32 OSFP cages = 64 × NDR 400G
        ("qm9700", 200, 128, 1),  # NDR200 split
        ("q3400", 800, 144, 4),
        ("sn5600", 800, 64, 2),
        ("sn5600", 400, 128, 2),  # 2 × 400G breakout
        ("sn4600c", 100, 64, 1),
    ],
)
def test_switch_radix(model: str, speed: int, ports: int, u: int) -> None:
    switch = CATALOG.switches[model]
    assert radix(switch, speed) == ports
    assert switch.u == u


def test_sn2201_has_48_rj45_and_4_qsfp28() -> None:
    ports = switch_ports(CATALOG.switches["sn2201"], 1)
    assert [p.speed_gbps for p in ports].count(1) == 48
    assert [p.name for p in ports if p.speed_gbps == 100] == ["swp49", "swp50", "swp51", "swp52"]


def test_breakout_names_are_unique_and_linux_friendly() -> None:
    for model in CATALOG.switches.values():
        for group in model.ports:
            for mode in group.modes:
                names = [p.name for p in switch_ports(model, mode.speed_gbps) if p.speed_gbps == mode.speed_gbps]
                assert len(names) == len(set(names))
                assert all(len(n) <= 15 and "/" not in n for n in names)


@pytest.mark.parametrize("node", ["dgx-h100", "dgx-b200"])
def test_dgx_ports(node: str) -> None:
    ports = CATALOG.nodes[node].ports
    assert CATALOG.nodes[node].gpus == 8
    assert sorted(p.rail for p in ports["compute"].port_list()) == list(range(8))
    assert ports["compute"].speed_gbps == 400
    assert {p.cage for p in ports["compute"].port_list()} == {"OSFP1", "OSFP2", "OSFP3", "OSFP4"}
    assert len(ports["storage"].port_list()) == 2
    assert len(ports["inband"].port_list()) == 2
    assert len(ports["bmc"].port_list()) == 1


def test_node_types_the_issue_names_exist() -> None:
    assert {"dgx-h100", "dgx-b200", "hgx-8gpu", "storage-server", "mgmt-host", "ufm-appliance"} <= set(CATALOG.nodes)


def test_every_price_is_marked_a_placeholder() -> None:
    from fabric.spec.catalog import Media, NodeType, SwitchModel

    for model in (SwitchModel, NodeType):
        assert "Placeholder" in (model.model_fields["list_price_usd"].description or "")
    assert "Placeholder" in (Media.model_fields["price_usd"].description or "")


def _chooser(kinds: list[str] | None = None, technology: str = "infiniband") -> MediaChooser:
    rules = CablingRules.resolve(CablingPolicy(media=kinds), CablingPolicy())  # type: ignore[arg-type]
    return MediaChooser(CATALOG.media, rules, technology)


@pytest.mark.parametrize(
    ("speed", "needed", "media", "length"),
    [
        (400, 1.2, "dac-400g", 1.5),
        (400, 4.0, "acc-400g", 4),
        (400, 12.1, "mmf-400g", 15),
        (400, 60, "smf-dr4", 70),
        (200, 2.6, "dac-200g", 3),
        (200, 30, "aoc-200g", 30),
        (400, 150, "smf-fr4", 150),
        # an 800G link takes the media named for 800G (the same MCP4Y10 / MFP7E10 parts), never a -400g one
        (800, 1.2, "dac-800g", 1.5),
        (800, 4.0, "acc-800g", 4),
        (800, 12.1, "mmf-800g", 15),
        (800, 60, "smf-dr4", 70),
    ],
)
def test_media_by_distance(speed: int, needed: float, media: str, length: float) -> None:
    choice = _chooser().choose(speed, needed)
    assert choice is not None and (choice.key, choice.length_m) == (media, length)


def test_forced_media_and_reach() -> None:
    assert _chooser(["mmf"]).choose(400, 1.0).key == "mmf-400g"  # type: ignore[union-attr]
    assert _chooser(["dac"]).choose(400, 2.5) is None
    assert _chooser(["dac", "mmf"]).choose(400, 2.5).key == "mmf-400g"  # type: ignore[union-attr]
    assert _chooser(technology="ethernet").choose(1, 40).key == "cat6"  # type: ignore[union-attr]


def test_length_codes() -> None:
    assert (length_code(0.5), length_code(1.5), length_code(2), length_code(30)) == ("00A", "01A", "002", "030")
    choice = _chooser(["mmf"]).choose(400, 29.0)
    assert choice is not None and choice.part == "MFP7E10-N030"


@pytest.mark.parametrize(
    ("model", "speed", "platform", "first"),
    [
        ("sn5600", 800, "cumulus", ["swp1", "swp2", "swp3"]),
        ("sn5600", 400, "cumulus", ["swp1s0", "swp1s1", "swp2s0"]),
        ("sn5600", 800, "sonic", ["Ethernet0", "Ethernet8", "Ethernet16"]),
        ("sn5600", 400, "sonic", ["Ethernet0", "Ethernet4", "Ethernet8"]),
        ("sn5600", 400, "eos", ["Ethernet1/1", "Ethernet1/5", "Ethernet2/1"]),
        ("sn4600c", 100, "sonic", ["Ethernet0", "Ethernet4", "Ethernet8"]),
        ("sn4600c", 100, "eos", ["Ethernet1/1", "Ethernet2/1", "Ethernet3/1"]),
        ("sn4600c", 100, "frr", ["swp1", "swp2", "swp3"]),
    ],
)
def test_ports_are_named_as_the_platform_names_them(model: str, speed: int, platform: str, first: list[str]) -> None:
    ports = switch_ports(CATALOG.switches[model], speed, platform)
    assert [p.name for p in ports[:3]] == first


def test_sonic_counts_lanes_across_port_groups() -> None:
    names = [p.name for p in switch_ports(CATALOG.switches["sn2201"], 1, "sonic")]
    assert names[:2] == ["Ethernet0", "Ethernet1"] and names[47] == "Ethernet47"
    assert names[48:] == ["Ethernet48", "Ethernet52", "Ethernet56", "Ethernet60"]
    eos = [p.name for p in switch_ports(CATALOG.switches["sn2201"], 1, "eos")]
    assert eos[0] == "Ethernet1" and eos[48] == "Ethernet49/1"


def test_an_sfp28_cage_is_one_lane_so_eos_names_it_ethernet_n() -> None:
    from fabric.render.platforms.eos import eos_speed
    from fabric.spec.catalog import SwitchModel

    model = SwitchModel.model_validate(
        {
            "description": "a fixed 48 x 25G SFP28 + 8 x 100G QSFP28 switch",
            "technology": "ethernet",
            "u": 1,
            "power_w": 400,
            "platform": "eos",
            "ports": [
                {
                    "group": "sfp28",
                    "cages": 48,
                    "connector": "sfp28",
                    "modes": [{"ports": 1, "speed_gbps": 25, "name": "swp{cage}"}],
                },
                {
                    "group": "qsfp28",
                    "cages": 8,
                    "first_cage": 49,
                    "connector": "qsfp28",
                    "modes": [
                        {"ports": 1, "speed_gbps": 100, "name": "swp{cage}"},
                        {"ports": 4, "speed_gbps": 25, "name": "swp{cage}s{sub0}"},
                    ],
                },
            ],
        }
    )
    assert [g.lanes for g in model.ports] == [1, 4]  # from the connector
    ports = switch_ports(model, 25, "eos")
    assert len(ports) == 48 + 8 * 4
    assert [(p.name, eos_speed(p.speed_gbps, p.lanes)) for p in ports[:2]] == [
        ("Ethernet1", "25g"),
        ("Ethernet2", "25g"),
    ]
    assert [(p.name, eos_speed(p.speed_gbps, p.lanes)) for p in ports[48:50]] == [
        ("Ethernet49/1", "25g"),
        ("Ethernet49/2", "25g"),
    ]
    up = [p for p in switch_ports(model, 100, "eos") if p.speed_gbps == 100]
    assert len(up) == 8 and (up[0].name, eos_speed(up[0].speed_gbps, up[0].lanes)) == ("Ethernet49/1", "100g-4")
    big = switch_ports(CATALOG.switches["sn5600"], 800, "eos")
    assert (big[0].name, eos_speed(big[0].speed_gbps, big[0].lanes)) == ("Ethernet1/1", "800g-8")
    half = switch_ports(CATALOG.switches["sn5600"], 400, "eos")
    assert [(p.name, eos_speed(p.speed_gbps, p.lanes)) for p in half[:2]] == [
        ("Ethernet1/1", "400g-4"),
        ("Ethernet1/5", "400g-4"),
    ]


def test_vendor_and_gpu_model_are_names(tmp_path: Path) -> None:
    """They become a NetBox device-type directory and a Slurm `Gres=` token: no `..`, `/` or space."""
    (tmp_path / "parts.yaml").write_text(
        "nodes:\n  n1:\n    description: x\n    vendor: ../../etc\n    gpus: 8\n    gpu_model: h100 Feature=x\n"
        "    u: 2\n    power_w: 100\n    ports:\n      data: {count: 1, name: 'eth{n}', speed_gbps: 100}\n"
    )
    spec = "name: t\ncatalog: [parts.yaml]\nnodes:\n  - {group: g, type: n1, count: 1}\nfabrics: {}\n"
    with pytest.raises(FabricError) as caught:
        load_spec_text(spec, base_dir=tmp_path)
    bad = sorted(f.path for f in caught.value.findings if f.code == "catalog-invalid")
    assert bad == ["nodes.n1.gpu_model", "nodes.n1.vendor"]


_MEDIA = {
    "kind": "dac",
    "description": "x",
    "technologies": ["ethernet"],
    "speeds_gbps": [400],
    "reach_m": 3,
    "lengths_m": [1, 2],
    "part": "P{code}",
}


@pytest.mark.parametrize(
    ("part", "base", "key", "bad"),
    [
        ("media", _MEDIA, "speeds_gbps", [True]),
        ("media", _MEDIA, "speeds_gbps", [10**9]),
        ("media", _MEDIA, "lengths_m", [-1]),
        ("media", _MEDIA, "lengths_m", [1e9]),
        (
            "transceivers",
            {"description": "x", "connector": "osfp", "media_kinds": ["mmf"], "speeds_gbps": [400]},
            "power_w",
            True,
        ),
        ("racks", {"description": "x"}, "u", 1000),
        ("pdus", {"description": "x", "kw": 10}, "kw", 1e12),
    ],
)
def test_part_numbers_are_strict_and_bounded(part: str, base: dict[str, object], key: str, bad: object) -> None:
    """Every number in a part file is a number (not a bool) in range, list entries too."""
    from pydantic import ValidationError

    from fabric.spec.catalog import CatalogFile

    CatalogFile.model_validate({part: {"p1": base}})
    with pytest.raises(ValidationError) as caught:
        CatalogFile.model_validate({part: {"p1": {**base, key: bad}}})
    assert caught.value.error_count() == 1


def test_the_json_catalog_is_the_yaml_one(golden: Callable[[Path, str], None]) -> None:
    """catalog.json, what builtin_catalog reads (fast), is catalog.yaml, what people edit, value for value."""
    data = parse_yaml((SPEC_DIR / "catalog.yaml").read_text(encoding="utf-8"), "catalog.yaml").data
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    assert repr(json.loads(text)) == repr(data)  # lossless: no number key became a string, no 1 became 1.0
    golden(SPEC_DIR / "catalog.json", text)
    assert len(data["switches"]) == len(CATALOG.switches) > 10


def test_a_choosers_kept_options_choose_what_a_fresh_chooser_does() -> None:
    """`choose` keeps the media it scans per speed, cages and kinds: one chooser asked everything twice (the second
    time from what it kept) answers each question as a fresh chooser does, cages and kinds included."""
    twin, flat = ("osfp", "finned", 2), ("osfp", "flat", 1)
    questions = [
        (speed, needed, cages, kinds)
        for speed in (200, 400, 800)
        for needed in (0.5, 1.2, 2.6, 4.0, 12.1, 60.0)
        for cages in ((None, None), (twin, twin), (twin, flat), (flat, flat))
        for kinds in (None, ("mmf", "smf"), ("dac",))
    ]
    kept = _chooser()
    first = [kept.choose(s, n, None, c, k) for s, n, c, k in questions]
    assert [kept.choose(s, n, None, c, k) for s, n, c, k in questions] == first
    assert [_chooser().choose(s, n, None, c, k) for s, n, c, k in questions] == first
    assert len({x.key for x in first if x}) > 5 and None in first  # the questions tell the media apart
