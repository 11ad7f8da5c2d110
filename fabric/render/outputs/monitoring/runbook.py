"""monitoring/runbook.md: per alert, what it means, the likely causes in this fabric (which parts, which
neighbours, how `fabric verify` confirms it) and the commands that check it on each platform present."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from fabric.pipeline import Build
from fabric.render.engine.memo import per_build
from fabric.render.engine.registry import Output
from fabric.render.engine.templating import render
from fabric.render.outputs.monitoring import planned_series as plan
from fabric.render.outputs.monitoring.exporters import EXPORTERS
from fabric.render.outputs.monitoring.rules import HARDWARE_XIDS, Rule, groups

# Port checks per platform ({port}: the alert's port label). Cumulus and EOS syntax from vendor documentation.
PORT_CHECKS = {
    "sonic": (
        "show interfaces status {port}",
        "show interfaces counters errors",
        "show interfaces transceiver eeprom {port}",
        "show lldp neighbors {port}",
    ),
    "cumulus": (
        "nv show interface {port}",
        "nv show interface {port} counters",
        "nv show interface {port} transceiver",
        "nv show interface {port} lldp",
    ),
    "eos": (
        "show interfaces {port} status",
        "show interfaces {port} counters errors",
        "show interfaces {port} transceiver",
        "show lldp neighbors {port}",
    ),
    "frr": ("ip -s link show {port}", "ethtool {port}", "ethtool -m {port}", "lldpctl {port}"),
    "infiniband": (
        "iblinkinfo --node-name-map node-name-map",
        "ibqueryerrors --node-name-map node-name-map --details",
        "mlxlink -d lid-<LID> -p {port} -m -c (cable, FEC and BER)",
    ),
}
BGP_CHECKS = {
    # SONiC's `show ip bgp` is IPv4 only: a numbered dual-stack link's IPv6 session is under `show ipv6 bgp`
    "sonic": ("show ip bgp summary", "show ipv6 bgp summary", "vtysh -c 'show bgp neighbors {peer}'"),
    "cumulus": ("nv show vrf default router bgp neighbor", "sudo vtysh -c 'show bgp neighbors {peer}'"),
    "frr": ("vtysh -c 'show bgp summary'", "vtysh -c 'show bgp neighbors {peer}'"),
}
HOST_ROCE = (
    "ethtool -S <interface> | grep -E 'prio{p}_pause|pause_storm'",
    "cat /sys/class/infiniband/<hca>/ports/1/hw_counters/np_ecn_marked_roce_packets",
    "mlnx_qos -i <interface>",
)
HOST_GPU = ("nvidia-smi -q -d TEMPERATURE,POWER,PERFORMANCE", "dmesg | grep -i xid", "dcgmi diag -r 2")


def _platforms(build: Build) -> list[str]:
    found = {i.platform for i in build.intents.values()}
    if any(ft.technology == "infiniband" for ft in build.topology.fabrics.values()):
        found.add("infiniband")
    return [p for p in PORT_CHECKS if p in found]


@per_build  # read-only
def _parts(build: Build) -> list[str]:
    """The cable parts of the plan, per fabric and tier (three alerts list them: counted once)."""
    counts = Counter((c.link.fabric, c.link.tier, c.part, c.media) for c in build.allocation.cables)
    return [
        f"fabric `{f}`, {tier}: {n} × {part or 'no part'} ({media or 'no medium'})"
        for (f, tier, part, media), n in sorted(counts.items())
    ]


def _verify(build: Build) -> str:
    kinds = {ft.technology for ft in build.topology.fabrics.values() if ft.switches}
    options = [o for t, o in (("infiniband", "--ibnetdiscover FILE"), ("ethernet", "--lldp DIR")) if t in kinds]
    return " or ".join(f"`fabric verify SPEC {o}`" for o in options)


def _checks(table: Mapping[str, tuple[str, ...]], platforms: list[str], **fields: str) -> list[dict[str, Any]]:
    return [{"platform": p, "commands": [c.format(**fields) for c in table[p]]} for p in platforms if p in table]


def _section(build: Build, rule: Rule) -> dict[str, Any]:
    platforms = _platforms(build)
    p = plan.roce_priority(build)
    causes: list[str]
    checks: list[dict[str, Any]]
    link = _checks(PORT_CHECKS, platforms, port="<port>")
    if rule.name in ("FabricPlannedLinkDown", "FabricLinkFlapping", "FabricLinkErrors"):
        causes = [
            "the cable or a transceiver at either end (the alert's `part` and `media`); the parts of this plan: "
            + "; ".join(_parts(build)),
            "the neighbour at the other end (`a_device`/`b_device`) is down, rebooting or has the port disabled",
            "a dirty or bent fibre, a half-seated connector (errors and flaps before the link goes down)",
            f"cabled to another port: {_verify(build)} names every cable that is missing or in the wrong port",
        ]
        checks = link
    elif rule.name == "FabricUnplannedLinkUp":
        causes = [
            "a cable in a port the plan leaves free, often the twin of a wrong-port cable",
            f"confirm with {_verify(build)}",
        ]
        checks = link
    elif rule.name == "FabricSwitchNotReporting":
        causes = [
            "the switch is down or rebooting",
            "its management port or SNMP (community `management.snmp_community`) is unreachable",
            "the fabric's exporter (snmp_exporter, infiniband-exporter on the subnet manager host) is down",
        ]
        checks = [{"platform": "Prometheus", "commands": ['up{job=~"snmp|infiniband"} == 0']}, *link]
    elif rule.name == "FabricBgpSessionDown":
        causes = [
            "the link under the session is down (a FabricPlannedLinkDown alert on the same port)",
            "the peer's bgpd restarted or its config differs from the plan (ASN, password, address)",
        ]
        checks = _checks(BGP_CHECKS, platforms, peer="<peer>")
    elif rule.name in ("FabricPfcStorm", "FabricEcnMarking"):
        causes = [
            f"a NIC or host that stopped draining its receive queue (a hung GPU job) pauses priority {p} upstream",
            "incast: many senders to one receiver; a failed uplink halves a leaf's capacity",
            "DSCP/priority mismatch between host and switch (RoCE on a lossy class)",
        ]
        checks = [
            {"platform": "host", "commands": [c.format(p=p) for c in HOST_ROCE]},
            *_checks(PORT_CHECKS, platforms, port="<leaf port>"),
        ]
    elif rule.name.startswith("FabricGpu"):
        causes = [
            "cooling: fans, airflow, inlet temperature of the rack",
            f"a GPU or NVLink fault (XID {', '.join(map(str, HARDWARE_XIDS))}: ECC, row remap, NVLink, fallen off "
            "the bus); XIDs 13, 31, 43 and 45 are usually the application's",
            "power delivery (power brake) or cooling slowing the clocks (the alert's `reason`)",
            "a job pinned to a GPU that does nothing (idle)",
        ]
        checks = [{"platform": "host", "commands": list(HOST_GPU)}]
    else:
        causes = [
            "more or hungrier nodes in the rack than the rack plan assumed",
            "a PSU failure moving load onto the rack's remaining feeds",
        ]
        checks = [{"platform": "BMC", "commands": ["ipmitool dcmi power reading"]}]
    return {
        "name": rule.name,
        "anchor": rule.anchor,
        "severity": rule.severity,
        "duration": "" if rule.duration == "0s" else rule.duration,
        "metrics": ", ".join(f"`{m}`" for m in rule.uses),
        "meaning": rule.description.replace("{{ $labels.", "`").replace(" }}", "`"),
        "causes": causes,
        "checks": checks,
    }


@per_build  # the runbook and both reports list them (read-only)
def alerts(build: Build) -> list[dict[str, Any]]:
    """Every alert of the plan's rules with its runbook section (also the design report's monitoring table)."""
    return [_section(build, r) for g in groups(build) for r in g.rules if r.alert]


def runbook(build: Build) -> str:
    exporters = ", ".join(f"{e.program} (job `{e.job}`)" for e in EXPORTERS)
    return render("monitoring/runbook.md.j2", design=build.name, alerts=alerts(build), exporters=exporters)


def _outputs(build: Build) -> dict[str, str]:
    return {"monitoring/runbook.md": runbook(build)} if plan.settings(build).enabled else {}


OUTPUTS: tuple[Output, ...] = (Output("monitoring-runbook", _outputs),)
