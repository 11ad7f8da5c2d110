"""Arista EOS: a CLI startup-config.

EOS names ports of multi-lane cages and breakouts by cage and first lane (Ethernet1/1, Ethernet1/5 for a
2 × 400G cage), a single-lane cage by the cage (Ethernet1) (templates/eos/platform.yaml); it takes an L3 MTU
of at most 9214, and peers BGP unnumbered through `neighbor interface` with RFC 5549 next hops.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import NamedTuple

from fabric.intent.ethernet.model import BgpIntent, DeviceIntent, Neighbor, PortIntent, QosIntent
from fabric.render.engine.templating import render
from fabric.render.platforms.base import Platform
from fabric.render.platforms.frrview import FrrHost, address_pairs, host_lists, prefix_lines, v6_groups

# the RoCE lossless profile as one EOS `qos profile`, applied per port with `service-profile`
QOS_PROFILE = "ROCE-LOSSLESS"
# ETS: on Trident and Tomahawk switches every tx-queue is strict priority by default (a higher queue is served
# first) and `bandwidth percent` applies only to round-robin queues; `no priority` makes a queue, and every
# queue below it, round robin. So the scheduled queues (RoCE and default) say `no priority` and only the CNP
# queue stays `priority strict`. Arista EOS User Manual, chapter "Quality of Service", section "QoS
# Configuration: Trident and Tomahawk Platform Switches" (transmit queues, `priority (Tx-queue)`); copy:
# https://fdocuments.us/document/quality-of-service-arista-networks-2020-02-10-a-section-2715-quality-of.html;
# AVD's qos_profiles examples pair `bandwidth_percent` with `priority: no priority` likewise.
ROUND_ROBIN = "no priority"
STRICT = "priority strict"
# MLAG (`dual_homing: bond`): the peer VLAN's name and trunk group (AVD's defaults), and the virtual router's
# MAC, one for every pair (it never leaves a server subnet; AVD's examples use the same)
PEER_VLAN_NAME = "MLAG-PEER"
TRUNK_GROUP = "MLAG"
VIRTUAL_MAC = "00:1c:73:00:00:99"


# an unnumbered EOS session (`neighbor interface`) takes no policy of its own, only its peer group's: there the
# routed nodes' group accepts the loopbacks of this leaf's nodes (still never a switch's)
HOSTS_IN = "HOSTS-IN"


def eos_hosts(bgp: BgpIntent) -> list[FrrHost]:
    """The routed nodes' inbound prefix-lists: one per node bound to its session (numbered), or one for all
    this leaf's nodes bound to their peer group (unnumbered)."""
    hosts = host_lists(bgp.neighbors)
    if not bgp.unnumbered or not hosts:
        return hosts
    rules = tuple(rule for n in bgp.neighbors if n.host for rule in n.accept)
    rules_v6 = tuple(rule for n in bgp.neighbors if n.host for rule in n.accept_v6)
    unique = tuple(dict.fromkeys(rules)), tuple(dict.fromkeys(rules_v6))
    group = (bgp.host_group,)
    return [FrrHost(HOSTS_IN, prefix_lines(unique[0]), prefix_lines(unique[1]), group, group)]


def by_interface(bgp: BgpIntent) -> list[tuple[Neighbor, bool]]:
    """Each session with whether EOS peers it by interface (`neighbor interface`, IPv6 link-local): every one of
    an unnumbered fabric, and a numbered fabric's IPv6 session to the MLAG peer over the peer VLAN."""
    return [(n, bgp.unnumbered or n.peer == n.interface) for n in bgp.neighbors]


def peer_vlan_ipv6(bgp: BgpIntent | None) -> bool:
    """Whether the MLAG peer VLAN's interface runs IPv6 (`ipv6 enable`): a session over it peers by interface."""
    return bgp is not None and (bgp.unnumbered or any(n.mlag_peer and n.v6 for n in bgp.neighbors))


def session_limit(bgp: BgpIntent, per_family: int | None) -> int | None:
    """EOS's `maximum-routes` counts a session's routes of every address family: the intent's per-family
    limit times the families the session carries."""
    return None if per_family is None else per_family * (2 if bgp.ipv6 and bgp.unnumbered else 1)


def eos_v6_groups(bgp: BgpIntent) -> dict[str, object]:
    """Numbered dual-stack: the IPv6 sessions' peer groups as (name, maximum-routes, routed nodes' group), with
    the IPv4 groups' policy (FABRIC-IN/OUT match both families); and the groups IPv6 unicast is activated for."""
    names = v6_groups(bgp)
    groups: list[tuple[str, int | None, bool]] = []
    for name in names["v6_groups"]:  # type: ignore[attr-defined]
        host = name == bgp.host_group_v6
        groups.append((name, session_limit(bgp, bgp.host_maximum_prefix if host else bgp.maximum_prefix), host))
    return {"v6_groups": groups, "v6_group": names["v6_group"], "v6_host_group": names["v6_host_group"]}


