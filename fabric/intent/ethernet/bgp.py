"""A switch's BGP: its sessions (numbered, unnumbered, to routed nodes and to its MLAG peer), multipath and the
prefixes the fabric carries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from ipaddress import IPv6Network

from fabric.allocation.allocate import Interface
from fabric.fast.addresses import ip_text
from fabric.fast.frozen import maker
from fabric.intent.ethernet.index import NO_ADDRESSES, PlanIndex
from fabric.intent.ethernet.model import PEER_VLAN, BgpIntent, MlagIntent, Neighbor, PrefixRule, ServerSubnet
from fabric.model.kinds import Tier
from fabric.model.topology import FabricTopology, Link
from fabric.spec.platforms import PlatformTraits

_PEER, _NODE_LEAF = Tier.PEER, Tier.NODE_LEAF
_neighbor = maker(Neighbor)


def bgp_intent(
    index: PlanIndex,
    key: str,
    ft: FabricTopology,
    name: str,
    links: Sequence[Link],
    loopback_v4: Interface | None,
    loopback_v6: Interface | None,
    servers: ServerSubnet | None,
    unnumbered: bool,
    traits: PlatformTraits,
    routed_nodes: bool = False,
    mlag: MlagIntent | None = None,
    local_v4: Mapping[str, tuple[str, Interface | None]] | None = None,
) -> BgpIntent | None:
    """Switch `name`'s BGP in fabric `key` (`local_v4`: its routed ports' addresses already looked up)."""
    asn = index.asn.get(name)
    if asn is None or loopback_v4 is None:
        return None  # the plan failed (its findings say why)
    neighbors = []
    addresses = index.addresses
    address = addresses.get(name, NO_ADDRESSES).get
    local = local_v4 or {}
    asns = index.asn.get
    rank, my_rank = index.rank, index.rank[name]
    remote_up = set()  # the ASNs of the neighbours above this switch
    # numbered dual-stack: each link's second session, over its /127 addresses (IPv6 unicast only)
    dual_stack = not unnumbered and loopback_v6 is not None
    neighbors_v6 = []
    for link in links:
        tier = link.tier
        if tier == _PEER or (tier == _NODE_LEAF and not (routed_nodes and rank[link.a] == 0)):  # 0: a node
            continue
        purpose = "host-p2p" if tier == _NODE_LEAF else "p2p"
        if link.a == name:
            mine, peer, peer_port = link.a_port, link.b, link.b_port
        else:
            mine, peer, peer_port = link.b_port, link.a, link.a_port
        host = host_policy(index, peer) if tier == _NODE_LEAF else _NO_POLICY
        if unnumbered:
            neighbor = _neighbor(mine, mine, asns(peer), peer, peer_port, None, False, *host)
        else:
            peer_ip = addresses.get(peer, NO_ADDRESSES).get((peer_port, purpose, 4))
            if peer_ip is None:
                continue
            known = local.get(mine)  # the port's intent looked it up
            local_ip = known[1] if known is not None and known[0] == purpose else address((mine, purpose, 4))
            neighbor = _neighbor(
                ip_text(peer_ip),  # a neighbour is named by its address (numbered) or the interface (unnumbered)
                mine,
                asns(peer),
                peer,
                peer_port,
                None if local_ip is None else local_ip.ip,
                False,
                *host,
            )
            peer_v6 = addresses.get(peer, NO_ADDRESSES).get((peer_port, purpose, 6)) if dual_stack else None
            if peer_v6 is not None:
                local_v6 = address((mine, purpose, 6))
                neighbors_v6.append(
                    _neighbor(
                        ip_text(peer_v6),
                        mine,
                        asns(peer),
                        peer,
                        peer_port,
                        None if local_v6 is None else local_v6.ip,
                        False,
                        *host,
                        True,
                    )
                )
        neighbors.append(neighbor)
        if rank[peer] > my_rank:
            remote_up.add(neighbor.remote_as)
    if mlag is not None:
        # eBGP to the other leaf over the peer VLAN: the way out when this leaf's uplinks are down
        svi = traits.peer_svi.format(vlan=PEER_VLAN)
        interface_peer = unnumbered or traits.mlag_peer_link_local
        neighbors.append(
            Neighbor(
                svi if interface_peer else str(mlag.peer_address),
                svi,
                index.asn.get(mlag.peer),
                mlag.peer,
                svi,
                None if interface_peer else mlag.local_address.ip,
                mlag_peer=True,
            )
        )
        if dual_stack:
            # numbered dual-stack: the backup's IPv6 session, as every numbered link runs one per family; over the
            # peer VLAN's IPv6 link-local addresses, by interface (the IPv4 one runs over PEER_NET, which has no
            # IPv6 counterpart to give every pair): EOS `neighbor interface`, NVUE the interface's one session
            neighbors_v6.append(
                Neighbor(svi, svi, index.asn.get(mlag.peer), mlag.peer, svi, None, mlag_peer=True, v6=True)
            )
        if rank[mlag.peer] > my_rank:
            remote_up.add(index.asn.get(mlag.peer))
    spec = index.design.spec
    allowed, allowed_v6 = allowed_prefixes(index, key, ft)
    networks = tuple(a.network for a in (loopback_v4, servers.gateway_v4 if servers else None) if a)
    networks_v6 = tuple(a.network for a in (loopback_v6, servers.gateway_v6 if servers else None) if a)
    bonded = spec.dual_homing(key) == "bond"
    asn_plan = spec.fabrics[key].asn or spec.asn
    return BgpIntent(
        asn=asn,
        router_id=loopback_v4.ip,
        unnumbered=unnumbered,
        neighbors=(*neighbors, *neighbors_v6),
        # routed nodes: a node's loopback is reached over each of its leaves, whose AS paths differ;
        # bonded nodes: a pair's subnet comes from both its leaves, whose AS paths differ
        multipath_relax=len(remote_up) > 1 or asn_plan.scheme == "unique" or routed_nodes or bonded,
        # a pair's subnet is reached over both its leaves
        maximum_paths=max(
            maximum_paths(name, links),
            index.routed_width.get(key, 0) if routed_nodes else 0,
            2 if bonded else 0,
        ),
        networks=networks,
        networks_v6=networks_v6,
        allowed=allowed,
        allowed_v6=allowed_v6,
        # unnumbered sessions carry both families (RFC 5549); numbered ones need their IPv6 sessions
        ipv6=bool(networks_v6) and (unnumbered or bool(neighbors_v6)),
        password=index.bgp_password.get(key),
        bfd=bool(routing.bfd) if (routing := spec.fabrics[key].routing) is not None else False,
        maximum_prefix=index.maximum_prefix(key),
    )


_NO_POLICY: tuple[str | None, tuple[PrefixRule, ...], tuple[PrefixRule, ...]] = (None, (), ())


def host_policy(index: PlanIndex, node: str) -> tuple[str | None, tuple[PrefixRule, ...], tuple[PrefixRule, ...]]:
    """A routed node's inbound policy on its leaves: a prefix-list named after it that accepts its own loopback
    (/32 and /128) and nothing else, so a node cannot announce a switch's or another node's loopback."""
    v4 = index.address(node, "lo", "host-loopback", 4)
    if v4 is None:
        return _NO_POLICY  # the plan failed (its findings say why)
    v6 = index.address(node, "lo", "host-loopback", 6)
    return (
        f"HOST-{node}",
        (PrefixRule(v4.network, None, None),),
        (PrefixRule(v6.network, None, None),) if v6 is not None else (),
    )


def maximum_paths(name: str, links: Sequence[Link]) -> int:
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


def allowed_prefixes(
    index: PlanIndex, key: str, ft: FabricTopology
) -> tuple[tuple[PrefixRule, ...], tuple[PrefixRule, ...]]:
    """The prefixes fabric `key`'s switches accept (IPv4, IPv6): the same for each, made once per fabric."""
    found = index.allowed.get(key)
    if found is None:
        pools = index.design.spec.addressing
        subnets = pools.mgmt if ft.role == "oob" else pools.servers
        allowed = (
            PrefixRule(pools.loopback, 32, None),
            PrefixRule(subnets, None, index.subnet_prefix.get(key, subnets.prefixlen)),
        )
        allowed_v6: tuple[PrefixRule, ...] = ()
        if pools.ipv6 is not None:
            v6 = pools.ipv6
            allowed_v6 = (PrefixRule(IPv6Network((v6.network_address, 64)), 128, None), PrefixRule(v6, 64, 64))
        found = index.allowed[key] = (allowed, allowed_v6)
    return found
