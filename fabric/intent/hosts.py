"""Per-node intent of nodes that route on the host (`dual_homing: host_routing`), and of bonded nodes
(`dual_homing: bond`: one LACP bond over the node's ports to an MLAG leaf pair, one address, the pair's
virtual gateway).

Such a node has a loopback (/32, and /128) and a private ASN; each of its ports is a routed link with its own
eBGP session to the leaf at the other end, and it advertises its loopback and nothing else, so it is reachable
while any one of its links is up and never carries transit traffic. What the node's files say (FRR and
netplan) is here, ready to print; the leaves' side of the same sessions is in their switch intent.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address, ip_interface

from fabric.allocation.allocate import BOND_INTERFACE, AddressRow, Allocation, Interface
from fabric.fast.frozen import maker
from fabric.intent.ethernet.model import BGP_TIMERS, Neighbor, QosIntent
from fabric.intent.ethernet.qos import qos_intent
from fabric.model.kinds import INBAND_ROLES, Layer, Tier
from fabric.model.topology import Link, Topology
from fabric.spec.loader import Design

HOST_MTU = 9000  # the jumbo frame servers use, under the switches' 9216 (room for the leaf's headers)


@dataclass(frozen=True, slots=True)
class HostPort:
    """A node port of a routing host: its leaf, speed, MTU and addresses."""

    name: str
    fabric: str
    leaf: str
    leaf_port: str
    speed_gbps: int
    mtu: int
    ipv4: Interface | None  # numbered: the node's end of the /31 (the leaf has the even address)
    ipv6: Interface | None

    @property
    def description(self) -> str:
        return f"{self.leaf}:{self.leaf_port}"


@dataclass(frozen=True)
class HostIntent:
    """A node that routes on the host: ASN, router ID, loopbacks, ports and BGP sessions."""

    hostname: str
    asn: int
    router_id: IPv4Address | IPv6Address
    loopback_v4: Interface
    loopback_v6: Interface | None
    ports: tuple[HostPort, ...]
    neighbors: tuple[Neighbor, ...]  # one per port; unnumbered sessions are named by the port
    unnumbered: bool  # every session runs over IPv6 link-local (then IPv6 unicast is exchanged too)
    maximum_paths: int  # ECMP over all its leaves
    password: str | None
    design: str
    timers: tuple[int, int] = BGP_TIMERS  # keepalive, hold time (s): the leaves' own
    bfd: bool = False  # BFD on its sessions (`fabrics.<f>.routing.bfd` of any fabric it is on)

    @property
    def has_secrets(self) -> bool:
        return self.password is not None


@dataclass(frozen=True)
class BondedHost:
    """A node bonded to an MLAG leaf pair: its bond, members, addresses and gateways."""

    hostname: str
    bond: str  # the bond's interface name
    members: tuple[HostPort, ...]  # without addresses: the bond has them
    address_v4: Interface
    address_v6: Interface | None
    gateway_v4: Interface  # the pair's virtual gateway (the subnet's first address)
    gateway_v6: Interface | None
    mtu: int
    design: str


def build_bonded(design: Design, topology: Topology, plan: Allocation) -> dict[str, BondedHost]:
    """Every node bonded to an MLAG pair, in the order of the plan's addresses."""
    spec = design.spec
    members: dict[str, list[HostPort]] = defaultdict(list)
    for key, ft in topology.fabrics.items():
        if spec.dual_homing(key) != "bond":
            continue
        mtu = min(HOST_MTU, spec.fabrics[key].mtu or HOST_MTU)
        for link in ft.links:
            if link.tier == Tier.NODE_LEAF and topology.devices[link.a].layer == Layer.NODE:
                members[link.a].append(
                    HostPort(link.a_port, key, link.b, link.b_port, link.speed_gbps, mtu, None, None)
                )
    if not members:
        return {}  # (the plan's addresses are not read: 10,000,000 at a million GPUs on RoCE)
    rows: dict[str, dict[int, Interface]] = defaultdict(dict)
    for row in plan.addresses:
        if row.purpose == "server" and row.interface == BOND_INTERFACE and row.device in members:
            rows[row.device].setdefault(row.address.version, row.address)
    out: dict[str, BondedHost] = {}
    for node, addresses in rows.items():
        v4, v6 = addresses.get(4), addresses.get(6)
        if v4 is None:
            continue
        out[node] = BondedHost(
            node,
            BOND_INTERFACE,
            tuple(members[node]),
            v4,
            v6,
            _first_host(v4),
            _first_host(v6) if v6 else None,
            min(p.mtu for p in members[node]),
            spec.name,
        )
    return out


