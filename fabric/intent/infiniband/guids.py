"""GUIDs: read from the user's inventory file, or placeholders derived from names.

A switch has one GUID (node = port = system image GUID). A channel adapter (CA, one RDMA device
such as `mlx5_3`) has a node GUID G, and its port p has the port GUID G + p unless the inventory
gives another: ibsim derives port GUIDs that way, and fabric writes them that way in every file.

Placeholders are `0xfab0` followed by 40 bits of a SHA-256 of the device (and HCA) name and a zero
low byte that leaves room for the port numbers: the same name always gets the same GUID, whatever
else the design holds (collisions, which are improbable, are resolved in name order).

Inventory CSV (header required; extra columns ignored):

    device,port,node_guid,port_guid
    su1-rail0-leaf,,0xb83fd2030042a1c0,
    dgx001,mlx5_0,0x946dae0300aa1b20,0x946dae0300aa1b21

`port` is empty for a switch; for a server it names the HCA (`mlx5_0`) or one of its cabled ports
(`OSFP4P2`). GUIDs are written `0x` + up to 16 hex digits, 16 bare hex digits, or as `ibv_devinfo`
prints them (`946d:ae03:00aa:1b20`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fabric.model.findings import Finding, Severity

PLACEHOLDER_PREFIX = 0xFAB0
PORT_BITS = 8  # low bits left for port numbers under a placeholder node GUID
INVENTORY_COLUMNS = ("device", "port", "node_guid", "port_guid")

_GUID_FORMS = (
    re.compile(r"0[xX]([0-9a-fA-F]{1,16})"),
    re.compile(r"([0-9a-fA-F]{16})"),
    re.compile(r"([0-9a-fA-F]{4}):([0-9a-fA-F]{4}):([0-9a-fA-F]{4}):([0-9a-fA-F]{4})"),
)


def parse_guid(text: str) -> int | None:
    """A GUID in one of the accepted forms, or None (malformed, or zero)."""
    text = text.strip()
    for form in _GUID_FORMS:
        match = form.fullmatch(text)
        if match:
            value = int("".join(match.groups()), 16)
            return value or None
    return None


def format_guid(guid: int) -> str:
    """`0x` + 16 hex digits, as OpenSM and ibnetdiscover write them."""
    return f"0x{guid:016x}"


def is_placeholder(guid: int) -> bool:
    return guid >> 48 == PLACEHOLDER_PREFIX


def placeholder_guid(name: str, attempt: int = 0) -> int:
    salted = name if attempt == 0 else f"{name}#{attempt}"
    body = int.from_bytes(hashlib.sha256(salted.encode()).digest()[:5], "big")
    return (PLACEHOLDER_PREFIX << 48) | (body << PORT_BITS)


@dataclass(frozen=True, slots=True)
class InventoryRow:
    device: str
    port: str  # "" for a switch; an HCA or port name for a server
    node_guid: int
    port_guid: int | None
    line: int


@dataclass(frozen=True)
class Inventory:
    file: str  # as shown in findings
    rows: tuple[InventoryRow, ...]
    findings: tuple[Finding, ...]


def _finding(severity: Severity, code: str, where: str, message: str, hint: str, file: str, line: int) -> Finding:
    return Finding(severity, code, where, message, hint, file, line)


def read_inventory(path: Path, display: str, where: str) -> Inventory:
    """Read and check an inventory file; problems are findings pointing at its lines (`where`: the spec path)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return Inventory(display, (), (_no_file(where, f"inventory {display}: no such file"),))
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Inventory(display, (), (_no_file(where, f"inventory {display} cannot be read ({reason})"),))
    return parse_inventory(text, display, where)


def _no_file(where: str, message: str) -> Finding:
    return Finding(
        Severity.ERROR,
        "inventory-unreadable",
        where,
        message,
        "the path is relative to the spec file; leave `inventory` out to use placeholder GUIDs",
    )


def parse_inventory(text: str, display: str, where: str) -> Inventory:
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    findings: list[Finding] = []
    hint_format = "the first line is the header `device,port,node_guid,port_guid` (port_guid may be left out)"
    if header is None or not [h for h in header if h.strip()]:
        findings.append(
            _finding(Severity.ERROR, "inventory-format", where, f"{display} is empty", hint_format, display, 1)
        )
        return Inventory(display, (), tuple(findings))
    columns = [h.strip().lower() for h in header]
    missing = [c for c in INVENTORY_COLUMNS[:3] if c not in columns]
    if missing:
        findings.append(
            _finding(
                Severity.ERROR,
                "inventory-format",
                where,
                f"{display} has no column {', '.join(f'`{m}`' for m in missing)} (header: {','.join(header)})",
                hint_format,
                display,
                1,
            )
        )
        return Inventory(display, (), tuple(findings))
    index = {name: columns.index(name) for name in INVENTORY_COLUMNS if name in columns}
    rows: list[InventoryRow] = []
    bad: list[tuple[int, str]] = []
    for number, record in enumerate(reader, start=2):
        if not record or all(not cell.strip() for cell in record) or record[0].lstrip().startswith("#"):
            continue

        def cell(name: str, record: list[str] = record) -> str:
            i = index.get(name)
            return record[i].strip() if i is not None and i < len(record) else ""

        device, port, node_text, port_text = cell("device"), cell("port"), cell("node_guid"), cell("port_guid")
        if not device:
            bad.append((number, "no device"))
            continue
        node_guid = parse_guid(node_text)
        if node_guid is None:
            bad.append((number, f"node_guid {node_text!r} of {device} is not a GUID"))
            continue
        port_guid = None
        if port_text:
            port_guid = parse_guid(port_text)
            if port_guid is None:
                bad.append((number, f"port_guid {port_text!r} of {device} {port} is not a GUID"))
                continue
        rows.append(InventoryRow(device, port, node_guid, port_guid, number))
    for number, message in bad:
        findings.append(
            _finding(
                Severity.ERROR,
                "inventory-guid",
                where,
                message,
                "write GUIDs as 0x followed by up to 16 hex digits (e.g. 0x946dae0300aa1b20)",
                display,
                number,
            )
        )
    duplicates = list(_duplicates(rows, display, where))
    findings.extend(f for f, _ in duplicates)
    dropped = {line for _, line in duplicates}
    return Inventory(display, tuple(r for r in rows if r.line not in dropped), tuple(findings))


