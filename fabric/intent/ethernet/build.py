"""Per-switch intent, built from the allocated plan for every switch of every Ethernet fabric.

The ports are laid out here; BGP, MLAG and QoS come from their own modules. Whether a switch's platform can do
what the spec asks is checked in intent/checks.py; how a platform differs (how it names the MLAG peer's
interface, …) is a trait of its platform.yaml, never a comparison of its name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Iterator

from fabric.allocation.allocate import SERVER_INTERFACE, Allocation, Interface
from fabric.fast.frozen import maker
from fabric.fast.lazy import LazyMapping
from fabric.intent.ethernet.bgp import bgp_intent
from fabric.intent.ethernet.index import NO_ADDRESSES, PlanIndex, pairs_of
from fabric.intent.ethernet.mlag import mlag_intent
from fabric.intent.ethernet.model import (
    DEFAULT_MTU,
    PEER_CHANNEL,
    SERVER_VLAN,
    DeviceIntent,
    Intents,
    MlagIntent,
    PortIntent,
    ServerSubnet,
)
from fabric.intent.ethernet.ports import PortRow, port_layout
from fabric.intent.ethernet.qos import qos_intent
from fabric.model.kinds import Layer, Tier
from fabric.model.topology import FabricTopology, Link, Topology
from fabric.spec.loader import Design
from fabric.spec.platforms import platforms

_PEER, _NODE_LEAF = Tier.PEER, Tier.NODE_LEAF
_port = maker(PortIntent)  # one per switch port, the most numerous intent value: built as cheaply as a tuple
# What the intent checks (intent/checks.py) read of a switch: its platform, its QoS profile (the fabric's, on the
# ports it uses), its used ports' names, breakouts and MTUs, BGP unnumbered (the fabric's) and whether it is in an
# MLAG pair. The builder below makes them from the switch's fabric, model, platform, layer, its cabled ports with
# their speeds and whether it is in a pair; switches alike in these are one class (a million GPUs on RoCE: 39,568
# switches in 5 classes). tests/unit/intent/test_classes.py shows every switch of the bundled designs reads as its
# class's first.
Alike = tuple[str, str, str, str, tuple[tuple[str, int], ...], bool]


def switches(topology: Topology) -> Iterator[tuple[str, FabricTopology, str, list[Link]]]:
    """Every switch of every Ethernet fabric: its fabric's key and topology, its name and its links (up and down)."""
    for key, ft in topology.fabrics.items():
        if ft.technology != "ethernet":
            continue
        by_switch: dict[str, list[Link]] = defaultdict(list)
        for link in ft.links:
            by_switch[link.b].append(link)
            if link.tier != Tier.NODE_LEAF:
                by_switch[link.a].append(link)
        for name in ft.switches:
            yield key, ft, name, by_switch[name]


def alike(topology: Topology, pairs: Container[str], key: str, name: str, links: list[Link]) -> Alike:
    """What makes switch `name` of fabric `key` what the intent checks read (`pairs`: the leaves in MLAG pairs)."""
    device = topology.devices[name]
    used = tuple((link.a_port if link.a == name else link.b_port, link.speed_gbps) for link in links)
    return key, device.model, device.platform or "", device.layer, used, name in pairs


