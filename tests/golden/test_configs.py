"""Switch configs: the platform contract, goldens per platform, the RoCE profile read back from each
platform's files, names that match the cabling plan, secrets and capabilities."""

from __future__ import annotations

import csv
import io
import json
import re
import stat
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric import render_all, write_outputs
from fabric.model.findings import Severity
from fabric.render.platforms import PLATFORMS
from fabric.spec.platforms import platforms
from fabric.spec.resources import templates_dir
from tests.conftest import REPO, built
from tests.support.design_variants import ETHERNET_DESIGNS, build_data, on_platform, spec_data, variant

GOLDEN = REPO / "tests" / "golden"


# --------------------------------------------------------------------------------------------- contract


def test_registry_matches_the_spec() -> None:
    assert list(PLATFORMS) == list(platforms()) and {"cumulus", "eos", "frr", "sonic"} <= set(PLATFORMS)
    for name, platform in PLATFORMS.items():
        assert platform.name == name and platform.files and platform.traits is platforms()[name]


def test_every_platform_named_in_the_catalog_is_registered() -> None:
    from fabric.spec.catalog import builtin_catalog

    named = {m.platform for m in builtin_catalog().switches.values() if m.platform}
    assert named <= set(PLATFORMS)


def test_every_platform_describes_itself_in_its_template_folder() -> None:
    folders = sorted(p.parent.name for p in templates_dir().glob("*/platform.yaml"))
    assert folders == sorted(PLATFORMS)
    templated = {name for name in folders if list((templates_dir() / name).glob("*.j2"))}
    assert {"eos", "frr", "sonic"} <= templated  # Cumulus's startup.yaml is serialized from data


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
@pytest.mark.parametrize("design", ETHERNET_DESIGNS)
def test_every_platform_renders_every_switch(design: str, platform: str) -> None:
    build = on_platform(design, platform)
    assert not [f for f in build.findings if f.severity == Severity.ERROR], [f.format() for f in build.errors]
    files = render_all(build)
    switches = [s for ft in build.topology.fabrics.values() if ft.technology == "ethernet" for s in ft.switches]
    assert switches
    for switch in switches:
        for name in PLATFORMS[platform].files:
            text = files[f"configs/{switch}/{name}"].decode()
            assert switch in text  # the hostname
            assert "None" not in text and "{{" not in text and "{%" not in text


# --------------------------------------------------------------------------------------------- goldens


@cache
def _config_files(platform: str) -> dict[str, str]:
    files = render_all(on_platform("lab", platform))
    return {path: data.decode() for path, data in files.items() if path.startswith("configs/")}


def _on_disk(platform: str) -> list[str]:
    root = GOLDEN / f"lab-{platform}"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# the lab design itself is on frr: those goldens are tests/golden/lab/configs (test_outputs.py); the cases are
# listed from the files on disk, test_every_golden_config_is_still_rendered holds them equal to the rendering
GOLDEN_PLATFORMS = [p for p in sorted(PLATFORMS) if p != "frr"]
GOLDEN_CASES = [(p, path) for p in GOLDEN_PLATFORMS for path in _on_disk(p)]


@pytest.mark.parametrize("platform", GOLDEN_PLATFORMS)
def test_every_golden_config_is_still_rendered(platform: str, golden, golden_set) -> None:  # type: ignore[no-untyped-def]
    paths = sorted(_config_files(platform))
    switches = {path.split("/")[1] for path in paths}
    assert len(switches) == 6  # the lab's 6 switches, every file of each (EOS also has its structured config)
    assert {f"configs/{s}/{f}" for s in switches for f in PLATFORMS[platform].files} <= set(paths)
    for path in paths:
        if not (GOLDEN / f"lab-{platform}" / path).exists():  # a new file: missing (or written under --update-golden)
            golden(GOLDEN / f"lab-{platform}" / path, _config_files(platform)[path])
    golden_set(GOLDEN / f"lab-{platform}", paths)


@pytest.mark.parametrize(("platform", "path"), GOLDEN_CASES, ids=[f"{p}:{f}" for p, f in GOLDEN_CASES])
def test_lab_configs_golden(platform: str, path: str, golden) -> None:  # type: ignore[no-untyped-def]
    golden(GOLDEN / f"lab-{platform}" / path, _config_files(platform)[path])


