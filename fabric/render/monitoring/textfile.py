"""monitoring/textfile/fabric_plan.prom: the plan as Prometheus series, for node_exporter's textfile collector.

One series per cable (`fabric_planned_cable_info`), per switch end of a cable (`fabric_planned_port_info`), per
device, per planned BGP session, per rack's power budget and per GPU node's limits. The alert rules join the
exporters' series with these, so one rule covers every cable however many there are (300k cables are 300k
series, not 300k rules). The job `fabric-plan` of prometheus.yml scrapes them with `honor_labels`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from fabric.pipeline import Build
from fabric.render.monitoring import plan
from fabric.render.registry import Output

PATH = "monitoring/textfile/fabric_plan.prom"

HELP = {
    "fabric_planned_cable_info": "A cable of the plan: its id, label and both ends (rack, U, device, port).",
    "fabric_planned_port_info": "A switch port the plan cables, as its exporter names it, and its cable.",
    "fabric_planned_device_info": "A device of the plan with its place (rack, U) and role.",
    "fabric_planned_bgp_session_info": "A BGP session the plan configures, as frr_exporter names the peer.",
    "fabric_rack_power_budget_watts": "The rack's power budget (racks.power_kw).",
    "fabric_gpu_power_limit_watts": "Power limit of one GPU of the node (catalog gpu_power_w).",
    "fabric_gpu_temp_limit_celsius": "GPU temperature alert threshold of the node.",
}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _series(name: str, labels: Mapping[str, str], value: float | int = 1) -> str:
    joined = "".join(labels.values())  # one test a series, not one a value: escaping is rare (6M values at 100k)
    if "\\" in joined or '"' in joined or "\n" in joined:
        body = ",".join([f'{k}="{_escape(v)}"' for k, v in labels.items()])
    else:
        body = ",".join([f'{k}="{v}"' for k, v in labels.items()])
    return f"{name}{{{body}}} {value:g}\n" if isinstance(value, float) else f"{name}{{{body}}} {value}\n"


def _family(name: str, lines: Iterable[str]) -> Iterator[str]:
    yield f"# HELP {name} {HELP[name]}\n# TYPE {name} gauge\n"
    yield from lines


def fabric_plan(build: Build) -> str:
    fabrics = plan.node_fabrics(build)
    sus = plan.node_sus(build)
    devices = build.topology.devices.values()
    limits = list(plan.gpu_limits(build))
    parts: list[Iterable[str]] = [
        _family(
            "fabric_planned_cable_info",
            (_series("fabric_planned_cable_info", plan.cable_info(build, c)) for c in build.plan.cables),
        ),
        _family(
            "fabric_planned_port_info", (_series("fabric_planned_port_info", p) for p in plan.planned_ports(build))
        ),
        _family(
            "fabric_planned_device_info",
            (_series("fabric_planned_device_info", plan.device_labels(build, d, fabrics, sus)) for d in devices),
        ),
    ]
    sessions = [_series("fabric_planned_bgp_session_info", s) for s in plan.bgp_sessions(build)]
    if sessions:
        parts.append(_family("fabric_planned_bgp_session_info", sessions))
    budgets = plan.rack_budgets(build)
    if budgets:
        parts.append(
            _family(
                "fabric_rack_power_budget_watts",
                (_series("fabric_rack_power_budget_watts", {"rack": r}, float(w)) for r, w in budgets.items()),
            )
        )
    power = [_series("fabric_gpu_power_limit_watts", {"hostname": n}, p) for n, p, _ in limits if p is not None]
    if power:
        parts.append(_family("fabric_gpu_power_limit_watts", power))
    temps = [_series("fabric_gpu_temp_limit_celsius", {"hostname": n}, t) for n, _, t in limits if t is not None]
    if temps:
        parts.append(_family("fabric_gpu_temp_limit_celsius", temps))
    return "".join(line for part in parts for line in part)


def _outputs(build: Build) -> dict[str, str]:
    return {PATH: fabric_plan(build)} if plan.settings(build).enabled else {}


OUTPUTS: tuple[Output, ...] = (Output("monitoring-plan-series", _outputs),)
