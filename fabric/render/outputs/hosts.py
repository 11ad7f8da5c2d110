"""hosts/<node>/frr.conf and hosts/<node>/netplan.yaml for every node that routes on the host; netplan.yaml
alone (an 802.3ad bond, one address, the pair's virtual gateway) for every node bonded to an MLAG pair.

frr.conf holds BGP only (one session per port, the loopback advertised); netplan.yaml holds the links and
addresses. Netplan, because the servers of GPU clusters run Ubuntu (DGX OS among them), whose network
configuration is netplan (rendered by systemd-networkd); it is YAML, so it is serialized from data.
"""

from __future__ import annotations

from typing import Any

import yaml

from fabric.intent.ethernet.model import PEER_GROUP
from fabric.intent.hosts import BondedHost, HostIntent
from fabric.pipeline import Build
from fabric.render.engine.registry import Output
from fabric.render.engine.safety import one_line
from fabric.render.engine.templating import render
from fabric.render.platforms.base import GENERATED
from fabric.render.platforms.frrview import FrrNeighbor

NETPLAN_HEADER = (
    "# {hostname}: {banner}\n"
    "# Netplan (/etc/netplan/60-fabric.yaml): the fabric links and the loopback; routes come from BGP (frr.conf).\n"
    "# Keep net.ipv4.conf.all.rp_filter at 0 or 2 (loose): replies may return over the other link.\n"
)


def host_frr(host: HostIntent) -> str:
    neighbors = [
        FrrNeighbor(
            n.peer, n.peer == n.interface, "external" if n.peer == n.interface else str(n.remote_as), n.description
        )
        for n in host.neighbors
    ]
    return render(
        "hosts/frr.conf.j2",
        hostname=host.hostname,
        banner=GENERATED.format(design=host.design),
        asn=host.asn,
        router_id=host.router_id,
        loopback_v4=host.loopback_v4.network,
        loopback_v6=host.loopback_v6.network if host.loopback_v6 and host.unnumbered else None,
        source_v4=host.loopback_v4.ip,
        source_v6=host.loopback_v6.ip if host.loopback_v6 else None,
        unnumbered=host.unnumbered,
        password=host.password,
        timers=host.timers,
        bfd=host.bfd,
        peer_group=PEER_GROUP,
        neighbors=neighbors,
        maximum_paths=host.maximum_paths,
    )


def netplan(host: HostIntent) -> dict[str, Any]:
    ethernets: dict[str, Any] = {
        "lo": {
            "match": {"name": "lo"},
            "addresses": [str(a) for a in (host.loopback_v4, host.loopback_v6) if a],
        }
    }
    for port in host.ports:
        entry: dict[str, Any] = {"mtu": port.mtu, "dhcp4": False, "dhcp6": False, "accept-ra": False}
        addresses = [str(a) for a in (port.ipv4, port.ipv6) if a]
        if addresses:
            entry["addresses"] = addresses
        else:
            entry["link-local"] = ["ipv6"]  # the unnumbered session runs over it
        ethernets[port.name] = entry
    return {"network": {"version": 2, "renderer": "networkd", "ethernets": ethernets}}


BOND_HEADER = (
    "# {hostname}: {banner}\n"
    "# Netplan (/etc/netplan/60-fabric.yaml): one LACP bond over the node's ports to its MLAG leaf pair; the\n"
    "# default route goes to the pair's virtual gateway, which either leaf answers for.\n"
)
# LACP as MLAG pairs expect it: fast LACPDUs, and flows hashed by L3/L4 so one node uses both leaves
BOND_PARAMETERS = {
    "mode": "802.3ad",
    "lacp-rate": "fast",
    "transmit-hash-policy": "layer3+4",
    "mii-monitor-interval": 100,
}


def bond_netplan(host: BondedHost) -> dict[str, Any]:
    ethernets = {p.name: {"mtu": p.mtu, "dhcp4": False, "dhcp6": False} for p in host.members}
    bond: dict[str, Any] = {
        "interfaces": [p.name for p in host.members],
        "mtu": host.mtu,
        "dhcp4": False,
        "dhcp6": False,
        "accept-ra": False,
        "addresses": [str(a) for a in (host.address_v4, host.address_v6) if a],
        "routes": [{"to": "default", "via": str(g.ip)} for g in (host.gateway_v4, host.gateway_v6) if g],
        "parameters": BOND_PARAMETERS,
    }
    return {"network": {"version": 2, "renderer": "networkd", "ethernets": ethernets, "bonds": {host.bond: bond}}}


def bond_netplan_text(host: BondedHost) -> str:
    header = BOND_HEADER.format(hostname=one_line(host.hostname), banner=GENERATED.format(design=host.design))
    return header + str(yaml.safe_dump(bond_netplan(host), sort_keys=False, default_flow_style=False, width=120))


def netplan_text(host: HostIntent) -> str:
    header = NETPLAN_HEADER.format(hostname=one_line(host.hostname), banner=GENERATED.format(design=host.design))
    return header + str(yaml.safe_dump(netplan(host), sort_keys=False, default_flow_style=False, width=120))


def host_files(build: Build) -> dict[str, str]:
    files: dict[str, str] = {}
    for name, host in build.hosts.items():
        files[f"hosts/{name}/frr.conf"] = host_frr(host)
        files[f"hosts/{name}/netplan.yaml"] = netplan_text(host)
    for name, bonded in build.bonded.items():
        files[f"hosts/{name}/netplan.yaml"] = bond_netplan_text(bonded)
    return files


def private_hosts(build: Build) -> set[str]:
    """frr.conf of a node whose sessions carry a password (written mode 0600)."""
    return {f"hosts/{name}/frr.conf" for name, host in build.hosts.items() if host.has_secrets}


OUTPUTS: tuple[Output, ...] = (Output("hosts", host_files, private=private_hosts),)
