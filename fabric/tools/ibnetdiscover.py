"""The ibnetdiscover topology format, read: ibnetdiscover output (or such a file, e.g. the plan's topology.net):
node headers, port lines, GUID lines and comments; node ids are `S-`/`H-`/`R-` + GUID, or any name with a
preceding `switchguid=`/`caguid=` line as in ibsim files. Anything else is a finding with its line, never an
exception. fabric/render/outputs/infiniband/netfile.py writes the format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabric.model.findings import Finding, Severity


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
