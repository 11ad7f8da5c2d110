"""The GUID inventory: a CSV of `device,port,node_guid[,port_guid]` rows, parsed at load time.

device,port,node_guid,port_guid
    su1-rail0-leaf,,0xb83fd2030042a1c0,
    dgx001,mlx5_0,0x946dae0300aa1b20,0x946dae0300aa1b21

`port` is empty for a switch; for a server it names the HCA (`mlx5_0`) or one of its cabled ports
(`OSFP4P2`). GUIDs are written `0x` + up to 16 hex digits, 16 bare hex digits, or as `ibv_devinfo`
prints them (`946d:ae03:00aa:1b20`).

Problems are findings at the file's lines; they describe values, never quote the file.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from fabric.model.findings import Finding, Severity
from fabric.spec.reading import ReadError, read_text
from fabric.spec.schema import PORT_RE, is_name
from fabric.spec.text import text_problem

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


@dataclass(frozen=True, slots=True)
class InventoryRow:
    """One inventory line: a device (and a server's HCA or port) with its node and port GUIDs."""

    device: str
    port: str  # "" for a switch; an HCA or port name for a server
    node_guid: int
    port_guid: int | None
    line: int


@dataclass(frozen=True)
class Inventory:
    """An inventory CSV's rows, with the findings about the file."""

    file: str  # as shown in findings
    rows: tuple[InventoryRow, ...]
    findings: tuple[Finding, ...]


def _finding(severity: Severity, code: str, where: str, message: str, hint: str, file: str, line: int) -> Finding:
    return Finding(severity, code, where, message, hint, file, line)


def read_inventory(path: Path, display: str, where: str) -> Inventory:
    """Read (bounded, a regular file) and check an inventory; problems are findings at its lines."""
    try:
        text = read_text(path, "inventory", display)
    except ReadError as exc:
        if exc.message == "no such file":
            return Inventory(display, (), (_no_file(where, f"inventory {display}: no such file"),))
        return Inventory(display, (), (_no_file(where, f"inventory {display} {exc.message}"),))
    return parse_inventory(text, display, where)


def shown(value: str) -> str:
    """A value from the file, quoted when it is short and plain, else described (never echo arbitrary bytes)."""
    return repr(value) if _PLAIN.fullmatch(value) else "a value"


_PLAIN = re.compile(r"[A-Za-z0-9_.:/-]{1,40}")


def _no_file(where: str, message: str) -> Finding:
    return Finding(
        Severity.ERROR,
        "inventory-unreadable",
        where,
        message,
        "the path is relative to the spec file; leave `inventory` out to use placeholder GUIDs",
    )


def describe_header(header: list[str], expected: tuple[str, ...] = INVENTORY_COLUMNS) -> str:
    """A CSV header by its column count and the first column that is not expected, if that looks like a name."""
    unknown = next((h.strip() for h in header if h.strip().lower() not in expected), None)
    text = f"the header has {len(header)} column{'s' if len(header) != 1 else ''}"
    if unknown and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_ -]{0,31}", unknown):
        text += f", the first unexpected one `{unknown}`"
    return text


def parse_inventory(text: str, display: str, where: str) -> Inventory:
    try:
        return _parse_inventory(text, display, where)
    except csv.Error as exc:
        line = _csv_line(exc)
        finding = _finding(
            Severity.ERROR,
            "inventory-format",
            where,
            f"{display} is not valid CSV (line {line}: {_csv_reason(exc)})" if line else f"{display} is not valid CSV",
            "the first line is the header `device,port,node_guid,port_guid` (port_guid may be left out)",
            display,
            line,
        )
        return Inventory(display, (), (finding,))


def numbered(reader: Iterator[list[str]]) -> Iterator[tuple[int, list[str]]]:
    """Records numbered from line 2 (as one line each); a csv.Error carries the reader's line."""
    number = 1
    while True:
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            exc.fabric_line = number + 1  # type: ignore[attr-defined]
            raise
        number += 1
        yield number, record


def _csv_line(exc: csv.Error) -> int:
    return int(getattr(exc, "fabric_line", 0))


def _csv_reason(exc: csv.Error) -> str:
    return "a field is longer than the CSV field limit" if "field limit" in str(exc) else "malformed"


def _parse_inventory(text: str, display: str, where: str) -> Inventory:
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        exc.fabric_line = reader.line_num  # type: ignore[attr-defined]
        raise
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
                f"{display} has no column {', '.join(f'`{m}`' for m in missing)} ({describe_header(header)})",
                hint_format,
                display,
                1,
            )
        )
        return Inventory(display, (), tuple(findings))
    index = {name: columns.index(name) for name in INVENTORY_COLUMNS if name in columns}
    rows: list[InventoryRow] = []
    bad: list[tuple[int, str]] = []
    for number, record in numbered(reader):
        if not record or all(not cell.strip() for cell in record) or record[0].lstrip().startswith("#"):
            continue

        def cell(name: str, record: list[str] = record) -> str:
            i = index.get(name)
            return record[i].strip() if i is not None and i < len(record) else ""

        device, port, node_text, port_text = cell("device"), cell("port"), cell("node_guid"), cell("port_guid")
        if not device:
            bad.append((number, "no device"))
            continue
        if not is_name(device) or text_problem(device, 64):
            bad.append((number, "the device is not a valid name"))
            continue
        if port and (not PORT_RE.match(port) or ".." in port):
            bad.append((number, f"the port of {device} is not a valid port name"))
            continue
        node_guid = parse_guid(node_text)
        if node_guid is None:
            bad.append((number, f"node_guid {shown(node_text)} of {device} is not a GUID"))
            continue
        port_guid = None
        if port_text:
            port_guid = parse_guid(port_text)
            if port_guid is None:
                bad.append((number, f"port_guid {shown(port_text)} of {device} {port} is not a GUID"))
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
