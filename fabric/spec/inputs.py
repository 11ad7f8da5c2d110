"""The files and variables a spec names (cabling CSV, GUID inventory, secrets), read while loading.

Later stages are pure functions of the Design: they take these frozen values and never open a file.
What cannot be read is kept as the finding the stage that uses it reports (with the same code, message
and line as before), so an unreadable inventory is still a design error of the InfiniBand stage.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from fabric.model.findings import Finding, error
from fabric.spec.reading import ReadError, read_text
from fabric.spec.schema import PORT_RE, CsvTopology, SecretRef, Spec, is_name
from fabric.spec.text import text_problem

if TYPE_CHECKING:  # inventory.py loads where a spec names an inventory (or a cabling CSV is read)
    from fabric.spec.inventory import Inventory

CSV_NAMES = ("a_device", "b_device", "a_rack", "b_rack")
CSV_PORTS = ("a_port", "b_port")


@dataclass(frozen=True)
class CsvRow:
    """One row of a cabling CSV by column, with its line."""

    line: int
    cells: Mapping[str, str]


@dataclass(frozen=True)
class CsvInput:
    """A cabling CSV: its rows (with their lines), or why it could not be read."""

    file: str  # as findings show it
    rows: tuple[CsvRow, ...] = ()
    columns: tuple[str, ...] = ()
    problem: str = ""  # the csv-unreadable message, "" when read
    findings: tuple[Finding, ...] = ()  # rows refused at the boundary (path `fabrics.<f>.topology.file:<line>`)


@dataclass(frozen=True)
class Secret:
    """A secret the spec refers to: its value, or the finding about why it could not be read."""

    value: str | None
    problem: Finding | None = None


@dataclass(frozen=True)
class Inputs:
    """The files the spec names, read once by the loader: cabling CSVs, inventories and secrets."""

    csv: Mapping[str, CsvInput] = field(default_factory=dict)  # by fabric key
    inventories: Mapping[str, Inventory] = field(default_factory=dict)  # by fabric key; one file read once
    secrets: Mapping[str, Secret] = field(default_factory=dict)  # by the spec path of the reference


def read_inputs(spec: Spec, base_dir: Path) -> Inputs:
    csvs: dict[str, CsvInput] = {}
    inventories: dict[str, Inventory] = {}
    by_file: dict[str, Inventory] = {}
    secrets: dict[str, Secret] = {}
    for key, fabric in spec.fabrics.items():
        if isinstance(fabric.topology, CsvTopology):
            csvs[key] = read_csv(base_dir / fabric.topology.file, fabric.topology.file, f"fabrics.{key}.topology.file")
        ib = fabric.infiniband
        if fabric.technology == "infiniband" and ib is not None and ib.inventory is not None:
            path = base_dir / ib.inventory
            real = os.path.realpath(path)  # never raises, not even for a symlink loop
            if real not in by_file:
                from fabric.spec.inventory import read_inventory

                by_file[real] = read_inventory(path, str(path), f"fabrics.{key}.infiniband.inventory")
                inventories[key] = by_file[real]
        if fabric.routing is not None and fabric.routing.bgp_password is not None:
            where = f"fabrics.{key}.routing.bgp_password"
            secrets[where] = resolve_secret(fabric.routing.bgp_password, base_dir, where)
        if fabric.technology == "infiniband" and ib is not None:
            for name, ref in (("m_key", ib.sm.m_key), ("sm_key", ib.sm.sm_key)):
                if ref is not None:
                    where = f"fabrics.{key}.infiniband.sm.{name}"
                    secrets[where] = resolve_secret(ref, base_dir, where)
    if spec.management.snmp_community is not None:
        where = "management.snmp_community"
        secrets[where] = resolve_secret(spec.management.snmp_community, base_dir, where)
    return Inputs(MappingProxyType(csvs), MappingProxyType(inventories), MappingProxyType(secrets))


def read_csv(path: Path, name: str, where: str) -> CsvInput:
    display = str(path)
    try:
        text = read_text(path, "csv", display)
        reader = csv.DictReader(io.StringIO(text, newline=""))
        records = [(line, dict(row)) for line, row in _dict_rows(reader)]
        columns = tuple(reader.fieldnames or ())
    except ReadError as exc:
        return CsvInput(display, problem=f"cannot read {name}: {exc.message}")
    except csv.Error as exc:
        line = int(getattr(exc, "fabric_line", 0))
        reason = "a field is longer than the CSV field limit" if "field limit" in str(exc) else "malformed CSV"
        return CsvInput(display, problem=f"cannot read {name}: line {line}: {reason}")
    rows: list[CsvRow] = []
    refused: list[Finding] = []
    for line, row in records:
        problem = _row_problem(row)
        if problem:
            refused.append(error("csv-invalid", f"{where}:{line}", problem))
        else:
            rows.append(CsvRow(line, MappingProxyType({str(k): v for k, v in row.items() if isinstance(v, str)})))
    return CsvInput(display, tuple(rows), columns, "", tuple(refused))


def _dict_rows(reader: csv.DictReader[str]) -> list[tuple[int, dict[str, str]]]:
    from fabric.spec.inventory import numbered

    out = []
    for number, row in numbered(reader):  # type: ignore[arg-type]
        out.append((number, row))
    return out  # type: ignore[return-value]


def _row_problem(row: Mapping[Any, object]) -> str:
    if None in row:
        return "the row has more cells than the header has columns"
    for column, value in row.items():
        if not isinstance(value, str):
            continue
        if text_problem(value, 256):
            return f"column `{column}` is not one line of printable text (at most 256 characters)"
    for column in CSV_NAMES:
        value = row.get(column)
        if isinstance(value, str) and value and not is_name(value):
            return f"{column} is not a valid name (letters, digits, '.', '_', '-'; no '..')"
    for column in CSV_PORTS:
        value = row.get(column)
        if isinstance(value, str) and value and (not PORT_RE.match(value) or ".." in value):
            return f"{column} is not a valid port name"
    return ""


def resolve_secret(ref: SecretRef, base_dir: Path, path: str) -> Secret:
    """A secret's value from its environment variable or file: one line of printable text, never echoed."""
    if ref.env is not None:
        value = os.environ.get(ref.env)
        if not value:
            return Secret(
                None,
                error(
                    "secret-missing",
                    f"{path}.env",
                    f"environment variable `{ref.env}` is not set",
                    f"export {ref.env}=… before running fabric, or point `file:` at a file with the secret",
                ),
            )
        return _one_line(value, f"{path}.env", f"environment variable `{ref.env}`")
    assert ref.file is not None
    file = base_dir / ref.file
    try:
        value = read_text(file, "secret").strip()
    except ReadError as exc:
        reason = "No such file or directory" if exc.message == "no such file" else exc.message
        return Secret(
            None,
            error(
                "secret-missing",
                f"{path}.file",
                f"cannot read secret file {file}: {reason}",
                "paths are relative to the spec file",
            ),
        )
    if not value:
        return Secret(None, error("secret-missing", f"{path}.file", f"secret file {file} is empty"))
    return _one_line(value, f"{path}.file", f"secret file {file}")


def _one_line(value: str, path: str, source: str) -> Secret:
    """A secret goes into one word of a config line on every platform: printable, no spaces, one line, at
    most 1,024 characters. The finding names the offending character, never the secret."""
    bad = next((c for c in value if not c.isprintable() or c.isspace()), None)
    if bad is None and not text_problem(value, 1024):
        return Secret(value)
    what = (
        "more than 1,024 characters"
        if bad is None
        else {"\n": "a line break", "\r": "a carriage return", "\t": "a tab", " ": "a space"}.get(
            bad, f"U+{ord(bad):04X}"
        )
    )
    return Secret(
        None,
        error(
            "secret-invalid",
            path,
            f"the secret in {source} holds {what}: a secret must be one word of printable text",
            "secrets go into one word of a config line on every platform; store it without spaces or line breaks",
        ),
    )


__all__ = ["CsvInput", "CsvRow", "Inputs", "Secret", "is_name", "read_inputs", "resolve_secret"]
