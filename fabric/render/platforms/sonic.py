"""SONiC: config_db.json (serialized from data) and frr.conf for split routing-config mode.

SONiC's default DSCP_TO_TC_MAP ("AZURE") puts DSCP 26 into a lossy class; the map here names every DSCP
value, so RoCE traffic lands in its lossless class whatever the image's defaults. The buffer tables are the
HwSKU's, in the buffer model its ASIC runs (sonic_buffers): static pools, profiles and lossless priority groups sized
from the port speed and planned cable length on Broadcom, the dynamic model's tables on NVIDIA Spectrum.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fabric.fast import jsontext
from fabric.intent.ethernet.model import DeviceIntent, PortIntent, QosIntent
from fabric.render.engine import iptext
from fabric.render.engine.templating import render
from fabric.render.platforms import sonic_buffers
from fabric.render.platforms.base import Platform
from fabric.render.platforms.frrview import frr_view


def _speed_mbps(port: PortIntent) -> str:
    return str(port.speed_gbps * 1000)


_LANES: dict[tuple[int, ...], str] = {}
# (cage, sub, breakout, speed, MTU, the platform's MTU) → a PORT row's alias, index, mtu and speed, as text
_SHAPES: dict[tuple[int, ...], tuple[str, str, str, str]] = {}


_PORT_FIELDS = ("admin_status", "alias", "index", "lanes", "mtu", "speed", "description")


# DEVICE_METADATA type, SONiC's tier names (sonic-buildimage files/build_templates/buffers_config.j2 picks
# buffers_defaults_t0.j2 for a ToRRouter, _t1 for a LeafRouter, _t2 for a SpineRouter): the leaf, which the servers
# attach to, is the T0 (ToRRouter); the tier above it the T1 (LeafRouter); a 3-tier fabric's core the T2
# (SpineRouter). None of the HwSKUs fabric knows has a buffers_defaults_t2.j2 upstream (086b03bd70), so on a core
# `config qos reload` cannot re-render the buffers; fabric's config_db carries them (docs/outputs/configs.md).
# The type also sets features in init_cfg.json.j2: dhcp_relay enabled on a ToRRouter only, restapi disabled on a
# LeafRouter, macsec enabled (where the ASIC supports it) and pmon not delayed on a SpineRouter.
_TYPES = {"leaf": "ToRRouter", "spine": "LeafRouter", "core": "SpineRouter"}


def _type(layer: str) -> str:
    return _TYPES[layer]


class Sonic(Platform):
    name = "sonic"
    files = ("config_db.json", "frr.conf")

    def render(self, intent: DeviceIntent) -> dict[str, str]:
        return {
            "config_db.json": jsontext.dumps(self.config_db(intent)) + "\n",  # as json.dumps(indent=4, sort_keys)
            "frr.conf": render("sonic/frr.conf.j2", **frr_view(intent, addresses=False)),
        }

    def config_db(self, intent: DeviceIntent) -> dict[str, Any]:
        """The tables: per-port tables as `jsontext.table` rows, those that many switches hold the same (QoS
        for a port set and profile) as `jsontext.shared`."""
        db: dict[str, Any] = {}
        metadata = {
            "hostname": intent.hostname,
            "type": _type(intent.layer),
            "docker_routing_config_mode": "split",
            "buffer_model": _buffer_model(intent.hwsku),
            "default_pfcwd_status": "enable" if intent.qos and intent.qos.pfc_watchdog else "disable",
        }
        if intent.hwsku:
            metadata["hwsku"] = intent.hwsku
        if intent.bgp:
            metadata["bgp_asn"] = str(intent.bgp.asn)
        db["DEVICE_METADATA"] = {"localhost": metadata}
        max_mtu = self.max_mtu
        lanes = _LANES if len(_LANES) < 4096 else {}  # the lane lists of a model's ports, as text
        shapes = _SHAPES if len(_SHAPES) < 65536 else {}
        port_rows: dict[str, tuple[str | None, ...]] = {}
        for p in intent.ports:
            key = (p.cage, p.sub, p.breakout, p.speed_gbps, p.mtu, max_mtu)
            shape = shapes.get(key)
            if shape is None:
                alias = f"etp{p.cage}" + (chr(ord("a") + p.sub - 1) if p.breakout > 1 else "")
                shape = shapes[key] = (alias, str(p.cage), str(min(p.mtu, max_mtu)), _speed_mbps(p))
            port_rows[p.name] = (
                "up" if p.admin_up else "down",
                shape[0],
                shape[1],
                lanes.get(p.lanes) or lanes.setdefault(p.lanes, ",".join(map(str, p.lanes))),
                shape[2],
                shape[3],
                p.description,
            )
        db["PORT"] = jsontext.table(
            ("admin_status", "alias", "index", "lanes", "mtu", "speed", "description"), port_rows
        )
        breakouts = {p.cage: p for p in intent.ports if p.breakout > 1 and p.sub == 1}
        if breakouts:
            db["BREAKOUT_CFG"] = jsontext.table(
                ("brkout_mode",), {p.name: (f"{p.breakout}x{p.speed_gbps}G",) for p in breakouts.values()}
            )
        used = intent.used_ports
        unnumbered = bool(intent.bgp and intent.bgp.unnumbered)
        interface: dict[str, tuple[str | None, ...]] = {}
        for p in used:
            if p.role in ("uplink", "downlink"):
                interface[p.name] = ("enable",) if unnumbered else ()
                for address in (p.ipv4, p.ipv6):
                    if address:
                        interface[f"{p.name}|{iptext.text(address)}"] = (None,) if unnumbered else ()
        if interface:
            db["INTERFACE"] = jsontext.table(("ipv6_use_link_local_only",) if unnumbered else (), interface)
        loopback: dict[str, dict[str, str]] = {"Loopback0": {}}
        for address in (intent.loopback_v4, intent.loopback_v6):
            if address:
                loopback[f"Loopback0|{address}"] = {}
        db["LOOPBACK_INTERFACE"] = loopback
        if intent.servers:
            vlan = f"Vlan{intent.servers.vlan}"
            db["VLAN"] = {vlan: {"vlanid": str(intent.servers.vlan)}}
            db["VLAN_MEMBER"] = jsontext.table(
                ("tagging_mode",), {f"{vlan}|{port}": ("untagged",) for port in intent.servers.members}
            )
            db["VLAN_INTERFACE"] = {vlan: {}} | {
                f"{vlan}|{a}": {} for a in (intent.servers.gateway_v4, intent.servers.gateway_v6) if a
            }
        if intent.mgmt_address:
            mgmt = {"gwaddr": intent.mgmt_gateway} if intent.mgmt_gateway else {}
            db["MGMT_INTERFACE"] = {f"{intent.mgmt_port}|{intent.mgmt_address}": mgmt}
            db["MGMT_PORT"] = {intent.mgmt_port: {"admin_status": "up", "alias": intent.mgmt_port}}
        if intent.bgp and not intent.bgp.unnumbered:
            db["BGP_NEIGHBOR"] = jsontext.table(
                ("asn", "name", "admin_status", "holdtime", "keepalive", "local_addr"),
                {
                    n.peer: (
                        str(n.remote_as),
                        n.peer_device,
                        "up",
                        str(intent.bgp.timers[1]),
                        str(intent.bgp.timers[0]),
                        iptext.text(n.local_address) if n.local_address else None,
                    )
                    for n in intent.bgp.neighbors
                },
            )
        db["DEVICE_NEIGHBOR"] = jsontext.table(
            ("name", "port"), {p.name: (p.peer_device, p.peer_port) for p in used if p.role != "server"}
        )
        if intent.ntp:
            db["NTP_SERVER"] = {server: {} for server in intent.ntp}
        if intent.syslog:
            db["SYSLOG_SERVER"] = {server: {} for server in intent.syslog}
        if intent.snmp_community:
            db["SNMP_COMMUNITY"] = {intent.snmp_community: {"TYPE": "RO"}}
        if intent.snmp_location:
            db["SNMP"] = {"LOCATION": {"Location": intent.snmp_location}}
        if intent.qos:
            db.update(_qos(intent.qos, used, intent.hwsku))
            problems = _buffer_problems(intent.hwsku, intent.qos, *_buffer_ports(intent.qos, used, intent.hwsku))
            assert not problems, f"{intent.hostname}: {problems[:3]}"
        return db


def _buffer_model(hwsku: str | None) -> str:
    return (sonic_buffers.sku(hwsku) or sonic_buffers.GENERIC).model


def _qos(qos: QosIntent, used: tuple[PortIntent, ...], hwsku: str | None) -> dict[str, Any]:
    """The RoCE profile's tables: what depends only on the profile, the HwSKU and the ports' names and buffer
    profiles is shared (the same text for every switch alike, `jsontext.shared`); the cable lengths are the
    switch's own."""
    names, ports = _buffer_ports(qos, used, hwsku)
    tables: dict[str, Any] = {table: jsontext.shared(_qos_table, table, qos, ()) for table in _PROFILE_TABLES}
    for table in _PORT_TABLES if qos.pfc_watchdog else _PORT_TABLES[:-1]:
        tables[table] = jsontext.shared(_qos_table, table, qos, names)
    sku = sonic_buffers.sku(hwsku) or sonic_buffers.GENERIC
    lossless = set(names)
    cables: dict[str, str] = {}
    for p in used:
        if p.name in lossless:
            length = _length(p)
            cables[p.name] = f"{length}m" if sku.model == "dynamic" else _lossless(hwsku, p.speed_gbps, length)[0]
    tables["CABLE_LENGTH"] = {"AZURE": cables}
    for table in _buffers(hwsku, qos.roce_tc, ports):  # (its tables' names: built once per argument set)
        tables[table] = jsontext.shared(_buffer_table, table, hwsku, qos.roce_tc, ports)
    return tables