def test_the_lab_design_boots_on_frr_with_linux_port_names() -> None:
    build = built("lab")
    assert {i.platform for i in build.intents.values()} == {"frr"}
    rows = list(csv.DictReader(io.StringIO(render_all(build)["cabling.csv"].decode())))
    for row in rows:
        for side in ("a", "b"):
            port = row[f"{side}_port"]
            assert len(port) <= 15 and "/" not in port and " " not in port


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_config_port_names_are_the_cabling_plans(platform: str) -> None:
    """Every switch port of the cabling plan appears, with its peer in the description, in that switch's config."""
    build = on_platform("lab", platform)
    files = render_all(build)
    rows = list(csv.DictReader(io.StringIO(files["cabling.csv"].decode())))
    for row in rows:
        for me, peer in (("a", "b"), ("b", "a")):
            device = row[f"{me}_device"]
            if device not in build.intents:
                continue
            text = "".join(files[f"configs/{device}/{f}"].decode() for f in PLATFORMS[platform].files)
            assert row[f"{me}_port"] in text
            assert f"{row[f'{peer}_device']}:{row[f'{peer}_port']}" in text


# --------------------------------------------------------------------------------------------- BGP


def test_numbered_and_unnumbered_neighbors() -> None:
    numbered = built("lab").intents["leaf1"].bgp
    unnumbered = on_platform("lab", "frr", unnumbered=True).intents["leaf1"].bgp
    assert numbered is not None and unnumbered is not None
    # numbered with IPv6: each link an IPv4 session on its /31 and an IPv6 one on its /127
    assert [(n.peer, n.remote_as, n.interface, n.v6) for n in numbered.neighbors] == [
        ("10.254.0.0", 65000, "swp63", False),
        ("10.254.0.2", 65000, "swp64", False),
        ("fd00:1ab:0:1::", 65000, "swp63", True),
        ("fd00:1ab:0:1::2", 65000, "swp64", True),
    ]
    assert [str(n.local_address) for n in numbered.neighbors] == [
        "10.254.0.1",
        "10.254.0.3",
        "fd00:1ab:0:1::1",
        "fd00:1ab:0:1::3",
    ]
    assert [(n.peer, n.interface, n.v6) for n in unnumbered.neighbors] == [
        ("swp63", "swp63", False),
        ("swp64", "swp64", False),
    ]
    assert unnumbered.ipv6 and numbered.ipv6 and numbered.numbered_v6 and not unnumbered.numbered_v6
    text = render_all(on_platform("lab", "frr", unnumbered=True))["configs/leaf1/frr.conf"].decode()
    assert " neighbor FABRIC remote-as external" in text and " neighbor swp63 interface peer-group FABRIC" in text
    assert "ip address 10.254" not in text  # no /31s on unnumbered links
    assert "FABRIC-V6 peer-group" not in text  # one session carries both families
    # numbered: the IPv6 sessions in their own group, IPv6 unicast only; the IPv4 group never activated for IPv6
    text = render_all(built("lab"))["configs/leaf1/frr.conf"].decode()
    v4_family = text[text.index(" address-family ipv4 unicast") : text.index(" address-family ipv6 unicast")]
    v6_family = text[text.index(" address-family ipv6 unicast") :]
    assert " neighbor fd00:1ab:0:1:: peer-group FABRIC-V6" in text and " neighbor FABRIC-V6 bfd" not in text
    assert "  no neighbor FABRIC-V6 activate" in v4_family
    assert "  neighbor FABRIC-V6 activate" in v6_family and "neighbor FABRIC activate" not in v6_family
    assert "  neighbor FABRIC-V6 route-map FABRIC-IN-V6 in" in v6_family

    # negative: a numbered fabric without IPv6 has no IPv6 sessions and no IPv6 family
    def no_v6(data: dict[str, Any]) -> None:
        data["addressing"]["ipv6"] = None

    plain = variant("lab", no_v6)
    bgp = plain.intents["leaf1"].bgp
    assert bgp is not None and not bgp.ipv6 and not any(n.v6 for n in bgp.neighbors) and len(bgp.neighbors) == 2
    plain_text = render_all(plain)["configs/leaf1/frr.conf"].decode()
    assert "FABRIC-V6" not in plain_text and "address-family ipv6" not in plain_text


def test_bgp_policy_and_multipath() -> None:
    leaf = built("roce-512").intents["su1-rail0-leaf"]
    assert leaf.bgp is not None
    assert leaf.bgp.maximum_paths == 64 == sum(1 for p in leaf.used_ports if p.role == "uplink")
    assert tuple(map(str, leaf.bgp.networks)) == ("10.0.0.5/32", "10.2.0.0/25")
    text = render_all(built("lab"))["configs/spine1/frr.conf"].decode()
    # eBGP policy is explicit: only loopbacks and server subnets pass, in and out
    assert "ip prefix-list FABRIC seq 10 permit 10.255.0.0/24 ge 32" in text
    assert "ip prefix-list FABRIC seq 20 permit 172.16.0.0/16 le 24" in text
    assert "neighbor FABRIC route-map FABRIC-IN in" in text and "neighbor FABRIC route-map FABRIC-OUT out" in text
    assert "multipath-relax" not in text  # RFC 7938: one spine ASN


