"""Per-switch intent. Everything a switch's configuration says, vendor-neutral and ready to print.

Built from the allocated plan for every switch of every Ethernet fabric; the platform renderers
(fabric/render/platforms/) only turn it into syntax, and every policy value (QoS weights, PFC watchdog times,
the server VLAN) is here so that one intent gives the same values on every platform. Secrets are resolved here;
whether a switch's platform can do what the spec asks is checked in intent/checks.py.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_interface

from fabric.allocation.allocate import SERVER_INTERFACE, Interface, MlagPair, Network, Plan, mlag_pairs
from fabric.fast.addresses import ip_text
from fabric.fast.frozen import maker
from fabric.model.findings import Finding
from fabric.model.kinds import Layer, Tier
from fabric.model.topology import LAYER_RANK, FabricTopology, Link, Topology
from fabric.spec.catalog import SwitchModel, SwitchPort, port_candidates, switch_ports
from fabric.spec.loader import Design
from fabric.spec.platforms import mgmt_port
from fabric.spec.schema import QosSettings

DEFAULT_MTU = 9216
PEER_GROUP = "FABRIC"
ROCE_ROLES = ("compute", "storage")
SERVER_VLAN = 1000  # the VLAN (SONiC, Cumulus, EOS) of the bridge that holds a leaf's server gateway
PEER_VLAN = 4094  # an MLAG pair's peer VLAN (`dual_homing: bond`), the one AVD and NVUE use
PEER_CHANNEL = 1000  # the peer link's port-channel; a node's bond is its place in its pair's node list (1, 2, …)
# the peer VLAN's /31 never leaves the pair, so every pair takes the same link-local one (as NVUE's
# `peer-ip linklocal`): the lower leaf .0, the upper .1
PEER_NET = IPv4Network("169.254.0.0/31")


@dataclass(frozen=True, slots=True)
class PortIntent:
    """A switch port as configured: speed, lanes, MTU, address and what it connects to."""

    name: str
    cage: int
    sub: int
    breakout: int  # logical ports of its cage in the mode used
    speed_gbps: int
    lanes: tuple[int, ...]  # electrical lanes (SONiC PORT.lanes)
    mtu: int
    admin_up: bool
    role: str  # uplink | downlink (also a routed node port, `dual_homing: host_routing`) | server | peer-link | unused
    peer_device: str = ""
    peer_port: str = ""
    ipv4: Interface | None = None  # address and prefix of a numbered switch link
    ipv6: Interface | None = None
    cable_m: float | None = None  # planned cable length
    channel: int | None = None  # the port-channel (bond) it is a member of: a node's bond, or the peer link

    @property
    def description(self) -> str:
        return f"{self.peer_device}:{self.peer_port}" if self.peer_device else "unused"


@dataclass(frozen=True, slots=True)
class Neighbor:
    """A BGP session: peer address or interface, remote AS and the device and port at the other end."""

    peer: str  # the peer's address (numbered) or the local interface (unnumbered)
    interface: str
    remote_as: int | None  # the peer's ASN (FRR and NVUE say `external` on unnumbered sessions)
    peer_device: str
    peer_port: str
    local_address: IPv4Address | IPv6Address | None = None  # this side's /31 address (numbered)
    mlag_peer: bool = False  # the session to the other leaf of an MLAG pair, over the peer VLAN

    @property
    def description(self) -> str:
        return f"{self.peer_device}:{self.peer_port}"


@dataclass(frozen=True, slots=True)
class PrefixRule:
    """A prefix-list entry: a prefix with its optional ge and le lengths."""

    prefix: Network
    ge: int | None
    le: int | None


_PEER, _NODE_LEAF = Tier.PEER, Tier.NODE_LEAF
_NONE: Mapping[tuple[str, str, int], Interface] = {}  # a device without addresses
_port = maker(PortIntent)  # half a million at 100k GPUs: built as cheaply as a plain dataclass
_neighbor = maker(Neighbor)


@dataclass(frozen=True)
class BgpIntent:
    """A switch's BGP: ASN, router ID, sessions, multipath and the prefixes it originates."""

    asn: int
    router_id: IPv4Address | IPv6Address
    unnumbered: bool
    neighbors: tuple[Neighbor, ...]
    multipath_relax: bool
    maximum_paths: int
    networks: tuple[Network, ...]  # IPv4 prefixes this switch originates
    networks_v6: tuple[Network, ...]
    allowed: tuple[PrefixRule, ...]  # what the fabric carries: loopbacks and server subnets only
    allowed_v6: tuple[PrefixRule, ...]
    ipv6: bool  # IPv6 unicast is exchanged (unnumbered sessions carry both families)
    password: str | None = None  # TCP MD5 password of every session (a resolved secret)
    peer_group: str = PEER_GROUP