# a switch's used ports and the profile of their lossless PG (None: a lossy port)
_Ports = tuple[tuple[str, str | None], ...]


def _length(port: PortIntent) -> int:
    return max(1, round(port.cable_m or 5))


def _buffer_ports(qos: QosIntent, used: tuple[PortIntent, ...], hwsku: str | None) -> tuple[tuple[str, ...], _Ports]:
    """The names of the used ports that carry the lossless profile, and every used port as `_Ports`."""
    lossless = set(qos.ports)
    names = tuple(p.name for p in used if p.name in lossless)
    if (sonic_buffers.sku(hwsku) or sonic_buffers.GENERIC).model == "dynamic":
        return names, tuple((p.name, "NULL" if p.name in lossless else None) for p in used)
    ports = tuple((p.name, _lossless(hwsku, p.speed_gbps, _length(p))[1] if p.name in lossless else None) for p in used)
    return names, ports


@lru_cache(maxsize=256)
def _lossless(hwsku: str | None, speed_gbps: int, length: int) -> tuple[str, str]:
    """Traditional model: the CABLE_LENGTH (the length pg_profile_lookup.ini lists) and the lossless profile's
    name of a port of `speed_gbps` with a planned cable of `length` m."""
    sku = sonic_buffers.sku(hwsku) or sonic_buffers.GENERIC
    speed = _lookup_speed(sku, speed_gbps * 1000)
    cable = sonic_buffers.cable_bucket(sku, speed, length) or max(c for s, c in sku.pg_lookup if s == speed)
    return f"{cable}m", sonic_buffers.lossless_profile(sku, speed, cable)[0]