def _first_host(address: Interface) -> Interface:
    """The first address of the subnet (the virtual gateway), with its prefix length."""
    network = address.network
    return ip_interface(f"{network.network_address + 1}/{network.prefixlen}")


def build_hosts(design: Design, topology: Topology, plan: Allocation) -> dict[str, HostIntent]:
    """Every node that routes on the host, in the order of the plan's ASNs."""
    spec = design.spec
    if all(spec.dual_homing(key) != "host_routing" for key in topology.fabrics):
        return {}  # (the plan's addresses are not read: 10,000,000 at a million GPUs on RoCE)
    passwords: dict[str, str | None] = {}  # fabric → its BGP password (a problem with it is the switches' finding)
    for key, fabric in spec.fabrics.items():
        if fabric.routing is not None and fabric.routing.bgp_password is not None:
            passwords[key] = design.inputs.secrets[f"fabrics.{key}.routing.bgp_password"].value
    asn = {r.device: r.asn for r in plan.asns}
    addresses: dict[tuple[str, str, str], list[AddressRow]] = defaultdict(list)
    for row in plan.addresses:
        if row.purpose in ("host-loopback", "host-p2p"):
            addresses[(row.device, row.interface, row.purpose)].append(row)

    def address(device: str, interface: str, purpose: str, version: int) -> Interface | None:
        return next((r.address for r in addresses[(device, interface, purpose)] if r.address.version == version), None)

    links: dict[str, list[tuple[str, Link]]] = defaultdict(list)
    for key, ft in topology.fabrics.items():
        if spec.dual_homing(key) != "host_routing":
            continue
        for link in ft.links:
            if link.tier == Tier.NODE_LEAF and topology.devices[link.a].layer == Layer.NODE:
                links[link.a].append((key, link))
    out: dict[str, HostIntent] = {}
    for asn_row in plan.asns:
        if asn_row.device not in links or asn_row.device in out:
            continue
        node = asn_row.device
        loopback_v4 = address(node, "lo", "host-loopback", 4)
        if loopback_v4 is None:
            continue  # the plan failed (its findings say why)
        ports: list[HostPort] = []
        neighbors: list[Neighbor] = []
        unnumbered = True
        password: str | None = None
        bfd = False
        neighbors_v6: list[Neighbor] = []  # numbered dual-stack: each port's IPv6 session (IPv6 unicast only)
        loopback_v6 = address(node, "lo", "host-loopback", 6)
        for key, link in links[node]:
            fabric = spec.fabrics[key]
            bfd = bfd or bool(fabric.routing is not None and fabric.routing.bfd)
            numbered = not (fabric.routing is not None and fabric.routing.bgp_unnumbered)
            unnumbered = unnumbered and not numbered
            password = password or passwords.get(key)
            mine = address(node, link.a_port, "host-p2p", 4) if numbered else None
            mine_v6 = address(node, link.a_port, "host-p2p", 6) if numbered else None
            ports.append(
                HostPort(
                    link.a_port,
                    key,
                    link.b,
                    link.b_port,
                    link.speed_gbps,
                    min(HOST_MTU, fabric.mtu or HOST_MTU),
                    mine,
                    mine_v6,
                )
            )
            if numbered:
                leaf_ip = address(link.b, link.b_port, "host-p2p", 4)
                if leaf_ip is None:
                    continue
                neighbors.append(
                    Neighbor(
                        str(leaf_ip.ip), link.a_port, asn.get(link.b), link.b, link.b_port, mine.ip if mine else None
                    )
                )
                leaf_v6 = address(link.b, link.b_port, "host-p2p", 6)
                if leaf_v6 is not None and loopback_v6 is not None:
                    neighbors_v6.append(
                        Neighbor(
                            str(leaf_v6.ip),
                            link.a_port,
                            asn.get(link.b),
                            link.b,
                            link.b_port,
                            mine_v6.ip if mine_v6 else None,
                            v6=True,
                        )
                    )
            else:
                neighbors.append(Neighbor(link.a_port, link.a_port, asn.get(link.b), link.b, link.b_port))
        out[node] = HostIntent(
            hostname=node,
            asn=asn[node],
            router_id=loopback_v4.ip,
            loopback_v4=loopback_v4,
            loopback_v6=loopback_v6,
            ports=tuple(ports),
            neighbors=(*neighbors, *neighbors_v6),
            unnumbered=unnumbered,
            maximum_paths=max(1, len({p.leaf for p in ports})),
            password=password,
            design=spec.name,
            bfd=bfd,
        )
    return out