@dataclass(frozen=True)
class ServerSubnet:
    """A leaf's server subnet: VLAN, gateway addresses and member ports."""

    name: str  # the bridge/VLAN interface holding the gateway
    vlan: int
    gateway_v4: Interface
    gateway_v6: Interface | None
    members: tuple[str, ...]
    # `dual_homing: bond`: the address both leaves of the pair answer for (EOS virtual router, Cumulus VRR);
    # the members are then the pair's bonds (DeviceIntent.mlag)
    virtual_v4: Interface | None = None
    virtual_v6: Interface | None = None


@dataclass(frozen=True, slots=True)
class Bond:
    """A port-channel of an MLAG leaf: its number, the bonded node and this leaf's member ports."""

    channel: int  # port-channel / bond number, the same on both leaves of the pair
    node: str  # the bonded node ("" for the peer link)
    members: tuple[str, ...]  # this leaf's ports in it


@dataclass(frozen=True)
class MlagIntent:
    """One leaf's part of an MLAG pair: the peer, the peer link and VLAN, the nodes' bonds."""

    domain: str  # the pair's MLAG domain id: `<lower leaf>-<upper leaf>`
    index: int  # 1-based pair number within the fabric (the pair's system MAC)
    peer: str  # the other leaf
    primary: bool  # the lower leaf (lower role priority)
    vlan: int
    local_address: Interface  # on the peer VLAN's SVI
    peer_address: IPv4Address | IPv6Address
    peer_loopback: Interface | None  # the peer's loopback: NVUE's backup path to it (over the fabric)
    peer_link: Bond
    bonds: tuple[Bond, ...]

    @property
    def system_mac(self) -> str:
        """The pair's shared MAC (NVUE `mlag mac-address`), from the range NVIDIA reserves for it."""
        return f"44:38:39:ff:{self.index // 256:02x}:{self.index % 256:02x}"


@dataclass(frozen=True)
class QosIntent:
    """The RoCEv2 lossless profile: DSCP → traffic class, PFC on one priority, ECN on it, CNPs strict."""

    roce_dscp: int
    roce_tc: int
    cnp_dscp: int
    cnp_tc: int
    ecn_min_bytes: int
    ecn_max_bytes: int
    ecn_probability: int
    pfc_watchdog: bool
    ports: tuple[str, ...]  # ports that carry the profile
    # egress scheduling: CNPs strict, then RoCE and everything else (class 0) by DWRR weight, in percent
    roce_weight: int = 50
    default_weight: int = 50
    # PFC watchdog: poll every poll_ms, a queue paused for detect_ms is stormed (its packets dropped), and
    # restored restore_ms after the pauses stop
    watchdog_poll_ms: int = 100
    watchdog_detect_ms: int = 200
    watchdog_restore_ms: int = 200

    def dscp_to_tc(self) -> tuple[tuple[int, int], ...]:
        """All 64 DSCP values, explicitly: RoCE and CNP to their classes, everything else to class 0."""
        special = {self.roce_dscp: self.roce_tc, self.cnp_dscp: self.cnp_tc}
        return tuple((dscp, special.get(dscp, 0)) for dscp in range(64))


