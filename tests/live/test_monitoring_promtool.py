"""monitoring/ in Prometheus' own tool: `promtool check config` on prometheus.yml with its target files,
`promtool check rules` on every rules file, `promtool check metrics` on the plan's series, and `promtool test rules`
with synthetic exporter series: each alert kind fires when it should, with the plan's labels and the summary that
names where to go, and stays silent when it should not. The rules are the generated files, unchanged; the plan's
series are the generated textfile's lines, as the `fabric-plan` job scrapes them."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric import render_all
from fabric.pipeline import Build, build_fabric
from fabric.render.outputs.monitoring.rules import THROTTLE_REASONS, Rule, groups
from fabric.spec.loader import load_spec_text
from tests.conftest import DESIGNS, REPO, built, require_tool

pytestmark = [pytest.mark.real, pytest.mark.independent]  # promtool on files of its own
PLAN_SCRAPE = {"job": "fabric-plan", "instance": "localhost:9100"}
SERIES_RE = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def promtool() -> str:
    return require_tool("promtool", "apt-get install prometheus (Debian's package ships promtool)")


def run(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool(), *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=600, check=False
    )


def write_monitoring(build: Build, out: Path) -> Path:
    for path, data in render_all(build).items():
        if path.startswith("monitoring/"):
            (out / path).parent.mkdir(parents=True, exist_ok=True)
            (out / path).write_bytes(data)
    return out / "monitoring"


# --------------------------------------------------------------------------------------------- series


def _selector(name: str, labels: dict[str, str]) -> str:
    body = ", ".join(f'{k}="{v}"' for k, v in labels.items())
    return f"{name}{{{body}}}"


@dataclass
class Design:
    """A design's generated monitoring files and what a test needs of them."""

    build: Build
    dir: Path
    plan: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # plan series by metric name
    values: dict[tuple[str, str], str] = field(default_factory=dict)  # (metric, selector) → value

    @classmethod
    def of(cls, build: Build, tmp: Path) -> Design:
        design = cls(build, write_monitoring(build, tmp))
        for line in (design.dir / "textfile/fabric_plan.prom").read_text().splitlines():
            if line.startswith("#"):
                continue
            head, value = line.rsplit(" ", 1)
            name = head.split("{", 1)[0]
            labels = {k: v for k, v in SERIES_RE.findall(head[len(name) :])}
            design.plan.setdefault(name, []).append(labels)
            design.values[(name, _selector(name, labels))] = value
        return design

    def targets(self, job: str) -> list[dict[str, Any]]:
        return yaml.safe_load((self.dir / f"targets/{job}.yml").read_text())  # type: ignore[no-any-return]

    def target(self, job: str, hostname: str) -> tuple[str, dict[str, str]]:
        t = next(t for t in self.targets(job) if t["labels"]["hostname"] == hostname)
        return t["targets"][0], dict(t["labels"])

    def rules(self) -> dict[str, Rule]:
        return {r.name: r for g in groups(self.build) for r in g.rules if r.alert}

    def rule_files(self) -> list[str]:
        return sorted(str(p) for p in (self.dir / "rules").glob("*.yml"))

    def plan_series(self, only: frozenset[str] = frozenset()) -> list[dict[str, str]]:
        """Every plan series as the fabric-plan job scrapes it (its value held for the whole test); `only`: just
        those of these switches and their cables."""
        cables = {p["cable_id"] for p in self.plan["fabric_planned_port_info"] if p["hostname"] in only}
        out = []
        for name, rows in self.plan.items():
            for labels in rows:
                named = "hostname" in labels or "cable_id" in labels
                if only and named and labels.get("hostname") not in only and labels.get("cable_id") not in cables:
                    continue
                selector = _selector(name, {**labels, **PLAN_SCRAPE})
                out.append({"series": selector, "values": f"{self.values[(name, _selector(name, labels))]}x60"})
        return out

    def cable(self, cable_id: str) -> dict[str, str]:
        return next(c for c in self.plan["fabric_planned_cable_info"] if c["cable_id"] == cable_id)

    def ports(self, hostname: str) -> list[str]:
        return [p["port"] for p in self.plan["fabric_planned_port_info"] if p["hostname"] == hostname]

    def switches(self, technology: str) -> list[str]:
        """The switches with planned ports of one technology (Ethernet ones are SNMP targets)."""
        snmp = self.dir / "targets/snmp.yml"
        ethernet = {t["labels"]["hostname"] for t in self.targets("snmp")} if snmp.exists() else set()
        hosts = sorted({p["hostname"] for p in self.plan["fabric_planned_port_info"]})
        return [h for h in hosts if (h in ethernet) == (technology == "ethernet")]