def test_unique_asns_need_multipath_relax() -> None:
    build = variant("lab", lambda d: d["asn"].update(scheme="unique"))
    assert {row.asn for row in build.allocation.asns if row.layer == "spine"} == {65000, 65001}
    bgp = build.intents["leaf1"].bgp
    assert bgp is not None and bgp.multipath_relax
    assert "bgp bestpath as-path multipath-relax" in render_all(build)["configs/leaf1/frr.conf"].decode()


# --------------------------------------------------------------------------------------------- RoCE


def _roce_files(platform: str) -> dict[str, str]:
    files = render_all(on_platform("roce-512", platform))
    return {p: d.decode() for p, d in files.items() if p.startswith("configs/su1-rail3-leaf/")}


def test_sonic_roce_profile() -> None:
    db = json.loads(_roce_files("sonic")["configs/su1-rail3-leaf/config_db.json"])
    dscp = db["DSCP_TO_TC_MAP"]["ROCE"]
    assert len(dscp) == 64 and dscp["26"] == "3" and dscp["48"] == "6"
    assert {v for k, v in dscp.items() if k not in ("26", "48")} == {"0"}  # nothing left to SONiC's AZURE map
    port_qos = db["PORT_QOS_MAP"]
    assert port_qos and {p["pfc_enable"] for p in port_qos.values()} == {"3"}
    assert {p["dscp_to_tc_map"] for p in port_qos.values()} == {"ROCE"}
    wred = db["WRED_PROFILE"]["ROCE_LOSSLESS"]
    assert (wred["ecn"], wred["green_min_threshold"], wred["green_max_threshold"], wred["green_drop_probability"]) == (
        "ecn_all",
        "150000",
        "1500000",
        "100",
    )
    queue = db["QUEUE"]
    port = next(iter(port_qos))
    assert db["SCHEDULER"][queue[f"{port}|6"]["scheduler"]]["type"] == "STRICT"
    assert queue[f"{port}|3"]["wred_profile"] == "ROCE_LOSSLESS"
    assert db["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"]["3"] == "3" and db["PFC_WD"][port]["action"] == "drop"
    assert db["DEVICE_METADATA"]["localhost"]["default_pfcwd_status"] == "enable"
    assert {p["mtu"] for p in db["PORT"].values()} == {"9216"}
    assert db["BREAKOUT_CFG"]["Ethernet0"]["brkout_mode"] == "2x400G"


def test_cumulus_roce_profile() -> None:
    data = yaml.safe_load(_roce_files("cumulus")["configs/su1-rail3-leaf/startup.yaml"])
    qos: dict[str, Any] = data[0]["set"]["qos"]
    assert qos["roce"] == {"enable": "on", "mode": "lossless"}
    assert qos["mapping"]["default-global"]["dscp"] == {"26": {"switch-priority": 3}, "48": {"switch-priority": 6}}
    assert list(qos["pfc"]["default-global"]["switch-priority"]) == ["3"]
    ecn = qos["congestion-control"]["default-global"]["traffic-class"]["3"]
    assert (ecn["min-threshold"], ecn["max-threshold"], ecn["probability"]) == (150000, 1500000, 100)
    assert qos["egress-scheduler"]["default-global"]["traffic-class"]["6"]["mode"] == "strict"
    assert "pfc-watchdog" in qos


def test_eos_roce_profile() -> None:
    text = _roce_files("eos")["configs/su1-rail3-leaf/startup-config"]
    assert "qos map dscp 26 to traffic-class 3" in text and "qos map dscp 48 to traffic-class 6" in text
    # one qos profile holds the lossless class; every used port applies it
    profile = text.split("qos profile ROCE-LOSSLESS\n", 1)[1].split("\n!\n", 1)[0]
    assert re.findall(r"priority-flow-control priority (\d) no-drop", profile) == ["3"]
    assert (
        "random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1500000 bytes max-mark-probability 100"
        in profile
    )
    assert "   tx-queue 6\n      priority strict" in profile and "   qos trust dscp" in profile
    assert text.count("   service-profile ROCE-LOSSLESS\n") == 128
    assert "priority-flow-control pause watchdog" in text
    assert "mtu 9214" in text and "mtu 9216" not in text  # EOS's largest L3 MTU


