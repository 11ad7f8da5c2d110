"""hosts/<node>/frr.conf and hosts/<node>/netplan.yaml for every node that routes on the host; netplan.yaml
alone (an 802.3ad bond, one address, the pair's virtual gateway) for every node bonded to an MLAG pair; and for
every server on a routed RoCE fabric (`dual_homing: none`, a lossless QoS profile) netplan.yaml (its rail NICs,
one routing table and rule per NIC), sysctl.conf, nic-qos.sh and nccl.env (see `roce_files`); and for every GPU
node on an InfiniBand compute fabric nccl.env (its HCAs, partitions and in-band interface: `ib_nccl_env`).

frr.conf holds BGP only (one session per port, the loopback advertised); netplan.yaml holds the links and
addresses. Netplan, because the servers of GPU clusters run Ubuntu (DGX OS among them), whose network
configuration is netplan (rendered by systemd-networkd); it is YAML, so it is serialized from data.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import yaml

from fabric.fast import yamltext
from fabric.fast.addresses import address_text, ip_text, network_text
from fabric.intent.ethernet.model import PEER_GROUP, V6_GROUP_SUFFIX
from fabric.intent.hosts import BondedHost, HostIntent, IbHost, RoceHost
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
    numbered_v6 = any(n.v6 for n in host.neighbors)  # numbered dual-stack: IPv6 sessions in a group of their own
    neighbors = [
        FrrNeighbor(
            n.peer,
            n.peer == n.interface,
            "external" if n.peer == n.interface else str(n.remote_as),
            n.description,
            PEER_GROUP + V6_GROUP_SUFFIX if n.v6 else PEER_GROUP,
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
        loopback_v6=host.loopback_v6.network if host.loopback_v6 and (host.unnumbered or numbered_v6) else None,
        source_v4=host.loopback_v4.ip,
        source_v6=host.loopback_v6.ip if host.loopback_v6 else None,
        unnumbered=host.unnumbered,
        password=host.password,
        timers=host.timers,
        bfd=host.bfd,
        peer_group=PEER_GROUP,
        v6_group=PEER_GROUP + V6_GROUP_SUFFIX if numbered_v6 else PEER_GROUP,
        numbered_v6=numbered_v6,
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
    for name, roce in build.roce.items():
        if f"hosts/{name}/netplan.yaml" not in files:  # a node on a host-routed or bonded fabric too keeps that one
            files.update(roce_files(roce))
    for name, ib in build.ib_hosts.items():
        files.setdefault(f"hosts/{name}/nccl.env", ib_nccl_env(ib))  # (a RoCE node's own nccl.env first)
    return files


def ib_nccl_env(host: IbHost) -> str:
    """NCCL's settings for a GPU node on an InfiniBand compute fabric: its HCAs (one fabric's, in rail order), the
    partition it must use when the design puts it in one, and its bootstrap interface (NCCL environment
    variables, https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html)."""
    lines = [
        f"# {one_line(host.hostname)}: {GENERATED.format(design=host.design)}",
        f"# NCCL over the {host.fabric} fabric's InfiniBand HCAs (/etc/nccl.conf, or an environment file). Variables:",
        "# https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
    ]
    if not host.named:
        lines += [
            "# The node type's catalog entry names no RDMA devices (`hca:` of its ports): the list holds the port",
            "# names; replace each by its RDMA device (`ibstat`, or /sys/class/infiniband).",
        ]
    lines.append("NCCL_IB_HCA==" + ",".join(host.hcas))
    for name, pkey in host.partitions:
        lines += [
            f"# partition {name} (P_Key {pkey:#06x}): NCCL_IB_PKEY takes its index in the HCA's P_Key table",
            "# (/sys/class/infiniband/<hca>/ports/1/pkeys/<index>), which the subnet manager assigns [unverified]",
            f"# NCCL_IB_PKEY=<index of {pkey:#06x}>",
        ]
    lines.append("# NCCL_IB_SL: NCCL's default service level 0 (the design sets no application SL)")
    if host.inband:
        lines.append("NCCL_SOCKET_IFNAME==" + ",".join(host.inband))
    else:
        lines.append("# NCCL_SOCKET_IFNAME: the node's in-band interface (no in-band fabric in the design)")
    return "\n".join(lines) + "\n"


ROCE_NETPLAN_HEADER = (
    "# {hostname}: {banner}\n"
    "# Netplan (/etc/netplan/60-fabric-rails.yaml): each RoCE NIC's address and MTU, and one routing table and rule\n"
    "# per NIC, so that traffic from a NIC's address leaves by that NIC to its own leaf (a rail's traffic to another\n"
    "# scalable unit crosses the spines of that rail, not whichever NIC the main table picks). Schema: netplan's\n"
    "# `routes` (`table`, `scope`) and `routing-policy` (`from`, `table`, `priority`),\n"
    "# https://netplan.readthedocs.io/en/stable/netplan-yaml/#routing (mirrored in docs.rs/netplan-types); the\n"
    "# per-NIC table and rule pattern as in\n"
    "# https://instinct.docs.amd.com/projects/system-acceptance/en/latest/network/configuration.html\n"
)


def rail_netplan(host: RoceHost) -> dict[str, Any]:
    return _rail_document(*_rail_values(host))


# per NIC: whether it has an IPv4 address, an IPv6 address, an IPv4 route (address and gateway), an IPv6 route
_Shape = tuple[tuple[bool, bool, bool, bool], ...]


def _rail_values(host: RoceHost) -> tuple[_Shape, list[Any]]:
    """The netplan's shape and its scalars that are the host's own, in the order `_rail_document` places them."""
    shape: list[tuple[bool, bool, bool, bool]] = []
    values: list[Any] = []
    for nic in host.nics:
        v4, v6 = nic.address_v4, nic.address_v6
        routed = [(a, g) for a, g in ((v4, nic.gateway_v4), (v6, nic.gateway_v6)) if a is not None and g is not None]
        shape.append(
            (
                v4 is not None,
                v6 is not None,
                v4 is not None and nic.gateway_v4 is not None,
                v6 is not None and nic.gateway_v6 is not None,
            )
        )
        values += [nic.name, nic.mtu, *(address_text(a) for a in (v4, v6) if a is not None)]
        for address, gateway in routed:
            values += [network_text(address), nic.table, ip_text(gateway), nic.table]
        for address, _ in routed:
            values += [ip_text(address), nic.table, nic.rule_priority]
    return tuple(shape), values


def _rail_document(shape: _Shape, values: list[Any]) -> dict[str, Any]:
    """The netplan of a host of `shape`, its own scalars taken from `values` in order (or slots: `_rail_form`)."""
    take = iter(values).__next__
    ethernets: dict[str, Any] = {}
    for has_v4, has_v6, route_v4, route_v6 in shape:
        name = take()
        entry: dict[str, Any] = {"mtu": take(), "dhcp4": False, "dhcp6": False, "accept-ra": False}
        entry["addresses"] = [take() for _ in range(has_v4 + has_v6)]
        routes: list[dict[str, Any]] = []
        policy: list[dict[str, Any]] = []
        families = [default for default, routed in (("0.0.0.0/0", route_v4), ("::/0", route_v6)) if routed]
        for default in families:
            routes.append({"to": take(), "scope": "link", "table": take()})
            routes.append({"to": default, "via": take(), "table": take()})
        for _ in families:
            policy.append({"from": take(), "table": take(), "priority": take()})
        entry["routes"] = routes
        entry["routing-policy"] = policy
        ethernets[name] = entry
    return {"network": {"version": 2, "renderer": "networkd", "ethernets": ethernets}}


@lru_cache(maxsize=64)
def _rail_form(shape: _Shape, slots: int) -> yamltext.Form | None:
    return yamltext.form(_rail_document(shape, [yamltext.slot(i) for i in range(slots)]), slots, width=120)


def rail_netplan_text(host: RoceHost) -> str:
    header = ROCE_NETPLAN_HEADER.format(hostname=one_line(host.hostname), banner=GENERATED.format(design=host.design))
    shape, values = _rail_values(host)
    form = _rail_form(shape, len(values)) if len({n.name for n in host.nics}) == len(host.nics) else None
    if form is None:  # PyYAML's text, faster (12,500 servers at 100k GPUs)
        return header + yamltext.dump(_rail_document(shape, values), width=120)
    return header + form.fill(values, lambda: _rail_document(shape, values))  # the shape's text written once


# (key, value, why); the effective value of each is the larger of `all` and the interface's own
RDMA_SYSCTLS: tuple[tuple[str, int, str], ...] = (
    ("net.ipv4.conf.all.arp_ignore", 1, "answer ARP for an address only on the NIC that has it"),
    ("net.ipv4.conf.all.arp_announce", 2, "ask ARP with the outgoing NIC's own address"),
    ("net.ipv4.conf.all.rp_filter", 2, "loose reverse-path filter: a reply may arrive on another rail's NIC"),
    ("net.ipv4.conf.default.rp_filter", 2, "the same for NICs that appear later"),
)


def rdma_sysctl(host: RoceHost) -> str:
    lines = [
        f"# {one_line(host.hostname)}: {GENERATED.format(design=host.design)}",
        "# /etc/sysctl.d/90-fabric-rdma.conf: ARP and reverse-path filtering for a host with several RDMA NICs",
        "# (ARP flux and strict rp_filter drop RoCEv2 between multi-NIC hosts). Values as IBM's RDMA (SMC-R)",
        "# multi-interface guidance, https://www.ibm.com/docs/en/linux-on-systems?topic=setup-high-availability ;",
        "# meanings: the kernel's Documentation/networking/ip-sysctl.rst.",
    ]
    for key, value, why in RDMA_SYSCTLS:
        lines += [f"# {why}", f"{key} = {value}"]
    return "\n".join(lines) + "\n"


def roce_tos(dscp: int) -> int:
    """The IP ToS byte of RoCE traffic: the DSCP in its upper six bits, ECN-capable transport ECT(0) (0b10) in its
    lower two (RFC 3168), so that switches may mark instead of drop: DSCP 26 gives 106."""
    return dscp << 2 | 0b10


def pfc_list(priority: int) -> str:
    return ",".join("1" if p == priority else "0" for p in range(8))


def nic_qos(host: RoceHost) -> str:
    lines = [
        "#!/bin/sh",
        f"# {one_line(host.hostname)}: {GENERATED.format(design=host.design)}",
        "# NIC QoS of the RoCE NICs, the same lossless profile the fabric's switches program: trust DSCP, the RoCE",
        "# and CNP DSCPs on their priorities, PFC on the lossless priority only, RDMA-CM's default ToS, ECN (DCQCN)",
        "# on the lossless priority, CNPs on their DSCP and priority. Run at boot after the NICs are up.",
        "# Sources (NVIDIA MLNX_OFED/DOCA documentation): mlnx_qos --pfc,",
        "# https://docs.nvidia.com/networking/display/mlnxenv24103250lts/Flow+Control ; mlnx_qos --trust and",
        "# --dscp2prio from MLNX_OFED's QoS chapter [unverified: options not confirmed in a stored NVIDIA page];",
        "# ECN sysfs (ecn/roce_np, ecn/roce_rp, enable/<priority>),",
        "# https://docs.nvidia.com/doca/sdk/explicit+congestion+notification/index.html ; cma_roce_tos (RDMA-CM's",
        "# default ToS) from MLNX_OFED [unverified: tool options not confirmed in a stored NVIDIA page], and the CNP",
        "# parameters roce_np/cnp_dscp and cnp_802p_prio [unverified: names not confirmed in a stored NVIDIA page].",
        "set -eu",
        "",
        "# the RDMA device of a NIC (its netdev's device/infiniband directory)",
        'hca() { ls "/sys/class/net/$1/device/infiniband"; }',
    ]
    for nic in host.nics:
        q = nic.qos
        device = nic.hca or f'"$(hca {nic.name})"'
        lines += [
            "",
            f"# {nic.name}" + (f" (rail {nic.rail})" if nic.rail is not None else "") + f": {nic.leaf}:{nic.leaf_port}",
            f"mlnx_qos -i {nic.name} --trust dscp --pfc {pfc_list(q.roce_tc)}",
            f"mlnx_qos -i {nic.name} --dscp2prio set,{q.roce_dscp},{q.roce_tc}",
            f"mlnx_qos -i {nic.name} --dscp2prio set,{q.cnp_dscp},{q.cnp_tc}",
            f"cma_roce_tos -d {device} -t {roce_tos(q.roce_dscp)}",
            f"echo 1 > /sys/class/net/{nic.name}/ecn/roce_np/enable/{q.roce_tc}",
            f"echo 1 > /sys/class/net/{nic.name}/ecn/roce_rp/enable/{q.roce_tc}",
            f"echo {q.cnp_dscp} > /sys/class/net/{nic.name}/ecn/roce_np/cnp_dscp",
            f"echo {q.cnp_tc} > /sys/class/net/{nic.name}/ecn/roce_np/cnp_802p_prio",
        ]
    return "\n".join(lines) + "\n"


def nccl_env(host: RoceHost) -> str:
    """NCCL's settings that must match the fabric (an environment file: /etc/nccl.conf takes the same lines)."""
    mine = [n for n in host.nics if n.role == "compute"]
    nics = sorted(mine, key=lambda n: (n.fabric, n.rail if n.rail is not None else -1, n.name))
    compute = [n for n in nics if n.fabric == nics[0].fabric]  # NCCL's HCAs: one compute fabric's, in rail order
    named = all(n.hca for n in compute)
    tos = {roce_tos(n.qos.roce_dscp) for n in compute}
    lines = [
        f"# {one_line(host.hostname)}: {GENERATED.format(design=host.design)}",
        f"# NCCL over the {compute[0].fabric} fabric's RoCE NICs (/etc/nccl.conf, or an environment file). Variables:",
        "# https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
    ]
    if not named:
        lines += [
            "# The node type's catalog entry names no RDMA devices (`hca:` of its ports): the list holds the NICs'",
            "# port names; replace each by its RDMA device (`rdma link show`, or",
            "# /sys/class/net/<port>/device/infiniband).",
        ]
    lines.append("NCCL_IB_HCA==" + ",".join(n.hca or n.name for n in compute))
    lines += [
        "# the RoCEv2 GID of the NIC's IPv4 address (index 3 when the NIC has IPv6 link-local and one IPv4 address;",
        "# NCCL 2.21+ finds it itself when unset) [unverified: per-driver GID order]",
        "NCCL_IB_GID_INDEX=3",
        f"# traffic class = DSCP {compute[0].qos.roce_dscp} << 2 | ECT(0): the fabric's lossless class",
        f"NCCL_IB_TC={min(tos)}",
    ]
    if host.inband:
        lines.append("NCCL_SOCKET_IFNAME==" + ",".join(host.inband))
    else:
        lines.append("# NCCL_SOCKET_IFNAME: the node's in-band interface (no in-band fabric in the design)")
    return "\n".join(lines) + "\n"


def roce_files(host: RoceHost) -> dict[str, str]:
    base = f"hosts/{host.hostname}"
    return {
        f"{base}/netplan.yaml": rail_netplan_text(host),
        f"{base}/sysctl.conf": rdma_sysctl(host),
        f"{base}/nic-qos.sh": nic_qos(host),
    } | ({f"{base}/nccl.env": nccl_env(host)} if any(n.role == "compute" for n in host.nics) else {})


def private_hosts(build: Build) -> set[str]:
    """frr.conf of a node whose sessions carry a password (written mode 0600)."""
    return {f"hosts/{name}/frr.conf" for name, host in build.hosts.items() if host.has_secrets}


OUTPUTS: tuple[Output, ...] = (Output("hosts", host_files, private=private_hosts),)
