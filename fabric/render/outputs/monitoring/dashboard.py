"""monitoring/grafana/<fabric>.json: one Grafana dashboard per fabric, for Grafana's dashboard import.

Rows: the fabric (bandwidth, errors, planned cables down, PFC/ECN on RoCE), a scalable unit and a rack (chosen
with the `su` and `rack` variables, from the plan's series), and GPU health where GPU nodes attach. Queries use
only the exporters' metric names (exporters.py) and the plan's labels the targets carry.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fabric.pipeline import Build
from fabric.render.engine.registry import Output
from fabric.render.outputs.monitoring import planned_series as plan

SCHEMA_VERSION = 39  # Grafana 10/11 dashboards; import migrates older/newer versions
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def _uid(design: str, fabric: str) -> str:
    """Stable across builds (Grafana's import overwrites the same dashboard), at most 40 characters."""
    return "fabric-" + hashlib.sha256(f"{design}/{fabric}".encode()).hexdigest()[:20]


class _Layout:
    """Panels two per line under full-width rows; ids in order."""

    def __init__(self) -> None:
        self.panels: list[dict[str, Any]] = []
        self.y = 0
        self.x = 0

    def row(self, title: str) -> None:
        if self.x:
            self.y += 8
            self.x = 0
        self.panels.append(
            {
                "type": "row",
                "title": title,
                "id": len(self.panels) + 1,
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y},
                "panels": [],
            }
        )
        self.y += 1

    def graph(self, title: str, expr: str, legend: str, unit: str) -> None:
        self.panels.append(
            {
                "type": "timeseries",
                "title": title,
                "id": len(self.panels) + 1,
                "datasource": DATASOURCE,
                "gridPos": {"h": 8, "w": 12, "x": self.x, "y": self.y},
                "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True}},
                "targets": [{"refId": "A", "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}],
            }
        )
        if self.x:
            self.x = 0
            self.y += 8
        else:
            self.x = 12


def _variable(name: str, query: str) -> dict[str, Any]:
    return {
        "type": "query",
        "name": name,
        "label": name.upper() if name == "su" else name,
        "datasource": DATASOURCE,
        "query": {"query": query, "refId": f"var-{name}"},
        "definition": query,
        "refresh": 1,
        "multi": True,
        "includeAll": True,
        "allValue": ".*",
        "current": {},
        "sort": 3,
    }


def dashboard(build: Build, fabric: str) -> dict[str, Any]:
    ft = build.topology.fabrics[fabric]
    member = f'fabric=~"(.*,)?{fabric}(,.*)?"'  # a node's `fabric` lists every fabric it is cabled to
    roce = any(i.fabric == fabric and i.qos is not None for i in build.intents.values())
    p = plan.roce_priority(build)
    layout = _Layout()
    layout.row(f"Fabric {fabric} ({ft.technology})")
    if ft.technology == "ethernet":
        sel = f'job="snmp", fabric="{fabric}"'
        layout.graph(
            "Switch receive bandwidth",
            f"8 * sum by (hostname) (rate(ifHCInOctets{{{sel}}}[5m]))",
            "{{hostname}}",
            "bps",
        )
        layout.graph("Switch input errors", f"sum by (hostname) (rate(ifInErrors{{{sel}}}[5m]))", "{{hostname}}", "pps")
    else:
        sel = f'job="infiniband", fabric="{fabric}", component="switch"'
        # PortRcvData counts 4-byte words
        layout.graph(
            "Switch receive bandwidth",
            f"32 * sum by (local_name) (rate(infiniband_portrcvdata_total{{{sel}}}[5m]))",
            "{{local_name}}",
            "bps",
        )
        layout.graph(
            "Symbol errors",
            f"sum by (local_name) (rate(infiniband_symbolerrorcounter_total{{{sel}}}[5m]))",
            "{{local_name}}",
            "short",
        )
        layout.graph(
            "Congestion (PortXmitWait)",
            f"sum by (local_name) (rate(infiniband_portxmitwait_total{{{sel}}}[5m]))",
            "{{local_name}}",
            "short",
        )
    layout.graph(
        "Planned cables down",
        f'count(ALERTS{{alertname="FabricPlannedLinkDown", alertstate="firing", fabric="{fabric}"}}) or vector(0)',
        "cables down",
        "short",
    )
    if roce:
        layout.graph(
            f"PFC pause frames received, priority {p}",
            f'sum by (hostname) (rate(node_ethtool_received_prio{p}_pause{{job="node", {member}}}[5m]))',
            "{{hostname}}",
            "pps",
        )
        layout.graph(
            "ECN-marked RoCE packets received",
            "sum by (hostname) "
            f'(rate(node_infiniband_np_ecn_marked_roce_packets_received_total{{job="node", {member}}}[5m]))',
            "{{hostname}}",
            "pps",
        )
    nodes = f'job="node", {member}'
    layout.row("Scalable unit $su")
    layout.graph(
        "RDMA receive bandwidth per SU",
        f'8 * sum by (su) (rate(node_infiniband_port_data_received_bytes_total{{{nodes}, su=~"$su"}}[5m]))',
        "SU {{su}}",
        "bps",
    )
    layout.graph(
        "RDMA port errors per SU",
        f'sum by (su) (rate(node_infiniband_port_errors_received_total{{{nodes}, su=~"$su"}}[5m]))',
        "SU {{su}}",
        "short",
    )
    layout.row("Rack $rack")
    layout.graph(
        "RDMA receive bandwidth per node",
        f'8 * sum by (hostname) (rate(node_infiniband_port_data_received_bytes_total{{{nodes}, rack=~"$rack"}}[5m]))',
        "{{hostname}}",
        "bps",
    )
    layout.graph(
        "Rack power (BMC readings)",
        'sum by (rack) (ipmi_dcmi_power_consumption_watts{job="ipmi", rack=~"$rack"})',
        "{{rack}}",
        "watt",
    )
    gpus = {d.name for d in plan.gpu_nodes(build)}
    if any(c.link.fabric == fabric and c.link.a in gpus for c in build.allocation.cables):
        dcgm = f'job="dcgm", {member}, rack=~"$rack"'
        layout.row("GPU health")
        layout.graph(
            "GPU utilisation", f"avg by (hostname) (DCGM_FI_DEV_GPU_UTIL{{{dcgm}}})", "{{hostname}}", "percent"
        )
        layout.graph(
            "GPU temperature (hottest GPU)",
            f"max by (hostname) (DCGM_FI_DEV_GPU_TEMP{{{dcgm}}})",
            "{{hostname}}",
            "celsius",
        )
        layout.graph("GPU power", f"sum by (hostname) (DCGM_FI_DEV_POWER_USAGE{{{dcgm}}})", "{{hostname}}", "watt")
        layout.graph(
            "XID errors",
            f"max by (hostname, gpu) (DCGM_FI_DEV_XID_ERRORS{{{dcgm}}})",
            "{{hostname}} GPU {{gpu}}",
            "short",
        )
        layout.graph(
            "NVLink bandwidth",
            f"sum by (hostname) (rate(DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{{{dcgm}}}[5m]))",
            "{{hostname}}",
            "short",
        )
        layout.graph(
            "PCIe replays",
            f"sum by (hostname) (rate(DCGM_FI_DEV_PCIE_REPLAY_COUNTER{{{dcgm}}}[5m]))",
            "{{hostname}}",
            "short",
        )
    return {
        "id": None,
        "uid": _uid(build.name, fabric),
        "title": f"{build.name} / {fabric}",
        "description": f"Fabric {fabric} of design {build.name}, generated by fabric from the plan.",
        "tags": ["fabric", build.name, fabric],
        "schemaVersion": SCHEMA_VERSION,
        "version": 1,
        "editable": True,
        "graphTooltip": 1,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "1m",
        "timezone": "",
        "annotations": {"list": []},
        "templating": {
            "list": [
                {
                    "type": "datasource",
                    "name": "datasource",
                    "label": "Prometheus",
                    "query": "prometheus",
                    "current": {},
                },
                _variable("su", "label_values(fabric_planned_device_info, su)"),
                _variable("rack", "label_values(fabric_planned_device_info, rack)"),
            ]
        },
        "panels": layout.panels,
    }


def dashboards(build: Build) -> dict[str, str]:
    if not plan.settings(build).enabled:
        return {}
    return {
        f"monitoring/grafana/{key}.json": json.dumps(dashboard(build, key), indent=2) + "\n"
        for key, ft in build.topology.fabrics.items()
        if ft.switches
    }


OUTPUTS: tuple[Output, ...] = (Output("monitoring-dashboards", dashboards),)