class IntentBuilder:
    """Ethernet switches' intent from one design's topology and plan (`devices`: the switches it will make; None:
    any)."""

    def __init__(
        self, design: Design, topology: Topology, plan: Allocation, devices: Container[str] | None = None
    ) -> None:
        self.design = design
        self.topology = topology
        self.index = PlanIndex(design, topology, plan, devices)
        self.layouts: dict[tuple[str, str, tuple[tuple[str, int], ...]], list[PortRow]] = {}

    def build(self) -> Intents:
        """Every switch, and the first of each class."""
        devices: dict[str, DeviceIntent] = {}
        classes: dict[Alike, DeviceIntent] = {}
        pairs = self.index.pairs
        for key, ft, name, links in switches(self.topology):
            intent = devices[name] = self.device(key, ft, name, links)
            classes.setdefault(alike(self.topology, pairs, key, name, links), intent)
        return Intents(devices, tuple(self.index.findings), tuple(classes.values()))

    def layout(self, model_key: str, platform: str, used: dict[str, int]) -> list[PortRow]:
        """`port_layout`, once per model, platform and cabled ports in order: the leaves of a fabric share a few."""
        key = (model_key, platform, tuple(used.items()))
        rows = self.layouts.get(key)
        if rows is None:
            rows = self.layouts[key] = port_layout(self.design.catalog.switches[model_key], platform, used)
        return rows

    def device(self, key: str, ft: FabricTopology, name: str, links: list[Link]) -> DeviceIntent:
        """Switch `name` of fabric `key` (`links`: its links, up and down)."""
        spec = self.design.spec
        index = self.index
        fabric = spec.fabrics[key]
        device = self.topology.devices[name]
        model = self.design.catalog.switches[device.model]
        platform = device.platform
        assert platform is not None, "every Ethernet switch model has a default platform (catalog validator)"
        traits = platforms()[platform]
        mtu = fabric.mtu or DEFAULT_MTU
        peers: dict[str, Link] = {(link.a_port if link.a == name else link.b_port): link for link in links}
        used = {port: link.speed_gbps for port, link in peers.items()}
        unnumbered = fabric.routing is not None and fabric.routing.bgp_unnumbered
        routed_nodes = spec.dual_homing(key) == "host_routing"
        pair = index.pairs.get(name)
        bonds: dict[int, list[str]] = defaultdict(list)  # channel → this leaf's member ports
        ports = []
        server_members = []
        local_v4: dict[str, tuple[str, Interface | None]] = {}  # routed port → (purpose, its address): for BGP
        address = index.addresses.get(name, NO_ADDRESSES).get
        cable_m = index.cable_m.get(name, {}).get
        v6 = index.v6
        for port, cage, sub, breakout, speed, lanes in self.layout(device.model, platform, used):
            link = peers.get(port)
            if link is None:
                ports.append(_port(port, cage, sub, breakout, speed, lanes, mtu, False, "unused"))
                continue
            mine_a = link.a == name
            peer_device, peer_port = (link.b, link.b_port) if mine_a else (link.a, link.a_port)
            purpose = "p2p"
            channel = None
            tier = link.tier
            if pair is not None and tier in (_NODE_LEAF, _PEER):
                peer_link = tier == _PEER
                role = "peer-link" if peer_link else "server"
                channel = PEER_CHANNEL if peer_link else pair[0].nodes.index(link.a) + 1
                bonds[channel].append(port)
            elif tier == _NODE_LEAF and routed_nodes and self.topology.devices[link.a].layer == Layer.NODE:
                role, purpose = "downlink", "host-p2p"  # a routed link with a BGP session to the node
            elif tier == _NODE_LEAF:
                role = "server"
                server_members.append(port)
            else:
                role = "uplink" if mine_a else "downlink"
            routed = not (unnumbered or role == "server" or role == "peer-link")
            ipv4 = None
            if routed:
                ipv4 = address((port, purpose, 4))
                local_v4[port] = (purpose, ipv4)
            ports.append(
                _port(
                    port,
                    cage,
                    sub,
                    breakout,
                    link.speed_gbps,
                    lanes,
                    mtu,
                    True,
                    role,
                    peer_device,
                    peer_port,
                    ipv4,
                    address((port, purpose, 6)) if routed and v6 else None,
                    cable_m(port),
                    channel,
                )
            )
        loopback_v4 = index.address(name, "lo", "loopback", 4)
        loopback_v6 = index.address(name, "lo", "loopback", 6)
        servers = None
        mlag: MlagIntent | None = None
        if pair is not None:
            servers, mlag = mlag_intent(index, name, pair[0], pair[1], bonds)
        elif device.layer == Layer.LEAF and server_members:
            purpose = "mgmt-gateway" if ft.role == "oob" else "server-gateway"
            gateway = index.address(name, "servers", purpose, 4)
            if gateway is not None:
                servers = ServerSubnet(
                    SERVER_INTERFACE,
                    SERVER_VLAN,
                    gateway,
                    index.address(name, "servers", purpose, 6),
                    tuple(server_members),
                )
        mgmt_name = traits.mgmt(model.mgmt_port)
        mgmt = index.address(name, mgmt_name, "mgmt", 4)
        gateway_ip = spec.management.gateway or (index.first_host_text(mgmt) if mgmt else None)
        qos = qos_intent(fabric.qos, ft.role, [p.name for p in ports if p.admin_up])
        bgp = bgp_intent(
            index, key, ft, name, links, loopback_v4, loopback_v6, servers, unnumbered, traits, routed_nodes, mlag,
            local_v4,
        )  # fmt: skip
        return DeviceIntent(
            hostname=name,
            fabric=key,
            layer=device.layer,
            platform=platform,
            model=device.model,
            hwsku=model.sonic_hwsku,
            mgmt_port=mgmt_name,
            mgmt_address=mgmt,
            mgmt_gateway=gateway_ip,
            loopback_v4=loopback_v4,
            loopback_v6=loopback_v6,
            ports=tuple(ports),
            servers=servers,
            bgp=bgp,
            mtu=mtu,
            lldp=True,
            ntp=tuple(spec.management.ntp),
            syslog=tuple(spec.management.syslog),
            dns=tuple(spec.management.dns),
            domain=spec.management.domain,
            snmp_community=index.snmp,
            snmp_location=spec.management.snmp_location,
            qos=qos,
            design=spec.name,
            mlag=mlag,
        )


def build_intents(design: Design, topology: Topology, plan: Allocation, *, every: bool = True) -> Intents:
    """Every Ethernet switch's intent. `every`: False where nothing renders them (`fabric validate`): then only the
    first switch of each class is made at once (Intents.classes, what the checks read), the others when the
    devices are first read."""
    if every:
        return IntentBuilder(design, topology, plan).build()
    pairs = pairs_of(design, topology)
    firsts: dict[Alike, tuple[str, FabricTopology, str, list[Link]]] = {}
    for key, ft, name, links in switches(topology):
        firsts.setdefault(alike(topology, pairs, key, name, links), (key, ft, name, links))
    looked_up: set[str] = set()  # the addresses those switches read: their own, their peers' and MLAG peers'
    for _, _, name, links in firsts.values():
        looked_up.add(name)
        looked_up.update(end for link in links for end in (link.a, link.b))
        if name in pairs:
            looked_up.update((pairs[name][0].lower, pairs[name][0].upper))
    builder = IntentBuilder(design, topology, plan, looked_up)
    classes = tuple(builder.device(*switch) for switch in firsts.values())
    every_switch = LazyMapping[str, DeviceIntent](lambda: dict(IntentBuilder(design, topology, plan).build().devices))
    return Intents(every_switch, tuple(builder.index.findings), classes)