def test_frr_roce_profile() -> None:
    text = _roce_files("frr")["configs/su1-rail3-leaf/interfaces"]
    assert text.count("dscp-prio 26:3 48:6") == 128
    assert text.count("prio-pfc all:off 3:on") == 128
    assert text.count("red ecn limit 6000000 avpkt 1000 probability 1 min 150000 max 1500000") == 128
    # CNP priority 6 → band 0 (strict), RoCE priority 3 → band 1
    assert "ets bands 3 strict 1 quanta 1500 1500 priomap 2 2 2 1 2 2 0 2" in text


def test_roce_is_the_default_on_compute_and_storage_only() -> None:
    assert built("roce-512").intents["spine01"].qos is not None
    four = built("superpod-h100-4su")
    assert all(i.qos is None for i in four.intents.values())  # in-band and out-of-band: no RoCE
    off = variant("roce-512", lambda d: d["fabrics"]["compute"].update(qos={"profile": "none"}))
    assert all(i.qos is None for i in off.intents.values())


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        ("sonic", '"24": "4"'),
        ("cumulus", "'24':\n              switch-priority: 4"),
        ("eos", "qos map dscp 24 to traffic-class 4"),
        ("frr", "dscp-prio 24:4 48:6"),
    ],
)
def test_changed_roce_values_reach_every_platform(platform: str, expected: str) -> None:
    data = spec_data("roce-512")
    data["fabrics"]["compute"]["platform"] = platform
    data["fabrics"]["compute"]["qos"] = {"roce_dscp": 24, "roce_priority": 4, "ecn_min_kb": 100}
    build = build_data(data)
    intent = build.intents["spine01"]
    assert intent.qos is not None
    assert (intent.qos.roce_dscp, intent.qos.roce_tc, intent.qos.ecn_min_bytes) == (24, 4, 100000)
    text = "".join(v.decode() for k, v in render_all(build).items() if k.startswith("configs/spine01/"))
    assert expected in text
    assert "26" not in re.findall(r"dscp[ -]prio (\d+)", text)


# --------------------------------------------------------------------------------------------- secrets


def _with_snmp(design: str = "lab", **ref: str) -> Any:
    return variant(design, lambda d: d.setdefault("management", {}).update(snmp_community=ref))


