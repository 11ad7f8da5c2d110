"""EOS proven by Arista's own generator: every structured-config.yaml validates against AVD's
`eos_cli_config_gen` schema (pyavd) and renders, with pyavd, to the statements of fabric's startup-config.

The comparison is statement by statement: each command with the chain of sections it sits in, as a set per
switch (comments, `!` separators and ordering aside). A difference must be in ALLOWED, with its reason; the test
prints the list, and an entry no case needs any more fails the test, so the list cannot rot.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric import Build, build_fabric, load_spec_text, render_all
from fabric.render.platforms.eos_structured import FILE, secret_reference
from fabric.spec.schema import SecretRef
from tests.conftest import require_module
from tests.support.design_variants import ETHERNET_DESIGNS, on_platform, variant

pytestmark = pytest.mark.independent  # pyavd in this process, on files of its own

PYAVD = "pyavd==6.4.0 (pip install -e '.[test]')"
# Ethernet designs whose own platform is EOS (not in ETHERNET_DESIGNS' every-platform matrix)
EOS_DESIGNS = ("eos-roce-1024",)


@dataclass(frozen=True)
class Allowed:
    side: str  # "fabric": only in fabric's startup-config; "avd": only in pyavd's rendering
    pattern: str  # regular expression on the statement path ("section / sub-section / command")
    reason: str


ALLOWED = (
    Allowed(
        "fabric",
        r"lldp run",
        "LLDP runs by default on EOS; AVD's model writes only `no lldp run`, fabric states what it relies on",
    ),
)

# Not a difference but a spelling: AVD stores BGP passwords type 7 (encrypted with the peer group's name),
# fabric's startup-config gives them type 0 (clear). The test decrypts pyavd's with pyavd's own filter.
PASSWORD_7 = re.compile(r"^(\s*neighbor \S+ password) 7 (\S+)$", re.MULTILINE)

SNMP_ENV, BGP_ENV = "FABRIC_TEST_SNMP", "FABRIC_TEST_BGP"
SECRETS = {SNMP_ENV: "snmp-community-1", BGP_ENV: "bgp-md5-secret"}


def statements(text: str) -> set[str]:
    """Every command of an EOS configuration with the sections it sits in (EOS indents by 3 spaces)."""
    out: set[str] = set()
    stack: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        command = line.strip()
        if not command or command.startswith("!") or command == "end":
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 3
        stack = [*stack[:depth], command]
        out.add(" / ".join(stack))
    return out


def _with_secrets(data: dict[str, Any]) -> None:
    data["management"] = {**data.get("management", {}), "snmp_community": {"env": SNMP_ENV}}
    for fabric in data["fabrics"].values():
        if fabric["technology"] == "ethernet":
            fabric["platform"] = "eos"
            fabric.setdefault("routing", {})["bgp_password"] = {"env": BGP_ENV}


PARTS_25G = """\
nodes:
  server-25g:
    description: a server with 2 x 25G SFP28
    u: 1
    power_w: 300
    ports:
      data: {technology: ethernet, speed_gbps: 25, connector: sfp28, count: 2, name: "eth{n}"}
"""

SPEC_25G = """\
name: eos-25g
racks: {rows: [A], rack_units: 42, power_kw: 30}
catalog: [parts.yaml]
nodes:
  - {group: srv, type: server-25g, count: 40, per_rack: 20, name: "srv{index:02d}"}
fabrics:
  compute:
    technology: ethernet
    topology: {kind: spine-leaf, tiers: 2, spines: 2}
    switches: {leaf: arista-7050sx3-48yc8, spine: arista-7060dx5-64s}
    oversubscription: "3:2"
    attach: [{group: srv, ports: data}]
