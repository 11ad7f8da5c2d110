"""Running the cluster: management services of the switches and the monitoring that watches it."""

# No `from __future__ import annotations` in the model modules: pydantic would compile each annotation string
# at import; written ones are evaluated once, by Python.
import contextlib
import re
from ipaddress import ip_address
from typing import Annotated

from pydantic import (
    BeforeValidator,
    Field,
    field_validator,
)

from fabric.spec.schema.types import (
    Bool,
    Float,
    Int,
    SecretRef,
    StrictModel,
    check_host,
    check_name,
    no_entries,
)


class Management(StrictModel):
    """Management services for switch configs (rendered by later outputs)."""

    ntp: list[str] = Field(default_factory=no_entries, description="NTP servers.")
    syslog: list[str] = Field(default_factory=no_entries, description="Syslog servers.")
    dns: list[str] = Field(default_factory=no_entries, description="DNS servers.")
    domain: str | None = Field(default=None, description="DNS domain of the switches.")
    snmp_community: SecretRef | None = Field(default=None, description="SNMP read community (a secret reference).")
    snmp_location: str | None = Field(default=None)
    gateway: str | None = Field(default=None, description="Default gateway of the management network.")

    @field_validator("ntp", "syslog", "dns")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        for host in value:
            check_host(host)
        return value

    @field_validator("domain")
    @classmethod
    def _domain(cls, value: str | None) -> str | None:
        if value is not None:
            check_host(value)
            with contextlib.suppress(ValueError):
                ip_address(value)
                raise ValueError("is an address, not a DNS domain")
        return value

    @field_validator("gateway")
    @classmethod
    def _gateway(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ip_address(value)
            except ValueError:
                raise ValueError("is not an IP address") from None
        return value

    @field_validator("snmp_location")
    @classmethod
    def _location(cls, value: str | None) -> str | None:
        if value is not None and len(value) > 255:
            raise ValueError("is longer than 255 characters")
        return value


DURATION_RE = re.compile(r"^([1-9][0-9]{0,19})(ms|s|m|h|d)$")
NANOSECONDS = {"ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9, "d": 86400 * 10**9}
# Prometheus reads a duration into a Go time.Duration, int64 nanoseconds: prometheus/common model.ParseDuration
# (model/time.go) refuses more with "duration out of range" (about 292 years), and promtool refuses the config
MAX_DURATION_NS = 2**63 - 1


def _duration(value: str) -> str:
    match = DURATION_RE.match(value)
    if not match:
        raise ValueError(f"{value!r} is not a Prometheus duration such as `30s`, `5m` or `1h`")
    if int(match[1]) * NANOSECONDS[match[2]] > MAX_DURATION_NS:
        raise ValueError("is longer than Prometheus can read (about 292 years: a Go duration, int64 nanoseconds)")
    return value


Duration = Annotated[str, BeforeValidator(lambda v: _duration(v) if isinstance(v, str) else v)]


class ExporterPorts(StrictModel):
    """TCP ports of the exporters Prometheus scrapes (each exporter's documented default)."""

    node: Int = Field(default=9100, ge=1, le=65535, description="node_exporter on every node and the exporter host.")
    dcgm: Int = Field(default=9400, ge=1, le=65535, description="NVIDIA dcgm-exporter on every GPU node.")
    snmp: Int = Field(default=9116, ge=1, le=65535, description="snmp_exporter on the exporter host (switches).")
    infiniband: Int = Field(
        default=9683, ge=1, le=65535, description="infiniband-exporter (ibqueryerrors) on each subnet-manager host."
    )
    frr: Int = Field(default=9342, ge=1, le=65535, description="frr_exporter on every FRR-based switch (BGP sessions).")
    ipmi: Int = Field(default=9290, ge=1, le=65535, description="ipmi_exporter on the exporter host (BMC power).")


class AlertThresholds(StrictModel):
    """When alerts fire. Rates are per second unless the name says otherwise."""

    link_down_for: Duration = Field(default="2m", description="A planned link must be down this long to alert.")
    flap_window: Duration = Field(default="10m", description="Window in which link state changes are counted.")
    flaps: Int = Field(default=3, ge=1, description="Link state changes (IB: link-downed events) in `flap_window`.")
    port_errors_per_min: Float = Field(
        default=10.0,
        gt=0,
        description="Symbol errors (InfiniBand) or input errors (Ethernet: FCS/CRC, IF-MIB ifInErrors) per minute "
        "over `flap_window`.",
    )
    pfc_pause_per_s: Float = Field(
        default=1000.0, gt=0, description="PFC pause frames per second on the lossless priority, sustained 5 minutes."
    )
    ecn_marked_per_s: Float = Field(
        default=10000.0, gt=0, description="ECN-marked RoCE packets received per second by a NIC, sustained 5 minutes."
    )
    gpu_temp_c: Int | None = Field(
        default=None, ge=1, le=150, description="GPU temperature limit, °C. Default: the node type's `gpu_temp_max_c`."
    )
    gpu_power_pct: Float = Field(
        default=100.0, gt=0, le=200, description="Alert when a GPU draws more than this % of its `gpu_power_w`."
    )
    xid_window: Duration = Field(
        default="10m",
        description="An XID alert fires while the GPU's last XID changed within this window (a new XID), then ends.",
    )
    hbm_temp_c: Int | None = Field(
        default=None,
        ge=1,
        le=150,
        description="HBM temperature limit, °C. Default: the memory's maximum operating temperature each GPU "
        "reports (DCGM_FI_DEV_MEM_MAX_OP_TEMP), above which DCGM says the GPU slows down.",
    )
    gpu_idle: Bool = Field(default=False, description="Alert on GPUs idle while a job holds them (off by default).")
    gpu_idle_util_pct: Float = Field(default=10.0, ge=0, le=100, description="`gpu_idle`: utilisation below this %.")
    gpu_idle_for: Duration = Field(default="30m", description="`gpu_idle`: for this long.")
    rack_power_pct: Float = Field(
        default=100.0, gt=0, le=200, description="Alert when a rack draws more than this % of `racks.power_kw`."
    )


class MonitoringSettings(StrictModel):
    """Prometheus scrape targets, alert rules, runbook and Grafana dashboards under `monitoring/`."""

    enabled: Bool = Field(default=True, description="Write `monitoring/`.")
    scrape_interval: Duration = Field(default="30s")
    evaluation_interval: Duration = Field(default="30s")
    exporter_host: str = Field(
        default="localhost",
        description="Host running the central exporters (snmp_exporter, ipmi_exporter) and the node_exporter whose "
        "textfile collector serves `monitoring/textfile/fabric_plan.prom`.",
    )
    snmp_module: str = Field(default="if_mib", description="snmp_exporter module for switch interfaces.")
    runbook_url: str = Field(
        default="runbook.md",
        description="Where `monitoring/runbook.md` is published; an alert's `runbook` annotation is this + `#anchor`.",
    )
    ports: ExporterPorts = Field(default_factory=ExporterPorts.model_construct)
    thresholds: AlertThresholds = Field(default_factory=AlertThresholds.model_construct)

    @field_validator("exporter_host", "snmp_module")
    @classmethod
    def _plain(cls, value: str) -> str:
        return check_name(value)

    @field_validator("runbook_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value or any(c.isspace() or c in "\"'#<>" for c in value):
            raise ValueError("must be a URL or path without spaces, quotes, `<`, `>` or `#`")
        scheme = re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", value)
        if scheme and scheme[0].lower() not in ("http:", "https:"):
            raise ValueError("must be an http(s) URL or a relative path (no other scheme: `javascript:`, `file:` …)")
        return value
