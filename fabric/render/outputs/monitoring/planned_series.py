"""What monitoring needs to know of the plan, as plain data: scrape targets with the plan's labels, and the
planned cables, switch ports, BGP sessions and limits that the alert rules compare the exporters with.

Identity: every target carries `hostname` (the plan's device name); the plan's series use the same label, so a
rule joins them `on(hostname, …)`. (`device` is taken: node_exporter and dcgm-exporter use it for an interface or
a GPU.) A switch port is named as its exporter names it: the platform's interface name (IF-MIB `ifName`) on
Ethernet, the IB port number (infiniband-exporter `local_port`) on InfiniBand.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from fabric.allocation.allocate import Cable
from fabric.fast.lazy import resolved
from fabric.intent.ethernet.model import BgpIntent, Neighbor
from fabric.model.topology import Device
from fabric.pipeline import Build
from fabric.render.engine.memo import per_build
from fabric.spec.platforms import platforms
from fabric.spec.schema import MonitoringSettings


@dataclass(frozen=True)
class Target:
    address: str
    labels: dict[str, str]


def settings(build: Build) -> MonitoringSettings:
    return build.design.spec.monitoring


def _put(labels: dict[str, str], key: str, value: object) -> None:
    if value is not None and value != "":
        labels[key] = str(value)


@per_build
def node_fabrics(build: Build) -> dict[str, list[str]]:
    """The fabrics each node is cabled to, in spec order (the targets and the plan's series ask: read only)."""
    order = {key: i for i, key in enumerate(build.topology.fabrics)}
    found: dict[str, set[str]] = defaultdict(set)
    for cable in build.allocation.cables:
        found[cable.link.a].add(cable.link.fabric)
    return {node: sorted(fabrics, key=order.__getitem__) for node, fabrics in found.items()}


@per_build
def node_sus(build: Build) -> dict[str, int]:
    """A node's scalable unit: that of the first leaf it is cabled to that belongs to one (read only)."""
    devices = build.topology.devices
    found: dict[str, int] = {}
    for cable in build.allocation.cables:
        su = devices[cable.link.b].su
        if su is not None and cable.link.tier == "node-leaf":
            found.setdefault(cable.link.a, su)
    return found


def device_labels(
    build: Build, device: Device, fabrics: dict[str, list[str]], sus: dict[str, int] | None = None
) -> dict[str, str]:
    """The plan's labels of a device: what dashboards and alerts group by."""
    labels = {"hostname": device.name, "layer": device.layer, "model": device.model}
    fabric = device.fabric if device.fabric else ",".join(fabrics.get(device.name, []))
    _put(labels, "fabric", fabric)
    _put(labels, "plane", device.plane)
    _put(labels, "su", device.su if device.su is not None else (sus or {}).get(device.name))
    _put(labels, "rail", device.rail)
    _put(labels, "rack", device.rack)
    _put(labels, "u", device.u)
    _put(labels, "group", device.group)
    _put(labels, "platform", device.platform)
    return labels


def mgmt_addresses(build: Build) -> dict[str, str]:
    """The management address of each device (switch management port, node BMC), from the IP plan."""
    found: dict[str, str] = {}
    for row in build.allocation.addresses:
        if row.purpose == "mgmt" and row.device not in found:
            found[row.device] = str(row.address.ip)
    return found


def _host(build: Build, name: str) -> str:
    domain = build.design.spec.management.domain
    return f"{name}.{domain}" if domain else name


def is_switch(device: Device) -> bool:
    return device.layer != "node"


def gpu_nodes(build: Build) -> list[Device]:
    nodes = build.design.catalog.nodes
    return [d for d in build.topology.devices.values() if d.layer == "node" and nodes[d.model].gpus > 0]


def _entries(build: Build) -> Iterator[tuple[str, Device | None, str, dict[str, str] | None]]:
    """(job, device, address, labels) of every scrape target; labels None: the device's (device_labels)."""
    conf = settings(build)
    mgmt = mgmt_addresses(build)
    devices = build.topology.devices
    gpus = {d.name for d in gpu_nodes(build)}
    for device in devices.values():
        if not is_switch(device):
            yield "node", device, f"{_host(build, device.name)}:{conf.ports.node}", None
            if device.name in gpus:
                yield "dcgm", device, f"{_host(build, device.name)}:{conf.ports.dcgm}", None
            if device.name in mgmt:
                yield "ipmi", device, mgmt[device.name], None
            continue
        technology = build.topology.fabrics[device.fabric].technology if device.fabric else ""
        if technology != "ethernet" or device.name not in mgmt:
            continue
        yield "snmp", device, mgmt[device.name], None
        intent = build.intents.get(device.name)
        if intent is not None and intent.bgp is not None and platforms()[intent.platform].bgp_in_frr:
            yield "frr", device, f"{mgmt[device.name]}:{conf.ports.frr}", None
    for subnet in build.infiniband.subnets:
        host = subnet.sm[0].host if subnet.sm else next((n.device for n in subnet.cas), None)
        if host is None:
            continue
        labels = {"hostname": host, "fabric": subnet.fabric, "layer": "node"}
        _put(labels, "plane", subnet.plane)
        _put(labels, "rack", devices[host].rack if host in devices else None)
        _put(labels, "u", devices[host].u if host in devices else None)
        yield "infiniband", None, f"{_host(build, host)}:{conf.ports.infiniband}", labels


@per_build
def targets(build: Build) -> dict[str, list[Target]]:
    """Scrape targets per job (only jobs that have targets). Once a build (the targets files and prometheus.yml
    ask): callers read it, never change it."""
    fabrics = node_fabrics(build)
    sus = node_sus(build)
    jobs: dict[str, list[Target]] = defaultdict(list)
    labelled: dict[str, dict[str, str]] = {}  # a device's labels, one dict for all its jobs
    for job, device, address, labels in _entries(build):
        if labels is None:
            assert device is not None
            labels = labelled.get(device.name)
            if labels is None:
                labels = labelled[device.name] = device_labels(build, device, fabrics, sus)
        jobs[job].append(Target(address, labels))
    return {job: jobs[job] for job in sorted(jobs)}


@per_build
def job_names(build: Build) -> frozenset[str]:
    """The jobs that have targets (what the rules and the runbook ask): those _entries yields, without making their
    addresses or labels."""
    mgmt = {row.device for row in build.allocation.addresses if row.purpose == "mgmt"}
    catalog = build.design.catalog.nodes
    fabrics = build.topology.fabrics
    found: set[str] = set()
    for device in build.topology.devices.values():
        if not is_switch(device):
            found.add("node")
            if catalog[device.model].gpus > 0:
                found.add("dcgm")
            if device.name in mgmt:
                found.add("ipmi")
            continue
        technology = fabrics[device.fabric].technology if device.fabric else ""
        if technology != "ethernet" or device.name not in mgmt:
            continue
        found.add("snmp")
        intent = build.intents.get(device.name)
        if intent is not None and intent.bgp is not None and platforms()[intent.platform].bgp_in_frr:
            found.add("frr")
    if any(subnet.sm or subnet.cas for subnet in build.infiniband.subnets):
        found.add("infiniband")
    return frozenset(found)


# --------------------------------------------------------------------------------------------- planned series


def cable_info(build: Build, cable: Cable) -> dict[str, str]:
    """The labels of a cable's series (empty values left out), written out key by key: 300,000 cables."""
    link = cable.link
    labels = {"cable_id": cable.cable_id, "label": cable.labels()[0], "fabric": link.fabric}
    if link.plane is not None:
        labels["plane"] = str(link.plane)
    labels["tier"] = str(link.tier)
    if cable.a_rack:
        labels["a_rack"] = cable.a_rack
    if cable.a_u is not None:
        labels["a_u"] = str(cable.a_u)
    labels["a_device"] = link.a
    labels["a_port"] = link.a_port
    if cable.b_rack:
        labels["b_rack"] = cable.b_rack
    if cable.b_u is not None:
        labels["b_u"] = str(cable.b_u)
    labels["b_device"] = link.b
    labels["b_port"] = link.b_port
    if cable.part:
        labels["part"] = cable.part
    if cable.media:
        labels["media"] = cable.media
    return labels


def planned_ports(build: Build, cables: Sequence[Cable] | None = None) -> Iterator[dict[str, str]]:
    """Each switch end of each cable (of `cables`, default all), keyed as the exporters key a port; `cable_id`
    joins it to its cable."""
    devices = build.topology.devices
    switches = {name for name, d in devices.items() if is_switch(d)}
    infiniband = {key for key, ft in build.topology.fabrics.items() if ft.technology == "infiniband"}
    ends = resolved(build.infiniband.ends)
    for cable in build.allocation.cables if cables is None else cables:
        link = cable.link
        for device, port in ((link.a, link.a_port), (link.b, link.b_port)):
            if device in switches:  # as the exporters key a port: the IB port number, or the interface name
                key = str(ends[(device, port)][1]) if link.fabric in infiniband else port
                yield {"hostname": device, "port": key, "cable_id": cable.cable_id}


def sessions(bgp: BgpIntent) -> list[Neighbor]:
    """A switch's BGP sessions as frr_exporter names their peers: one per peer (on NVUE an MLAG pair's IPv4 and
    IPv6 backup sessions are the peer link's one session, named by its interface)."""
    seen: set[str] = set()
    out = []
    for n in bgp.neighbors:
        if n.peer not in seen:
            seen.add(n.peer)
            out.append(n)
    return out


def bgp_sessions(build: Build) -> Iterator[dict[str, str]]:
    """Every planned BGP session of a switch whose sessions frr_exporter reads, as frr_exporter names the peer."""
    devices = build.topology.devices
    for name, intent in build.intents.items():
        if intent.bgp is None or not platforms()[intent.platform].bgp_in_frr:
            continue
        device = devices[name]
        for n in sessions(intent.bgp):
            labels = {"hostname": name, "peer": n.peer, "interface": n.interface, "fabric": intent.fabric}
            labels["peer_device"] = n.peer_device
            labels["peer_port"] = n.peer_port
            _put(labels, "peer_asn", n.remote_as)
            labels["asn"] = str(intent.bgp.asn)
            _put(labels, "rack", device.rack)
            _put(labels, "u", device.u)
            yield labels


def gpu_limits(build: Build) -> Iterator[tuple[str, int | None, int | None]]:
    """(node, power limit W, temperature limit °C) of every GPU node."""
    temp = settings(build).thresholds.gpu_temp_c
    for device in gpu_nodes(build):
        kind = build.design.catalog.nodes[device.model]
        yield device.name, kind.gpu_power_w, temp if temp is not None else kind.gpu_temp_max_c


def rack_budgets(build: Build) -> dict[str, float]:
    """Power budget per used rack, W."""
    used = sorted({d.rack for d in build.topology.devices.values() if d.rack})
    watts = build.design.spec.racks.power_kw * 1000
    return dict.fromkeys(used, watts)


def has_roce(build: Build) -> bool:
    """Some Ethernet fabric runs the RoCE lossless profile (so hosts' PFC and ECN counters matter)."""
    return any(i.qos is not None for i in build.intents.values())


def roce_priority(build: Build) -> int:
    return next((i.qos.roce_tc for i in build.intents.values() if i.qos is not None), 3)
