"""monitoring/rules/*.yml: Prometheus alert and recording rules that know the plan.

Link rules scale with the plan, not with the rule count: recording rules turn each exporter's port state into
`fabric:port_up{hostname, port}` (IF-MIB ifOperStatus on Ethernet, infiniband-exporter's per-Active-port series on
InfiniBand), and one alert compares it with the plan's series (textfile.py): a planned port not up, on a switch
that reports, is its cable down; the alert carries the cable's labels (id, label, both ends' rack, U, device,
port). Groups are written only where they apply (RoCE rules with a RoCE fabric, BGP rules with FRR-based
switches, GPU rules with GPU nodes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fabric.pipeline import Build
from fabric.render.engine.registry import Output
from fabric.render.outputs.monitoring import planned_series as plan
from fabric.render.outputs.monitoring.yamlout import dump

# front-panel ports: SONiC/EOS `Ethernet…`, Cumulus/Linux `swp…`, InfiniBand port numbers (not lo, bridges, VLANs,
# port channels, management ports): only these can be an unplanned link
FRONT_PANEL = "(Ethernet|swp)[0-9].*|[0-9]+"
SCRAPE = "instance, job"  # labels a scrape adds to the plan's series; dropped so alerts carry the plan's


@dataclass(frozen=True)
class Rule:
    name: str  # alert name, or the recorded series
    expr: str
    alert: bool = True
    duration: str = "0s"
    severity: str = "warning"
    summary: str = ""
    description: str = ""
    uses: tuple[str, ...] = ()  # exporter metrics (for the runbook and the note)
    source: str = ""  # recording rules: the exporter, a label that keeps one record name per exporter apart

    @property
    def anchor(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Group:
    name: str
    file: str
    rules: tuple[Rule, ...] = field(default_factory=tuple)


def _ib_port(metric: str) -> str:
    """An infiniband-exporter switch-port series relabelled to (hostname, port)."""
    return (
        f'label_replace(label_replace({metric}, "hostname", "$1", "local_name", "(.+)"), '
        f'"port", "$1", "local_port", "(.+)")'
    )


def _snmp_port(metric: str) -> str:
    return f'label_replace({metric}, "port", "$1", "ifName", "(.+)")'


WHERE_A = "{{ $labels.a_rack }} U{{ $labels.a_u }} {{ $labels.a_device }} {{ $labels.a_port }}"
WHERE_B = "{{ $labels.b_rack }} U{{ $labels.b_u }} {{ $labels.b_device }} {{ $labels.b_port }}"
WHERE_HOST = "{{ $labels.hostname }} ({{ $labels.rack }} U{{ $labels.u }})"


def _planned_cables(expr_per_port: str) -> str:
    """The cables (with their planned labels) of the planned switch ports `expr_per_port` selects."""
    return (
        f"max without ({SCRAPE}) (fabric_planned_cable_info * on(cable_id) group_left() "
        f"max by (cable_id) ({expr_per_port}))"
    )


def link_group(build: Build) -> Group:
    t = plan.settings(build).thresholds
    technologies = {ft.technology for ft in build.topology.fabrics.values() if ft.switches}
    records: list[Rule] = []
    ib_sel = '{job="infiniband", component="switch"}'
    snmp_sel = '{job="snmp"}'
    if "ethernet" in technologies:
        records += [
            Rule(
                "fabric:port_up",
                f"max by (hostname, port) ({_snmp_port(f'ifOperStatus{snmp_sel}')} == bool 1)",
                False,
                source="snmp",
            ),
            Rule(
                "fabric:port_flaps",
                f"max by (hostname, port) ({_snmp_port(f'changes(ifOperStatus{snmp_sel}[{t.flap_window}])')})",
                False,
                source="snmp",
            ),
            Rule(
                "fabric:port_errors_per_min",
                f"60 * max by (hostname, port) ({_snmp_port(f'rate(ifInErrors{snmp_sel}[{t.flap_window}])')})",
                False,
                source="snmp",
            ),
        ]
    if "infiniband" in technologies:
        records += [
            Rule(
                "fabric:port_up",
                f"max by (hostname, port) ({_ib_port(f'infiniband_width{ib_sel}')} > bool 0)",
                False,
                source="infiniband",
            ),
            Rule(
                "fabric:port_flaps",
                f"max by (hostname, port) "
                f"({_ib_port(f'increase(infiniband_linkdownedcounter_total{ib_sel}[{t.flap_window}])')})",
                False,
                source="infiniband",
            ),
            Rule(
                "fabric:port_errors_per_min",
                f"60 * max by (hostname, port) "
                f"({_ib_port(f'rate(infiniband_symbolerrorcounter_total{ib_sel}[{t.flap_window}])')})",
                False,
                source="infiniband",
            ),
        ]
    records.append(Rule("fabric:device_reporting", "count by (hostname) (fabric:port_up)", False))
    state = ("ifOperStatus", "infiniband_width")
    alerts = [
        Rule(
            "FabricPlannedLinkDown",
            _planned_cables(
                "(fabric_planned_port_info unless on(hostname, port) (fabric:port_up == 1)) "
                "and on(hostname) fabric:device_reporting"
            ),
            duration=t.link_down_for,
            severity="critical",
            summary=f"Cable {{{{ $labels.cable_id }}}} is down: {WHERE_A} <-> {WHERE_B}",
            description="Planned {{ $labels.tier }} cable of fabric {{ $labels.fabric }} ({{ $labels.part }}, "
            "{{ $labels.media }}) is not up at a switch end. Label: {{ $labels.label }}",
            uses=state,
        ),
        Rule(
            "FabricUnplannedLinkUp",
            f'max without ({SCRAPE}) ((fabric:port_up{{port=~"{FRONT_PANEL}"}} == 1) '
            "unless on(hostname, port) fabric_planned_port_info) "
            f"* on(hostname) group_left(rack, u, fabric) max without ({SCRAPE}) (fabric_planned_device_info)",
            duration=t.link_down_for,
            summary=f"{WHERE_HOST} port {{{{ $labels.port }}}} is up but the plan has no cable there",
            description="A link the cabling plan does not have: a cable in the wrong port or an extra cable.",
            uses=state,
        ),
        Rule(
            "FabricSwitchNotReporting",
            f'max without ({SCRAPE}) (fabric_planned_device_info{{layer!="node"}}) '
            "unless on(hostname) fabric:device_reporting",
            duration="5m",
            severity="critical",
            summary=f"No port data from switch {WHERE_HOST}",
            description="The switch, its management port, SNMP, or its fabric's exporter is down: its links are "
            "not being watched.",
            uses=state,
        ),
        Rule(
            "FabricLinkFlapping",
            _planned_cables(
                f"fabric_planned_port_info * on(hostname, port) group_left() (fabric:port_flaps >= {t.flaps})"
            ),
            severity="warning",
            summary=f"Cable {{{{ $labels.cable_id }}}} is flapping: {WHERE_A} <-> {WHERE_B}",
            description=f"At least {t.flaps} link state changes in {t.flap_window}. Label: {{{{ $labels.label }}}}",
            uses=("ifOperStatus", "infiniband_linkdownedcounter_total"),
        ),
        Rule(
            "FabricLinkErrors",
            _planned_cables(
                "fabric_planned_port_info * on(hostname, port) group_left() "
                f"(fabric:port_errors_per_min > {t.port_errors_per_min:g})"
            ),
            duration="5m",
            summary=f"Cable {{{{ $labels.cable_id }}}} has errors: {WHERE_A} <-> {WHERE_B}",
            description=f"More than {t.port_errors_per_min:g} symbol (IB) or input (Ethernet) errors per minute "
            f"over {t.flap_window}. Label: {{{{ $labels.label }}}}",
            uses=("ifInErrors", "infiniband_symbolerrorcounter_total"),
        ),
    ]
    return Group("fabric-links", "rules/fabric-links.yml", (*records, *alerts))


def roce_group(build: Build) -> Group:
    t = plan.settings(build).thresholds
    p = plan.roce_priority(build)
    node = '{job="node"}'
    storm = (
        f"label_replace(rate(node_ethtool_transmitted_prio{p}_pause{node}[5m]) > {t.pfc_pause_per_s:g}, "
        '"direction", "sent by the NIC", "", "") '
        f"or label_replace(rate(node_ethtool_received_prio{p}_pause{node}[5m]) > {t.pfc_pause_per_s:g}, "
        '"direction", "received by the NIC", "", "") '
        f"or label_replace(increase(node_ethtool_transmitted_pause_storm_warning_events{node}[5m]) > 0, "
        '"direction", "sent by the NIC, its pause-storm watchdog warning", "", "")'
    )
    return Group(
        "fabric-roce",
        "rules/fabric-roce.yml",
        (
            Rule(
                "FabricPfcStorm",
                storm,
                duration="5m",
                severity="critical",
                summary=f"PFC storm on priority {p} at {WHERE_HOST} {{{{ $labels.device }}}}: pause frames "
                "{{ $labels.direction }}",
                description=f"Pause frames on the lossless priority {p} above {t.pfc_pause_per_s:g}/s for 5 minutes, "
                "or the NIC's pause-storm watchdog warned: the switch's PFC watchdog is about to drop the queue.",
                uses=(
                    f"node_ethtool_transmitted_prio{p}_pause",
                    f"node_ethtool_received_prio{p}_pause",
                    "node_ethtool_transmitted_pause_storm_warning_events",
                ),
            ),
            Rule(
                "FabricEcnMarking",
                f"rate(node_infiniband_np_ecn_marked_roce_packets_received_total{node}[5m]) > {t.ecn_marked_per_s:g}",
                duration="5m",
                summary=f"Heavy ECN marking towards {WHERE_HOST} {{{{ $labels.device }}}}",
                description=f"More than {t.ecn_marked_per_s:g} ECN-marked RoCE packets per second arrive: a congested "
                "path towards this NIC (incast, a slow or failed uplink).",
                uses=("node_infiniband_np_ecn_marked_roce_packets_received_total",),
            ),
        ),
    )


def bgp_group(build: Build) -> Group:
    frr = '{job="frr"}'
    return Group(
        "fabric-bgp",
        "rules/fabric-bgp.yml",
        (
            Rule(
                "FabricBgpSessionDown",
                f"max without ({SCRAPE}) (fabric_planned_bgp_session_info) "
                f"unless on(hostname, peer) (frr_bgp_peer_state{frr} == 1) "
                f"and on(hostname) count by (hostname) (frr_bgp_peer_state{frr})",
                duration="2m",
                severity="critical",
                summary=f"BGP session {WHERE_HOST} -> {{{{ $labels.peer_device }}}} ({{{{ $labels.peer }}}}) is down",
                description="Planned session over {{ $labels.interface }} to {{ $labels.peer_device }} "
                "{{ $labels.peer_port }} (AS {{ $labels.peer_asn }}) is not established.",
                uses=("frr_bgp_peer_state",),
            ),
        ),
    )


# XIDs that mean failing hardware (critical; any other new XID is a warning: 13, 31, 43 and 45 are faults of the
# application, NVIDIA's catalog buckets them RESTART_APP). 48 double-bit ECC, 63/64 page retirement or row remap
# recorded / failed (Dynamic Page Retirement, https://docs.nvidia.com/deploy/dynamic-page-retirement/visibility.html),
# 74 NVLink error, 79 fallen off the bus, 92 high single-bit ECC rate, 94/95 contained / uncontained ECC error (Xid
# catalog, https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html). unverified: each row's resolution
# bucket in the catalog's spreadsheet was not read one by one.
HARDWARE_XIDS = (48, 63, 64, 74, 79, 92, 94, 95)
# DCGM_FI_DEV_CLOCKS_EVENT_REASONS (field 112; DCGM_FI_DEV_CLOCK_THROTTLE_REASONS is its older name) bits that mean
# power or thermal trouble, from DCGM's dcgm_fields (DCGM_CLOCKS_EVENT_REASON_*, "a 1:1 map to the NVML reasons"):
# bit → what the GPU reports. Not SW_POWER_CAP (0x4): the GPU capping itself at its power limit is normal under load.
THROTTLE_REASONS = {
    0x8: "HW slowdown (temperature, power brake or fast-trigger power protection; clocks halved or worse)",
    0x20: "SW thermal slowdown (GPU or memory above its maximum operating temperature)",
    0x40: "HW thermal slowdown (clocks halved or worse)",
    0x80: "HW power brake (external power brake assertion, e.g. by the power supply)",
}


def _xid(dcgm: str, window: str) -> tuple[str, str]:
    """Expressions of a hardware XID and of any other XID that is new within `window`. dcgm-exporter's
    DCGM_FI_DEV_XID_ERRORS holds the last XID (a value, not a count): an XID is new when the value changed in the
    window; so the alert ends when `window` passes without another (the same XID again is not seen as new)."""
    xid = f"DCGM_FI_DEV_XID_ERRORS{dcgm}"
    new = f"changes({xid}[{window}]) > 0"
    hardware = " or ".join(f"{xid} == {n}" for n in HARDWARE_XIDS)
    return f"({hardware}) and {new}", f"({xid} != 0 unless ({hardware})) and {new}"


def _throttle(dcgm: str) -> str:
    reasons = f"(DCGM_FI_DEV_CLOCKS_EVENT_REASONS{dcgm} or DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{dcgm})"
    return " or ".join(
        f'label_replace(floor({reasons} / {bit}) % 2 == 1, "reason", "{why}", "", "")'
        for bit, why in THROTTLE_REASONS.items()
    )


def gpu_group(build: Build) -> Group:
    t = plan.settings(build).thresholds
    dcgm = '{job="dcgm"}'
    hardware, other = _xid(dcgm, t.xid_window)
    hbm = (
        f"DCGM_FI_DEV_MEMORY_TEMP{dcgm} > {t.hbm_temp_c}"
        if t.hbm_temp_c is not None
        else f"DCGM_FI_DEV_MEMORY_TEMP{dcgm} >= DCGM_FI_DEV_MEM_MAX_OP_TEMP{dcgm}"
    )
    rules = [
        Rule(
            "FabricGpuXidError",
            hardware,
            severity="critical",
            summary=f"GPU {{{{ $labels.gpu }}}} of {WHERE_HOST} reported hardware XID {{{{ $value }}}}",
            description=f"The driver reported a new XID of failing hardware ({', '.join(map(str, HARDWARE_XIDS))}: "
            f"ECC, row remapping, NVLink, fallen off the bus) in the last {t.xid_window}: drain the node.",
            uses=("DCGM_FI_DEV_XID_ERRORS",),
        ),
        Rule(
            "FabricGpuXidWarning",
            other,
            summary=f"GPU {{{{ $labels.gpu }}}} of {WHERE_HOST} reported XID {{{{ $value }}}}",
            description=f"The driver reported a new XID in the last {t.xid_window} that is not a hardware XID "
            "(13, 31, 43, 45 and the like: usually the application's fault).",
            uses=("DCGM_FI_DEV_XID_ERRORS",),
        ),
        Rule(
            "FabricGpuThrottled",
            _throttle(dcgm),
            duration="5m",
            summary=f"GPU {{{{ $labels.gpu }}}} of {WHERE_HOST} is slowed down: {{{{ $labels.reason }}}}",
            description="DCGM's clock event reasons report power or thermal slowdown for 5 minutes: cooling, "
            "power delivery or the GPU itself.",
            uses=("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"),
        ),
        Rule(
            "FabricGpuMemoryTemperature",
            hbm,
            duration="5m",
            severity="critical",
            summary=f"GPU {{{{ $labels.gpu }}}} of {WHERE_HOST} has its HBM at {{{{ $value }}}} °C",
            description=(
                f"HBM temperature above {t.hbm_temp_c} °C (monitoring.thresholds.hbm_temp_c) for 5 minutes."
                if t.hbm_temp_c is not None
                else "HBM temperature at or above the memory's maximum operating temperature the GPU reports "
                "(DCGM_FI_DEV_MEM_MAX_OP_TEMP), where the GPU slows down, for 5 minutes."
            ),
            uses=("DCGM_FI_DEV_MEMORY_TEMP",) + (() if t.hbm_temp_c is not None else ("DCGM_FI_DEV_MEM_MAX_OP_TEMP",)),
        ),
        Rule(
            "FabricGpuTemperature",
            f"DCGM_FI_DEV_GPU_TEMP{dcgm} > on(hostname) group_left() fabric_gpu_temp_limit_celsius",
            duration="5m",
            severity="critical",
            summary=f"GPU {{{{ $labels.gpu }}}} of {WHERE_HOST} is at {{{{ $value }}}} °C",
            description="Above the node type's GPU temperature limit for 5 minutes.",
            uses=("DCGM_FI_DEV_GPU_TEMP",),
        ),
        Rule(
            "FabricGpuPower",
            f"DCGM_FI_DEV_POWER_USAGE{dcgm} > on(hostname) group_left() "
            f"(fabric_gpu_power_limit_watts * {t.gpu_power_pct / 100:g})",
            duration="5m",
            summary=f"GPU {{{{ $labels.gpu }}}} of {WHERE_HOST} draws {{{{ $value }}}} W",
            description=f"Above {t.gpu_power_pct:g} % of the GPU's power limit for 5 minutes.",
            uses=("DCGM_FI_DEV_POWER_USAGE",),
        ),
    ]
    if t.gpu_idle:
        rules.append(
            Rule(
                "FabricGpuIdle",
                f'DCGM_FI_DEV_GPU_UTIL{{job="dcgm", hpc_job!=""}} < {t.gpu_idle_util_pct:g}',
                duration=t.gpu_idle_for,
                summary=f"GPU {{{{ $labels.gpu }}}} of {WHERE_HOST} is idle under job {{{{ $labels.hpc_job }}}}",
                description=f"Utilisation below {t.gpu_idle_util_pct:g} % for {t.gpu_idle_for} while a job holds "
                "the GPU (dcgm-exporter's hpc_job label, from --hpc-job-mapping-dir).",
                uses=("DCGM_FI_DEV_GPU_UTIL",),
            )
        )
    return Group("fabric-gpu", "rules/fabric-gpu.yml", tuple(rules))


def power_group(build: Build) -> Group:
    t = plan.settings(build).thresholds
    return Group(
        "fabric-power",
        "rules/fabric-power.yml",
        (
            Rule(
                "FabricRackPower",
                'sum by (rack) (ipmi_dcmi_power_consumption_watts{job="ipmi"}) > on(rack) '
                f"(max by (rack) (fabric_rack_power_budget_watts) * {t.rack_power_pct / 100:g})",
                duration="5m",
                severity="critical",
                summary="Rack {{ $labels.rack }} draws {{ $value }} W, over its budget",
                description=f"The BMC power readings of the rack's nodes add up to more than {t.rack_power_pct:g} % "
                "of racks.power_kw (switches are not counted: they have no BMC reading).",
                uses=("ipmi_dcmi_power_consumption_watts",),
            ),
        ),
    )


def groups(build: Build) -> list[Group]:
    """The rule groups that apply to the design."""
    jobs = plan.job_names(build)
    found = [link_group(build)]
    if plan.has_roce(build):
        found.append(roce_group(build))
    if "frr" in jobs:
        found.append(bgp_group(build))
    if "dcgm" in jobs:
        found.append(gpu_group(build))
    if "ipmi" in jobs:
        found.append(power_group(build))
    return found


def _rule(build: Build, rule: Rule) -> dict[str, Any]:
    if not rule.alert:
        record: dict[str, Any] = {"record": rule.name, "expr": rule.expr}
        if rule.source:
            record["labels"] = {"source": rule.source}
        return record
    out: dict[str, Any] = {"alert": rule.name, "expr": rule.expr}
    if rule.duration != "0s":
        out["for"] = rule.duration
    out["labels"] = {"severity": rule.severity}
    out["annotations"] = {
        "summary": rule.summary,
        "description": rule.description,
        "runbook": f"{plan.settings(build).runbook_url}#{rule.anchor}",
    }
    return out


def rule_files(build: Build) -> dict[str, str]:
    """Rules files, path relative to monitoring/ → text."""
    header = f"# Alert and recording rules of {build.name}, generated by fabric from the plan.\n"
    return {
        g.file: header + dump({"groups": [{"name": g.name, "rules": [_rule(build, r) for r in g.rules]}]})
        for g in groups(build)
    }


def _outputs(build: Build) -> dict[str, str]:
    if not plan.settings(build).enabled:
        return {}
    return {f"monitoring/{path}": text for path, text in rule_files(build).items()}


OUTPUTS: tuple[Output, ...] = (Output("monitoring-rules", _outputs),)
