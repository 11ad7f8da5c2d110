"""The ibnetdiscover topology format: fabric writes the plan in it (topology.net) and reads discovered fabrics.

Written: every node preceded by a blank line and its GUID line (ibsim takes the GUID from there), a
switch as `Switch <ports> "S-<guid>" # "<name>" enhanced port 0 lid 0 lmc 0`, a CA as
`Ca <ports> "H-<guid>" # "<device> <hca>"`, and every cable on both ends in ibnetdiscover's full form with
the planned rate (`lid 0 4xNDR`; ibsim takes the width and, up to HDR, the speed from there).

Read: ibnetdiscover output (or such a file): node headers, port lines, GUID lines and comments; node
ids are `S-`/`H-`/`R-` + GUID, or any name with a preceding `switchguid=`/`caguid=` line as in ibsim files.
Anything else is a finding with its line, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fabric.intent.infiniband.subnet import IbLink, Subnet
from fabric.model.findings import Finding, Severity

# --------------------------------------------------------------------------------------------- writing


def numbering_notes(subnet: Subnet) -> list[str]:
    """One line per switch model and breakout: how cage ports become IB ports."""
    notes: set[str] = set()
    for node in subnet.switches:
        per_cage = subnet.numbering[node.key].per_cage
        if per_cage == 1:
            notes.add(f"{node.model}: IB port n is cage n")
        else:
            ports = ", ".join(f"{per_cage}n" + (f"-{i}" if i else "") for i in range(per_cage - 1, -1, -1))
            notes.add(f"{node.model}: cage n holds IB ports {ports} (port = {per_cage} x (cage - 1) + sub)")
    return sorted(notes)


def net_view(subnet: Subnet, links: Sequence[IbLink] | None = None) -> dict[str, Any]:
    """What topology.net.j2 lays out: switches then CAs, each with its cabled ports in port order.

    A node is (switch?, GUID, short GUID, node id, ports, name, port rows); a port row is (port, local port GUID
    in parentheses or "", remote node id, remote port, remote port GUID in parentheses or "", remote name, rate).
    """
    links = subnet.links if links is None else links
    by_key = subnet.by_key
    ports: dict[str, list[tuple[int, tuple[str, ...]]]] = {n.key: [] for n in subnet.nodes}
    for link in links:
        rate = f" {link.rate}" if link.rate else ""
        a, b = by_key[link.a.node], by_key[link.b.node]
        a_guid = "" if a.switch else f"({link.a.guid:x})"
        b_guid = "" if b.switch else f"({link.b.guid:x})"
        ports[a.key].append((link.a.port, (str(link.a.port), a_guid, b.nodeid, str(link.b.port), b_guid, b.key, rate)))
        ports[b.key].append((link.b.port, (str(link.b.port), b_guid, a.nodeid, str(link.a.port), a_guid, a.key, rate)))
    nodes = [
        (
            node.switch,
            f"0x{node.guid:016x}",
            f"{node.guid:x}",
            node.nodeid,
            str(node.nports),
            node.key,
            [row for _, row in sorted(ports[node.key])],
        )
        for node in subnet.nodes
    ]
    return {"net_nodes": nodes, "numbering": numbering_notes(subnet), "cables": len(links)}


# --------------------------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class DiscoveredNode:
    guid: int
    kind: str  # switch | ca | router
    nports: int
    description: str
    line: int


@dataclass(frozen=True, slots=True)
class DiscoveredLink:
    """One cable, ends ordered by (GUID, port)."""

    a_guid: int
    a_port: int
    b_guid: int
    b_port: int
    rate: str | None  # as printed, e.g. 4xNDR
    line: int


@dataclass(frozen=True)
class Discovered:
    source: str
    nodes: dict[int, DiscoveredNode]
    links: tuple[DiscoveredLink, ...]
    findings: tuple[Finding, ...]


# Numbers are ASCII and short (`\d` also matches other scripts' digits, and a 5,000-digit one would not parse).
_HEADER = re.compile(r'^(Switch|Ca|Hca|Rt)\s+([0-9]{1,4})\s+"([^"]*)"\s*(?:#\s*"([^"]*)")?(.*)\Z')
_PORT = re.compile(
    r'^\[([0-9]{1,4})\](?:\(([0-9a-fA-F]{1,16})\))?\s+"([^"]*)"\[([0-9]{1,4})\](?:\(([0-9a-fA-F]{1,16})\))?(.*)\Z'
)
_GUID_LINE = re.compile(r"^(switchguid|caguid|hcaguids|rtguid)\s*=\s*(0x[0-9a-fA-F]{1,16}|[0-9]{1,20})\b")
_SETTING = re.compile(r"^(vendid|devid|sysimgguid|width|speed|extspeed|module|pdebug)\s*=")
_NODEID = re.compile(r"^[SHR]-([0-9a-fA-F]{1,16})\Z")
_SHOWN = re.compile(r"[A-Za-z0-9_.:/ -]{1,64}")


def _shown(text: str) -> str:
    """A node id from the file, quoted when plain, else described: findings never echo arbitrary bytes."""
    return repr(text) if _SHOWN.fullmatch(text) else "(an id with unusual characters)"


_RATE = re.compile(r"\b(\d{1,2}x(?:SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR))\b")
_KINDS = {"Switch": "switch", "Ca": "ca", "Hca": "ca", "Rt": "router"}
MAX_FORMAT_FINDINGS = 5


def parse_ibnetdiscover(text: str, source: str, where: str = "--ibnetdiscover") -> Discovered:
    findings: list[Finding] = []

    def bad(line: int, message: str, hint: str = "") -> None:
        if len(findings) < MAX_FORMAT_FINDINGS:
            findings.append(
                Finding(
                    Severity.ERROR,
                    "discovered-format",
                    where,
                    message,
                    hint or "give the text output of `ibnetdiscover` (the format of topology.net)",
                    source,
                    line,
                )
            )

    ids: dict[str, int] = {}
    nodes: dict[int, DiscoveredNode] = {}
    raw_ports: list[tuple[str, int, str, int, str | None, int]] = []  # nodeid, port, remote id, remote port, rate
    pending_guid: int | None = None
    current: str | None = None
    current_ports = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _SETTING.match(line):
            continue
        match = _GUID_LINE.match(line)
        if match:
            value = match.group(2)
            pending_guid = int(value, 16) if value.startswith("0x") else int(value)
            current = None
            continue
        match = _HEADER.match(line)
        if match:
            kind, nports, nodeid, desc = match.group(1), int(match.group(2)), match.group(3), match.group(4)
            found = _NODEID.match(nodeid)
            guid = pending_guid if pending_guid is not None else (int(found.group(1), 16) if found else None)
            pending_guid = None
            if guid is None:
                bad(number, f"node {_shown(nodeid)} has no GUID (no `S-`/`H-` id and no guid line before it)")
                current = None
                continue
            if nodeid in ids or guid in nodes:
                bad(number, f"node {_shown(nodeid)} (GUID 0x{guid:016x}) is listed twice")
                current = None
                continue
            ids[nodeid] = guid
            nodes[guid] = DiscoveredNode(guid, _KINDS[kind], nports, desc if desc is not None else nodeid, number)
            current, current_ports = nodeid, nports
            continue
        match = _PORT.match(line)
        if match:
            if current is None:
                bad(number, "a port line outside a node")
                continue
            port, remote, remote_port = int(match.group(1)), match.group(3), int(match.group(4))
            if not 0 <= port <= current_ports:
                bad(number, f"port {port} of {_shown(current)}, which has {current_ports} ports")
                continue
            speed = _RATE.search(match.group(6) or "")
            raw_ports.append((current, port, remote, remote_port, speed.group(1) if speed else None, number))
            continue
        bad(number, "not an ibnetdiscover line (neither a node, a port nor a GUID line)")
    if not nodes and not findings:
        bad(1, "no InfiniBand nodes (no `Switch` or `Ca` lines)")
    links: dict[tuple[int, int, int, int], DiscoveredLink] = {}
    for nodeid, port, remote, remote_port, rate, number in raw_ports:
        here = ids[nodeid]
        there = ids.get(remote)
        if there is None:
            remote_id = _NODEID.match(remote)
            if remote_id is None:
                bad(number, f"remote node {_shown(remote)} is not in the file")
                continue
            there = int(remote_id.group(1), 16)
            kind = {"S": "switch", "H": "ca", "R": "router"}[remote[0]]
            nodes.setdefault(there, DiscoveredNode(there, kind, remote_port, "", 0))
        ends = sorted(((here, port), (there, remote_port)))
        key = (ends[0][0], ends[0][1], ends[1][0], ends[1][1])
        if key not in links or (links[key].rate is None and rate is not None):
            links[key] = DiscoveredLink(*key, rate=rate, line=links[key].line if key in links else number)
    return Discovered(source, nodes, tuple(links[k] for k in sorted(links)), tuple(findings))
