"""One leaf's part of an MLAG pair (`dual_homing: bond`): the peer link and VLAN, the nodes' bonds and the
server subnet both leaves answer for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from ipaddress import ip_interface

from fabric.allocation.allocate import SERVER_INTERFACE, Interface, MlagPair
from fabric.intent.ethernet.index import PlanIndex
from fabric.intent.ethernet.model import PEER_CHANNEL, PEER_NET, PEER_VLAN, SERVER_VLAN, Bond, MlagIntent, ServerSubnet


def mlag_intent(
    index: PlanIndex, name: str, pair: MlagPair, number: int, bonds: Mapping[int, Sequence[str]]
) -> tuple[ServerSubnet | None, MlagIntent]:
    """The pair's server subnet as leaf `name` sees it (its SVI, the virtual gateway: the subnet's first
    address) and its MLAG part; `number` is the pair's in its fabric, `bonds` this leaf's ports by channel."""
    primary = name == pair.lower
    hosts = list(PEER_NET)
    local = ip_interface(f"{hosts[0 if primary else 1]}/{PEER_NET.prefixlen}")
    mlag = MlagIntent(
        domain=f"{pair.lower}-{pair.upper}",
        index=number,
        peer=pair.upper if primary else pair.lower,
        primary=primary,
        vlan=PEER_VLAN,
        local_address=local,
        peer_address=hosts[1 if primary else 0],
        peer_loopback=index.address(pair.upper if primary else pair.lower, "lo", "loopback", 4),
        peer_link=Bond(PEER_CHANNEL, "", tuple(bonds.get(PEER_CHANNEL, ()))),
        bonds=tuple(Bond(i, node, tuple(bonds[i])) for i, node in enumerate(pair.nodes, start=1) if bonds.get(i)),
    )
    gateway = index.address(name, SERVER_INTERFACE, "server-gateway", 4)
    if gateway is None:
        return None, mlag  # the plan failed (its findings say why)
    gateway_v6 = index.address(name, SERVER_INTERFACE, "server-gateway", 6)
    servers = ServerSubnet(
        SERVER_INTERFACE,
        SERVER_VLAN,
        gateway,
        gateway_v6,
        (),
        first_host(gateway),
        first_host(gateway_v6) if gateway_v6 else None,
    )
    return servers, mlag


def first_host(address: Interface) -> Interface:
    """The first address of an interface's subnet, with its prefix length."""
    network = address.network
    return ip_interface(f"{network.network_address + 1}/{network.prefixlen}")
