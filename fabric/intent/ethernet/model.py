"""The Ethernet switch intent: everything a switch's configuration says, vendor-neutral and ready to print.

This is the contract between the logic (build.py and its helpers) and the platform renderers
(fabric/render/platforms/), which only turn it into syntax. Every policy value (QoS weights, PFC watchdog times,
the server VLAN) is here so that one intent gives the same values on every platform; secrets are already resolved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address

from fabric.allocation.allocate import Interface, Network
from fabric.model.findings import Finding

DEFAULT_MTU = 9216
PEER_GROUP = "FABRIC"
HOST_GROUP = "HOSTS"  # a leaf's sessions to routed nodes (`dual_homing: host_routing`): their own policy
# numbered dual-stack: the IPv6 sessions' peer groups (FABRIC-V6, HOSTS-V6), since a peer group activates its
# address families for every member, and an IPv4 session must not carry IPv6 unicast (nor the reverse)
V6_GROUP_SUFFIX = "-V6"
# Prefixes a routed node may send a leaf before the session is torn down (counted as received, before the
# per-node prefix-list drops all but the node's loopback): room for a stray route or two, none for a leaked table
HOST_MAXIMUM_PREFIX = 10
# Prefixes a fabric session may carry before the switch logs a warning (the session stays up: every fabric
# session would trip at once on a real excess, and FABRIC-IN already drops anything outside the plan's pools),
# as a multiple of the prefixes the fabric's plan originates (rounded up to a power of two: growth rarely changes it)
FABRIC_PREFIX_HEADROOM = 2
# BGP keepalive and hold time (s) of every fabric session, on every platform: FRR's `frr defaults datacenter`
# (3/9, the values RFC 7938 data centres run), which NVUE keeps and EOS does not (its default is 60/180)
BGP_TIMERS = (3, 9)
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
    # a routed node's session (`dual_homing: host_routing`): the prefix-list that accepts its own loopback only
    prefix_list: str | None = None
    accept: tuple[PrefixRule, ...] = ()  # the node's loopback /32
    accept_v6: tuple[PrefixRule, ...] = ()  # and /128
    # a numbered IPv6 session: a link's /127 addresses, IPv6 unicast only, in the `-V6` peer group (a numbered
    # dual-stack link runs one session per family, as dual-stack underlays are built); unnumbered sessions and
    # numbered IPv4 ones are False
    v6: bool = False

    @property
    def host(self) -> bool:
        """A routed node's session (in the HOSTS peer group)."""
        return self.prefix_list is not None

    @property
    def description(self) -> str:
        return f"{self.peer_device}:{self.peer_port}"


@dataclass(frozen=True, slots=True)
class PrefixRule:
    """A prefix-list entry: a prefix with its optional ge and le lengths."""

    prefix: Network
    ge: int | None
    le: int | None


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
    ipv6: bool  # IPv6 unicast is exchanged (unnumbered sessions carry both families; numbered: the v6 sessions)
    password: str | None = None  # TCP MD5 password of every session (a resolved secret)
    peer_group: str = PEER_GROUP
    timers: tuple[int, int] = BGP_TIMERS  # keepalive, hold time (s)
    bfd: bool = False  # BFD on every session (`fabrics.<f>.routing.bfd`)
    # the most prefixes a fabric session may carry (per address family) before a warning: FABRIC_PREFIX_HEADROOM
    # times the prefixes the fabric's plan originates, rounded up to a power of two; None: not set
    maximum_prefix: int | None = None
    host_group: str = HOST_GROUP
    host_maximum_prefix: int = HOST_MAXIMUM_PREFIX  # per address family, on routed nodes' sessions (torn down)

    @property
    def hosts(self) -> tuple[Neighbor, ...]:
        """The sessions to routed nodes."""
        return tuple(n for n in self.neighbors if n.prefix_list is not None)

    @property
    def numbered_v6(self) -> bool:
        """Numbered sessions with IPv6: each link has a second, IPv6-only session in the `-V6` peer groups."""
        return self.ipv6 and not self.unnumbered

    @property
    def peer_group_v6(self) -> str:
        return self.peer_group + V6_GROUP_SUFFIX

    @property
    def host_group_v6(self) -> str:
        return self.host_group + V6_GROUP_SUFFIX

    def group(self, n: Neighbor) -> str:
        """The peer group of session `n`."""
        if n.host:
            return self.host_group_v6 if n.v6 else self.host_group
        return self.peer_group_v6 if n.v6 else self.peer_group


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
    """Every Ethernet switch's intent, by hostname, with the findings of making them, and the first switch of each
    class of switches the intent checks cannot tell apart (build.py's Alike)."""

    devices: Mapping[str, DeviceIntent]
    findings: tuple[Finding, ...]
    classes: tuple[DeviceIntent, ...] = ()
