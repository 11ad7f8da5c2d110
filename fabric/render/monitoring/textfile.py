"""monitoring/textfile/fabric_plan.prom: the plan as Prometheus series, for node_exporter's textfile collector.

One series per cable (`fabric_planned_cable_info`), per switch end of a cable (`fabric_planned_port_info`), per
device, per planned BGP session, per rack's power budget and per GPU node's limits. The alert rules join the
exporters' series with these, so one rule covers every cable however many there are (300k cables are 300k
series, not 300k rules). The job `fabric-plan` of prometheus.yml scrapes them with `honor_labels`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from operator import attrgetter

from fabric.model.cable import end_label
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
    yield _header(name)
    yield from lines


def _plain(*columns: Iterable[str]) -> bool:
    """No value of these columns needs escaping: three substring tests of each joined column, in C."""
    for column in columns:
        text = "".join(column)
        if "\\" in text or '"' in text or "\n" in text:
            return False
    return True


def _cable_lines(build: Build) -> list[str] | None:
    """The cable and port series of every cable as plan.cable_info and plan.planned_ports label them, written
    column by column with one f-string a line (300k cables and 500k switch ends at 100k GPUs: a dict a series
    took 3 s); None when a value would need escaping, so the caller takes the general path."""
    cables = build.plan.cables
    links = list(map(attrgetter("link"), cables))
    ids = list(map(attrgetter("cable_id"), cables))
    a, a_port, b, b_port, fabric = (
        list(map(attrgetter(key), links)) for key in ("a", "a_port", "b", "b_port", "fabric")
    )
    a_ends = list(map(attrgetter("a_rack", "a_u"), cables))
    b_ends = list(map(attrgetter("b_rack", "b_u"), cables))
    kinds = list(map(attrgetter("fabric", "plane", "tier"), links))
    goods = list(map(attrgetter("part", "media"), cables))
    places = set(a_ends) | set(b_ends)
    kind_set, good_set = set(kinds), set(goods)
    words = [r for r, _ in places] + [str(w) for k in kind_set for w in k] + [w for g in good_set for w in g]
    if not _plain(ids, a, a_port, b, b_port, words):
        return None
    end = {p: end_label(*p) for p in places}  # the label's "A01-U09"
    a_place = {p: _place("a", *p) for p in places}
    b_place = {p: _place("b", *p) for p in places}
    kind = {k: f'fabric="{k[0]}"' + ("" if k[1] is None else f',plane="{k[1]}"') + f',tier="{k[2]}"' for k in kind_set}
    good = {g: (f',part="{g[0]}"' if g[0] else "") + (f',media="{g[1]}"' if g[1] else "") for g in good_set}
    rows = zip(
        ids,
        map(end.__getitem__, a_ends),
        a,
        a_port,
        map(end.__getitem__, b_ends),
        b,
        b_port,
        map(kind.__getitem__, kinds),
        map(a_place.__getitem__, a_ends),
        map(b_place.__getitem__, b_ends),
        map(good.__getitem__, goods),
        strict=True,
    )
    lines = [_header("fabric_planned_cable_info")]
    lines += [
        f'fabric_planned_cable_info{{cable_id="{i}",label="{i} {ae} {ad} {ap} > {be} {bd} {bp}",{k}{al},'
        f'a_device="{ad}",a_port="{ap}"{bl},b_device="{bd}",b_port="{bp}"{g}}} 1\n'
        for i, ae, ad, ap, be, bd, bp, k, al, bl, g in rows
    ]
    switches = {name for name, d in build.topology.devices.items() if plan.is_switch(d)}
    infiniband = {key for key, ft in build.topology.fabrics.items() if ft.technology == "infiniband"}
    on_ib = [f in infiniband for f in fabric]
    ib = build.infiniband.ends

    def side(names: list[str], ports: list[str]) -> list[str]:  # as the exporters key a port (plan.planned_ports)
        return [
            f'fabric_planned_port_info{{hostname="{d}",port="{ib[d, p][1] if i else p}",cable_id="{c}"}} 1\n'
            if d in switches
            else ""
            for d, p, i, c in zip(names, ports, on_ib, ids, strict=True)
        ]

    lines.append(_header("fabric_planned_port_info"))
    lines += chain.from_iterable(zip(side(a, a_port), side(b, b_port), strict=True))
    return lines  # one list, joined once with the rest: the text is 150-250 MB at 100k GPUs


def _session_lines(build: Build) -> list[str] | None:
    """The series of plan.bgp_sessions, one f-string a session (405k sessions at 100k GPUs on RoCE); None when a
    value would need escaping, so the caller takes the general path."""
    devices = build.topology.devices
    peer = attrgetter("peer", "interface", "peer_device", "peer_port")
    lines: list[str] = []
    for name, intent in build.intents.items():
        bgp = intent.bgp
        if bgp is None or intent.platform not in plan.FRR_PLATFORMS:
            continue
        device = devices[name]
        here = (name, intent.fabric, device.rack or "")
        if not _plain(here, chain.from_iterable(map(peer, bgp.neighbors))):
            return None
        head = f'fabric_planned_bgp_session_info{{hostname="{name}",peer="'
        mid = f'",fabric="{intent.fabric}",peer_device="'
        place = (f',rack="{device.rack}"' if device.rack else "") + (f',u="{device.u}"' if device.u is not None else "")
        tail = f',asn="{bgp.asn}"{place}}} 1\n'
        lines += [
            f'{head}{n.peer}",interface="{n.interface}{mid}{n.peer_device}",peer_port="{n.peer_port}"'
            + ("" if n.remote_as is None else f',peer_asn="{n.remote_as}"')
            + tail
            for n in bgp.neighbors
        ]
    return lines


def _place(end: str, rack: str, u: int | None) -> str:
    return (f',{end}_rack="{rack}"' if rack else "") + (f',{end}_u="{u}"' if u is not None else "")


def _header(name: str) -> str:
    return f"# HELP {name} {HELP[name]}\n# TYPE {name} gauge\n"


def fabric_plan(build: Build) -> str:
    fabrics = plan.node_fabrics(build)
    sus = plan.node_sus(build)
    devices = build.topology.devices.values()
    limits = list(plan.gpu_limits(build))
    fast = _cable_lines(build)
    parts: list[Iterable[str]] = (
        [fast]
        if fast is not None
        else [
            _family(
                "fabric_planned_cable_info",
                (_series("fabric_planned_cable_info", plan.cable_info(build, c)) for c in build.plan.cables),
            ),
            _family(
                "fabric_planned_port_info",
                (_series("fabric_planned_port_info", p) for p in plan.planned_ports(build)),
            ),
        ]
    )
    parts.append(
        _family(
            "fabric_planned_device_info",
            (_series("fabric_planned_device_info", plan.device_labels(build, d, fabrics, sus)) for d in devices),
        )
    )
    sessions = _session_lines(build)
    if sessions is None:
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
    return "".join(chain.from_iterable(parts))


def _outputs(build: Build) -> dict[str, str]:
    return {PATH: fabric_plan(build)} if plan.settings(build).enabled else {}


OUTPUTS: tuple[Output, ...] = (Output("monitoring-plan-series", _outputs),)
