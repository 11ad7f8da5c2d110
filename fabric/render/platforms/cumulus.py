"""Cumulus Linux: NVUE's declarative /etc/nvue.d/startup.yaml, serialized from data.

The RoCE profile is NVUE's own (`qos roce mode lossless`: DSCP 26 → switch-priority 3, PFC on 3, ECN on
traffic class 3, CNPs on 6 strict), with every value this spec sets written out explicitly, so a changed
default in a newer release cannot change the fabric.
"""

from __future__ import annotations

from typing import Any

import yaml

from fabric.intent.ethernet.model import DeviceIntent, PrefixRule, QosIntent
from fabric.render.platforms.base import Platform


def _prefix_rules(rules: tuple[PrefixRule, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, rule in enumerate(rules, start=1):
        match: dict[str, Any] = {}
        if rule.ge is not None:
            match["min-prefix-len"] = rule.ge
        if rule.le is not None:
            match["max-prefix-len"] = rule.le
        out[str(i * 10)] = {"action": "permit", "match": {str(rule.prefix): match}}
    return out


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """libyaml's C emitter (a pure-Python one is slow for a 128-port switch), never writing an anchor and alias
    where peer groups share a value (their timers): NVUE's file reads as the commands it stands for."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _dump(data: Any) -> str:
    return str(yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120))


def _watchdog(qos: QosIntent) -> dict[str, Any]:
    """NVUE's watchdog polls and declares a storm after `robustness` polls in pause: detection = poll × robustness
    (it has no restoration time of its own)."""
    return {
        "polling-interval": f"{qos.watchdog_poll_ms}ms",
        "robustness": max(1, round(qos.watchdog_detect_ms / qos.watchdog_poll_ms)),
    }


# MLAG (`dual_homing: bond`): the VRR MAC of every pair's gateway (the first of the VRRP range NVIDIA's
# examples use), and the role priority (the lower leaf of a pair is primary)
VRR_MAC = "00:00:5e:00:01:00"
MLAG_PRIORITY = {True: 1000, False: 2000}


class Cumulus(Platform):
    name = "cumulus"
    files = ("startup.yaml",)

    def render(self, intent: DeviceIntent) -> dict[str, str]:
        return {"startup.yaml": f"# {intent.hostname}: {self.banner(intent)}\n" + _dump([{"set": self.config(intent)}])}

    def config(self, intent: DeviceIntent) -> dict[str, Any]:
        config: dict[str, Any] = {"system": {"hostname": intent.hostname}}
        interfaces: dict[str, Any] = {}
        loopback: dict[str, Any] = {str(a): {} for a in (intent.loopback_v4, intent.loopback_v6) if a}
        interfaces["lo"] = {"type": "loopback"} | ({"ip": {"address": loopback}} if loopback else {})
        if intent.mgmt_address:
            mgmt: dict[str, Any] = {"type": "eth", "ip": {"address": {str(intent.mgmt_address): {}}, "vrf": "mgmt"}}
            if intent.mgmt_gateway:
                mgmt["ip"]["gateway"] = {intent.mgmt_gateway: {}}
            interfaces[intent.mgmt_port] = mgmt
        for cage, ways in sorted({(p.cage, p.breakout) for p in intent.used_ports if p.breakout > 1}):
            interfaces[f"swp{cage}"] = {"type": "swp", "link": {"breakout": {f"{ways}x": {}}}}
        qos = intent.qos
        # the global timers only set how the watchdog polls; it runs on a port only where enabled (default
        # `disable`): NVUE reference, `nv set interface <interface-id> qos pfc-watchdog state` (Cumulus Linux
        # 5.6, CumulusNetworks/docs content/nvue-reference/Set-and-Unset-Commands/QoS.md), on every PFC port
        watched = set(qos.ports) if qos is not None and qos.pfc_watchdog else set()
        for p in intent.ports:
            entry: dict[str, Any] = {
                "type": "swp",
                "description": p.description,
                "link": {
                    "mtu": min(p.mtu, self.max_mtu),
                    "speed": f"{p.speed_gbps}G",
                    "state": {"up" if p.admin_up else "down": {}},
                },
            }
            addresses: dict[str, Any] = {str(a): {} for a in (p.ipv4, p.ipv6) if a}
            if addresses:
                entry["ip"] = {"address": addresses}
            if p.role == "server" and intent.servers and p.channel is None:
                entry["bridge"] = {"domain": {"br_default": {"access": intent.servers.vlan}}}
            if p.name in watched:
                entry["qos"] = {"pfc-watchdog": {"state": "enable"}}
            interfaces[p.name] = entry
        if intent.mlag:
            interfaces.update(self._mlag_interfaces(intent))
            config["mlag"] = self._mlag(intent)
        if intent.servers:
            gateway: dict[str, Any] = {str(a): {} for a in (intent.servers.gateway_v4, intent.servers.gateway_v6) if a}
            svi: dict[str, Any] = {"address": gateway}
            virtual: dict[str, Any] = {str(a): {} for a in (intent.servers.virtual_v4, intent.servers.virtual_v6) if a}
            if virtual:  # VRR: both leaves of the MLAG pair answer for the gateway
                svi["vrr"] = {"address": virtual, "enable": "on", "mac-address": VRR_MAC, "state": {"up": {}}}
            interfaces[f"vlan{intent.servers.vlan}"] = {
                "type": "svi",
                "vlan": intent.servers.vlan,
                "ip": svi,
            }
            config["bridge"] = {"domain": {"br_default": {"vlan": {str(intent.servers.vlan): {}}}}}
        config["interface"] = interfaces
        if intent.bgp:
            config["router"] = self._router(intent)
            config["vrf"] = {"default": {"router": {"bgp": self._bgp(intent)}}}
        config["service"] = self._services(intent)
        if intent.qos:
            config["qos"] = self._qos(intent)
        return config

    def _mlag_interfaces(self, intent: DeviceIntent) -> dict[str, Any]:
        """The peer link (a `peerlink` bond and its VLAN subinterface) and one MLAG bond per node."""
        mlag = intent.mlag
        assert mlag is not None and intent.servers is not None
        out: dict[str, Any] = {
            "peerlink": {"type": "peerlink", "bond": {"member": {m: {} for m in mlag.peer_link.members}}},
            f"peerlink.{mlag.vlan}": {"type": "sub", "base-interface": "peerlink", "vlan": mlag.vlan},
        }
        for bond in mlag.bonds:
            out[f"bond{bond.channel}"] = {
                "type": "bond",
                "description": bond.node,
                "bond": {"member": {m: {} for m in bond.members}, "mlag": {"enable": "on", "id": bond.channel}},
                "bridge": {"domain": {"br_default": {"access": intent.servers.vlan}}},
            }
        return out

    def _mlag(self, intent: DeviceIntent) -> dict[str, Any]:
        mlag = intent.mlag
        assert mlag is not None
        out: dict[str, Any] = {"enable": "on", "mac-address": mlag.system_mac, "peer-ip": "linklocal"}
        out["priority"] = MLAG_PRIORITY[mlag.primary]
        if mlag.peer_loopback is not None:
            out["backup"] = {str(mlag.peer_loopback.ip): {}}
        return out

    def _router(self, intent: DeviceIntent) -> dict[str, Any]:
        bgp = intent.bgp
        assert bgp is not None
        policy: dict[str, Any] = {
            "prefix-list": {"FABRIC": {"type": "ipv4", "rule": _prefix_rules(bgp.allowed)}},
            "route-map": {
                name: {
                    "rule": {"10": {"action": {"permit": {}}, "match": {"ip-prefix-list": "FABRIC", "type": "ipv4"}}}
                }
                for name in ("FABRIC-IN", "FABRIC-OUT")
            },
        }
        if bgp.ipv6:
            policy["prefix-list"]["FABRIC-V6"] = {"type": "ipv6", "rule": _prefix_rules(bgp.allowed_v6)}
            for name in ("FABRIC-IN-V6", "FABRIC-OUT-V6"):
                policy["route-map"][name] = {
                    "rule": {"10": {"action": {"permit": {}}, "match": {"ip-prefix-list": "FABRIC-V6", "type": "ipv6"}}}
                }
        for host in bgp.hosts:  # a routed node's sessions accept its own loopback only
            assert host.prefix_list is not None
            policy["prefix-list"][host.prefix_list] = {"type": "ipv4", "rule": _prefix_rules(host.accept)}
            if bgp.ipv6 and host.accept_v6:
                policy["prefix-list"][f"{host.prefix_list}-V6"] = {
                    "type": "ipv6",
                    "rule": _prefix_rules(host.accept_v6),
                }
        return {
            "bgp": {"autonomous-system": bgp.asn, "enable": "on", "router-id": str(bgp.router_id)},
            "policy": policy,
        }

    def _bgp(self, intent: DeviceIntent) -> dict[str, Any]:
        bgp = intent.bgp
        assert bgp is not None
        families: dict[str, Any] = {
            "ipv4-unicast": {
                "enable": "on",
                "network": {str(prefix): {} for prefix in bgp.networks},
                "multipaths": {"ebgp": bgp.maximum_paths},
            }
        }
        group_af: dict[str, Any] = {
            "ipv4-unicast": {
                "enable": "on",
                "policy": {"inbound": {"route-map": "FABRIC-IN"}, "outbound": {"route-map": "FABRIC-OUT"}},
            }
        }
        v6_af: dict[str, Any] = {}
        if bgp.ipv6:
            families["ipv6-unicast"] = {
                "enable": "on",
                "network": {str(prefix): {} for prefix in bgp.networks_v6},
                "multipaths": {"ebgp": bgp.maximum_paths},
            }
            v6_af = {
                "enable": "on",
                "policy": {"inbound": {"route-map": "FABRIC-IN-V6"}, "outbound": {"route-map": "FABRIC-OUT-V6"}},
            }
            if bgp.unnumbered:  # both families on the one session; numbered: the IPv6 sessions' own group
                group_af["ipv6-unicast"] = v6_af
        # NVUE reference (CumulusNetworks/docs content/nvue-reference, BGP): `nv set vrf <vrf> router bgp
        # peer-group <id> address-family ipv4-unicast prefix-limits inbound maximum|warning-only` and `... neighbor
        # <id> address-family ipv4-unicast policy inbound prefix-list <name>`
        if bgp.maximum_prefix is not None:
            for family in (*group_af.values(), v6_af):
                if family:
                    family["prefix-limits"] = {"inbound": {"maximum": bgp.maximum_prefix, "warning-only": "on"}}

        def host_family(family: dict[str, Any]) -> dict[str, Any]:
            return {
                "enable": "on",
                "policy": {"outbound": {"route-map": family["policy"]["outbound"]["route-map"]}},
                "prefix-limits": {"inbound": {"maximum": bgp.host_maximum_prefix}},
            }

        host_af = {name: host_family(family) for name, family in group_af.items()}
        host_v6_af = host_family(v6_af) if v6_af else {}
        neighbors: dict[str, Any] = {}
        for n in bgp.neighbors:
            if n.prefix_list is not None:  # a routed node: its own group and inbound prefix-list
                host_families: dict[str, Any] = {}
                if not n.v6:
                    host_families["ipv4-unicast"] = {"policy": {"inbound": {"prefix-list": n.prefix_list}}}
                if bgp.ipv6 and n.accept_v6 and (n.v6 or bgp.unnumbered):
                    host_families["ipv6-unicast"] = {"policy": {"inbound": {"prefix-list": f"{n.prefix_list}-V6"}}}
                neighbors[n.peer] = {
                    "peer-group": bgp.group(n),
                    "type": "unnumbered" if bgp.unnumbered else "numbered",
                    "description": n.description,
                    "address-family": host_families,
                } | ({} if bgp.unnumbered else {"remote-as": n.remote_as})
            elif n.mlag_peer and n.v6:
                # the backup's IPv6 session: NVUE names a session by its interface, so the peer link's one session
                # carries IPv6 unicast too, with the IPv6 sessions' policy and limit (NVUE reference, BGP IPv6:
                # `nv set vrf <vrf> router bgp neighbor <id> address-family ipv6-unicast enable|policy|prefix-limits`)
                neighbors[n.peer]["address-family"] = {"ipv6-unicast": v6_af}
            elif n.mlag_peer and not bgp.unnumbered:  # over the peer link's subinterface, link-local
                neighbors[n.peer] = {
                    "peer-group": bgp.peer_group,
                    "type": "unnumbered",
                    "remote-as": n.remote_as,
                    "description": n.description,
                }
            elif bgp.unnumbered:
                neighbors[n.peer] = {"peer-group": bgp.peer_group, "type": "unnumbered", "description": n.description}
            else:
                neighbors[n.peer] = {
                    "peer-group": bgp.group(n),
                    "type": "numbered",
                    "remote-as": n.remote_as,
                    "description": n.description,
                }
        # NVUE reference (CumulusNetworks/docs content/nvue-reference, BGP): `nv set vrf <vrf> router bgp
        # peer-group <id> timers keepalive|hold` and `... peer-group <id> bfd enable on`
        keepalive, hold = bgp.timers
        group: dict[str, Any] = {"address-family": group_af, "timers": {"keepalive": keepalive, "hold": hold}}
        if bgp.bfd:
            group["bfd"] = {"enable": "on"}
        if bgp.password:
            group["password"] = bgp.password
        if bgp.unnumbered:
            group["remote-as"] = "external"
        groups = {bgp.peer_group: group}
        if bgp.hosts:
            host_group = {k: v for k, v in group.items() if k != "address-family"} | {"address-family": host_af}
            groups[bgp.host_group] = host_group
        if bgp.numbered_v6:
            # numbered dual-stack: each link's IPv6 session (its /127 addresses) in a group of its own, IPv6
            # unicast only; the IPv4 group never carries IPv6. NVUE reference (BGP IPv4, BGP IPv6): `nv set vrf
            # <vrf> router bgp peer-group <id> address-family ipv4-unicast|ipv6-unicast enable on|off`
            off = {"ipv4-unicast": {"enable": "off"}}
            groups[bgp.peer_group_v6] = group | {"address-family": off | {"ipv6-unicast": v6_af}}
            if any(n.host and n.v6 for n in bgp.neighbors):
                groups[bgp.host_group_v6] = groups[bgp.host_group] | {
                    "address-family": off | {"ipv6-unicast": host_v6_af}
                }
        out: dict[str, Any] = {
            "enable": "on",
            "address-family": families,
            "peer-group": groups,
            "neighbor": neighbors,
        }
        if bgp.multipath_relax:
            out["path-selection"] = {"multipath": {"aspath-ignore": "on"}}
        return out

    def _services(self, intent: DeviceIntent) -> dict[str, Any]:
        services: dict[str, Any] = {"lldp": {}}
        if intent.ntp:
            services["ntp"] = {"mgmt": {"server": {s: {} for s in intent.ntp}}}
        if intent.syslog:
            services["syslog"] = {"mgmt": {"server": {s: {} for s in intent.syslog}}}
        if intent.dns:
            services["dns"] = {"mgmt": {"server": {s: {} for s in intent.dns}}}
        if intent.snmp_community:
            services["snmp-server"] = {
                "enable": "on",
                "listening-address": {"all": {"vrf": "mgmt"}},
                "readonly-community": {intent.snmp_community: {"access": {"any": {}}}},
            } | ({"system-location": intent.snmp_location} if intent.snmp_location else {})
        return services

    def _qos(self, intent: DeviceIntent) -> dict[str, Any]:
        qos = intent.qos
        assert qos is not None
        return {
            "roce": {"enable": "on", "mode": "lossless"},
            "mapping": {
                "default-global": {
                    "trust": "l3",
                    "dscp": {
                        str(qos.roce_dscp): {"switch-priority": qos.roce_tc},
                        str(qos.cnp_dscp): {"switch-priority": qos.cnp_tc},
                    },
                }
            },
            "pfc": {"default-global": {"switch-priority": {str(qos.roce_tc): {}}, "rx": "enable", "tx": "enable"}},
            "congestion-control": {
                "default-global": {
                    "traffic-class": {
                        str(qos.roce_tc): {
                            "ecn": "enable",
                            "min-threshold": qos.ecn_min_bytes,
                            "max-threshold": qos.ecn_max_bytes,
                            "probability": qos.ecn_probability,
                        }
                    }
                }
            },
            "egress-scheduler": {
                "default-global": {
                    "traffic-class": {
                        str(qos.cnp_tc): {"mode": "strict"},
                        str(qos.roce_tc): {"mode": "dwrr", "bw-percent": qos.roce_weight},
                        "0": {"mode": "dwrr", "bw-percent": qos.default_weight},
                    }
                }
            },
        } | ({"pfc-watchdog": _watchdog(qos)} if qos.pfc_watchdog else {})