@lru_cache(maxsize=256)
def _buffer_problems(hwsku: str | None, qos: QosIntent, names: tuple[str, ...], ports: _Ports) -> tuple[str, ...]:
    """sonic_buffers.buffer_problems of the tables these arguments make: checked once per argument set (the
    tables it reads are functions of them alone)."""
    db: dict[str, Any] = {"DEVICE_METADATA": {"localhost": {"buffer_model": _buffer_model(hwsku)}}}
    db["PORT_QOS_MAP"] = _qos_table("PORT_QOS_MAP", qos, names)
    db |= _buffers(hwsku, qos.roce_tc, ports)
    return tuple(sonic_buffers.buffer_problems({t: db[t] for t in sonic_buffers.CHECKED if t in db}))


def _buffer_table(table: str, hwsku: str | None, roce_tc: int, ports: _Ports) -> Any:
    """One table of `_buffers` (pure: jsontext caches its text)."""
    return _buffers(hwsku, roce_tc, ports)[table]


@lru_cache(maxsize=64)
def _buffers(hwsku: str | None, roce_tc: int, ports: _Ports) -> dict[str, Any]:
    """BUFFER_POOL/PROFILE/PG/QUEUE of the HwSKU `hwsku`: the lossless priority `roce_tc` on the PFC ports (those
    of `ports` with a profile), lossy on everything else (buffers_config.j2's PG 0 and queues), the lossless PG's
    headroom from the port's speed and cable length (pg_profile_lookup.ini, traditional model: the profile named)
    or computed by buffermgrd (NULL, dynamic model). Pure and cached: callers must not change what it returns."""
    sku = sonic_buffers.sku(hwsku) or sonic_buffers.GENERIC
    tables: dict[str, Any] = dict(sonic_buffers.DYNAMIC_TABLES) if sku.model == "dynamic" else {}
    tables |= {"BUFFER_POOL": dict(sku.pools), "BUFFER_PROFILE": dict(sku.profiles)}
    rows = {name: row for name, row in map(_profile_row(sku), {p for _, p in ports if p and p != "NULL"})}
    tables["BUFFER_PROFILE"] |= {name: rows[name] for name in sorted(rows) if name not in sku.profiles}
    pg: dict[str, dict[str, str]] = {}
    queue: dict[str, dict[str, str]] = {}
    lossy = {"profile": sku.lossy_queue_profile}
    all_lossy = sonic_buffers.ranges(list(range(sku.queues)))[0]
    lossy_queues = sonic_buffers.ranges([q for q in range(sku.queues) if q != roce_tc])
    for name, profile in ports:
        pg[f"{name}|0"] = {"profile": "ingress_lossy_profile"}
        if profile is None:
            queue[f"{name}|{all_lossy}"] = lossy
            continue
        pg[f"{name}|{roce_tc}"] = {"profile": profile}
        queue[f"{name}|{roce_tc}"] = {"profile": "egress_lossless_profile"}
        for r in lossy_queues:
            queue[f"{name}|{r}"] = lossy
    ingress, egress = sku.port_profile_lists
    if ingress:  # the SKU's generate_profile_lists: every buffered port, lossless or not
        tables["BUFFER_PORT_INGRESS_PROFILE_LIST"] = {name: {"profile_list": ingress} for name, _ in ports}
        tables["BUFFER_PORT_EGRESS_PROFILE_LIST"] = {name: {"profile_list": egress} for name, _ in ports}
    tables["BUFFER_PG"] = pg
    tables["BUFFER_QUEUE"] = queue
    return tables


