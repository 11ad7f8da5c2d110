"""LLDP neighbour data for `fabric verify --lldp`, in the formats people collect it in.

Accepted (one or more files, or directories of them):

- `lldpctl -f json` (lldpd) of one device per file, the device named by the file (`leaf01.json`);
  `-f json0` likewise. A neighbour's port is its port id when that is an interface name (Cumulus, SONiC,
  lldpd with `portidsubtype ifname`), else its port description (lldpd's default on Linux hosts).
- one JSON object of such outputs by device name: `{"leaf01": <lldpctl -f json>, ...}`.
- CSV with the header `local_device,local_port,remote_device,remote_port` (other collectors, e.g. from
  NetBox or Ansible facts).

Problems are findings with the file (and the CSV line), never exceptions.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabric.model.findings import Finding, Severity
from fabric.spec.inventory import describe_header, numbered
from fabric.spec.jsonio import JsonLimitError, load_json
from fabric.spec.reading import read_tree
from fabric.spec.schema import PORT_RE
from fabric.spec.text import text_problem

CSV_COLUMNS = ("local_device", "local_port", "remote_device", "remote_port")
WHERE = "--lldp"


@dataclass(frozen=True, slots=True)
class Neighbour:
    local_device: str
    local_port: str
    remote_device: str
    remote_port: str
    source: str
    line: int = 0


@dataclass(frozen=True)
class LldpData:
    neighbours: tuple[Neighbour, ...]
    devices: tuple[str, ...]  # devices whose neighbour tables were given
    sources: tuple[str, ...]
    findings: tuple[Finding, ...]


def _bad(source: str, message: str, line: int = 0) -> Finding:
    return Finding(
        Severity.ERROR,
        "discovered-format",
        WHERE,
        message,
        "give `lldpctl -f json` (or json0) output, one file per device named after it, a JSON object of them by "
        "device, or a CSV with local_device,local_port,remote_device,remote_port",
        source,
        line,
    )


def read_lldp(paths: list[Path]) -> LldpData:
    """Files and directories of LLDP data, read by the bounded reader (regular files, at most 16 MiB each)."""
    files: list[Path] = []
    findings: list[Finding] = []
    neighbours: list[Neighbour] = []
    devices: list[str] = []
    for path, text, problem in read_tree(paths, "lldp", (".json", ".csv")):
        if text is None:
            findings.append(_bad(str(path), problem))
            continue
        files.append(path)
        got, devs, problems = parse_lldp_text(text, str(path), path.stem)
        neighbours.extend(got)
        devices.extend(devs)
        findings.extend(problems)
    return LldpData(tuple(neighbours), tuple(dict.fromkeys(devices)), tuple(str(f) for f in files), tuple(findings))


def parse_lldp_text(text: str, source: str, device: str) -> tuple[list[Neighbour], list[str], list[Finding]]:
    stripped = text.lstrip()
    if not stripped:
        return [], [], [_bad(source, "the file is empty")]
    if stripped[0] in "{[":
        try:
            data = load_json(text)
        except json.JSONDecodeError as exc:
            return [], [], [_bad(source, f"not valid JSON ({exc.msg} at line {exc.lineno})", exc.lineno)]
        except JsonLimitError as exc:
            return [], [], [_bad(source, f"not accepted as JSON ({exc})")]
        if isinstance(data, dict) and "lldp" in data:
            return _lldpctl(data["lldp"], source, device)
        if isinstance(data, dict) and data and all(isinstance(v, dict) and "lldp" in v for v in data.values()):
            out: list[Neighbour] = []
            devices: list[str] = []
            findings: list[Finding] = []
            for name, value in data.items():
                got, devs, problems = _lldpctl(value["lldp"], source, str(name))
                out.extend(got)
                devices.extend(devs)
                findings.extend(problems)
            return out, devices, findings
        return [], [], [_bad(source, "JSON without an `lldp` key (not lldpctl -f json output)")]
    return _csv(text, source)


def _lldpctl(lldp: Any, source: str, device: str) -> tuple[list[Neighbour], list[str], list[Finding]]:
    """lldpctl -f json: {"interface": {name: {...}} or [{name: {...}}, ...]}; -f json0: [{"interface": [...]}]."""
    if isinstance(lldp, list):  # json0
        interfaces: list[tuple[str, Any]] = []
        for block in lldp:
            for item in block.get("interface", []) if isinstance(block, dict) else []:
                if isinstance(item, dict):
                    interfaces.append((str(item.get("name", "")), item))
    elif isinstance(lldp, dict):
        raw = lldp.get("interface", {})
        items = raw if isinstance(raw, list) else [raw]
        interfaces = [(str(k), v) for item in items if isinstance(item, dict) for k, v in item.items()]
    else:
        return [], [], [_bad(source, "`lldp` is neither an object nor a list")]
    out: list[Neighbour] = []
    findings: list[Finding] = []
    for local_port, body in interfaces:
        remote, port = _neighbour(body)
        if not local_port or remote is None or port is None:
            findings.append(_bad(source, f"interface {_shown(local_port)}: no neighbour chassis name or port"))
            continue
        out.append(Neighbour(device, local_port, remote, port, source))
    return out, [device], findings


def _shown(name: str) -> str:
    """An interface name from the file, when it is a plain one; findings never echo arbitrary bytes."""
    return name if PORT_RE.match(name) else "(unnamed or unusual name)"


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else value


def _neighbour(body: Any) -> tuple[str | None, str | None]:
    if not isinstance(body, dict):
        return None, None
    chassis, port = _first(body.get("chassis")), _first(body.get("port"))
    name: str | None = None
    if isinstance(chassis, dict):
        if "name" in chassis:  # json0
            name = _value(chassis["name"])
        elif len(chassis) == 1:  # json: {"<name>": {...}}
            name = next(iter(chassis))
    port_name: str | None = None
    if isinstance(port, dict):
        pid = _first(port.get("id"))
        descr = _value(port.get("descr"))
        if isinstance(pid, dict) and pid.get("type") == "ifname" and pid.get("value"):
            port_name = str(pid["value"])
        elif descr:
            port_name = descr
        elif isinstance(pid, dict) and pid.get("value"):
            port_name = str(pid["value"])
    return name, port_name


def _value(value: Any) -> str | None:
    value = _first(value)
    if isinstance(value, dict):
        value = value.get("value")
    return str(value) if value not in (None, "") else None


def _csv(text: str, source: str) -> tuple[list[Neighbour], list[str], list[Finding]]:
    try:
        return _csv_rows(text, source)
    except csv.Error as exc:
        line = int(getattr(exc, "fabric_line", 0))
        return [], [], [_bad(source, "not valid CSV (a field longer than the CSV field limit, or malformed)", line)]


def _csv_rows(text: str, source: str) -> tuple[list[Neighbour], list[str], list[Finding]]:
    reader = csv.reader(io.StringIO(text))
    rows = numbered(reader)
    try:
        header = [h.strip().lower() for h in next(reader, [])]
    except csv.Error as exc:
        exc.fabric_line = 1  # type: ignore[attr-defined]
        raise
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        return [], [], [_bad(source, f"no column {', '.join(missing)} ({describe_header(header, CSV_COLUMNS)})", 1)]
    index = {c: header.index(c) for c in CSV_COLUMNS}
    out: list[Neighbour] = []
    devices: list[str] = []
    findings: list[Finding] = []
    for number, row in rows:
        if not row or all(not c.strip() for c in row):
            continue
        cells = [row[index[c]].strip() if index[c] < len(row) else "" for c in CSV_COLUMNS]
        if not all(cells):
            findings.append(_bad(source, f"line {number} leaves a column empty", number))
            continue
        if any(text_problem(c, 256) for c in cells):
            findings.append(_bad(source, f"line {number} holds a control character or an overlong cell", number))
            continue
        out.append(Neighbour(cells[0], cells[1], cells[2], cells[3], source, number))
        devices.append(cells[0])
    return out, devices, findings