# Per-rail source routing: the table of a node's n-th RoCE NIC (in port order) is RAIL_TABLE_BASE + n, looked up
# by a rule of priority RAIL_RULE_PRIORITY + n; both well above the kernel's own tables (253-255) and below the
# main table's rule (32766).
RAIL_TABLE_BASE = 100
RAIL_RULE_PRIORITY = 1000


@dataclass(frozen=True, slots=True)
class RailNic:
    """A RoCE NIC of a server on a routed (`dual_homing: none`) Ethernet fabric: its leaf's subnet, its own
    routing table and rule, and the fabric's lossless profile it must match."""

    name: str  # the port (netdev) name
    hca: str | None  # the RDMA device (`mlx5_N`) when the node type's catalog entry names it
    fabric: str
    role: str  # the fabric's role: NCCL's NICs are a compute fabric's (a storage or converged fabric's are not)
    rail: int | None
    leaf: str
    leaf_port: str
    address_v4: Interface
    address_v6: Interface | None
    gateway_v4: Interface  # the leaf's address in the subnet
    gateway_v6: Interface | None
    mtu: int
    table: int
    rule_priority: int
    qos: QosIntent  # the same profile the fabric's switches program


@dataclass(frozen=True)
class RoceHost:
    """A GPU or storage server on an Ethernet RoCE fabric: its rail NICs and its in-band interfaces."""

    hostname: str
    nics: tuple[RailNic, ...]
    inband: tuple[str, ...]  # its ports on in-band Ethernet fabrics (for NCCL's bootstrap sockets)
    design: str


_rail_nic = maker(RailNic)  # one per GPU NIC: 1,000,000 at a million GPUs on RoCE


def build_roce_hosts(design: Design, topology: Topology, plan: Allocation) -> dict[str, RoceHost]:
    """Every node with a port on a lossless (RoCE) Ethernet fabric whose leaves route its subnet, in the order
    of the plan's server addresses."""
    spec = design.spec
    qos: dict[str, QosIntent] = {}
    inband: dict[str, list[str]] = defaultdict(list)
    # node → port → its link; and below, node → port → its address row, per IP version: keyed by node, then by the
    # port's name (no tuple kept per NIC: 1,000,000 at a million GPUs)
    links: dict[str, dict[str, Link]] = defaultdict(dict)
    hcas: dict[str, dict[str, str]] = {}
    for key, ft in topology.fabrics.items():
        fabric = spec.fabrics[key]
        if fabric.technology != "ethernet":
            continue
        node_links = [
            link for link in ft.links if link.tier == Tier.NODE_LEAF and topology.devices[link.a].layer == Layer.NODE
        ]
        if ft.role in INBAND_ROLES:
            inband.update(inband_interfaces(design, key, node_links))
        if spec.dual_homing(key) != "none":
            continue
        profile = qos_intent(fabric.qos, ft.role, ())
        if profile is None:
            continue
        qos[key] = profile
        for link in node_links:
            links[link.a][link.a_port] = link
    gateways: dict[tuple[str, int], Interface] = {}
    rows: dict[int, dict[str, dict[str, AddressRow]]] = {4: defaultdict(dict), 6: defaultdict(dict)}
    no_links: dict[str, Link] = {}
    for row in plan.addresses:
        if row.purpose == "server-gateway" and row.fabric in qos:
            gateways[(row.device, row.address.version)] = row.address
        elif row.purpose == "server" and row.interface in links.get(row.device, no_links):
            rows[row.address.version][row.device].setdefault(row.interface, row)
    out: dict[str, RoceHost] = {}
    v6_rows = rows[6]
    # (a node's ports in the order of their rows: each port's IPv4 row comes before its IPv6 one, and a port without
    # an IPv4 address gets no NIC, so the IPv4 rows give the nodes and their ports in order)
    for node, v4_rows in rows[4].items():
        v6_of = v6_rows.get(node, {})
        ports = list(v4_rows)
        model = topology.devices[node].model
        if model not in hcas:
            node_type = design.catalog.nodes.get(model)
            hcas[model] = (
                {p.name: p.hca for g in node_type.ports.values() for p in (g.ports or ()) if p.hca}
                if node_type is not None
                else {}
            )
        nics: list[RailNic] = []
        for port in ports:
            v4 = v4_rows.get(port)
            link = links[node][port]
            gateway_v4 = gateways.get((link.b, 4))
            if v4 is None or gateway_v4 is None:
                continue  # the plan failed (its findings say why)
            v6 = v6_of.get(port)
            gateway_v6 = gateways.get((link.b, 6))
            fabric = spec.fabrics[link.fabric]
            n = len(nics)
            nics.append(
                _rail_nic(
                    port,
                    hcas[model].get(port),
                    link.fabric,
                    topology.fabrics[link.fabric].role,
                    link.rail,
                    link.b,
                    link.b_port,
                    v4.address,
                    v6.address if v6 and gateway_v6 else None,
                    gateway_v4,
                    gateway_v6 if v6 else None,
                    min(HOST_MTU, fabric.mtu or HOST_MTU),
                    RAIL_TABLE_BASE + n,
                    RAIL_RULE_PRIORITY + n,
                    qos[link.fabric],
                )
            )
        if nics:
            out[node] = RoceHost(node, tuple(nics), tuple(inband.get(node, ())), spec.name)
    return out


