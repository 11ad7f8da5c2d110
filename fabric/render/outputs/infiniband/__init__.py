"""The subnet-manager outputs of every InfiniBand subnet, under `infiniband/<fabric>/` (`…/plane<p>/`).

opensm.conf (one per SM host: `opensm.conf` for the master, `opensm-<host>.conf` per standby),
root_guids.txt, cn_guids.txt, io_guids.txt (when there are I/O nodes), partitions.conf, node-name-map
and topology.net. Python prepares every string here; the templates in `templates/opensm/` only lay
them out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fabric.intent.infiniband.guids import format_guid
from fabric.intent.infiniband.subnet import CaPort, IbNode, PartitionPlan, SmHost, Subnet
from fabric.pipeline import Build
from fabric.render.engine.lines import Shapes
from fabric.render.engine.registry import Output
from fabric.render.engine.templating import render
from fabric.render.outputs.infiniband.netfile import topology_net

TEMPLATES = "opensm"
# what a Get(PortInfo) without the M_Key sees at each protection level (IBA vol. 1, M_Key protection bits)
# the static routes each adaptive-routing engine starts from (NVIDIA OpenSM: ar_updn is updn's, ar_ftree ftree's)
AR_PATHS = {"ar_updn": "up*/down* (credit-loop free)", "ar_ftree": "fat-tree (ftree's)"}
M_KEY_PROTECTION = {0: "a Get reads the key", 1: "a Get sees the key as zero", 2: "a Get without the key fails"}


def _header(subnet: Subnet) -> dict[str, Any]:
    count = subnet.placeholders
    return {
        "design": subnet.design,
        "fabric": subnet.fabric,
        "label": subnet.label,
        "placeholders": count,
        "nodes": len(subnet.nodes),
        "inventory_key": f"fabrics.{subnet.fabric}.infiniband.inventory",
    }


def _path(subnet: Subnet, name: str) -> str:
    return f"{subnet.settings.config_dir.rstrip('/')}/{name}"


def _ca_rows(ports: tuple[CaPort, ...]) -> list[tuple[str, str, str]]:
    return [(format_guid(p.guid), f"{p.node} port {p.port}", " (placeholder)" if p.placeholder else "") for p in ports]


def _node_rows(nodes: tuple[IbNode, ...]) -> list[tuple[str, str, str]]:
    return [(format_guid(n.guid), n.key, " (placeholder)" if n.placeholder else "") for n in nodes]


def _listed(template: str, rows: Sequence[Sequence[str]], **context: object) -> str:
    """A template's header, then its `row` macro once per row."""
    shapes = Shapes(f"{TEMPLATES}/{template}", **context)
    return shapes.text + shapes.fill("row", rows)


def _weights(table: Mapping[int, int]) -> str:
    return ",".join(f"{vl}:{weight}" for vl, weight in table.items())


def _port_label(port: CaPort) -> str:
    label = f"{port.node} port {port.port}"
    return label if port.node.endswith(f" {port.port_name}") else f"{label} (cage port {port.port_name})"


def _opensm_view(subnet: Subnet, host: SmHost | None) -> dict[str, Any]:
    s = subnet.settings
    engines = [e for e in subnet.engines if e != "no_fallback"]
    qos = None
    if s.qos is not None:
        high, low, sl2vl = s.qos.tables()
        qos = {
            "max_vls": s.qos.max_vls,
            "high_limit": s.qos.high_limit,
            "vlarb_high": _weights(high),
            "vlarb_low": _weights(low),
            "sl2vl": ",".join(str(v) for v in sl2vl),
        }
    standbys = [f"{h.host} ({h.priority})" for h in subnet.sm if not h.master]
    master = next((h.host for h in subnet.sm if h.master), None)
    return {
        **_header(subnet),
        "host": host.host if host else None,
        "role": ("master" if host.master else "standby") if host else None,
        "guid": format_guid(host.port.guid) if host and host.port else None,
        "guid_port": _port_label(host.port) if host and host.port else "",
        "priority": host.priority if host else s.sm.priority,
        "m_key": subnet.m_key,
        "m_key_protection_level": s.sm.m_key_protection_level,
        "m_key_protection_note": M_KEY_PROTECTION[s.sm.m_key_protection_level],
        "sm_key": subnet.sm_key,
        "master": master,
        "master_priority": s.sm.priority,
        "standbys": ", ".join(standbys),
        "subnet_prefix": s.subnet_prefix,
        "default_prefix": s.subnet_prefix == "0xfe80000000000000",
        "lmc": s.lmc,
        "lmc_lids": 2**s.lmc,
        "routing_engine": ",".join(subnet.engines),
        "engines": engines,
        "ftree_first": engines[0] in ("ftree", "ar_ftree"),
        "ar_first": engines[0] in AR_PATHS,
        "ar_paths": AR_PATHS.get(engines[0], ""),
        "flavor": subnet.flavor,
        "fallback_appended": subnet.fallback_appended,
        "roots": len(subnet.roots),
        "root_layer": subnet.roots[0].layer if subnet.roots else "",
        "root_file": _path(subnet, "root_guids.txt") if subnet.roots else None,
        "cn_file": _path(subnet, "cn_guids.txt"),
        "cn_count": len(subnet.compute),
        "io_file": _path(subnet, "io_guids.txt") if subnet.io else None,
        "io_count": len(subnet.io),
        "max_reverse_hops": s.max_reverse_hops,
        "partition_file": _path(subnet, "partitions.conf"),
        "node_name_map": _path(subnet, "node-name-map"),
        "config_dir": s.config_dir,
        "sweep_interval": s.sweep_interval_s,
        "qos": qos,
        "log_file": s.log_file,
        "log_max_size": s.log_max_size_mb,
        "dump_dir": s.dump_dir,
    }