@dataclass(frozen=True)
class DeviceIntent:
    """Everything one Ethernet switch is configured with, vendor-neutral: the renderers only format it."""

    hostname: str
    fabric: str
    layer: str
    platform: str
    model: str
    hwsku: str | None
    mgmt_port: str
    mgmt_address: Interface | None
    mgmt_gateway: str | None
    loopback_v4: Interface | None
    loopback_v6: Interface | None
    ports: tuple[PortIntent, ...]
    servers: ServerSubnet | None
    bgp: BgpIntent | None
    mtu: int
    lldp: bool
    ntp: tuple[str, ...]
    syslog: tuple[str, ...]
    dns: tuple[str, ...]
    domain: str | None
    snmp_community: str | None
    snmp_location: str | None
    qos: QosIntent | None
    design: str
    mlag: MlagIntent | None = None

    @property
    def has_secrets(self) -> bool:
        return self.snmp_community is not None or (self.bgp is not None and self.bgp.password is not None)

    @property
    def used_ports(self) -> tuple[PortIntent, ...]:
        return tuple(p for p in self.ports if p.admin_up)


@dataclass(frozen=True)
class Intents:
    """Every Ethernet switch's intent, by hostname, with the findings of making them."""

    devices: Mapping[str, DeviceIntent]
    findings: tuple[Finding, ...]


# --------------------------------------------------------------------------------------------- helpers


def _layout(
    model: SwitchModel, platform: str, used: Mapping[str, int]
) -> list[tuple[str, int, int, int, int, int, int]]:
    """Every logical port of the switch: cages run in the mode their cabled ports use, the others at the most
    common cabled speed (else their default). Rows: (name, cage, sub, breakout, speed, first lane, lanes)."""
    candidates = port_candidates(model, platform)
    cage_mode: dict[int, tuple[int, int]] = {}
    for name, speed in used.items():
        options = candidates.get(name, ())
        port = next((p for p in options if p.speed_gbps == speed), options[0] if options else None)
        if port is not None:
            cage_mode.setdefault(port.cage, (port.breakout, port.speed_gbps))
    speeds = Counter(speed for _, speed in cage_mode.values())
    common = speeds.most_common(1)[0][0] if speeds else None
    rows: list[tuple[str, int, int, int, int, int, int]] = []
    default = switch_ports(model, common, platform)
    by_cage: dict[int, list[SwitchPort]] = defaultdict(list)
    for port in default:
        by_cage[port.cage].append(port)
    for cage, ports in by_cage.items():
        mode = cage_mode.get(cage)
        if mode is not None and (ports[0].breakout, ports[0].speed_gbps) != mode:
            ports = [
                p
                for options in candidates.values()
                for p in options
                if p.cage == cage and (p.breakout, p.speed_gbps) == mode
            ]
            ports.sort(key=lambda p: p.sub)
        rows.extend(
            (p.name, p.cage, p.sub, p.breakout, p.speed_gbps, p.lane if p.asic_lane is None else p.asic_lane, p.lanes)
            for p in ports
        )
    return rows


_Port = tuple[str, int, int, int, int, tuple[int, ...]]  # name, cage, sub, breakout, speed, lanes


@cache
def _lanes(first: int, count: int) -> tuple[int, ...]:
    """A port's electrical lanes; one tuple per distinct value, shared by every switch that has it."""
    return tuple(range(first, first + count))


def _maximum_paths(name: str, links: Sequence[Link]) -> int:
    """Equal-cost paths to allow: a switch's uplinks, or the most parallel links to one neighbour."""
    up = 0
    peers = []
    for link in links:
        tier = link.tier
        if tier in (_NODE_LEAF, _PEER):
            continue
        if link.a == name:
            up += 1
            peers.append(link.b)
        else:
            peers.append(link.a)
    return max(1, up, max(Counter(peers).values(), default=1))  # (Counter counts a list in C)


# --------------------------------------------------------------------------------------------- build


