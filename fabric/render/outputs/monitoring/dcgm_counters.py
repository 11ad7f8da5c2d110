"""monitoring/dcgm-counters.csv: the counters file dcgm-exporter reads (`dcgm-exporter -f FILE`), so that the GPU
alerts' fields are exported at all.

dcgm-exporter exports only the fields its counters file lists, and its default file (etc/default-counters.csv)
leaves out two that fabric's GPU rules need: the clock event reasons (FabricGpuThrottled) and the memory's maximum
operating temperature (FabricGpuMemoryTemperature), and the PCIe byte rates of the dashboards are DCP fields of
its dcp-metrics-included.csv. The file written is the default file's fields, in its order and words, then those
fabric adds; its format is the default file's: `FIELD, Prometheus type, help`, `#` for comments.

Sources: NVIDIA/dcgm-exporter etc/default-counters.csv (commit 00d6d34) and etc/dcp-metrics-included.csv (commit
084a245) for the lines taken as they are; DCGM's dcgm_fields.h for the two fields added (field 112
DCGM_FI_DEV_CLOCKS_EVENT_REASONS, the bitmask NVML's clocks event reasons map 1:1, named
DCGM_FI_DEV_CLOCK_THROTTLE_REASONS before DCGM 3.3 and still resolved under that name; field 140
DCGM_FI_DEV_MEM_MAX_OP_TEMP, the memory's maximum operating temperature in C).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.pipeline import Build
from fabric.render.engine.registry import Output
from fabric.render.outputs.monitoring.exporters import BY_JOB
from fabric.render.outputs.monitoring.planned_series import gpu_nodes, settings

PATH = "monitoring/dcgm-counters.csv"


@dataclass(frozen=True)
class Counter:
    field: str
    kind: str  # gauge | counter
    help: str


# dcgm-exporter's default counters (etc/default-counters.csv, its lines not commented out)
DEFAULTS: tuple[Counter, ...] = (
    Counter("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    Counter("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    Counter("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    Counter("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    Counter("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    Counter("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    Counter(
        "DCGM_FI_DEV_PCIE_TX_THROUGHPUT",
        "counter",
        "Total number of bytes transmitted through PCIe TX (in KB) via NVML.",
    ),
    Counter(
        "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "counter", "Total number of bytes received through PCIe RX (in KB) via NVML."
    ),
    Counter("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    Counter("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    Counter("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    Counter("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."),
    Counter("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."),
    Counter("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    Counter("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    Counter("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    Counter("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes"),
    Counter("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"),
    Counter("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"),
    Counter("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
    Counter("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
)

# what fabric's rules and dashboards read beyond the defaults (no comma in a help text: dcgm-exporter reads the
# file as CSV of three fields)
ADDED: tuple[Counter, ...] = (
    Counter("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gauge", "Clock event (throttle) reasons as a bitmask."),
    Counter(
        "DCGM_FI_DEV_MEM_MAX_OP_TEMP",
        "gauge",
        "Maximum operating temperature of the GPU memory (in C).",
    ),
    Counter(
        "DCGM_FI_PROF_PCIE_TX_BYTES",
        "gauge",
        "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in "
        "bytes per second.",
    ),
    Counter(
        "DCGM_FI_PROF_PCIE_RX_BYTES",
        "gauge",
        "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in "
        "bytes per second.",
    ),
)

# a field fabric's rules read under two names (DCGM renamed it in 3.3): the file lists the current one only
ALIASES = {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"}

COUNTERS = DEFAULTS + ADDED
assert {ALIASES.get(m, m) for m in BY_JOB["dcgm"].metrics} <= {c.field for c in COUNTERS}, (
    "a DCGM field read, not exported"
)


def counters_csv(build: Build) -> str:
    lines = [
        f"# dcgm-exporter counters for {build.name}, written by fabric: run `dcgm-exporter -f dcgm-counters.csv`",
        "# Format",
        "# If line starts with a '#' it is considered a comment",
        "# DCGM FIELD, Prometheus metric type, help message",
        "",
        "# dcgm-exporter's default counters (etc/default-counters.csv)",
        *(f"{c.field}, {c.kind}, {c.help}" for c in DEFAULTS),
        "",
        "# added by fabric: the fields its GPU alerts and dashboards read",
        *(f"{c.field}, {c.kind}, {c.help}" for c in ADDED),
    ]
    return "\n".join(lines) + "\n"


def _outputs(build: Build) -> dict[str, str]:
    if not settings(build).enabled or not gpu_nodes(build):
        return {}
    return {PATH: counters_csv(build)}


OUTPUTS: tuple[Output, ...] = (Output("monitoring-dcgm-counters", _outputs),)
