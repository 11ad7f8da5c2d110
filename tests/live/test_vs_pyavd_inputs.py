"""The benchmark against pyavd compares the same work: pyavd's `same servers` input (benchmarks/vs_pyavd.py) gives
its leaves the server ports and gateway that fabric's spec gives fabric's leaves. Checked on the first two leaves
(pyavd on the whole fabric takes a minute): the access ports, their server, speed, MTU and VLAN, and the SVI."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from fabric import build_fabric
from fabric.render.outputs.configs import configs
from tests.conftest import REPO, require_module

pytestmark = pytest.mark.independent  # pyavd in this process, on files of its own

BENCHMARK = REPO / "benchmarks" / "vs_pyavd.py"
LEAVES = ("leaf01", "leaf02")

# one access port: its name, the server and server port it faces, speed, MTU and VLAN
Port = tuple[str, str, str, str, str, str]


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vs_pyavd", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["vs_pyavd"] = module
    spec.loader.exec_module(module)
    return module


def _blocks(config: str) -> dict[str, list[str]]:
    """Each `interface X` block's statements, stripped."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in config.splitlines():
        if line.startswith("interface "):
            current = blocks.setdefault(line.split()[1], [])
        elif line.startswith("   ") and current is not None:
            current.append(line.strip())
        else:
            current = None
    return blocks


def _said(statements: list[str], prefix: str) -> str:
    """The statement starting with `prefix` ("" if none)."""
    return next((s for s in statements if s.startswith(prefix)), "")


def _access_ports(config: str, server: re.Pattern[str]) -> set[Port]:
    ports: set[Port] = set()
    for name, statements in _blocks(config).items():
        vlan = _said(statements, "switchport access vlan ")
        if not vlan:
            continue
        found = server.fullmatch(_said(statements, "description ").removeprefix("description "))
        assert found, statements
        ports.add((name, found["server"], found["port"], _said(statements, "speed "), _said(statements, "mtu "), vlan))
    return ports


def _svi(config: str) -> list[str]:
    return [s for s in _blocks(config)["Vlan1000"] if s.startswith("ip address")]


@pytest.mark.slow
def test_pyavd_gets_the_servers_and_gateways_fabric_configures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pyavd = require_module("pyavd", "pyavd==6.4.0 (pip install -e '.[test]')")
    bench = _benchmark()
    (tmp_path / "parts.yaml").write_text(bench.PARTS)
    (tmp_path / "vs-pyavd.yaml").write_text(bench.SPEC)
    build = build_fabric(tmp_path / "vs-pyavd.yaml")
    ours = configs(build)

    monkeypatch.setattr(bench, "LEAVES", len(LEAVES))
    inputs = bench.avd_inputs(servers=True)
    assert sorted(inputs) == [*LEAVES, "spine01", "spine02", "spine03", "spine04"]
    assert "servers" not in inputs["spine01"]  # each leaf has its own servers, as host vars
    assert len(inputs["leaf02"]["servers"]) == 48
    validated = {}
    for name, data in inputs.items():
        result = pyavd.validate_inputs(data)
        assert result.validated_data is not None, result.validation_result.violations[:3]
        validated[name] = result.validated_data
    facts = pyavd.get_avd_facts(validated)

    gateways = {}
    for leaf in LEAVES:
        structured = pyavd.get_device_structured_config(leaf, validated[leaf], facts)
        checked = pyavd.validate_structured_config(structured._as_dict())
        assert checked.validated_data is not None
        theirs = pyavd.get_device_config(checked.validated_data)
        config = ours[f"configs/{leaf}/startup-config"]
        fabric_ports = _access_ports(config, re.compile(r"(?P<server>\w+):(?P<port>\w+)"))
        avd_ports = _access_ports(theirs, re.compile(r"SERVER_(?P<server>[a-z0-9]+)_(?P<port>\w+)"))
        assert len(fabric_ports) == 48
        assert avd_ports == fabric_ports
        assert _svi(theirs) == [a for a in _svi(config) if "." in a]  # (fabric's gateway is also IPv6)
        gateways[leaf] = _svi(theirs)
    assert gateways == {"leaf01": ["ip address 10.4.0.1/26"], "leaf02": ["ip address 10.4.0.65/26"]}