class _IntentBuilder:
    def __init__(self, design: Design, topology: Topology, plan: Plan) -> None:
        self.design = design
        self.topology = topology
        self.plan = plan
        self.findings: list[Finding] = []
        # device → (interface, purpose, IP version) → the first such address (per device, as _device reads them:
        # one dict keyed by all four was a cache miss a lookup at 100k GPUs); node ports' rows (half the plan)
        # are not looked up
        self.addresses: dict[str, dict[tuple[str, str, int], Interface]] = defaultdict(dict)
        self.v6 = False  # any IPv6 address in the plan (else no port looks one up)
        # each fabric's leaf subnets: out-of-band leaves hold management subnets, the others server subnets
        self.subnet_prefix: dict[str, int] = {}
        addresses, gateways = self.addresses, ("server-gateway", "mgmt-gateway")
        for row in plan.addresses:
            purpose = row.purpose
            if purpose != "server":
                address = row.address
                version = address.version
                addresses[row.device].setdefault((row.interface, purpose, version), address)
                if version == 6:
                    self.v6 = True
                elif purpose in gateways:
                    self.subnet_prefix.setdefault(row.fabric, address.network.prefixlen)
        self.rank = {name: LAYER_RANK[dev.layer] for name, dev in topology.devices.items()}
        self.layouts: dict[tuple[str, str, tuple[tuple[str, int], ...]], list[_Port]] = {}
        self.allowed: dict[str, tuple[tuple[PrefixRule, ...], tuple[PrefixRule, ...]]] = {}  # per fabric
        self.first_hosts: dict[tuple[int, int, int], str] = {}  # (version, subnet's bits, prefix) → its first host
        self.asn = {row.device: row.asn for row in plan.asns}
        # fabric → the most links one routed node has in it (the paths to its loopback)
        self.routed_width: dict[str, int] = {}
        for key, ft in topology.fabrics.items():
            if design.spec.dual_homing(key) == "host_routing":
                per_node = Counter(link.a for link in ft.links if link.tier == Tier.NODE_LEAF)
                self.routed_width[key] = max(per_node.values(), default=0)
        # leaf of a `dual_homing: bond` fabric → (its pair, the pair's number in the fabric)
        self.pairs: dict[str, tuple[MlagPair, int]] = {}
        for key, ft in topology.fabrics.items():
            if design.spec.dual_homing(key) == "bond":
                for i, pair in enumerate(mlag_pairs(ft), start=1):
                    self.pairs[pair.lower] = self.pairs[pair.upper] = (pair, i)
        # switch → port → its cable's length; per switch, as _device reads them (one dict of every cable end
        # keyed by (device, port) was a cache miss a port: 0.4 s at 100k GPUs on RoCE)
        self.cable_m: dict[str, dict[str, float | None]] = defaultdict(dict)
        ethernet = {key for key, ft in topology.fabrics.items() if ft.technology == "ethernet"}
        cable_m = self.cable_m
        for cable in plan.cables:
            link = cable.link
            if link.fabric in ethernet:
                if link.tier != _NODE_LEAF:  # (the lower end of a node link is a node or a management port)
                    cable_m[link.a][link.a_port] = cable.length_m
                cable_m[link.b][link.b_port] = cable.length_m
        spec = design.spec
        self.snmp: str | None = None
        if spec.management.snmp_community is not None:
            secret = design.inputs.secrets["management.snmp_community"]
            self.snmp, problem = secret.value, secret.problem
            if problem:
                self.findings.append(problem)
        self.bgp_password: dict[str, str | None] = {}
        for key, fabric in spec.fabrics.items():
            ref = fabric.routing.bgp_password if fabric.routing else None
            if ref is not None:
                secret = design.inputs.secrets[f"fabrics.{key}.routing.bgp_password"]
                self.bgp_password[key], problem = secret.value, secret.problem
                if problem:
                    self.findings.append(problem)

    def _address(self, device: str, interface: str, purpose: str, version: int) -> Interface | None:
        return self.addresses.get(device, _NONE).get((interface, purpose, version))

    def _layout(self, model_key: str, platform: str, used: dict[str, int]) -> list[_Port]:
        """`_layout`, once per model, platform and cabled ports in order: the leaves of a fabric share a few."""
        key = (model_key, platform, tuple(used.items()))
        rows = self.layouts.get(key)
        if rows is None:
            model = self.design.catalog.switches[model_key]
            rows = self.layouts[key] = [
                (port, cage, sub, breakout, speed, _lanes(lane, lanes))
                for port, cage, sub, breakout, speed, lane, lanes in _layout(model, platform, used)
            ]
        return rows

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
                out[name] = self._device(key, ft, name, by_switch[name])
        return out

    def _device(self, key: str, ft: FabricTopology, name: str, links: list[Link]) -> DeviceIntent:
        spec = self.design.spec
        fabric = spec.fabrics[key]
        device = self.topology.devices[name]
        model = self.design.catalog.switches[device.model]
        platform = device.platform
        assert platform is not None, "every Ethernet switch model has a default platform (catalog validator)"
        mtu = fabric.mtu or DEFAULT_MTU
        peers: dict[str, Link] = {(link.a_port if link.a == name else link.b_port): link for link in links}
        used = {port: link.speed_gbps for port, link in peers.items()}
        unnumbered = fabric.routing is not None and fabric.routing.bgp_unnumbered
        routed_nodes = spec.dual_homing(key) == "host_routing"
        pair = self.pairs.get(name)
        bonds: dict[int, list[str]] = defaultdict(list)  # channel → this leaf's member ports
        ports = []
        server_members = []
        local_v4: dict[str, tuple[str, Interface | None]] = {}  # routed port → (purpose, its address): for _bgp
        address = self.addresses.get(name, _NONE).get
        cable_m = self.cable_m.get(name, {}).get
        v6 = self.v6
        for port, cage, sub, breakout, speed, lanes in self._layout(device.model, platform, used):
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
        loopback_v4 = self._address(name, "lo", "loopback", 4)
        loopback_v6 = self._address(name, "lo", "loopback", 6)
        servers = None
        mlag = None
        if pair is not None:
            servers, mlag = self._mlag(name, pair[0], pair[1], bonds, platform)
        elif device.layer == Layer.LEAF and server_members:
            purpose = "mgmt-gateway" if ft.role == "oob" else "server-gateway"
            gateway = self._address(name, "servers", purpose, 4)
            if gateway is not None:
                servers = ServerSubnet(
                    SERVER_INTERFACE,
                    SERVER_VLAN,
                    gateway,
                    self._address(name, "servers", purpose, 6),
                    tuple(server_members),
                )
        mgmt_name = mgmt_port(platform, model.mgmt_port)
        mgmt = self._address(name, mgmt_name, "mgmt", 4)
        gateway_ip = spec.management.gateway or (self._first_host(mgmt) if mgmt else None)
        qos = self._qos(key, ft, [p.name for p in ports if p.admin_up])
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
            bgp=self._bgp(
                key, ft, name, links, loopback_v4, loopback_v6, servers, unnumbered, routed_nodes, mlag, local_v4
            ),
            mtu=mtu,
            lldp=True,
            ntp=tuple(spec.management.ntp),
            syslog=tuple(spec.management.syslog),
            dns=tuple(spec.management.dns),
            domain=spec.management.domain,
            snmp_community=self.snmp,
            snmp_location=spec.management.snmp_location,
            qos=qos,
            design=spec.name,
            mlag=mlag,
        )

    def _mlag(
        self, name: str, pair: MlagPair, index: int, bonds: Mapping[int, list[str]], platform: str
    ) -> tuple[ServerSubnet | None, MlagIntent]:
        """The pair's server subnet as this leaf sees it (its SVI, the virtual gateway: the subnet's first
        address) and its MLAG part."""
        primary = name == pair.lower
        hosts = list(PEER_NET)
        local = ip_interface(f"{hosts[0 if primary else 1]}/{PEER_NET.prefixlen}")
        mlag = MlagIntent(
            domain=f"{pair.lower}-{pair.upper}",
            index=index,
            peer=pair.upper if primary else pair.lower,
            primary=primary,
            vlan=PEER_VLAN,
            local_address=local,
            peer_address=hosts[1 if primary else 0],
            peer_loopback=self._address(pair.upper if primary else pair.lower, "lo", "loopback", 4),
            peer_link=Bond(PEER_CHANNEL, "", tuple(bonds.get(PEER_CHANNEL, ()))),
            bonds=tuple(Bond(i, node, tuple(bonds[i])) for i, node in enumerate(pair.nodes, start=1) if bonds.get(i)),
        )
        gateway = self._address(name, SERVER_INTERFACE, "server-gateway", 4)
        if gateway is None:
            return None, mlag  # the plan failed (its findings say why)
        gateway_v6 = self._address(name, SERVER_INTERFACE, "server-gateway", 6)
        servers = ServerSubnet(
            SERVER_INTERFACE,
            SERVER_VLAN,
            gateway,
            gateway_v6,
            (),
            _first_host(gateway),
            _first_host(gateway_v6) if gateway_v6 else None,
        )
        return servers, mlag

    def _qos(self, key: str, ft: FabricTopology, ports: list[str]) -> QosIntent | None:
        settings = self.design.spec.fabrics[key].qos
        if settings is None:
            settings = QosSettings() if ft.role in ROCE_ROLES else QosSettings(profile="none")
        if settings.profile == "none":
            return None
        return QosIntent(
            settings.roce_dscp,
            settings.roce_priority,
            settings.cnp_dscp,
            settings.cnp_priority,
            settings.ecn_min_kb * 1000,
            settings.ecn_max_kb * 1000,
            settings.ecn_probability,
            settings.pfc_watchdog,
            tuple(ports),
        )

    def _bgp(
        self,
        key: str,
        ft: FabricTopology,
        name: str,
        links: list[Link],
        loopback_v4: Interface | None,
        loopback_v6: Interface | None,
        servers: ServerSubnet | None,
        unnumbered: bool,
        routed_nodes: bool = False,
        mlag: MlagIntent | None = None,
        local_v4: Mapping[str, tuple[str, Interface | None]] | None = None,
    ) -> BgpIntent | None:
        asn = self.asn.get(name)
        if asn is None or loopback_v4 is None:
            return None  # the plan failed (its findings say why)
        neighbors = []
        addresses = self.addresses
        address = addresses.get(name, _NONE).get
        local = local_v4 or {}
        asns = self.asn.get
        rank, my_rank = self.rank, self.rank[name]
        remote_up = set()  # the ASNs of the neighbours above this switch
        for link in links:
            tier = link.tier
            if tier == _PEER or (tier == _NODE_LEAF and not (routed_nodes and rank[link.a] == 0)):  # 0: a node
                continue
            purpose = "host-p2p" if tier == _NODE_LEAF else "p2p"
            if link.a == name:
                mine, peer, peer_port = link.a_port, link.b, link.b_port
            else:
                mine, peer, peer_port = link.b_port, link.a, link.a_port
            if unnumbered:
                neighbor = _neighbor(mine, mine, asns(peer), peer, peer_port)
            else:
                peer_ip = addresses.get(peer, _NONE).get((peer_port, purpose, 4))
                if peer_ip is None:
                    continue
                known = local.get(mine)  # _device looked it up
                local_ip = known[1] if known is not None and known[0] == purpose else address((mine, purpose, 4))
                neighbor = _neighbor(
                    ip_text(peer_ip),  # a neighbour is named by its address (numbered) or the interface (unnumbered)
                    mine,
                    asns(peer),
                    peer,
                    peer_port,
                    None if local_ip is None else local_ip.ip,
                )
            neighbors.append(neighbor)
            if rank[peer] > my_rank:
                remote_up.add(neighbor.remote_as)
        if mlag is not None:
            # eBGP to the other leaf over the peer VLAN: the way out when this leaf's uplinks are down
            svi = self._peer_svi(ft, name)
            interface_peer = unnumbered or self.topology.devices[name].platform == "cumulus"  # NVUE: link-local
            neighbors.append(
                Neighbor(
                    svi if interface_peer else str(mlag.peer_address),
                    svi,
                    self.asn.get(mlag.peer),
                    mlag.peer,
                    svi,
                    None if interface_peer else mlag.local_address.ip,
                    mlag_peer=True,
                )
            )
            if rank[mlag.peer] > my_rank:
                remote_up.add(self.asn.get(mlag.peer))
        allowed, allowed_v6 = self._allowed(key, ft)
        networks = tuple(a.network for a in (loopback_v4, servers.gateway_v4 if servers else None) if a)
        networks_v6 = tuple(a.network for a in (loopback_v6, servers.gateway_v6 if servers else None) if a)
        # routed nodes: a node's loopback is reached over each of its leaves, whose AS paths differ
        return BgpIntent(
            asn=asn,
            router_id=loopback_v4.ip,
            unnumbered=unnumbered,
            neighbors=tuple(neighbors),
            # bonded nodes: a pair's subnet comes from both its leaves, whose AS paths differ
            multipath_relax=len(remote_up) > 1
            or self._scheme(key) == "unique"
            or routed_nodes
            or self.design.spec.dual_homing(key) == "bond",
            # a pair's subnet is reached over both its leaves
            maximum_paths=max(
                _maximum_paths(name, links),
                self.routed_width.get(key, 0) if routed_nodes else 0,
                2 if self.design.spec.dual_homing(key) == "bond" else 0,
            ),
            networks=networks,
            networks_v6=networks_v6,
            allowed=allowed,
            allowed_v6=allowed_v6,
            ipv6=unnumbered and bool(networks_v6),
            password=self.bgp_password.get(key),
        )

    def _allowed(self, key: str, ft: FabricTopology) -> tuple[tuple[PrefixRule, ...], tuple[PrefixRule, ...]]:
        """The prefixes fabric `key`'s switches accept (IPv4, IPv6): the same for each, made once per fabric."""
        found = self.allowed.get(key)
        if found is None:
            pools = self.design.spec.addressing
            subnets = pools.mgmt if ft.role == "oob" else pools.servers
            allowed = (
                PrefixRule(pools.loopback, 32, None),
                PrefixRule(subnets, None, self.subnet_prefix.get(key, subnets.prefixlen)),
            )
            allowed_v6: tuple[PrefixRule, ...] = ()
            if pools.ipv6 is not None:
                v6 = pools.ipv6
                allowed_v6 = (PrefixRule(IPv6Network((v6.network_address, 64)), 128, None), PrefixRule(v6, 64, 64))
            found = self.allowed[key] = (allowed, allowed_v6)
        return found

    def _first_host(self, address: Interface) -> str:
        """The first host of the address's subnet as text (the default management gateway), once per subnet: the
        switches share one, and making its network per switch cost ~20 µs."""
        prefixlen = address.network.prefixlen if not hasattr(address, "_prefixlen") else address._prefixlen
        key = (address.version, int(address) >> (address.max_prefixlen - prefixlen), prefixlen)
        found = self.first_hosts.get(key)
        if found is None:
            found = self.first_hosts[key] = str(next(address.network.hosts()))
        return found

    def _peer_svi(self, ft: FabricTopology, name: str) -> str:
        """The peer VLAN's interface as the platform names it (NVUE: the peer link's VLAN subinterface)."""
        if self.topology.devices[name].platform == "cumulus":
            return f"peerlink.{PEER_VLAN}"
        return f"Vlan{PEER_VLAN}"

    def _scheme(self, key: str) -> str:
        plan = self.design.spec.fabrics[key].asn or self.design.spec.asn
        return plan.scheme


def _first_host(address: Interface) -> Interface:
    """The first address of an interface's subnet, with its prefix length."""
    network = address.network
    return ip_interface(f"{network.network_address + 1}/{network.prefixlen}")


def build_intents(design: Design, topology: Topology, plan: Plan) -> Intents:
    builder = _IntentBuilder(design, topology, plan)
    devices = builder.build()
    return Intents(devices, tuple(builder.findings))