def _duplicates(rows: Iterable[InventoryRow], display: str, where: str) -> Iterable[tuple[Finding, int]]:
    """The same device and port twice, or one GUID for two things (the later row is reported, and dropped)."""
    seen_keys: dict[tuple[str, str], InventoryRow] = {}
    seen_guids: dict[int, tuple[InventoryRow, str]] = {}
    for row in rows:
        first = seen_keys.setdefault((row.device, row.port), row)
        if first is not row:
            yield (
                _finding(
                    Severity.ERROR,
                    "duplicate-guid",
                    where,
                    f"{row.device} {row.port or '(switch)'} is listed again (first on line {first.line})",
                    "keep one row per switch and per HCA",
                    display,
                    row.line,
                ),
                row.line,
            )
            continue
        label = f"{row.device} {row.port}".strip()
        guids = {row.node_guid: "node GUID"}
        if row.port_guid is not None and row.port_guid != row.node_guid:
            guids[row.port_guid] = "port GUID"
        for guid, kind in guids.items():
            other = seen_guids.setdefault(guid, (row, kind))
            if other[0] is not row:
                yield (
                    _finding(
                        Severity.ERROR,
                        "duplicate-guid",
                        where,
                        f"{kind} {format_guid(guid)} of {label} is also the {other[1]} of "
                        f"{f'{other[0].device} {other[0].port}'.strip()} (line {other[0].line})",
                        "GUIDs are unique in a subnet; check the collected values",
                        display,
                        row.line,
                    ),
                    row.line,
                )
                break


@dataclass(frozen=True, slots=True)
class GuidNeed:
    """A node that needs a GUID: a switch (hca None) or one HCA of a server with its ports in order."""

    device: str
    hca: str | None
    ports: tuple[str, ...]  # cabling port names of a CA, port 1 first; () for a switch

    @property
    def key(self) -> str:
        return self.device if self.hca is None else f"{self.device} {self.hca}"


@dataclass(frozen=True, slots=True)
class Guids:
    node: int
    ports: tuple[int, ...]  # port GUIDs of a CA, port 1 first; () for a switch
    placeholder: bool
    source_line: int = 0  # inventory line, 0 for a placeholder


def assign_guids(needs: Iterable[GuidNeed], inventory: Inventory | None) -> tuple[dict[str, Guids], list[InventoryRow]]:
    """GUIDs for every node (by key); the inventory rows that matched nothing."""
    wanted = sorted(needs, key=lambda n: n.key)
    by_key = {n.key: n for n in wanted}
    by_port = {(n.device, p): n for n in wanted if n.hca is not None for p in n.ports}
    found: dict[str, list[InventoryRow]] = {}
    unused: list[InventoryRow] = []
    for row in inventory.rows if inventory else ():
        need = by_key.get(f"{row.device} {row.port}" if row.port else row.device) or by_port.get((row.device, row.port))
        if need is None or (need.hca is None) != (row.port == ""):
            unused.append(row)
        else:
            found.setdefault(need.key, []).append(row)
    out: dict[str, Guids] = {}
    taken: set[int] = set()
    for key, rows in found.items():
        need = by_key[key]
        node = rows[0].node_guid
        ports = [node + p for p in range(1, len(need.ports) + 1)]
        for row in rows:
            if row.port_guid is not None:
                number = need.ports.index(row.port) + 1 if row.port in need.ports else 1
                ports[number - 1] = row.port_guid
        out[key] = Guids(node, tuple(ports), False, rows[0].line)
        taken.update((node, *ports))
    for need in wanted:
        if need.key in out:
            continue
        attempt = 0
        while True:
            guid = placeholder_guid(need.key, attempt)
            span = {guid, *(guid + p for p in range(1, len(need.ports) + 1))}
            if not span & taken:
                break
            attempt += 1
        taken.update(span)
        out[need.key] = Guids(guid, tuple(guid + p for p in range(1, len(need.ports) + 1)), True)
    return out, unused