def channels(intent: DeviceIntent) -> list[dict[str, object]]:
    """The port-channels of an MLAG leaf: the peer link, then one per bonded node (its `mlag` id is its own)."""
    mlag = intent.mlag
    if mlag is None:
        return []
    out: list[dict[str, object]] = [
        {"id": mlag.peer_link.channel, "description": f"MLAG peer link to {mlag.peer}", "peer_link": True}
    ]
    out += [{"id": b.channel, "description": b.node, "peer_link": False} for b in mlag.bonds]
    return out


class EosPort(NamedTuple):
    """A port as the template reads it, by field name: the EOS keywords and choices already made."""

    name: str
    description: str
    speed: str
    up: bool
    routed: bool
    access_vlan: int | None  # a server port's VLAN (None: not a server port, or no server VLAN)
    addresses: Sequence[tuple[str, str]]
    ipv6_enable: bool  # a routed port of an unnumbered fabric
    mtu: int
    lossless: bool
    channel: int | None


@cache
def eos_speed(speed_gbps: int, lanes: int) -> str:
    """EOS speed keyword: `400g-4` is 400G on 4 lanes, `100g` a plain 100G port, `1g` copper."""
    if speed_gbps < 10:
        return f"{speed_gbps}g"
    return f"{speed_gbps}g-{lanes}" if lanes > 1 else f"{speed_gbps}g"


def watchdog_times(qos: QosIntent) -> dict[str, str]:
    """EOS gives the watchdog's times in seconds."""
    return {
        "timeout": f"{qos.watchdog_detect_ms / 1000:g}",
        "polling_interval": f"{qos.watchdog_poll_ms / 1000:g}",
        "recovery_time": f"{qos.watchdog_restore_ms / 1000:g}",
    }


class Eos(Platform):
    name = "eos"
    files = ("startup-config",)

    def speed_keyword(self, port: PortIntent) -> str:
        """The `speed` statement's keyword for a port (structured-config.yaml says the same as startup-config)."""
        return eos_speed(port.speed_gbps, len(port.lanes))

    def render(self, intent: DeviceIntent) -> dict[str, str]:
        lossless = set(intent.qos.ports) if intent.qos else set()
        max_mtu = self.max_mtu
        bgp = intent.bgp
        unnumbered = bool(bgp and bgp.unnumbered)
        vlan = intent.servers.vlan if intent.servers is not None else None
        ports = []
        for p in intent.ports:
            role = p.role
            addresses = address_pairs(p.ipv4, p.ipv6) if p.ipv4 is not None or p.ipv6 is not None else ()
            speed = eos_speed(p.speed_gbps, len(p.lanes))
            routed = role == "uplink" or role == "downlink"
            ports.append(
                EosPort(
                    p.name,
                    p.description,
                    speed,
                    p.admin_up,
                    routed,
                    vlan if role == "server" else None,
                    addresses,
                    routed and unnumbered,
                    min(p.mtu, max_mtu),
                    p.name in lossless,
                    p.channel,
                )
            )
        return {
            "startup-config": render(
                "eos/startup-config.j2",
                banner=self.banner(intent),
                device=intent,
                ports=ports,
                bgp=bgp,
                neighbors=by_interface(bgp) if bgp else [],
                peer_vlan_ipv6=peer_vlan_ipv6(bgp),
                unnumbered=unnumbered,
                peer_group=bgp.peer_group if bgp else "",
                maximum_paths=bgp.maximum_paths if bgp else 1,
                qos=intent.qos,
                qos_profile=QOS_PROFILE,
                round_robin=ROUND_ROBIN,
                strict=STRICT,
                dscp_map=[(d, tc) for d, tc in intent.qos.dscp_to_tc() if tc != 0] if intent.qos else [],
                prefix_lines=prefix_lines(bgp.allowed) if bgp else [],
                hosts=eos_hosts(bgp) if bgp else [],
                host_group=bgp.host_group if bgp else "",
                maximum_routes=session_limit(bgp, bgp.maximum_prefix) if bgp else None,
                host_maximum_routes=session_limit(bgp, bgp.host_maximum_prefix) if bgp else None,
                prefix_lines_v6=prefix_lines(bgp.allowed_v6) if bgp and bgp.ipv6 else [],
                **eos_v6_groups(bgp) if bgp else {"v6_groups": [], "v6_group": "", "v6_host_group": ""},
                mtu=min(intent.mtu, self.max_mtu),
                watchdog=watchdog_times(intent.qos) if intent.qos else {},
                mlag=intent.mlag,
                channels=channels(intent),
                peer_vlan_name=PEER_VLAN_NAME,
                trunk_group=TRUNK_GROUP,
                virtual_mac=VIRTUAL_MAC,
            )
        }
