"""SONiC: config_db.json (serialized from data) and frr.conf for split routing-config mode.

SONiC's default DSCP_TO_TC_MAP ("AZURE") puts DSCP 26 into a lossy class; the map here names every DSCP
value, so RoCE traffic lands in its lossless class whatever the image's defaults. With the dynamic buffer
model SONiC sizes the lossless priority groups from the ports' speed and CABLE_LENGTH (the planned lengths).
"""

from __future__ import annotations

from typing import Any

from fabric.intent.ethernet import DeviceIntent, PortIntent
from fabric.render import jsontext
from fabric.render.platforms.base import Platform
from fabric.render.platforms.frrview import frr_view
from fabric.render.templating import render


def _speed_mbps(port: PortIntent) -> str:
    return str(port.speed_gbps * 1000)


def _type(layer: str) -> str:
    return {"leaf": "LeafRouter", "spine": "SpineRouter", "core": "SpineRouter"}[layer]


class Sonic(Platform):
    name = "sonic"
    files = ("config_db.json", "frr.conf")

    def render(self, intent: DeviceIntent) -> dict[str, str]:
        return {
            "config_db.json": jsontext.dumps(self.config_db(intent)) + "\n",  # as json.dumps(indent=4, sort_keys)
            "frr.conf": render("sonic/frr.conf.j2", **frr_view(intent, addresses=False)),
        }

    def config_db(self, intent: DeviceIntent) -> dict[str, Any]:
        db: dict[str, Any] = {}
        metadata = {
            "hostname": intent.hostname,
            "type": _type(intent.layer),
            "docker_routing_config_mode": "split",
            "buffer_model": "dynamic",
            "default_pfcwd_status": "enable" if intent.qos and intent.qos.pfc_watchdog else "disable",
        }
        if intent.hwsku:
            metadata["hwsku"] = intent.hwsku
        if intent.bgp:
            metadata["bgp_asn"] = str(intent.bgp.asn)
        db["DEVICE_METADATA"] = {"localhost": metadata}
        db["PORT"] = {
            p.name: {
                "admin_status": "up" if p.admin_up else "down",
                "alias": f"etp{p.cage}" + (chr(ord("a") + p.sub - 1) if p.breakout > 1 else ""),
                "index": str(p.cage),
                "lanes": ",".join(str(lane) for lane in p.lanes),
                "mtu": str(min(p.mtu, self.max_mtu)),
                "speed": _speed_mbps(p),
                "description": p.description,
            }
            for p in intent.ports
        }
        breakouts = {p.cage: p for p in intent.ports if p.breakout > 1 and p.sub == 1}
        if breakouts:
            db["BREAKOUT_CFG"] = {p.name: {"brkout_mode": f"{p.breakout}x{p.speed_gbps}G"} for p in breakouts.values()}
        interface: dict[str, dict[str, str]] = {}
        for p in intent.used_ports:
            if p.role in ("uplink", "downlink"):
                interface[p.name] = (
                    {"ipv6_use_link_local_only": "enable"} if intent.bgp and intent.bgp.unnumbered else {}
                )
                for address in (p.ipv4, p.ipv6):
                    if address:
                        interface[f"{p.name}|{address}"] = {}
        if interface:
            db["INTERFACE"] = interface
        loopback: dict[str, dict[str, str]] = {"Loopback0": {}}
        for address in (intent.loopback_v4, intent.loopback_v6):
            if address:
                loopback[f"Loopback0|{address}"] = {}
        db["LOOPBACK_INTERFACE"] = loopback
        if intent.servers:
            vlan = f"Vlan{intent.servers.vlan}"
            db["VLAN"] = {vlan: {"vlanid": str(intent.servers.vlan)}}
            db["VLAN_MEMBER"] = {f"{vlan}|{port}": {"tagging_mode": "untagged"} for port in intent.servers.members}
            db["VLAN_INTERFACE"] = {vlan: {}} | {
                f"{vlan}|{a}": {} for a in (intent.servers.gateway_v4, intent.servers.gateway_v6) if a
            }
        if intent.mgmt_address:
            mgmt = {"gwaddr": intent.mgmt_gateway} if intent.mgmt_gateway else {}
            db["MGMT_INTERFACE"] = {f"{intent.mgmt_port}|{intent.mgmt_address}": mgmt}
            db["MGMT_PORT"] = {intent.mgmt_port: {"admin_status": "up", "alias": intent.mgmt_port}}
        if intent.bgp and not intent.bgp.unnumbered:
            db["BGP_NEIGHBOR"] = {
                n.peer: {
                    "asn": str(n.remote_as),
                    "name": n.peer_device,
                    "admin_status": "up",
                    "holdtime": "9",
                    "keepalive": "3",
                }
                | ({"local_addr": str(n.local_address)} if n.local_address else {})
                for n in intent.bgp.neighbors
            }
        db["DEVICE_NEIGHBOR"] = {
            p.name: {"name": p.peer_device, "port": p.peer_port} for p in intent.used_ports if p.role != "server"
        }
        if intent.ntp:
            db["NTP_SERVER"] = {server: {} for server in intent.ntp}
        if intent.syslog:
            db["SYSLOG_SERVER"] = {server: {} for server in intent.syslog}
        if intent.snmp_community:
            db["SNMP_COMMUNITY"] = {intent.snmp_community: {"TYPE": "RO"}}
        if intent.snmp_location:
            db["SNMP"] = {"LOCATION": {"Location": intent.snmp_location}}
        if intent.qos:
            db.update(self._qos(intent))
        return db

    def _qos(self, intent: DeviceIntent) -> dict[str, Any]:
        qos = intent.qos
        assert qos is not None
        identity = {str(i): str(i) for i in range(8)}
        pg = {str(i): str(i) if i == qos.roce_tc else "0" for i in range(8)}
        ports = [p for p in intent.used_ports if p.name in qos.ports]
        tables: dict[str, Any] = {
            "DSCP_TO_TC_MAP": {"ROCE": {str(d): str(tc) for d, tc in qos.dscp_to_tc()}},
            "TC_TO_QUEUE_MAP": {"ROCE": identity},
            "TC_TO_PRIORITY_GROUP_MAP": {"ROCE": pg},
            "MAP_PFC_PRIORITY_TO_QUEUE": {"ROCE": identity},
            "PORT_QOS_MAP": {
                p.name: {
                    "dscp_to_tc_map": "ROCE",
                    "tc_to_queue_map": "ROCE",
                    "tc_to_pg_map": "ROCE",
                    "pfc_to_queue_map": "ROCE",
                    "pfc_enable": str(qos.roce_tc),
                }
                for p in ports
            },
            "WRED_PROFILE": {
                "ROCE_LOSSLESS": {
                    "ecn": "ecn_all",
                    "wred_green_enable": "true",
                    "green_min_threshold": str(qos.ecn_min_bytes),
                    "green_max_threshold": str(qos.ecn_max_bytes),
                    "green_drop_probability": str(qos.ecn_probability),
                }
            },
            "SCHEDULER": {
                "CNP_STRICT": {"type": "STRICT"},
                "ROCE_DWRR": {"type": "DWRR", "weight": str(qos.roce_weight)},
                "DEFAULT_DWRR": {"type": "DWRR", "weight": str(qos.default_weight)},
            },
            "QUEUE": {},
            "CABLE_LENGTH": {"AZURE": {p.name: f"{max(1, round(p.cable_m or 5))}m" for p in ports}},
        }
        for p in ports:
            tables["QUEUE"][f"{p.name}|{qos.roce_tc}"] = {"scheduler": "ROCE_DWRR", "wred_profile": "ROCE_LOSSLESS"}
            tables["QUEUE"][f"{p.name}|{qos.cnp_tc}"] = {"scheduler": "CNP_STRICT"}
            tables["QUEUE"][f"{p.name}|0"] = {"scheduler": "DEFAULT_DWRR"}
        if qos.pfc_watchdog:
            watchdog = {
                "action": "drop",
                "detection_time": str(qos.watchdog_detect_ms),
                "restoration_time": str(qos.watchdog_restore_ms),
            }
            tables["PFC_WD"] = {"GLOBAL": {"POLL_INTERVAL": str(qos.watchdog_poll_ms)}} | {
                p.name: watchdog for p in ports
            }
        return tables
