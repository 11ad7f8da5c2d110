"""configs/<switch>/structured-config.yaml: an EOS switch's intent in Arista AVD's `eos_cli_config_gen` model.

The same switch as `startup-config`, as data an AVD workflow takes as it is (`eos_cli_config_gen`, pyavd's
`get_device_config`, CloudVision). Secrets stay references: Ansible lookups of the spec's environment variable
or file, the BGP password through AVD's own `arista.avd.encrypt` filter (AVD stores BGP passwords type 7), so
the file holds no secret. The tests validate every file with pyavd's schema, render it with pyavd and compare
the result with `startup-config` statement by statement (tests/live/test_eos_avd.py).
"""

from __future__ import annotations

from ipaddress import _BaseAddress, _BaseNetwork
from typing import Any

from fabric.fast import yamltext
from fabric.intent.ethernet.model import DeviceIntent, PrefixRule
from fabric.pipeline import Build
from fabric.render.platforms.eos import (
    PEER_VLAN_NAME,
    QOS_PROFILE,
    ROUND_ROBIN,
    STRICT,
    TRUNK_GROUP,
    VIRTUAL_MAC,
    Eos,
    by_interface,
    channels,
    eos_hosts,
    eos_speed,
    eos_v6_groups,
    peer_vlan_ipv6,
    session_limit,
    watchdog_times,
)
from fabric.render.platforms.frrview import PrefixLine, prefix_lines
from fabric.spec.schema import SecretRef

MGMT_VRF = "MGMT"
FILE = "structured-config.yaml"
EOS = Eos()


def secret_reference(ref: SecretRef, *, bgp_key: str | None = None) -> str:
    """An Ansible lookup of where the secret is (the spec's environment variable, or its file as the spec
    names it); a BGP password also goes through AVD's type-7 encryption keyed by its peer group."""
    lookup = (
        f"lookup('ansible.builtin.env', '{ref.env}')" if ref.env else f"lookup('ansible.builtin.file', '{ref.file}')"
    )
    if bgp_key is not None:
        lookup += f" | arista.avd.encrypt(passwd_type='bgp', key='{bgp_key}')"
    return "{{ " + lookup + " }}"


def _prefix_list(name: str, rules: tuple[PrefixRule, ...]) -> dict[str, Any]:
    return {
        "name": name,
        "sequence_numbers": [
            {"sequence": line.seq, "action": f"permit {line.prefix}{line.bounds}"} for line in prefix_lines(rules)
        ],
    }


def _lines(name: str, lines: tuple[PrefixLine, ...]) -> dict[str, Any]:
    return {
        "name": name,
        "sequence_numbers": [{"sequence": line.seq, "action": f"permit {line.prefix}{line.bounds}"} for line in lines],
    }


def _interfaces(intent: DeviceIntent, lossless: set[str]) -> list[dict[str, Any]]:
    """The switch's Ethernet interfaces (what holds for all its ports looked up once: 15,000 ports in a
    260-switch fabric)."""
    max_mtu = EOS.max_mtu
    unnumbered = intent.bgp is not None and intent.bgp.unnumbered
    vlan = intent.servers.vlan if intent.servers is not None else None
    interfaces = []
    for port in intent.ports:
        out: dict[str, Any]
        if not port.admin_up:
            interfaces.append({"name": port.name, "description": port.description, "shutdown": True})
            continue
        out = {
            "name": port.name,
            "description": port.description,
            "shutdown": False,
            "speed": eos_speed(port.speed_gbps, len(port.lanes)),
            "mtu": port.mtu if port.mtu < max_mtu else max_mtu,
        }
        interfaces.append(out)
        role = port.role
        if port.channel is not None:
            out["channel_group"] = {"id": port.channel, "mode": "active"}
        elif role == "uplink" or role == "downlink":
            out["switchport"] = {"enabled": False}
            if port.ipv4:
                out["ip_address"] = port.ipv4
            if port.ipv6:
                out["ipv6_addresses"] = [port.ipv6]
            if unnumbered:
                out["ipv6_enable"] = True
        elif role == "server" and vlan is not None:
            out["switchport"] = {"enabled": True, "mode": "access", "access_vlan": vlan}
        if port.name in lossless:
            out["service_profile"] = QOS_PROFILE
    return interfaces