def _profile_row(sku: sonic_buffers.BufferSku) -> Any:
    """A lossless profile's name → (name, fields), of the pg_profile_lookup.ini row its name says."""
    by_name = {
        sonic_buffers.lossless_profile(sku, speed, cable)[0]: sonic_buffers.lossless_profile(sku, speed, cable)
        for speed, cable in sku.pg_lookup
    }
    return by_name.__getitem__


def _lookup_speed(sku: sonic_buffers.BufferSku, speed_mbps: int) -> int:
    """The port speed pg_profile_lookup.ini lists, else the next faster one it lists (more headroom, never less)."""
    speeds = sorted({s for s, _ in sku.pg_lookup})
    return next((s for s in speeds if s >= speed_mbps), speeds[-1])


_PROFILE_TABLES = (
    "DSCP_TO_TC_MAP",
    "TC_TO_QUEUE_MAP",
    "TC_TO_PRIORITY_GROUP_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE",
    "WRED_PROFILE",
    "SCHEDULER",
)
_PORT_TABLES = ("PORT_QOS_MAP", "QUEUE", "PFC_WD")


def _qos_table(table: str, qos: QosIntent, names: tuple[str, ...]) -> dict[str, Any]:
    """One QoS table of the profile `qos` on the ports `names` (pure: jsontext caches its text)."""
    identity = {str(i): str(i) for i in range(8)}
    if table == "DSCP_TO_TC_MAP":
        return {"ROCE": {str(d): str(tc) for d, tc in qos.dscp_to_tc()}}
    if table in ("TC_TO_QUEUE_MAP", "MAP_PFC_PRIORITY_TO_QUEUE"):
        return {"ROCE": identity}
    if table == "TC_TO_PRIORITY_GROUP_MAP":
        return {"ROCE": {str(i): str(i) if i == qos.roce_tc else "0" for i in range(8)}}
    if table == "WRED_PROFILE":
        return {
            "ROCE_LOSSLESS": {
                "ecn": "ecn_all",
                "wred_green_enable": "true",
                "green_min_threshold": str(qos.ecn_min_bytes),
                "green_max_threshold": str(qos.ecn_max_bytes),
                "green_drop_probability": str(qos.ecn_probability),
            }
        }
    if table == "SCHEDULER":
        return {
            "CNP_STRICT": {"type": "STRICT"},
            "ROCE_DWRR": {"type": "DWRR", "weight": str(qos.roce_weight)},
            "DEFAULT_DWRR": {"type": "DWRR", "weight": str(qos.default_weight)},
        }
    if table == "PORT_QOS_MAP":
        row = {
            "dscp_to_tc_map": "ROCE",
            "tc_to_queue_map": "ROCE",
            "tc_to_pg_map": "ROCE",
            "pfc_to_queue_map": "ROCE",
            "pfc_enable": str(qos.roce_tc),
        }
        return {name: row for name in names}
    if table == "QUEUE":
        queue: dict[str, Any] = {}
        for name in names:
            queue[f"{name}|{qos.roce_tc}"] = {"scheduler": "ROCE_DWRR", "wred_profile": "ROCE_LOSSLESS"}
            queue[f"{name}|{qos.cnp_tc}"] = {"scheduler": "CNP_STRICT"}
            queue[f"{name}|0"] = {"scheduler": "DEFAULT_DWRR"}
        return queue
    assert table == "PFC_WD", table
    watchdog = {
        "action": "drop",
        "detection_time": str(qos.watchdog_detect_ms),
        "restoration_time": str(qos.watchdog_restore_ms),
    }
    return {"GLOBAL": {"POLL_INTERVAL": str(qos.watchdog_poll_ms)}} | {name: watchdog for name in names}
