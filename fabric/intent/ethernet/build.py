"""Per-switch intent, built from the allocated plan for every switch of every Ethernet fabric.

The ports are laid out here; BGP, MLAG and QoS come from their own modules. Whether a switch's platform can do
what the spec asks is checked in intent/checks.py; how a platform differs (how it names the MLAG peer's
interface, …) is a trait of its platform.yaml, never a comparison of its name.
"""

from __future__ import annotations

from collections import defaultdict

from fabric.allocation.allocate import SERVER_INTERFACE, Allocation, Interface
from fabric.fast.frozen import maker
from fabric.intent.ethernet.bgp import bgp_intent
from fabric.intent.ethernet.index import NO_ADDRESSES, PlanIndex
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


class IntentBuilder:
    """Every Ethernet switch's intent from one design's topology and plan."""

    def __init__(self, design: Design, topology: Topology, plan: Allocation) -> None:
        self.design = design
        self.topology = topology
        self.index = PlanIndex(design, topology, plan)
        self.layouts: dict[tuple[str, str, tuple[tuple[str, int], ...]], list[PortRow]] = {}

    def build(self) -> dict[str, DeviceIntent]:
        out: dict[str, DeviceIntent] = {}
        for key, ft in self.topology.fabrics.items():
            if ft.technology != "ethernet":
                continue
            by_switch: dict[str, list[Link]] = defaultdict(list)
            for link in ft.links:
                by_switch[link.b].append(link)
                if link.tier != Tier.NODE_LEAF:
                    by_switch[link.a].append(link)
            for name in ft.switches:
                out[name] = self.device(key, ft, name, by_switch[name])
        return out

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


def build_intents(design: Design, topology: Topology, plan: Allocation) -> Intents:
    builder = IntentBuilder(design, topology, plan)
    devices = builder.build()
    return Intents(devices, tuple(builder.index.findings))