def _go_value(value: float) -> str:
    """$value as Go's text/template prints a float64."""
    return str(int(value)) if value == int(value) and abs(value) < 1e21 else repr(value)


def expand(template: str, labels: dict[str, str], value: float) -> str:
    text = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), "<no value>"), template)
    return text.replace("{{ $value }}", _go_value(value))


def expected(rule: Rule, labels: dict[str, str], value: float = 1, runbook: str = "runbook.md") -> dict[str, Any]:
    return {
        "exp_labels": {**labels, "severity": rule.severity},
        "exp_annotations": {
            "summary": expand(rule.summary, labels, value),
            "description": expand(rule.description, labels, value),
            "runbook": f"{runbook}#{rule.anchor}",
        },
    }


def promtool_test(
    design: Design,
    tmp: Path,
    series: list[dict[str, str]],
    alerts: dict[str, list[dict[str, Any]]],
    at: str,
    only: frozenset[str] = frozenset(),
) -> None:
    """Run `promtool test rules` on the design's rules with these series; every alert of the design is checked at
    `at`: those in `alerts` fire exactly as given, all others are silent."""
    checks = [
        {"eval_time": at, "alertname": name, "exp_alerts": alerts.get(name, [])} for name in sorted(design.rules())
    ]
    assert set(alerts) <= set(design.rules()), sorted(set(alerts) - set(design.rules()))
    test = {
        "rule_files": design.rule_files(),
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": design.plan_series(only) + series, "alert_rule_test": checks}],
    }
    path = tmp / "test.yml"
    path.write_text(yaml.safe_dump(test, sort_keys=False, width=1000))
    result = run("test", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


# --------------------------------------------------------------------------------------------- exporters


def snmp_series(
    d: Design,
    state: Callable[[str, str], str] = lambda h, p: "1x60",
    errors: Callable[[str, str], str] = lambda h, p: "0x60",
    skip: tuple[str, ...] = (),
    only: frozenset[str] = frozenset(),
) -> list[dict[str, str]]:
    """ifOperStatus and ifInErrors of every planned switch port, as snmp_exporter's if_mib module labels them."""
    out = []
    for host in d.switches("ethernet"):
        if host in skip or (only and host not in only):
            continue
        address, labels = d.target("snmp", host)
        for index, port in enumerate(d.ports(host), start=1):
            base = {
                **labels,
                "job": "snmp",
                "instance": address,
                "ifIndex": str(index),
                "ifName": port,
                "ifDescr": port,
            }
            out.append({"series": _selector("ifOperStatus", base), "values": state(host, port)})
            out.append({"series": _selector("ifInErrors", base), "values": errors(host, port)})
    return out


def ib_series(
    d: Design, width: Callable[[str, str], str] = lambda h, p: "4x60", only: frozenset[str] = frozenset()
) -> list[dict[str, str]]:
    """infiniband_width of every planned switch port, as infiniband-exporter labels it (Active ports only)."""
    address, labels = d.targets("infiniband")[0]["targets"][0], d.targets("infiniband")[0]["labels"]
    out = []
    for host in d.switches("infiniband"):
        if only and host not in only:
            continue
        for port in d.ports(host):
            base = {
                **labels,
                "job": "infiniband",
                "instance": address,
                "component": "switch",
                "local_name": host,
                "local_guid": "0x1",
                "local_port": port,
                "remote_guid": "0x2",
                "remote_name": "peer",
                "remote_port": "1",
            }
            out.append({"series": _selector("infiniband_width", base), "values": width(host, port)})
    return out


def with_counter(series: list[dict[str, str]], metric: str, host: str, port: str, values: str) -> list[dict[str, str]]:
    """A counter next to one port's state series, with the same labels."""
    for s in series:
        name = s["series"].split("{", 1)[0]
        labels = dict(SERIES_RE.findall(s["series"][len(name) :]))
        if name == "infiniband_width" and labels.get("local_name") == host and labels.get("local_port") == port:
            return [*series, {"series": _selector(metric, labels), "values": values}]
    raise AssertionError(f"no port {host} {port}")


# --------------------------------------------------------------------------------------------- Ethernet


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Design:
    promtool()
    return Design.of(built("lab"), tmp_path_factory.mktemp("lab"))


def test_lab_is_silent_when_everything_is_as_planned(lab: Design, tmp_path: Path) -> None:
    promtool_test(lab, tmp_path, snmp_series(lab) + frr_series(lab), {}, "15m")


def test_planned_ethernet_link_down_names_the_cable(lab: Design, tmp_path: Path) -> None:
    cable = lab.cable("compute-0001")  # srv1 eth1 > leaf1 swp1
    assert (cable["b_device"], cable["b_port"]) == ("leaf1", "swp1")
    down = snmp_series(lab, lambda h, p: "1 1 1 2x60" if (h, p) == ("leaf1", "swp1") else "1x60")
    rule = lab.rules()["FabricPlannedLinkDown"]
    promtool_test(lab, tmp_path, down + frr_series(lab), {rule.name: [expected(rule, cable)]}, "10m")
    assert expand(rule.summary, cable, 1) == "Cable compute-0001 is down: A01 U1 srv1 eth1 <-> A02 U1 leaf1 swp1"


def test_a_switch_link_down_at_both_ends_is_one_alert(lab: Design, tmp_path: Path) -> None:
    cable = next(c for c in lab.plan["fabric_planned_cable_info"] if c["tier"] == "leaf-spine")
    ends = {(cable["a_device"], cable["a_port"]), (cable["b_device"], cable["b_port"])}
    down = snmp_series(lab, lambda h, p: "1 1 2x60" if (h, p) in ends else "1x60")
    rule = lab.rules()["FabricPlannedLinkDown"]
    # the BGP sessions over that link go down too
    bgp_rule = lab.rules()["FabricBgpSessionDown"]
    sessions = [s for s in lab.plan["fabric_planned_bgp_session_info"] if (s["hostname"], s["interface"]) in ends]
    # one per end and family: a numbered dual-stack link carries an IPv4 and an IPv6 session
    assert len(sessions) == 4 and sum(":" in s["peer"] for s in sessions) == 2
    bgp = frr_series(lab, lambda s: "1 1 0x60" if s in sessions else "1x60")
    promtool_test(
        lab,
        tmp_path,
        down + bgp,
        {rule.name: [expected(rule, cable)], bgp_rule.name: [expected(bgp_rule, s) for s in sessions]},
        "10m",
    )


def test_unplanned_link_and_silent_switch(lab: Design, tmp_path: Path) -> None:
    series = snmp_series(lab, skip=("spine2",))
    address, labels = lab.target("snmp", "leaf1")
    extra = {**labels, "job": "snmp", "instance": address, "ifIndex": "99", "ifName": "swp30", "ifDescr": "swp30"}
    series.append({"series": _selector("ifOperStatus", extra), "values": "1x60"})
    loopback = {**extra, "ifIndex": "100", "ifName": "lo", "ifDescr": "lo"}  # up, unplanned, not a cable: silent
    series.append({"series": _selector("ifOperStatus", loopback), "values": "1x60"})
    leaf1 = next(d for d in lab.plan["fabric_planned_device_info"] if d["hostname"] == "leaf1")
    spine2 = next(d for d in lab.plan["fabric_planned_device_info"] if d["hostname"] == "spine2")
    unplanned, silent = lab.rules()["FabricUnplannedLinkUp"], lab.rules()["FabricSwitchNotReporting"]
    found = {"hostname": "leaf1", "port": "swp30", "source": "snmp", "rack": leaf1["rack"], "u": leaf1["u"]}
    found["fabric"] = leaf1["fabric"]
    promtool_test(
        lab,
        tmp_path,
        series + frr_series(lab, skip=("spine2",)),
        {unplanned.name: [expected(unplanned, found)], silent.name: [expected(silent, spine2)]},
        "10m",
    )


def test_flapping_and_erroring_ethernet_links(lab: Design, tmp_path: Path) -> None:
    series = snmp_series(
        lab,
        lambda h, p: "1 2 1 2 1 2 1x60" if (h, p) == ("leaf2", "swp1") else "1x60",
        lambda h, p: "0+100x60" if (h, p) == ("leaf3", "swp1") else "0x60",
    )
    flaps, errors = lab.rules()["FabricLinkFlapping"], lab.rules()["FabricLinkErrors"]
    cables = lab.plan["fabric_planned_cable_info"]
    flapped = next(c for c in cables if (c["b_device"], c["b_port"]) == ("leaf2", "swp1"))
    erring = next(c for c in cables if (c["b_device"], c["b_port"]) == ("leaf3", "swp1"))
    promtool_test(
        lab,
        tmp_path,
        series + frr_series(lab),
        {flaps.name: [expected(flaps, flapped)], errors.name: [expected(errors, erring)]},
        "9m",
    )


def frr_series(
    d: Design,
    state: Callable[[dict[str, str]], str] = lambda s: "1x60",
    skip: tuple[str, ...] = (),
    only: frozenset[str] = frozenset(),
) -> list[dict[str, str]]:
    """frr_bgp_peer_state of every planned session, as frr_exporter labels it (one per address family)."""
    out = []
    for s in d.plan.get("fabric_planned_bgp_session_info", []):
        if s["hostname"] in skip or (only and s["hostname"] not in only):
            continue
        address, labels = d.target("frr", s["hostname"])
        base = {**labels, "job": "frr", "instance": address, "peer": s["peer"], "vrf": "default"}
        base |= {"afi": "ipv4", "safi": "unicast", "local_as": s["asn"], "peer_as": s.get("peer_asn", "")}
        out.append({"series": _selector("frr_bgp_peer_state", base), "values": state(s)})
    return out


# --------------------------------------------------------------------------------------------- InfiniBand


@pytest.fixture(scope="module")
def lab_ib(tmp_path_factory: pytest.TempPathFactory) -> Design:
    promtool()
    return Design.of(built("lab-ib"), tmp_path_factory.mktemp("lab-ib"))


def test_lab_ib_is_silent_when_everything_is_as_planned(lab_ib: Design, tmp_path: Path) -> None:
    promtool_test(lab_ib, tmp_path, ib_series(lab_ib), {}, "15m")


def test_planned_infiniband_link_down_flapping_and_errors(lab_ib: Design, tmp_path: Path) -> None:
    down = lab_ib.cable("compute-0001")
    port = next(p["port"] for p in lab_ib.plan["fabric_planned_port_info"] if p["cable_id"] == "compute-0001")
    assert port.isdigit()  # the IB port number infiniband-exporter reports, not the cage name
    # the exporter drops a port whose link is no longer Active: its series goes stale
    series = ib_series(lab_ib, lambda h, p: "4 4 4 stale" if (h, p) == (down["b_device"], port) else "4x60")
    flapped = lab_ib.cable("compute-0002")
    flap_port = next(p["port"] for p in lab_ib.plan["fabric_planned_port_info"] if p["cable_id"] == "compute-0002")
    series = with_counter(series, "infiniband_linkdownedcounter_total", flapped["b_device"], flap_port, "0+1x60")
    erring = lab_ib.cable("compute-0003")
    err_port = next(p["port"] for p in lab_ib.plan["fabric_planned_port_info"] if p["cable_id"] == "compute-0003")
    series = with_counter(series, "infiniband_symbolerrorcounter_total", erring["b_device"], err_port, "0+100x60")
    rules = lab_ib.rules()
    promtool_test(
        lab_ib,
        tmp_path,
        series,
        {
            "FabricPlannedLinkDown": [expected(rules["FabricPlannedLinkDown"], down)],
            "FabricLinkFlapping": [expected(rules["FabricLinkFlapping"], flapped)],
            "FabricLinkErrors": [expected(rules["FabricLinkErrors"], erring)],
        },
        "10m",
    )


# --------------------------------------------------------------------------------------------- RoCE, GPUs, power


def roce_design(tmp: Path, extra: str = "") -> Design:
    if not extra:
        return Design.of(built("roce-512"), tmp)
    text = (DESIGNS / "roce-512.yaml").read_text() + extra
    return Design.of(build_fabric(load_spec_text(text, base_dir=DESIGNS)), tmp)


@pytest.fixture(scope="module")
def roce(tmp_path_factory: pytest.TempPathFactory) -> Design:
    promtool()
    return roce_design(tmp_path_factory.mktemp("roce"))


def node_labels(d: Design, job: str, host: str, **extra: str) -> dict[str, str]:
    address, labels = d.target(job, host)
    return {**labels, "job": job, "instance": address, **extra}


def _base(d: Design) -> list[dict[str, str]]:
    return snmp_series(d) + frr_series(d)


@pytest.mark.parametrize("fires", [True, False])
def test_pfc_storm_and_ecn_marking(roce: Design, tmp_path: Path, fires: bool) -> None:
    pause = node_labels(roce, "node", "gpu001", device="nic0")
    storm = node_labels(roce, "node", "gpu002", device="nic3")
    ecn = node_labels(roce, "node", "gpu003", device="mlx5_0", port="1")
    per_min = 120000 if fires else 6000  # 2000/s vs 100/s against 1000/s
    series = [
        {"series": _selector("node_ethtool_transmitted_prio3_pause", pause), "values": f"0+{per_min}x60"},
        {"series": _selector("node_ethtool_received_prio3_pause", pause), "values": "0x60"},
        {
            "series": _selector("node_ethtool_transmitted_pause_storm_warning_events", storm),
            "values": "0x5 1+1x60" if fires else "0x60",  # a warning a minute
        },
        {
            "series": _selector("node_infiniband_np_ecn_marked_roce_packets_received_total", ecn),
            "values": f"0+{per_min * 10}x60",
        },
    ]
    rules = roce.rules()
    alerts = {
        "FabricPfcStorm": [
            expected(rules["FabricPfcStorm"], {**pause, "direction": "sent by the NIC"}),
            expected(
                rules["FabricPfcStorm"], {**storm, "direction": "sent by the NIC, its pause-storm watchdog warning"}
            ),
        ],
        "FabricEcnMarking": [expected(rules["FabricEcnMarking"], ecn)],
    }
    promtool_test(roce, tmp_path, _base(roce) + series, alerts if fires else {}, "11m")
    assert pause["rack"] == "A01" and pause["hostname"] == "gpu001"  # the plan's labels reach the alert


def _gpu(d: Design, host: str, index: int) -> dict[str, str]:
    gpu = node_labels(d, "dcgm", host, gpu=str(index), UUID=f"GPU-{index}", device=f"nvidia{index}", modelName="H100")
    gpu["Hostname"] = host
    return gpu


@pytest.mark.parametrize("fires", [True, False])
def test_gpu_xid_temperature_power(roce: Design, tmp_path: Path, fires: bool) -> None:
    gpu, app = _gpu(roce, "gpu005", 3), _gpu(roce, "gpu006", 1)
    xid, user_xid, temp, power = (79, 13, 95, 750) if fires else (0, 0, 60, 500)
    series = [
        {"series": _selector("DCGM_FI_DEV_XID_ERRORS", gpu), "values": f"0 0 {xid}x60"},
        {"series": _selector("DCGM_FI_DEV_XID_ERRORS", app), "values": f"0 0 0 {user_xid}x60"},
        {"series": _selector("DCGM_FI_DEV_GPU_TEMP", gpu), "values": f"{temp}x60"},
        {"series": _selector("DCGM_FI_DEV_POWER_USAGE", gpu), "values": f"{power}x60"},
    ]
    rules = roce.rules()
    alerts = {
        "FabricGpuXidError": [expected(rules["FabricGpuXidError"], gpu, xid)],  # hardware XID 79: critical
        "FabricGpuXidWarning": [expected(rules["FabricGpuXidWarning"], app, user_xid)],  # application XID 13
        "FabricGpuTemperature": [expected(rules["FabricGpuTemperature"], gpu, temp)],
        "FabricGpuPower": [expected(rules["FabricGpuPower"], gpu, power)],
    }
    promtool_test(roce, tmp_path, _base(roce) + series, alerts if fires else {}, "10m")
    assert rules["FabricGpuXidError"].severity == "critical" and rules["FabricGpuXidWarning"].severity == "warning"


def test_an_old_xid_does_not_latch(roce: Design, tmp_path: Path) -> None:
    """The same series as above, 20 minutes after the XIDs: the gauge still holds 79 and 13, nothing fires (the
    old `DCGM_FI_DEV_XID_ERRORS > 0` fired here forever); a new XID 48 after them fires again."""
    gpu, app, again = _gpu(roce, "gpu005", 3), _gpu(roce, "gpu006", 1), _gpu(roce, "gpu007", 0)
    series = [
        {"series": _selector("DCGM_FI_DEV_XID_ERRORS", gpu), "values": "0 0 79x60"},
        {"series": _selector("DCGM_FI_DEV_XID_ERRORS", app), "values": "0 0 0 13x60"},
        {"series": _selector("DCGM_FI_DEV_XID_ERRORS", again), "values": "0 0 79x25 48x30"},
    ]
    rule = roce.rules()["FabricGpuXidError"]
    promtool_test(roce, tmp_path, _base(roce) + series, {rule.name: [expected(rule, again, 48)]}, "30m")


@pytest.mark.parametrize("fires", [True, False])
def test_gpu_throttled_and_hbm_temperature(roce: Design, tmp_path: Path, fires: bool) -> None:
    """Clock event reasons: HW thermal slowdown (0x40) and HW power brake (0x80) fire, each with its reason; the
    GPU capping itself at its power limit (SW power cap, 0x4) and idle (0x1) do not. HBM at or above the memory's
    maximum operating temperature fires."""
    hot, brake, capped = _gpu(roce, "gpu009", 0), _gpu(roce, "gpu009", 1), _gpu(roce, "gpu010", 2)
    reasons = (0x40 | 0x4, 0x80, 0x4 | 0x1) if fires else (0x4, 0x1, 0x0)
    hbm = 96 if fires else 80
    series = [
        {"series": _selector("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", hot), "values": f"{reasons[0]}x60"},
        {"series": _selector("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", brake), "values": f"{reasons[1]}x60"},
        {"series": _selector("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", capped), "values": f"{reasons[2]}x60"},
        {"series": _selector("DCGM_FI_DEV_MEMORY_TEMP", hot), "values": f"{hbm}x60"},
        {"series": _selector("DCGM_FI_DEV_MEM_MAX_OP_TEMP", hot), "values": "95x60"},
        {"series": _selector("DCGM_FI_DEV_MEMORY_TEMP", capped), "values": "70x60"},
        {"series": _selector("DCGM_FI_DEV_MEM_MAX_OP_TEMP", capped), "values": "95x60"},
    ]
    rules = roce.rules()
    throttled = rules["FabricGpuThrottled"]
    alerts = {
        throttled.name: [
            expected(throttled, {**hot, "reason": THROTTLE_REASONS[0x40]}),
            expected(throttled, {**brake, "reason": THROTTLE_REASONS[0x80]}),
        ],
        "FabricGpuMemoryTemperature": [expected(rules["FabricGpuMemoryTemperature"], hot, hbm)],
    }
    promtool_test(roce, tmp_path, _base(roce) + series, alerts if fires else {}, "10m")


@pytest.mark.parametrize("fires", [True, False])
def test_rack_power_over_budget(roce: Design, tmp_path: Path, fires: bool) -> None:
    rack = [t["labels"]["hostname"] for t in roce.targets("ipmi") if t["labels"]["rack"] == "A01"]
    assert len(rack) == 4
    watts = 12000 if fires else 10000  # 4 × 12 kW = 48 kW over the 45 kW budget
    series = [
        {
            "series": _selector("ipmi_dcmi_power_consumption_watts", node_labels(roce, "ipmi", h)),
            "values": f"{watts}x60",
        }
        for h in rack
    ]
    rule = roce.rules()["FabricRackPower"]
    alerts = {rule.name: [expected(rule, {"rack": "A01"}, 4 * watts)]}
    promtool_test(roce, tmp_path, _base(roce) + series, alerts if fires else {}, "10m")


@pytest.mark.parametrize("held", [True, False])
def test_idle_gpu_under_a_job(tmp_path: Path, held: bool) -> None:
    promtool()
    d = roce_design(tmp_path / "design", "monitoring: {thresholds: {gpu_idle: true}, runbook_url: https://ops/rb}\n")
    gpu = node_labels(d, "dcgm", "gpu007", gpu="0", UUID="GPU-0", device="nvidia0", modelName="H100")
    if held:
        gpu["hpc_job"] = "4242"
    series = [{"series": _selector("DCGM_FI_DEV_GPU_UTIL", gpu), "values": "2x60"}]
    rule = d.rules()["FabricGpuIdle"]
    alerts = {rule.name: [expected(rule, gpu, 2, runbook="https://ops/rb")]}
    promtool_test(d, tmp_path, _base(d) + series, alerts if held else {}, "40m")


# --------------------------------------------------------------------------------------------- whole designs


@pytest.mark.parametrize("design", sorted(p.stem for p in DESIGNS.glob("*.yaml")))
def test_config_rules_and_plan_series_pass_promtool(design: str, tmp_path: Path) -> None:
    out = write_monitoring(built(design), tmp_path)
    config = run("check", "config", "prometheus.yml", cwd=out)
    assert config.returncode == 0, config.stdout + config.stderr
    rule_files = sorted(str(p) for p in (out / "rules").glob("*.yml"))
    assert len(rule_files) >= 2
    assert config.stdout.count("SUCCESS") == len(rule_files) + 2, config.stdout  # each rules file and the config
    rules = run("check", "rules", *rule_files)
    assert rules.returncode == 0, rules.stdout + rules.stderr
    metrics = run("check", "metrics", stdin=(out / "textfile/fabric_plan.prom").read_text())
    assert metrics.returncode == 0 and not metrics.stdout.strip(), metrics.stdout + metrics.stderr


@pytest.mark.slow
def test_a_32k_gpu_designs_rules_load(tmp_path: Path) -> None:
    """The 32k-GPU benchmark design (4096 DGX H100, 3-tier InfiniBand): config, rules and plan series in promtool.
    The times are printed, never asserted."""
    promtool()
    sys.path.insert(0, str(REPO / "benchmarks"))
    from run import spec_text  # type: ignore[import-not-found]

    build = build_fabric(load_spec_text(spec_text("32k", 4096, 1), base_dir=tmp_path))
    assert len(build.allocation.cables) > 90_000
    out = write_monitoring(build, tmp_path)
    times = {}
    for name, args, stdin in (
        ("check config", ("check", "config", "prometheus.yml"), None),
        ("check rules", ("check", "rules", *sorted(str(p) for p in (out / "rules").glob("*.yml"))), None),
        ("check metrics", ("check", "metrics"), (out / "textfile/fabric_plan.prom").read_text()),
    ):
        start = time.perf_counter()
        result = run(*args, stdin=stdin, cwd=out)
        times[name] = round(time.perf_counter() - start, 2)
        assert result.returncode == 0, result.stdout + result.stderr
    size = (out / "textfile/fabric_plan.prom").stat().st_size
    print(
        f"\n32k GPUs, {len(build.allocation.cables)} cables, plan series {size / 1e6:.1f} MB; promtool seconds: {times}"
    )


def test_the_default_design_names_infiniband_and_ethernet_cables(tmp_path: Path) -> None:
    """The 4-SU design (four fabrics, InfiniBand and Ethernet): a compute cable and an in-band cable down. promtool's
    unit-test engine holds at most a few thousand samples per query (Prometheus itself 50 million), so the test
    gives it the plan's series of the two leaves concerned and their cables, not of all 3,233 cables."""
    promtool()
    d = Design.of(built("superpod-h100-4su"), tmp_path / "design")
    ib = d.cable("compute-0001")
    ib_port = next(p["port"] for p in d.plan["fabric_planned_port_info"] if p["cable_id"] == "compute-0001")
    eth = next(c for c in d.plan["fabric_planned_cable_info"] if c["fabric"] == "inband")
    only = frozenset({ib["b_device"], eth["b_device"]})
    series = ib_series(d, lambda h, p: "4 4 4 stale" if (h, p) == (ib["b_device"], ib_port) else "4x60", only)
    series += snmp_series(
        d, lambda h, p: "1 1 1 2x60" if (h, p) == (eth["b_device"], eth["b_port"]) else "1x60", only=only
    )
    rule = d.rules()["FabricPlannedLinkDown"]
    alerts = {rule.name: [expected(rule, ib), expected(rule, eth)]}
    promtool_test(d, tmp_path, series + frr_series(d, only=only), alerts, "10m", only)