def _partition_view(part: PartitionPlan) -> dict[str, Any]:
    flags = [f"{part.name}=0x{part.pkey:04x}"]
    if part.ipoib:
        flags.append("ipoib")
        flags.append(f"mtu={part.mtu_code}")
        if part.rate_code is not None:
            flags.append(f"rate={part.rate_code}")
    inline = ""
    members = [{"text": f"{format_guid(m.guid)}={m.membership}", "label": m.label} for m in part.members]
    if part.keyword is not None:
        inline = "ALL=limited, SELF=full" if part.self_full else f"{part.keyword}=full"
    full = sum(1 for m in part.members if m.membership == "full")
    limited = len(part.members) - full
    if part.added:
        why = "not in the spec: every port a limited member (reaches the SM, not other ports), the SM full"
    elif part.keyword is not None:
        why = f"every {'port' if part.keyword == 'ALL' else 'CA port'} a full member"
    else:
        why = f"{full} full and {limited} limited member port(s)"
    ipoib = (
        f"; IPoIB broadcast group at {part.mtu} bytes"
        + (f", {part.rate_gbps} Gb/s (the slowest member port)" if part.rate_gbps is not None else "")
        if part.ipoib
        else ""
    )
    return {
        "head": ", ".join(flags),
        "comment": f"{part.name} (P_Key 0x{part.pkey:04x}): {why}{ipoib}",
        "members": members,
        "inline": inline,
    }


def render_subnet(subnet: Subnet) -> dict[str, str]:
    d = subnet.directory
    files: dict[str, str] = {}
    hosts: list[SmHost | None] = list(subnet.sm) or [None]
    for host in hosts:
        name = host.file if host else "opensm.conf"
        files[f"{d}/{name}"] = render(f"{TEMPLATES}/opensm.conf.j2", **_opensm_view(subnet, host))
    header = _header(subnet)
    if subnet.roots:
        files[f"{d}/root_guids.txt"] = _listed(
            "guids.txt.j2",
            _node_rows(subnet.roots),
            **header,
            title="root_guids.txt",
            what=f"ftree and updn roots: the {subnet.roots[0].layer} switches, by NODE GUID",
        )
    files[f"{d}/cn_guids.txt"] = _listed(
        "guids.txt.j2",
        _ca_rows(subnet.compute),
        **header,
        title="cn_guids.txt",
        what="ftree compute nodes, by PORT GUID (node GUID + port number)",
    )
    if subnet.io:
        files[f"{d}/io_guids.txt"] = _listed(
            "guids.txt.j2",
            _ca_rows(subnet.io),
            **header,
            title="io_guids.txt",
            what="ftree I/O nodes, by PORT GUID (node GUID + port number)",
        )
    files[f"{d}/partitions.conf"] = render(
        f"{TEMPLATES}/partitions.conf.j2", **header, partitions=[_partition_view(p) for p in subnet.partitions]
    )
    files[f"{d}/node-name-map"] = _listed(
        "node-name-map.j2", [(guid, name) for guid, name, _ in _node_rows(subnet.nodes)], **header
    )
    files[f"{d}/topology.net"] = topology_net(subnet, header)
    return files


def render_infiniband(build: Build) -> dict[str, str]:
    files: dict[str, str] = {}
    for subnet in build.infiniband.subnets:
        files.update(render_subnet(subnet))
    return files


# infiniband/<fabric>/: opensm.conf, GUID files, partitions.conf, node-name-map, topology.net
OUTPUTS: tuple[Output, ...] = (Output("infiniband", render_infiniband, weight=1.4),)
