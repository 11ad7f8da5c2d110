"""monitoring/textfile/fabric_plan.prom: the plan as Prometheus series, for node_exporter's textfile collector.

One series per cable (`fabric_planned_cable_info`), per switch end of a cable (`fabric_planned_port_info`), per
device, per planned BGP session, per rack's power budget and per GPU node's limits. The alert rules join the
exporters' series with these, so one rule covers every cable however many there are (300k cables are 300k
series, not 300k rules). The job `fabric-plan` of prometheus.yml scrapes them with `honor_labels`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from operator import attrgetter

from fabric.fast.lazy import resolved
from fabric.model.cable import Cable, end_label
from fabric.model.rendered import TextPieces
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


CABLES_PER_PIECE = 20_000  # cables whose series make one piece of the file (TextPieces): a few MB each


def _cable_pieces(build: Build, per: int = 0) -> Iterator[str]:
    """The cable series, then the port series, a piece per `per` cables (default CABLES_PER_PIECE): each piece
    as `_cable_lines` / `_port_lines` make it, or where a value needs escaping (a cable id or port name, tested
    once a piece for both series; or None from `_cable_lines`) as plan.cable_info and plan.planned_ports label
    each cable (the same text for values that need none)."""
    cables = build.allocation.cables
    per = per or CABLES_PER_PIECE
    devices = build.topology.devices
    fast = _plain(devices)  # every cable end is a device
    switches = {name for name, d in devices.items() if plan.is_switch(d)}
    infiniband = {key for key, ft in build.topology.fabrics.items() if ft.technology == "infiniband"}
    shared = _Shared()
    plain: list[bool] = []  # per piece: no cable id or port name of it needs escaping
    yield _header("fabric_planned_cable_info")
    for start in range(0, len(cables), per):
        part = cables[start : start + per]
        plain.append(fast and _ends_plain(part))
        lines = _cable_lines(part, shared) if plain[-1] else None
        if lines is None:
            lines = [_series("fabric_planned_cable_info", plan.cable_info(build, c)) for c in part]
        yield "".join(lines)
    yield _header("fabric_planned_port_info")
    for k, start in enumerate(range(0, len(cables), per)):
        part = cables[start : start + per]
        lines = _port_lines(build, part, switches, infiniband) if plain[k] else None
        if lines is None:
            lines = [_series("fabric_planned_port_info", p) for p in plan.planned_ports(build, part)]
        yield "".join(lines)


class _Shared:
    """The parts of a cable's series that many cables share, made once (a place, a fabric and tier, a part)."""

    def __init__(self) -> None:
        self.places: dict[tuple[str, int | None], tuple[str, str, str]] = {}
        self.kinds: dict[tuple[str, int | None, str], str] = {}
        self.goods: dict[tuple[str, str], str] = {}


def _ends_plain(cables: Sequence[Cable]) -> bool:
    """No cable id or port name of these cables needs escaping (one test of each joined column)."""
    link = attrgetter("link")
    ports = (map(attrgetter(end), map(link, cables)) for end in ("a_port", "b_port"))
    return _plain(map(attrgetter("cable_id"), cables), *ports)


def _cable_lines(cables: Sequence[Cable], shared: _Shared) -> list[str] | None:
    """The cable series of these cables as plan.cable_info labels them, one f-string a line, the shared parts as
    made (a dict a series was the slowest part of the output at 100k GPUs). None when a value would need
    escaping, so that the caller takes the general path: the shared parts are tested as made. (The caller
    tested the cables' ids and ports, `_ends_plain`, and their ends' devices.)"""
    places, kinds, goods = shared.places, shared.kinds, shared.goods
    lines = []
    for c in cables:
        cl = c.link
        i, ad, ap, bd, bp = c.cable_id, cl.a, cl.a_port, cl.b, cl.b_port
        a = places.get((c.a_rack, c.a_u))
        if a is None:
            if not _plain((c.a_rack,)):
                return None
            a = places[(c.a_rack, c.a_u)] = _places(c.a_rack, c.a_u)
        b = places.get((c.b_rack, c.b_u))
        if b is None:
            if not _plain((c.b_rack,)):
                return None
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
    return lines


def _port_lines(build: Build, cables: Sequence[Cable], switches: set[str], infiniband: set[str]) -> list[str]:
    """The port series of these cables' switch ends as plan.planned_ports keys them, one f-string a line (the
    caller tested their values: `_ends_plain`, the devices)."""
    ib = resolved(build.infiniband.ends)
    lines = []
    for c in cables:
        cl = c.link
        i, ad, ap, bd, bp = c.cable_id, cl.a, cl.a_port, cl.b, cl.b_port
        # as the exporters key a port (plan.planned_ports): the IB port number, or the interface name
        if ad in switches:
            key = ib[ad, ap][1] if cl.fabric in infiniband else ap
            lines.append(f'fabric_planned_port_info{{hostname="{ad}",port="{key}",cable_id="{i}"}} 1\n')
        if bd in switches:
            key = ib[bd, bp][1] if cl.fabric in infiniband else bp
            lines.append(f'fabric_planned_port_info{{hostname="{bd}",port="{key}",cable_id="{i}"}} 1\n')
    return lines


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
    return "".join(fabric_plan_pieces(build))


def fabric_plan_pieces(build: Build, per: int = 0) -> Iterator[str]:
    """The file in pieces (TextPieces): the cable and port series `per` cables a piece, then the rest."""
    yield from _cable_pieces(build, per)
    fabrics = plan.node_fabrics(build)
    sus = plan.node_sus(build)
    devices = build.topology.devices.values()
    limits = list(plan.gpu_limits(build))
    parts: list[Iterable[str]] = []
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
    yield "".join(chain.from_iterable(parts))


def _outputs(build: Build) -> dict[str, TextPieces]:
    return {PATH: TextPieces(lambda: fabric_plan_pieces(build))} if plan.settings(build).enabled else {}


OUTPUTS: tuple[Output, ...] = (Output("monitoring-plan-series", _outputs, weight=2.0),)