def _channel(intent: DeviceIntent, channel: dict[str, Any]) -> dict[str, Any]:
    """A port-channel of an MLAG leaf: the peer link (a trunk of the MLAG group) or a node's bond."""
    out: dict[str, Any] = {"name": f"Port-Channel{channel['id']}", "description": channel["description"]}
    if channel["peer_link"]:
        out["switchport"] = {"enabled": True, "mode": "trunk", "trunk": {"groups": [TRUNK_GROUP]}}
    elif intent.servers is not None:
        out["switchport"] = {"enabled": True, "mode": "access", "access_vlan": intent.servers.vlan}
        out["mlag"] = channel["id"]
    return out


def _qos(intent: DeviceIntent) -> dict[str, Any]:
    qos = intent.qos
    if qos is None:
        return {}
    out: dict[str, Any] = {
        "qos": {"map": {"dscp": [f"{d} to traffic-class {tc}" for d, tc in qos.dscp_to_tc() if tc != 0]}},
        "qos_profiles": [
            {
                "name": QOS_PROFILE,
                "trust": "dscp",
                "tx_queues": [
                    {
                        "id": qos.roce_tc,
                        "priority": ROUND_ROBIN,
                        "bandwidth_percent": qos.roce_weight,
                        "random_detect": {
                            "ecn": {
                                "threshold": {
                                    "units": "bytes",
                                    "min": qos.ecn_min_bytes,
                                    "max": qos.ecn_max_bytes,
                                    "max_probability": qos.ecn_probability,
                                }
                            }
                        },
                    },
                    {"id": qos.cnp_tc, "priority": STRICT},
                    {"id": 0, "priority": ROUND_ROBIN, "bandwidth_percent": qos.default_weight},
                ],
                "priority_flow_control": {
                    "enabled": True,
                    "priorities": [{"priority": qos.roce_tc, "no_drop": True}],
                },
            }
        ],
    }
    if qos.pfc_watchdog:
        out["priority_flow_control"] = {"watchdog": {"action": "drop", **watchdog_times(qos)}}
    return out


def _management(intent: DeviceIntent, build: Build) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if intent.domain:
        out["dns_domain"] = intent.domain
    if intent.dns:
        out["ip_name_server"] = {"vrfs": [{"name": MGMT_VRF, "servers": [{"ip_address": s} for s in intent.dns]}]}
    if intent.ntp:
        out["ntp"] = {"vrf": MGMT_VRF, "servers": [{"name": s} for s in intent.ntp]}
    if intent.syslog:
        out["logging"] = {"vrfs": [{"name": MGMT_VRF, "hosts": [{"name": s} for s in intent.syslog]}]}
    snmp: dict[str, Any] = {}
    ref = build.design.spec.management.snmp_community
    if intent.snmp_community is not None and ref is not None:
        snmp["communities"] = [{"name": secret_reference(ref), "access": "ro"}]
        snmp["vrfs"] = [{"name": MGMT_VRF, "enable": True}]
    if intent.snmp_location:
        snmp["location"] = intent.snmp_location
    if snmp:
        out["snmp_server"] = snmp
    return out


