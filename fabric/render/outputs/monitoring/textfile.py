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
from fabric.render.engine.registry import Output
from fabric.render.outputs.monitoring import planned_series as plan
from fabric.spec.platforms import platforms

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
    """The cable and port series of every cable as plan.cable_info and plan.planned_ports label them, one
    f-string a line, the parts shared by many cables (a place, a fabric and tier, a part) made once (a dict a series
    was the slowest part of the output at 100k GPUs). None when a value would need escaping, so the
    caller takes the general path: the values of each cable are tested once, joined, the shared parts as made."""
    cables = build.allocation.cables
    devices = build.topology.devices
    link = attrgetter("link")
    ports = (map(attrgetter(end), map(link, cables)) for end in ("a_port", "b_port"))
    if not _plain(devices, map(attrgetter("cable_id"), cables), *ports):  # every cable end is a device
        return None
    places: dict[tuple[str, int | None], tuple[str, str, str]] = {}
    kinds: dict[tuple[str, int | None, str], str] = {}
    goods: dict[tuple[str, str], str] = {}
    switches = {name for name, d in devices.items() if plan.is_switch(d)}
    infiniband = {key for key, ft in build.topology.fabrics.items() if ft.technology == "infiniband"}
    ib = build.infiniband.ends
    lines = [_header("fabric_planned_cable_info")]
    port_lines = [_header("fabric_planned_port_info")]
    for c in cables:
        cl = c.link
        i, ad, ap, bd, bp = c.cable_id, cl.a, cl.a_port, cl.b, cl.b_port
        a = places.get((c.a_rack, c.a_u))
        if a is None:
            a = places[(c.a_rack, c.a_u)] = _places(c.a_rack, c.a_u)
        b = places.get((c.b_rack, c.b_u))
        if b is None:
            b = places[(c.b_rack, c.b_u)] = _places(c.b_rack, c.b_u)
        k = kinds.get((cl.fabric, cl.plane, cl.tier))
        if k is None:
            if not _plain((cl.fabric, str(cl.tier))):
                return None
            plane = "" if cl.plane is None else f',plane="{cl.plane}"'
            k = kinds[(cl.fabric, cl.plane, cl.tier)] = f'fabric="{cl.fabric}"{plane},tier="{cl.tier}"'
        g = goods.get((c.part, c.media))
        if g is None:
            if not _plain((c.part, c.media)):
                return None
            g = goods[(c.part, c.media)] = _label("part", c.part) + _label("media", c.media)
        lines.append(
            f'fabric_planned_cable_info{{cable_id="{i}",label="{i} {a[0]} {ad} {ap} > {b[0]} {bd} {bp}",{k}{a[1]},'
            f'a_device="{ad}",a_port="{ap}"{b[2]},b_device="{bd}",b_port="{bp}"{g}}} 1\n'
        )
        # as the exporters key a port (plan.planned_ports): the IB port number, or the interface name
        if ad in switches:
            key = ib[ad, ap][1] if cl.fabric in infiniband else ap
            port_lines.append(f'fabric_planned_port_info{{hostname="{ad}",port="{key}",cable_id="{i}"}} 1\n')
        if bd in switches:
            key = ib[bd, bp][1] if cl.fabric in infiniband else bp
            port_lines.append(f'fabric_planned_port_info{{hostname="{bd}",port="{key}",cable_id="{i}"}} 1\n')
    if not _plain({rack for rack, _ in places}):  # the racks, once each (the other shared parts as made)
        return None
    lines += port_lines
    return lines  # one list, joined once with the rest: the text is 150-250 MB at 100k GPUs


def _places(rack: str, u: int | None) -> tuple[str, str, str]:
    """A place as the label writes it ("A01-U09"), and its labels as the a end and as the b end."""
    return end_label(rack, u), _place("a", rack, u), _place("b", rack, u)


def _device_lines(build: Build, fabrics: dict[str, list[str]], sus: dict[str, int]) -> list[str] | None:
    """The series of plan.device_labels, one f-string a device; None when a value would need escaping."""
    devices = list(build.topology.devices.values())
    text = attrgetter("name", "layer", "model", "fabric", "rack", "group", "platform")
    joined = [",".join(f) for f in fabrics.values()]
    if not _plain(chain.from_iterable((w or "" for w in text(d)) for d in devices), joined):
        return None
    return [
        f'fabric_planned_device_info{{hostname="{d.name}",layer="{d.layer}",model="{d.model}"'
        + _label("fabric", d.fabric if d.fabric else ",".join(fabrics.get(d.name, [])))
        + _label("plane", d.plane)
        + _label("su", d.su if d.su is not None else sus.get(d.name))
        + _label("rail", d.rail)
        + _label("rack", d.rack)
        + _label("u", d.u)
        + _label("group", d.group)
        + _label("platform", d.platform)
        + "} 1\n"
        for d in devices
    ]


def _label(key: str, value: object) -> str:
    """`,key="value"`, or nothing for a value plan.device_labels leaves out (None, "")."""
    return "" if value is None or value == "" else f',{key}="{value}"'


def _session_lines(build: Build) -> list[str] | None:
    """The series of plan.bgp_sessions, one f-string a session (405k sessions at 100k GPUs on RoCE); None when a
    value would need escaping, so the caller takes the general path."""
    devices = build.topology.devices
    peer = attrgetter("peer", "interface", "peer_device", "peer_port")
    lines: list[str] = []
    for name, intent in build.intents.items():
        bgp = intent.bgp
        if bgp is None or not platforms()[intent.platform].bgp_in_frr:
            continue
        device = devices[name]
        here = (name, intent.fabric, device.rack or "")
        neighbors = plan.sessions(bgp)
        if not _plain(here, chain.from_iterable(map(peer, neighbors))):
            return None
        head = f'fabric_planned_bgp_session_info{{hostname="{name}",peer="'
        mid = f'",fabric="{intent.fabric}",peer_device="'
        place = (f',rack="{device.rack}"' if device.rack else "") + (f',u="{device.u}"' if device.u is not None else "")
        tail = f',asn="{bgp.asn}"{place}}} 1\n'
        lines += [
            f'{head}{n.peer}",interface="{n.interface}{mid}{n.peer_device}",peer_port="{n.peer_port}"'
            + ("" if n.remote_as is None else f',peer_asn="{n.remote_as}"')
            + tail
            for n in neighbors
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
                (_series("fabric_planned_cable_info", plan.cable_info(build, c)) for c in build.allocation.cables),
            ),
            _family(
                "fabric_planned_port_info",
                (_series("fabric_planned_port_info", p) for p in plan.planned_ports(build)),
            ),
        ]
    )
    device_lines = _device_lines(build, fabrics, sus)
    if device_lines is None:
        labels = (plan.device_labels(build, d, fabrics, sus) for d in devices)
        device_lines = [_series("fabric_planned_device_info", d) for d in labels]
    parts.append(_family("fabric_planned_device_info", device_lines))
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


OUTPUTS: tuple[Output, ...] = (Output("monitoring-plan-series", _outputs, weight=2.0),)
