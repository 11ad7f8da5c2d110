"""Each bundled design's Ethernet switch intent, golden as YAML: a logic change shows here, apart from the
template changes that show only in the rendered configs (AVD's structured configs beside its CLI configs).

`tests/golden/<design>/intent/<switch>.yaml` holds a switch's `DeviceIntent`, every dataclass as a mapping of
its fields (sorted keys), tuples as lists, addresses and networks as their text. Designs of up to
`ALL_SWITCHES` Ethernet switches have every switch golden; bigger ones a representative set per fabric: the
first two leaves (an MLAG pair where the fabric bonds), the first spine and the first super-spine (core).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric.intent.ethernet.model import DeviceIntent
from fabric.model.kinds import Layer
from fabric.pipeline import Build
from tests.conftest import DESIGNS, REPO, built

GOLDEN = REPO / "tests" / "golden"
ALL_SWITCHES = 8
REPRESENTATIVE = {Layer.LEAF: 2, Layer.SPINE: 1, Layer.CORE: 1}  # per fabric


def plain(value: Any) -> Any:
    """`value` as YAML-ready data: dataclasses as {field: value}, sequences as lists, addresses as text."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)  # text, addresses, networks


class _Dumper(yaml.SafeDumper):
    """Block style, but a list of scalars (lanes, member ports, prefixes) on one line."""

    def represent_list(self, data: list[Any]) -> yaml.Node:
        flow = all(not isinstance(item, dict | list) for item in data)
        return self.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _Dumper.represent_list)


def intent_yaml(intent: DeviceIntent) -> str:
    return yaml.dump(plain(intent), Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=120)


def golden_switches(build: Build) -> list[str]:
    """The switches whose intent is golden (see the module's docstring)."""
    if len(build.intents) <= ALL_SWITCHES:
        return sorted(build.intents)
    chosen: list[str] = []
    for fabric in build.topology.fabrics.values():
        taken: dict[str, int] = {}
        for name in fabric.switches:
            intent = build.intents.get(name)
            if intent is None:
                continue
            layer = intent.layer
            if taken.get(layer, 0) < REPRESENTATIVE.get(layer, 0):
                taken[layer] = taken.get(layer, 0) + 1
                chosen.append(name)
    return sorted(chosen)


DESIGN_NAMES = sorted(p.stem for p in DESIGNS.glob("*.yaml"))


@pytest.mark.parametrize("design", DESIGN_NAMES)
def test_intent_golden(design: str, golden: Callable[[Path, str], None], golden_set: Callable[..., None]) -> None:
    build = built(design)
    directory = GOLDEN / design / "intent"
    if not build.intents:  # no Ethernet switch (an InfiniBand-only design)
        assert not directory.exists(), f"{directory}: {design} has no Ethernet switch"
        return
    switches = golden_switches(build)
    assert switches, f"{design}: no switch chosen"
    for name in switches:
        golden(directory / f"{name}.yaml", intent_yaml(build.intents[name]))
    golden_set(directory, [f"{name}.yaml" for name in switches], "*.yaml")
