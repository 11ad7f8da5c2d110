"""Defence in depth at the renderers: a value that is not one line of printable text never splits a config
line, whatever built the plan. These tests inject such values past the loader (into the intents and subnet
plans directly) and check that rendering is refused with a finding that names the field, not the value."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import fabric.pipeline
from fabric import Build, render_all
from fabric.cli import app
from fabric.intent.ethernet import DeviceIntent
from fabric.render import RenderRefused
from fabric.render.platforms import PLATFORMS
from tests.conftest import DESIGNS, built
from tests.support.design_variants import on_platform, variant

INJECTED = "\nusername evil privilege 15 secret 0 pwned\n!"
HOSTILE = [INJECTED, "x\r\nrouter bgp 666", "esc\x1b]0;owned\x07", "nul\x00", "sep\u2028router bgp 666", "bidi\u202e"]


def _with_intent(build: Build, switch: str, **changes: Any) -> Build:
    intents = dict(build.intents)
    intents[switch] = dataclasses.replace(intents[switch], **changes)
    return dataclasses.replace(build, intents=intents)


def _port_peer(intent: DeviceIntent, value: str) -> dict[str, Any]:
    ports = list(intent.ports)
    i = next(i for i, p in enumerate(ports) if p.admin_up)
    ports[i] = dataclasses.replace(ports[i], peer_device=value)
    return {"ports": tuple(ports)}


def _bgp_password(intent: DeviceIntent, value: str) -> dict[str, Any]:
    assert intent.bgp is not None
    return {"bgp": dataclasses.replace(intent.bgp, password=value)}


FIELDS = {
    "ntp": (lambda i, v: {"ntp": ("10.0.0.1", v)}, ".ntp[1]"),
    "syslog": (lambda i, v: {"syslog": (v,)}, ".syslog[0]"),
    "dns": (lambda i, v: {"dns": (v,)}, ".dns[0]"),
    "domain": (lambda i, v: {"domain": v}, ".domain"),
    "snmp_location": (lambda i, v: {"snmp_location": v, "snmp_community": "public"}, ".snmp_location"),
    "snmp_community": (lambda i, v: {"snmp_community": v}, ".snmp_community"),
    "gateway": (lambda i, v: {"mgmt_gateway": v}, ".mgmt_gateway"),
    "hostname": (lambda i, v: {"hostname": v}, ".hostname"),
    "peer name": (_port_peer, ".peer_device"),
    "bgp password": (_bgp_password, ".bgp.password"),
}


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
@pytest.mark.parametrize("field", sorted(FIELDS))
def test_a_multi_line_value_in_any_intent_field_is_refused(platform: str, field: str) -> None:
    build = on_platform("lab", platform)
    change, where = FIELDS[field]
    hostile = _with_intent(build, "leaf1", **change(build.intents["leaf1"], INJECTED))
    with pytest.raises(RenderRefused) as refused:
        render_all(hostile)
    findings = refused.value.findings
    assert len(findings) == 1, [f.format() for f in findings]
    assert findings[0].code == "render-unsafe-value"
    assert findings[0].path.startswith("switch['leaf1']") and findings[0].path.endswith(where)
    assert "holds a line break" in findings[0].message
    assert "pwned" not in findings[0].format()  # the value is never echoed (it may be a secret)


@pytest.mark.parametrize("value", HOSTILE)
def test_every_kind_of_line_breaking_or_control_character_is_refused(value: str) -> None:
    build = on_platform("lab", "eos")
    with pytest.raises(RenderRefused) as refused:
        render_all(_with_intent(build, "spine1", snmp_location=value))
    assert [f.path for f in refused.value.findings] == ["switch['spine1'].snmp_location"]


def _without_intent_check(monkeypatch: pytest.MonkeyPatch) -> None:
    import fabric.render

    monkeypatch.setattr(fabric.render, "unsafe_values", lambda build, infiniband=False: [])


@pytest.mark.parametrize("platform", ["eos", "frr", "sonic"])
def test_templates_refuse_what_the_intent_check_would_miss(platform: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _without_intent_check(monkeypatch)
    build = on_platform("lab", platform)
    with pytest.raises(RenderRefused) as refused:
        render_all(_with_intent(build, "leaf1", hostname=INJECTED))
    (finding,) = refused.value.findings
    assert finding.path == "outputs.configs" and "a value holds a line break" in finding.message
    assert ".j2" in finding.message and "pwned" not in finding.message


def test_nvue_yaml_quotes_what_it_carries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serialized from data: even past every check, a line break stays inside its YAML string."""
    _without_intent_check(monkeypatch)
    build = on_platform("lab", "cumulus")
    clean = render_all(_with_intent(build, "leaf1", snmp_community="public", snmp_location="A01"))
    files = render_all(_with_intent(build, "leaf1", snmp_community="public", snmp_location=INJECTED))
    loaded = yaml.safe_load(files["configs/leaf1/startup.yaml"])
    expected = yaml.safe_load(clean["configs/leaf1/startup.yaml"])
    assert loaded[0]["set"]["service"]["snmp-server"].pop("system-location") == INJECTED
    assert expected[0]["set"]["service"]["snmp-server"].pop("system-location") == "A01"
    assert loaded == expected  # nothing else changed: no key was injected


# --------------------------------------------------------------------------------------------- InfiniBand