def _router_bgp(intent: DeviceIntent, build: Build) -> dict[str, Any]:
    bgp = intent.bgp
    if bgp is None:
        return {}
    group: dict[str, Any] = {"name": bgp.peer_group, "route_map_in": "FABRIC-IN", "route_map_out": "FABRIC-OUT"}
    hosts = eos_hosts(bgp)
    groups = [group]
    if hosts:
        groups.append(
            {
                "name": bgp.host_group,
                "route_map_out": "FABRIC-OUT",
                "maximum_routes": session_limit(bgp, bgp.host_maximum_prefix),
            }
        )
    limit = session_limit(bgp, bgp.maximum_prefix)
    if limit is not None:
        group["maximum_routes"] = limit
        group["maximum_routes_warning_only"] = True
    # numbered dual-stack: the IPv6 sessions' groups (IPv6 unicast only), with their IPv4 twins' policy
    v6_names = eos_v6_groups(bgp)
    v6_only: list[str] = []
    for name, _, host in v6_names["v6_groups"]:  # type: ignore[attr-defined]
        v6_only.append(name)
        groups.append(dict(groups[1 if host else 0], name=name))
    routing = build.design.spec.fabrics[intent.fabric].routing
    for g in groups:
        if bgp.bfd:
            g["bfd"] = True
        if bgp.password is not None and routing is not None and routing.bgp_password is not None:
            g["password"] = secret_reference(routing.bgp_password, bgp_key=g["name"])
    router: dict[str, Any] = {
        "as": str(bgp.asn),
        "router_id": bgp.router_id,
        "timers": {"keepalive_time": bgp.timers[0], "hold_time": bgp.timers[1]},
        "maximum_paths": {"paths": bgp.maximum_paths, "ecmp": bgp.maximum_paths},
        "peer_groups": groups,
    }
    if bgp.multipath_relax:
        # AVD's model has no key for it: a raw statement of the router bgp section
        router["bgp_defaults"] = ["bgp bestpath as-path multipath-relax"]
    sessions = by_interface(bgp)
    if any(not interface for _, interface in sessions):
        router["neighbors"] = [
            {
                "ip_address": n.peer,
                "peer_group": bgp.group(n),
                "remote_as": str(n.remote_as),
                "description": n.description,
            }
            for n, interface in sessions
            if not interface
        ]
    if any(interface for _, interface in sessions):
        router["neighbor_interfaces"] = [
            {"name": n.interface, "peer_group": bgp.group(n), "remote_as": str(n.remote_as)}
            for n, interface in sessions
            if interface
        ]
    v4_groups: list[dict[str, Any]] = []
    for name in [g["name"] for g in groups if g["name"] not in v6_only]:
        v4_group: dict[str, Any] = {"name": name, "activate": True}
        if bgp.unnumbered:
            v4_group["next_hop"] = {"address_family_ipv6": {"enabled": True, "originate": True}}
        v4_groups.append(v4_group)
    # `no neighbor <group> activate`: an IPv6 session never carries IPv4 unicast
    v4: dict[str, Any] = {"peer_groups": v4_groups + [{"name": name, "activate": False} for name in v6_only]}
    v6_groups: list[dict[str, Any]] = [
        {"name": name, "activate": True}
        for name in (v6_names["v6_group"], v6_names["v6_host_group"] if hosts else None)
        if name
    ]
    v6: dict[str, Any] = {"peer_groups": v6_groups}
    # the routed nodes' inbound prefix-lists: per session (numbered), or on their group (unnumbered)
    v4_by_name = {g["name"]: g for g in v4_groups}
    v6_by_name = {g["name"]: g for g in v6_groups}
    for host in hosts:
        for peer in host.sessions:
            if peer in v4_by_name:
                v4_by_name[peer]["prefix_list_in"] = host.name
            else:
                v4.setdefault("neighbors", []).append({"ip_address": peer, "prefix_list_in": host.name})
        for peer in host.sessions_v6 if host.lines_v6 else ():
            if peer in v6_by_name:
                v6_by_name[peer]["prefix_list_in"] = f"{host.name}-V6"
            else:
                v6.setdefault("neighbors", []).append({"ip_address": peer, "prefix_list_in": f"{host.name}-V6"})
    v4["networks"] = [{"prefix": p} for p in bgp.networks]
    router["address_family_ipv4"] = v4
    if bgp.ipv6:
        v6["networks"] = [{"prefix": p} for p in bgp.networks_v6]
        router["address_family_ipv6"] = v6
    return {"router_bgp": router}