addressing: {loopback: 10.0.0.0/24, p2p: 10.1.0.0/24, servers: 10.2.0.0/16, mgmt: 192.168.0.0/24}
asn: {scheme: rfc7938, spine: 65000, leaf_start: 65100}
"""


def leaf_25g(directory: Path) -> Build:
    """48 x 25G SFP28 + 8 x 100G leaves (7050SX3-style) under 64 x 400G spines run as 4 x 100G (7060DX5)."""
    (directory / "parts.yaml").write_text(PARTS_25G, encoding="utf-8")
    return build_fabric(load_spec_text(SPEC_25G, "eos-25g.yaml", directory))


def _cases(directory: Path) -> list[tuple[str, Build]]:
    cases = [
        (f"{design} {'unnumbered' if unnumbered else 'numbered'}", on_platform(design, "eos", unnumbered))
        for design in ETHERNET_DESIGNS
        for unnumbered in (False, True)
    ]

    def bgp_style(unnumbered: bool) -> Callable[[dict[str, Any]], None]:
        def change(data: dict[str, Any]) -> None:
            for fabric in data["fabrics"].values():
                fabric.setdefault("routing", {})["bgp_unnumbered"] = unnumbered

        return change

    for design in EOS_DESIGNS:
        for unnumbered in (False, True):
            name = f"{design} {'unnumbered' if unnumbered else 'numbered'}"
            cases.append((name, variant(design, bgp_style(unnumbered))))
    cases.append(("lab with SNMP and BGP passwords", variant("lab", _with_secrets)))

    def unnumbered_secrets(data: dict[str, Any]) -> None:
        _with_secrets(data)
        for fabric in data["fabrics"].values():
            fabric["routing"]["bgp_unnumbered"] = True
            fabric["routing"]["bfd"] = True

    cases.append(("lab with SNMP and BGP passwords and BFD, unnumbered", variant("lab", unnumbered_secrets)))
    cases.append(("25G leaves on 100G breakouts", leaf_25g(directory)))
    for unnumbered in (False, True):  # servers routing on the host: routed server ports, servers as neighbours
        cases.append(
            (f"lab-dual {'unnumbered' if unnumbered else 'numbered'}", on_platform("lab-dual", "eos", unnumbered))
        )
    for unnumbered in (False, True):  # bonded servers on MLAG pairs: peer link, peer VLAN, virtual router, bonds
        cases.append(
            (f"lab-mlag {'unnumbered' if unnumbered else 'numbered'}", on_platform("lab-mlag", "eos", unnumbered))
        )
    return cases


def _resolve_references(structured: dict[str, Any]) -> dict[str, Any]:
    """What an AVD workflow does with the file's secret references: look them up (here: this test's values)."""
    from pyavd.j2filters import encrypt

    values = {secret_reference(SecretRef(env=SNMP_ENV)): SECRETS[SNMP_ENV]}
    for group in structured.get("router_bgp", {}).get("peer_groups", []):
        reference = secret_reference(SecretRef(env=BGP_ENV), bgp_key=group["name"])
        values[reference] = encrypt(SECRETS[BGP_ENV], passwd_type="bgp", key=group["name"])

    def resolve(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [resolve(v) for v in value]
        return values.get(value, value) if isinstance(value, str) else value

    resolved: dict[str, Any] = resolve(structured)
    return resolved


def _clear_passwords(text: str) -> str:
    from pyavd.j2filters import decrypt

    def clear(match: re.Match[str]) -> str:
        group = match.group(1).split()[1]
        return f"{match.group(1)} 0 {decrypt(match.group(2), passwd_type='bgp', key=group)}"

    return PASSWORD_7.sub(clear, text)


def _check_switch(name: str, files: dict[str, bytes], pyavd: Any, used: Counter[Allowed]) -> list[str]:
    """Problems of one switch: schema violations, deprecations, ignored keys, unexplained differences."""
    from pyavd.api.schemas import EOSConfig

    problems: list[str] = []
    text = files[f"configs/{name}/{FILE}"].decode()
    assert "snmp-community-1" not in text and "bgp-md5-secret" not in text, f"{name}: a secret in {FILE}"
    structured = _resolve_references(yaml.safe_load(text))
    # at the root AVD accepts any key silently (it shares the namespace with other variables): none may be unknown
    problems += [f"{name}: `{key}` is no eos_cli_config_gen key" for key in structured if key not in EOSConfig._fields]
    result = pyavd.validate_structured_config(structured)
    checked = result.validation_result
    problems += [f"{name}: {'.'.join(v.path)}: {v.message}" for v in checked.violations]
    problems += [f"{name}: deprecated: {d.message}" for d in checked.deprecations]
    problems += [f"{name}: ignored key {key}" for key in checked.ignored_eos_config_keys]
    if result.validated_data is None:
        return problems
    avd = statements(_clear_passwords(pyavd.get_device_config(result.validated_data)))
    ours = statements(files[f"configs/{name}/startup-config"].decode())
    for side, only in (("fabric", ours - avd), ("avd", avd - ours)):
        for statement in sorted(only):
            entry = next((a for a in ALLOWED if a.side == side and re.fullmatch(a.pattern, statement)), None)
            if entry is None:
                problems.append(f"{name}: only in {'fabric' if side == 'fabric' else 'pyavd'}: {statement}")
            else:
                used[entry] += 1
    return problems


@pytest.mark.slow
def test_pyavd_validates_renders_and_agrees_with_every_eos_startup_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pyavd = require_module("pyavd", PYAVD)
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    used: Counter[Allowed] = Counter()
    problems: list[str] = []
    switches = 0
    for case, build in _cases(tmp_path):
        assert not build.errors, (case, [f.format() for f in build.errors])
        files = render_all(build)
        eos = [name for name, intent in build.intents.items() if intent.platform == "eos"]
        assert eos, case
        for name in eos:
            switches += 1
            problems += [f"{case}: {p}" for p in _check_switch(name, files, pyavd, used)]
    print(f"\npyavd {pyavd.__version__}: {switches} EOS switches validated, rendered and compared")
    print("allowed differences (statements per side, how often, why):")
    for entry in ALLOWED:
        print(f"  only in {entry.side:6}  {entry.pattern!r:40} {used[entry]:6}  {entry.reason}")
    print("  normalized: BGP `password 7 <AVD type 7>` is decrypted to `password 0 <clear>` before comparing")
    assert not problems, "\n".join(problems[:60]) + (f"\n… and {len(problems) - 60} more" if len(problems) > 60 else "")
    # lab, roce-512, the 4-SU SuperPOD, eos-roce-1024 in both BGP styles; the lab with secrets twice; the 25G leaves;
    # lab-dual and lab-mlag in both BGP styles
    assert switches == 2 * (6 + 12 + 17 + 48) + 2 * 6 + 4 + 2 * 6 + 2 * 6
    assert [e for e in ALLOWED if not used[e]] == [], "allow-list entries no case needs: remove them"


def test_statements_keep_their_sections() -> None:
    text = "router bgp 1\n   address-family ipv4\n      network 10.0.0.0/8\n!\ninterface Ethernet1\n   mtu 9214\nend\n"
    assert statements(text) == {
        "router bgp 1",
        "router bgp 1 / address-family ipv4",
        "router bgp 1 / address-family ipv4 / network 10.0.0.0/8",
        "interface Ethernet1",
        "interface Ethernet1 / mtu 9214",
    }


def test_structured_config_holds_references_not_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    files = render_all(variant("lab", _with_secrets))
    text = files[f"configs/leaf1/{FILE}"].decode()
    data = yaml.safe_load(text)
    assert data["snmp_server"]["communities"] == [
        {"name": "{{ lookup('ansible.builtin.env', 'FABRIC_TEST_SNMP') }}", "access": "ro"}
    ]
    assert data["router_bgp"]["peer_groups"][0]["password"] == (
        "{{ lookup('ansible.builtin.env', 'FABRIC_TEST_BGP') | arista.avd.encrypt(passwd_type='bgp', key='FABRIC') }}"
    )
    assert SECRETS[SNMP_ENV] not in text and SECRETS[BGP_ENV] not in text
    assert f"configs/leaf1/{FILE}" not in files.private  # nothing secret in it
    assert "configs/leaf1/startup-config" in files.private
    assert secret_reference(SecretRef(file="secrets/snmp")) == "{{ lookup('ansible.builtin.file', 'secrets/snmp') }}"


def test_structured_config_is_written_for_eos_switches_only() -> None:
    files = render_all(on_platform("lab", "eos"))
    assert sum(1 for p in files if p.endswith(f"/{FILE}")) == 6
    assert not [p for p in render_all(on_platform("lab", "sonic")) if p.endswith(f"/{FILE}")]
    leaf = yaml.safe_load(files[f"configs/leaf1/{FILE}"])
    assert leaf["hostname"] == "leaf1"
    assert leaf["router_bgp"]["as"] == "65101"
    # numbered dual-stack: each uplink has an IPv4 session and an IPv6 one, in a group of its own
    groups = [n["peer_group"] for n in leaf["router_bgp"]["neighbors"]]
    assert groups == ["FABRIC", "FABRIC", "FABRIC-V6", "FABRIC-V6"]
    assert [i["name"] for i in leaf["ethernet_interfaces"]][:2] == ["Ethernet1/1", "Ethernet2/1"]
    assert leaf["qos_profiles"][0]["priority_flow_control"]["priorities"] == [{"priority": 3, "no_drop": True}]
