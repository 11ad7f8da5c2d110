"""The exporters fabric's monitoring scrapes and the metric names each really exports.

One table, used by the scrape config (ports, jobs), the rules and the dashboards, and by the tests, which check
that every expression uses only names from here, the recording rules or fabric's own plan series.

Sources (names as the exporters print them):
- node_exporter: collector/fixtures/e2e-output.txt (netclass/netdev, infiniband incl. the RoCE hw counters,
  textfile); its ethtool collector names a driver statistic `node_ethtool_` + the name with a leading `rx_` /
  `tx_` spelled `received_` / `transmitted_` (collector/ethtool_linux.go, buildEthtoolFQName), so mlx5's
  `rx_prio3_pause` is `node_ethtool_received_prio3_pause` (the collector is off by default: `--collector.ethtool`).
- NVIDIA dcgm-exporter: etc/default-counters.csv (DCGM_FI_* field names; labels gpu, UUID, device, modelName,
  Hostname, and hpc_job with `--hpc-job-mapping-dir`). DCGM_FI_DEV_CLOCKS_EVENT_REASONS (older name
  DCGM_FI_DEV_CLOCK_THROTTLE_REASONS) and DCGM_FI_DEV_MEM_MAX_OP_TEMP are DCGM fields (dcgm_fields.h) that the
  default counters leave out: the throttle and HBM alerts need them in dcgm-exporter's counters file (`-f`).
- prometheus snmp_exporter: the `if_mib` module of its generated snmp.yml (IF-MIB columns, labelled ifIndex, ifName,
  ifAlias, ifDescr). Every platform fabric renders (SONiC, Cumulus, EOS, Linux with net-snmp) serves IF-MIB.
- guilbaults/infiniband-exporter: `ibqueryerrors` over the whole subnet from one host; counters are
  `infiniband_<counter lowercase>_total`, gauges `infiniband_speed` / `infiniband_width`, labelled component,
  local_name, local_guid, local_port, remote_guid, remote_port, remote_name; only ports whose link is Active are
  exported.
- tynany/frr_exporter: `frr_bgp_peer_state` (0 down, 1 established, 2 admin down), labelled peer, vrf, afi, safi,
  local_as, peer_as.
- prometheus-community/ipmi_exporter: `ipmi_dcmi_power_consumption_watts` (DCMI power reading of a BMC).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exporter:
    job: str
    program: str
    port_setting: str  # field of monitoring.ports
    metrics: tuple[str, ...]
    remote: bool = False  # runs on the exporter host and is given the device as `target` (SNMP, IPMI)


PFC_PRIORITIES = range(8)

EXPORTERS: tuple[Exporter, ...] = (
    Exporter(
        "node",
        "node_exporter",
        "node",
        (
            "node_network_up",
            "node_network_carrier_changes_total",
            "node_network_receive_bytes_total",
            "node_network_transmit_bytes_total",
            "node_network_receive_errs_total",
            "node_infiniband_state_id",
            "node_infiniband_link_downed_total",
            "node_infiniband_symbol_error_total",
            "node_infiniband_port_errors_received_total",
            "node_infiniband_port_data_received_bytes_total",
            "node_infiniband_port_data_transmitted_bytes_total",
            "node_infiniband_np_ecn_marked_roce_packets_received_total",
            "node_infiniband_np_cnp_packets_sent_total",
            *(f"node_ethtool_received_prio{p}_pause" for p in PFC_PRIORITIES),
            *(f"node_ethtool_transmitted_prio{p}_pause" for p in PFC_PRIORITIES),
            "node_ethtool_transmitted_pause_storm_warning_events",
            "node_ethtool_transmitted_pause_storm_error_events",
        ),
    ),
    Exporter(
        "dcgm",
        "dcgm-exporter",
        "dcgm",
        (
            "DCGM_FI_DEV_GPU_UTIL",
            "DCGM_FI_DEV_GPU_TEMP",
            "DCGM_FI_DEV_POWER_USAGE",
            "DCGM_FI_DEV_XID_ERRORS",
            "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
            "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
            "DCGM_FI_DEV_MEMORY_TEMP",
            "DCGM_FI_DEV_MEM_MAX_OP_TEMP",
            "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
            "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
            "DCGM_FI_PROF_PCIE_TX_BYTES",
            "DCGM_FI_PROF_PCIE_RX_BYTES",
        ),
    ),
    Exporter(
        "snmp",
        "snmp_exporter",
        "snmp",
        (
            "ifOperStatus",
            "ifAdminStatus",
            "ifHCInOctets",
            "ifHCOutOctets",
            "ifInErrors",
            "ifOutErrors",
            "ifInDiscards",
            "ifOutDiscards",
        ),
        remote=True,
    ),
    Exporter(
        "infiniband",
        "infiniband-exporter",
        "infiniband",
        (
            "infiniband_width",
            "infiniband_speed",
            "infiniband_linkdownedcounter_total",
            "infiniband_symbolerrorcounter_total",
            "infiniband_portrcverrors_total",
            "infiniband_linkerrorrecoverycounter_total",
            "infiniband_portxmitdata_total",
            "infiniband_portrcvdata_total",
            "infiniband_portxmitwait_total",
            "infiniband_portxmitdiscards_total",
        ),
    ),
    Exporter("frr", "frr_exporter", "frr", ("frr_bgp_peer_state",)),
    Exporter("ipmi", "ipmi_exporter", "ipmi", ("ipmi_dcmi_power_consumption_watts",), remote=True),
)

BY_JOB = {e.job: e for e in EXPORTERS}

# fabric's own series, from monitoring/textfile/fabric_plan.prom (node_exporter's textfile collector)
PLAN_METRICS = (
    "fabric_planned_cable_info",
    "fabric_planned_port_info",
    "fabric_planned_device_info",
    "fabric_planned_bgp_session_info",
    "fabric_rack_power_budget_watts",
    "fabric_gpu_power_limit_watts",
    "fabric_gpu_temp_limit_celsius",
)