def structured_config(intent: DeviceIntent, build: Build) -> dict[str, Any]:
    """The switch in `eos_cli_config_gen`'s model; keys in the order `startup-config` has them."""
    lossless = set(intent.qos.ports) if intent.qos else set()
    mtu = min(intent.mtu, EOS.max_mtu)
    config: dict[str, Any] = {"hostname": intent.hostname, **_management(intent, build)}
    config["service_routing_protocols_model"] = "multi-agent"
    config["vrfs"] = [{"name": MGMT_VRF}]
    config["lldp"] = {"run": True}
    if intent.servers is not None:
        config["vlans"] = [{"id": intent.servers.vlan, "name": "servers"}]
    mlag = intent.mlag
    if mlag is not None:
        config.setdefault("vlans", []).append({"id": mlag.vlan, "name": PEER_VLAN_NAME, "trunk_groups": [TRUNK_GROUP]})
        config["spanning_tree"] = {"no_spanning_tree_vlan": str(mlag.vlan)}
    config.update(_qos(intent))
    config["ethernet_interfaces"] = _interfaces(intent, lossless)
    if mlag is not None:
        config["port_channel_interfaces"] = [_channel(intent, c) for c in channels(intent)]
    loopback: dict[str, Any] = {"name": "Loopback0"}
    if intent.loopback_v4:
        loopback["ip_address"] = intent.loopback_v4
    if intent.loopback_v6:
        loopback["ipv6_addresses"] = [intent.loopback_v6]
    config["loopback_interfaces"] = [loopback]
    if intent.mgmt_address:
        config["management_interfaces"] = [
            {"name": intent.mgmt_port, "vrf": MGMT_VRF, "ip_address": intent.mgmt_address, "type": "oob"}
        ]
    if intent.servers is not None:
        svi: dict[str, Any] = {
            "name": f"Vlan{intent.servers.vlan}",
            "mtu": mtu,
            "ip_address": intent.servers.gateway_v4,
        }
        if intent.servers.virtual_v4:
            svi["ip_virtual_router_addresses"] = [intent.servers.virtual_v4.ip]
        if intent.servers.gateway_v6:
            svi["ipv6_addresses"] = [intent.servers.gateway_v6]
        if intent.servers.virtual_v6:
            svi["ipv6_virtual_router_addresses"] = [intent.servers.virtual_v6.ip]
        config["vlan_interfaces"] = [svi]
    if mlag is not None:
        peer_svi: dict[str, Any] = {
            "name": f"Vlan{mlag.vlan}",
            "description": PEER_VLAN_NAME,
            "mtu": mtu,
            "no_autostate": True,
            "ip_address": mlag.local_address,
        }
        if peer_vlan_ipv6(intent.bgp):
            peer_svi["ipv6_enable"] = True
        config.setdefault("vlan_interfaces", []).append(peer_svi)
        config["ip_virtual_router_mac_address"] = VIRTUAL_MAC
    config["ip_routing"] = True
    if intent.bgp is not None and intent.bgp.unnumbered:
        config["ip_routing_ipv6_interfaces"] = True
    config["ipv6_unicast_routing"] = True
    if mlag is not None:
        config["mlag_configuration"] = {
            "domain_id": mlag.domain,
            "local_interface": f"Vlan{mlag.vlan}",
            "peer_address": mlag.peer_address,
            "peer_link": f"Port-Channel{mlag.peer_link.channel}",
        }
    if intent.mgmt_gateway and intent.mgmt_address:
        config["static_routes"] = [{"vrf": MGMT_VRF, "prefix": "0.0.0.0/0", "next_hop": intent.mgmt_gateway}]
    bgp = intent.bgp
    if bgp is not None:
        hosts = eos_hosts(bgp)
        config["prefix_lists"] = [_prefix_list("FABRIC", bgp.allowed)] + [_lines(h.name, h.lines) for h in hosts]
        if bgp.ipv6:
            config["ipv6_prefix_lists"] = [_prefix_list("FABRIC-V6", bgp.allowed_v6)] + [
                _lines(f"{h.name}-V6", h.lines_v6) for h in hosts if h.lines_v6
            ]
        # the route-maps are bound at the peer group, so they filter both address families: IPv6 routes pass
        # by their own entry (an IPv6 prefix never matches `ip address`); each map its own objects (no YAML alias)
        config["route_maps"] = [
            {
                "name": name,
                "sequence_numbers": [{"sequence": 10, "type": "permit", "match": ["ip address prefix-list FABRIC"]}]
                + (
                    [{"sequence": 20, "type": "permit", "match": ["ipv6 address prefix-list FABRIC-V6"]}]
                    if bgp.ipv6
                    else []
                ),
            }
            for name in ("FABRIC-IN", "FABRIC-OUT")
        ]
        config.update(_router_bgp(intent, build))
    return config


_ADDRESS_TYPES = (_BaseAddress, _BaseNetwork)  # interfaces are addresses too; AVD's model takes them as text
WIDTH = 120  # PyYAML folds a scalar only past this column


def _dump(data: dict[str, Any]) -> str:
    """PyYAML's document of `data` with addresses as text (block style, keys in order, width 120), written by
    yamltext: PyYAML's per-node representer was most of the render time of a big EOS fabric."""
    return yamltext.dump(data, width=WIDTH, as_text=_ADDRESS_TYPES)


def structured_configs(build: Build) -> dict[str, str]:
    return structured_shard(build, 0, 1)


def structured_shard(build: Build, k: int, n: int) -> dict[str, str]:
    """The structured configs of every n-th EOS switch from the k-th (one worker's)."""
    eos = [(name, intent) for name, intent in build.intents.items() if intent.platform == "eos"]
    return {
        f"configs/{name}/{FILE}": f"# {name}: {EOS.banner(intent)}\n" + _dump(structured_config(intent, build))
        for name, intent in eos[k::n]
    }