def _with_settings(build: Build, **changes: Any) -> Build:
    subnets = tuple(
        dataclasses.replace(s, settings=s.settings.model_copy(update=changes)) for s in build.infiniband.subnets
    )
    return dataclasses.replace(build, infiniband=dataclasses.replace(build.infiniband, subnets=subnets))


@pytest.mark.parametrize(
    ("value", "why"),
    [("/var/log/opensm.log\nrouting_engine minhop", "a line break"), ('/var/log/"x".log', "the quote of its syntax")],
)
def test_infiniband_values_are_one_line_without_quotes(value: str, why: str) -> None:
    build = _with_settings(built("lab-ib"), log_file=value)
    with pytest.raises(RenderRefused) as refused:
        render_all(build)
    (finding,) = refused.value.findings
    assert finding.path == "infiniband['infiniband/compute'].settings.log_file"
    assert why in finding.message and "corrupt a subnet-manager file" in finding.message


def test_an_infiniband_node_name_with_a_quote_is_refused() -> None:
    build = built("lab-ib")
    subnet = build.infiniband.subnets[0]
    nodes = (dataclasses.replace(subnet.nodes[0], nodeid='S-x" evil'), *subnet.nodes[1:])
    members = dataclasses.replace(subnet.members, nodes=nodes)
    hostile = dataclasses.replace(subnet, made=lambda: members)
    build = dataclasses.replace(build, infiniband=dataclasses.replace(build.infiniband, subnets=(hostile,)))
    with pytest.raises(RenderRefused) as refused:
        render_all(build)
    assert [f.path for f in refused.value.findings] == ["infiniband['infiniband/compute'].members.nodes[0].nodeid"]


@pytest.mark.slow
def test_valid_designs_render_without_a_refusal() -> None:
    for design in ("lab", "lab-ib", "lab-ib-3tier", "roce-512", "superpod-h100-4su"):
        assert len(render_all(built(design))) > 10


# --------------------------------------------------------------------------------------------- secrets


@pytest.mark.parametrize(
    ("secret", "what"),
    [
        ("pw\nrouter bgp 666", "a line break"),
        ("pass word", "a space"),
        ("pw\x1b[2J", "U+001B"),
        ("pw\tx", "a tab"),
    ],
)
def test_a_secret_is_one_word_of_printable_text(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, secret: str, what: str
) -> None:
    monkeypatch.setenv("FABRIC_TEST_BGP_SECRET", secret)
    build = on_platform.__wrapped__("lab", "frr", bgp_password_env="FABRIC_TEST_BGP_SECRET")
    errors = [f for f in build.errors if f.code == "secret-invalid"]
    assert len(errors) == 1, [f.format() for f in build.errors]
    assert errors[0].path == "fabrics.compute.routing.bgp_password.env"
    assert f"holds {what}" in errors[0].message and secret not in errors[0].format()
    assert all(i.bgp is None or i.bgp.password is None for i in build.intents.values())
    (tmp_path / "snmp").write_text("community\nrouter bgp 666\n")
    data_build = variant(
        "lab", lambda d: d.setdefault("management", {}).update(snmp_community={"file": str(tmp_path / "snmp")})
    )
    (finding,) = [f for f in data_build.errors if f.code == "secret-invalid"]
    # the file's text stays out of the message (not "666" alone: pytest's temporary path can hold pytest-666)
    assert finding.path == "management.snmp_community.file" and "router bgp" not in finding.format()


def test_a_secret_file_with_a_trailing_newline_is_fine(tmp_path: Path) -> None:
    (tmp_path / "snmp").write_text("community-1\n")
    build = variant(
        "lab", lambda d: d.setdefault("management", {}).update(snmp_community={"file": str(tmp_path / "snmp")})
    )
    assert not build.errors and all(i.snmp_community == "community-1" for i in build.intents.values())


# --------------------------------------------------------------------------------------------- the command


def test_build_refuses_to_write_and_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build = on_platform("lab", "eos")
    hostile = _with_intent(build, "leaf2", ntp=(INJECTED,))
    monkeypatch.setattr(fabric.pipeline, "build_fabric", lambda path, **_: hostile)
    result = CliRunner().invoke(app, ["build", str(DESIGNS / "lab.yaml"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "render-unsafe-value switch['leaf2'].ntp[0]" in result.output
    assert "1 value(s) cannot be rendered safely; nothing was written" in result.output
    assert "pwned" not in result.output and not (tmp_path / "out").exists()


@pytest.mark.parametrize("workers", [1, 2])
def test_the_intent_check_refuses_with_the_pool_running_too(workers: int, tmp_path: Path) -> None:
    """With a pool the check runs while the workers start: the same one finding, and nothing is committed."""
    from fabric.render import render_into
    from fabric.write.atomic import Staging

    build = on_platform("lab", "sonic")
    hostile = _with_intent(build, "leaf1", snmp_location=INJECTED)
    staging = Staging(tmp_path / "out", hostile.name)
    written: list[str] = []

    def sink(path: str, data: bytes, private: bool) -> None:
        written.append(path)
        staging.write(path, data, private)

    with pytest.raises(RenderRefused) as refused:
        render_into(hostile, sink, workers=workers)
    staging.abort()
    assert [f.path for f in refused.value.findings] == ["switch['leaf1'].snmp_location"]
    assert list(tmp_path.iterdir()) == []  # no worker wrote on after the refusal: nothing is left behind
    if workers == 1:
        assert written == []  # one process: checked before anything renders