def inband_interfaces(design: Design, key: str, node_links: list[Link]) -> dict[str, list[str]]:
    """Each node's interfaces on in-band fabric `key` (NCCL's bootstrap sockets): its ports, or its bond
    (`dual_homing: bond`), whose address the members share."""
    out: dict[str, list[str]] = defaultdict(list)
    bonded = design.spec.dual_homing(key) == "bond"
    for link in node_links:
        if not bonded:
            out[link.a].append(link.a_port)
        elif not out[link.a]:
            out[link.a].append(BOND_INTERFACE)
    return out


@dataclass(frozen=True)
class IbHost:
    """A GPU node on an InfiniBand compute fabric: NCCL's HCAs in rail order, the non-default partitions it is a
    full member of, and its in-band interfaces."""

    hostname: str
    fabric: str
    hcas: tuple[str, ...]  # RDMA devices (`mlx5_N`) where the catalog names them, else the port names
    named: bool  # every HCA is an RDMA device name
    partitions: tuple[tuple[str, int], ...]  # (name, P_Key) of each non-default partition it is a full member of
    inband: tuple[str, ...]
    design: str


def build_ib_hosts(design: Design, topology: Topology) -> dict[str, IbHost]:
    """Every node with rail ports on an InfiniBand fabric (its first such fabric: NCCL's HCAs are one fabric's),
    in topology order."""
    spec = design.spec
    inband: dict[str, list[str]] = {}
    rails: dict[str, tuple[str, list[Link]]] = {}
    for key, ft in topology.fabrics.items():
        node_links = [
            link for link in ft.links if link.tier == Tier.NODE_LEAF and topology.devices[link.a].layer == Layer.NODE
        ]
        if ft.technology == "ethernet" and ft.role in INBAND_ROLES:
            for node, names in inband_interfaces(design, key, node_links).items():
                inband.setdefault(node, names)
        elif ft.technology == "infiniband":
            for link in node_links:
                if link.rail is not None and rails.setdefault(link.a, (key, []))[0] == key:
                    rails[link.a][1].append(link)
    out: dict[str, IbHost] = {}
    for node, (key, links) in rails.items():
        device = topology.devices[node]
        node_type = design.catalog.nodes.get(device.model)
        hca = {p.name: p.hca for g in node_type.ports.values() for p in (g.ports or ()) if p.hca} if node_type else {}
        ports = [link.a_port for link in sorted(links, key=lambda link: (link.rail, link.a_port))]
        settings = spec.fabrics[key].infiniband
        partitions = tuple(
            (p.name, p.pkey)
            for p in (settings.partitions if settings is not None else ())
            if p.pkey != DEFAULT_PKEY and (p.members == "all" or device.group in p.members)
        )
        out[node] = IbHost(
            node,
            key,
            tuple(hca.get(port, port) for port in ports),
            all(port in hca for port in ports),
            partitions,
            tuple(inband.get(node, ())),
            spec.name,
        )
    return out


DEFAULT_PKEY = 0x7FFF  # the default partition, every port's