def test_secret_from_the_environment_is_written_0600(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FABRIC_TEST_SNMP", "s3cret-community")
    build = _with_snmp(env="FABRIC_TEST_SNMP")
    assert not build.errors
    files = render_all(build)
    leaf = files["configs/leaf1/frr.conf"]  # FRR's own files carry no SNMP; the platform's do
    assert b"s3cret" not in leaf
    assert files.private == {f"configs/{s}/{f}" for s in build.intents for f in ("frr.conf", "interfaces")}
    out = write_outputs(files, tmp_path / "out", build.name)
    assert stat.S_IMODE((out / "configs/leaf1/frr.conf").stat().st_mode) == 0o600
    assert stat.S_IMODE((out / "cabling.csv").stat().st_mode) == 0o644 & ~_umask()
    for platform in ("sonic", "cumulus", "eos"):
        data = spec_data("lab")
        data["fabrics"]["compute"]["platform"] = platform
        data["management"] = {"snmp_community": {"env": "FABRIC_TEST_SNMP"}}
        text = render_all(build_data(data))[f"configs/leaf1/{PLATFORMS[platform].files[0]}"]
        assert b"s3cret-community" in text, platform


def _umask() -> int:
    import os

    current = os.umask(0)
    os.umask(current)
    return current


def test_secret_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "snmp.txt"
    secret.write_text("from-a-file\n")
    data = spec_data("lab")
    data["fabrics"]["compute"]["platform"] = "sonic"
    data["management"] = {"snmp_community": {"file": str(secret)}}
    db = json.loads(render_all(build_data(data))["configs/leaf1/config_db.json"].decode())
    assert db["SNMP_COMMUNITY"] == {"from-a-file": {"TYPE": "RO"}}


def test_a_missing_secret_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FABRIC_NO_SUCH_SECRET", raising=False)
    build = _with_snmp(env="FABRIC_NO_SUCH_SECRET")
    [finding] = [f for f in build.findings if f.code == "secret-missing"]
    assert finding.severity == Severity.ERROR and finding.path == "management.snmp_community.env"
    assert "FABRIC_NO_SUCH_SECRET" in finding.message and "export" in finding.hint


# --------------------------------------------------------------------------------------------- capabilities


def test_frr_has_no_pfc_watchdog() -> None:
    build = on_platform("roce-512", "frr")
    [finding] = [f for f in build.findings if f.code == "platform-capability"]
    assert finding.severity == Severity.WARNING and "PFC watchdog" in finding.message
    assert "cumulus, eos, sonic" in finding.hint


def test_a_platform_that_cannot_do_what_the_spec_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    limited = platforms()["frr"].model_copy(update={"supports": frozenset({"breakout"})})
    monkeypatch.setitem(platforms(), "frr", limited)  # what the platform says about itself decides
    on_platform.cache_clear()
    try:
        build = on_platform("lab", "frr", unnumbered=True)
    finally:
        on_platform.cache_clear()
    found = {f.message.split(" cannot ")[1]: f.severity for f in build.findings if f.code == "platform-capability"}
    assert found == {
        "run BGP unnumbered (RFC 5549)": Severity.ERROR,
        "apply the RoCE lossless profile (DSCP maps, PFC, ECN)": Severity.ERROR,
    }


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        ("frr", " neighbor FABRIC password bgp-md5"),
        ("sonic", " neighbor FABRIC password bgp-md5"),
        ("eos", "   neighbor FABRIC password 0 bgp-md5"),
        ("cumulus", "password: bgp-md5"),
    ],
)
def test_bgp_password_is_a_secret(platform: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_TEST_BGP_PASSWORD", "bgp-md5")
    data = spec_data("lab")
    data["fabrics"]["compute"]["platform"] = platform
    data["fabrics"]["compute"]["routing"] = {"bgp_password": {"env": "FABRIC_TEST_BGP_PASSWORD"}}
    build = build_data(data)
    files = render_all(build)
    text = "".join(v.decode() for k, v in files.items() if k.startswith("configs/spine1/"))
    assert expected in text
    assert files.private == {f"configs/{s}/{f}" for s in build.intents for f in PLATFORMS[platform].files}
    assert b"bgp-md5" not in files["summary.json"] + files["cabling.csv"]


def _policy_read_back(platform: str) -> dict[str, object]:
    """The scheduling weights and PFC watchdog times as each platform's config spells them, in the intent's units."""
    text = "".join(_roce_files(platform).values())
    if platform == "sonic":
        db = json.loads(_roce_files("sonic")["configs/su1-rail3-leaf/config_db.json"])
        wd = next(v for k, v in db["PFC_WD"].items() if k != "GLOBAL")
        return {
            "weights": (int(db["SCHEDULER"]["ROCE_DWRR"]["weight"]), int(db["SCHEDULER"]["DEFAULT_DWRR"]["weight"])),
            "watchdog": (int(db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"]), int(wd["detection_time"])),
            "restore": int(wd["restoration_time"]),
        }
    if platform == "cumulus":
        qos = yaml.safe_load(text)[0]["set"]["qos"]
        tcs = qos["egress-scheduler"]["default-global"]["traffic-class"]
        poll = int(qos["pfc-watchdog"]["polling-interval"].removesuffix("ms"))
        return {
            "weights": (tcs["3"]["bw-percent"], tcs["0"]["bw-percent"]),
            "watchdog": (poll, poll * qos["pfc-watchdog"]["robustness"]),
        }
    if platform == "eos":

        def seconds(key: str) -> int:
            [value] = re.findall(rf"^priority-flow-control pause watchdog default {key} (\S+)$", text, re.M)
            return round(float(value) * 1000)

        [weight] = re.findall(r"^      bandwidth percent (\d+)$", text, re.M)[:1]
        return {
            "weights": (int(weight),),
            "watchdog": (seconds("polling-interval"), seconds("timeout")),
            "restore": seconds("recovery-time"),
        }
    [quanta] = set(re.findall(r" quanta (\d+) (\d+) ", text))
    return {"weights": tuple(int(q) // 30 for q in quanta)}


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_one_intent_gives_the_same_policy_values_on_every_platform(platform: str) -> None:
    qos = on_platform("roce-512", platform).intents["su1-rail3-leaf"].qos
    assert qos is not None and (qos.roce_weight, qos.default_weight) == (50, 50)
    found = _policy_read_back(platform)
    weights = found["weights"]
    assert isinstance(weights, tuple) and weights == (qos.roce_weight, qos.default_weight)[: len(weights)]
    if platform != "frr":  # Linux has no PFC watchdog (a platform-capability warning)
        assert found["watchdog"] == (qos.watchdog_poll_ms, qos.watchdog_detect_ms) == (100, 200)
    if "restore" in found:
        assert found["restore"] == qos.watchdog_restore_ms == 200
