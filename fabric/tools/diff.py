"""`fabric diff OLD NEW`: the floor's work order from one build to the next.

OLD and NEW are two output directories (read through the bounded reader), or two specs (built here; NEW with
OLD's assignments kept, as `fabric build --lock` would, and its moves allowed so that they are listed, not
refused). Compared are the outputs the floor works from — cabling.csv, inventory.csv, ip-plan.csv,
asn-plan.csv and configs/ — never the lock:

- cables by their two ends: to add; to move (a new cable that shares one end, device and port, with an old
  one that is gone: re-plug the other end); to remove; to relabel (same ends, another id);
- devices and racks to add and remove, devices that move (rack, U);
- addresses (by device, interface and family) and ASNs (by device) that change, are added or are removed;
- a unified diff per switch config that changes.

The floor's rows of it (cables and devices, by rack and U) are written as CSV and XLSX by fabric/tools/work_order.py.

Exit codes: 0 NEW only adds to OLD (or equals it); 1 NEW moves, removes or renumbers something of OLD;
2 OLD or NEW cannot be read or built.
"""

from __future__ import annotations

import csv
import difflib
import io
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fabric.model.findings import Finding, Severity
from fabric.model.text import first_refused, printable
from fabric.pipeline import Build
from fabric.render.engine.registry import file_bytes
from fabric.render.outputs import OUTPUTS
from fabric.render.outputs.lock import lock_data
from fabric.spec.loader import Design
from fabric.spec.lock import LockInput, validate_lock
from fabric.spec.reading import ReadError, read_text

TABLES = ("cabling.csv", "inventory.csv", "ip-plan.csv", "asn-plan.csv")
CONFIGS = "configs"
MAX_CONFIG_FILES = 100_000
CABLE_END = ("rack", "u", "device", "port")


# the columns the diff reads, per table (a file without one cannot be compared)
COLUMNS: dict[str, tuple[str, ...]] = {
    "cabling.csv": ("cable_id", "fabric", "a_rack", "a_device", "a_port", "b_rack", "b_device", "b_port"),
    "inventory.csv": ("device",),
    "ip-plan.csv": ("device", "interface", "address"),
    "asn-plan.csv": ("device", "asn"),
}
MAX_FIELD = 4096  # characters in one field: a name, a label, an address (the loader's longest text, MAX_TEXT)
HINT = "compare the directories `fabric build` wrote (unchanged), or the two specs"


class DiffError(Exception):
    """OLD or NEW cannot be read: `finding` (diff-input-invalid) names the file, the column or line and what is
    wrong, never the contents."""

    def __init__(self, file: str, message: str, where: str = "", line: int = 0) -> None:
        self.finding = Finding(Severity.ERROR, "diff-input-invalid", where, message, HINT, file, line)
        super().__init__(f"{file}: {message}")


@dataclass(frozen=True)
class Outputs:
    """The outputs of one build that a diff compares: relative path → text, and the tables parsed (checked)."""

    name: str
    files: Mapping[str, str]
    tables: Mapping[str, list[dict[str, str]]] = field(default_factory=dict)

    @classmethod
    def of(cls, name: str, files: Mapping[str, str], display: str = "") -> Outputs:
        """`files` with their tables parsed; DiffError for a table that is not fabric's (columns, fields)."""
        tables = {t: parse_table(files[t], f"{display}/{t}" if display else t, t) for t in TABLES if files.get(t)}
        return cls(name, files, tables)

    def rows(self, table: str) -> list[dict[str, str]]:
        if table in self.tables:
            return self.tables[table]
        text = self.files.get(table)
        return parse_table(text, table, table) if text else []

    def configs(self) -> dict[str, str]:
        return {p: t for p, t in self.files.items() if p.startswith(CONFIGS + "/")}


MAX_COLUMN_NAME = 64  # fabric's longest column name is under 30 characters


def parse_table(text: str, file: str, table: str) -> list[dict[str, str]]:
    """The rows of one of fabric's CSV tables; DiffError for a missing column, a row with more or fewer fields
    than the header, a field longer than MAX_FIELD or one that is not one line of printable text (NUL, …)."""
    lines = text.replace("\r\n", "\n").split("\n")
    # the common case checked at once: no quote (so no field spans lines), printable, no line over MAX_FIELD
    plain = '"' not in text and "".join(lines).isprintable() and max(map(len, lines), default=0) <= MAX_FIELD
    reader = csv.reader(io.StringIO(text))
    header: list[str] = []
    try:
        header = next(reader, [])
        missing = [c for c in COLUMNS[table] if c not in header]
        if missing:
            raise DiffError(file, f"has no column {', '.join(missing)} (the header is not fabric's)", missing[0], 1)
        for i, name in enumerate(header):  # a column name is shown as where a field is wrong: one short line
            if len(name) > MAX_COLUMN_NAME or not name.isprintable() or first_refused(name) is not None:
                raise DiffError(
                    file, "the header has a column name that is not one short line of text", f"column {i + 1}", 1
                )
        rows = []
        for row in reader:
            line = reader.line_num
            if len(row) != len(header):
                raise DiffError(file, f"a row has {len(row)} fields, the header {len(header)}", "", line)
            for column, value in () if plain else zip(header, row, strict=True):
                if len(value) > MAX_FIELD:
                    raise DiffError(file, f"a field is longer than {MAX_FIELD:,} characters", column, line)
                bad = first_refused(value)
                if bad is not None:
                    raise DiffError(
                        file, f"a field holds the character U+{ord(bad):04X}: not one line of text", column, line
                    )
            rows.append(dict(zip(header, row, strict=True)))
    except csv.Error as exc:  # a field over the csv module's limit (128 KiB), a broken quote
        line = reader.line_num
        fields = lines[line - 1].split(",") if 0 < line <= len(lines) else []
        long = next((i for i, f in enumerate(fields) if len(f) > MAX_FIELD), None)
        if long is not None:
            where = header[long] if long < len(header) else f"field {long + 1}"
            raise DiffError(file, f"a field is longer than {MAX_FIELD:,} characters", where, line) from None
        raise DiffError(file, f"is not a CSV table ({exc})", "", line) from None
    return rows


def _no_link(path: Path, display: str) -> None:
    if path.is_symlink():
        raise DiffError(display, "is a symbolic link: `fabric diff` follows none (as `fabric build` writes none)")


def read_output_dir(path: Path) -> Outputs:
    """The tables and configs of an output directory; DiffError when it is not one. A symbolic link inside it is
    refused, never followed (`fabric build` writes none): the diff shows only files of the directory."""
    if not path.is_dir():
        raise DiffError(str(path), "not a directory")
    files: dict[str, str] = {}
    try:
        for table in TABLES:
            _no_link(path / table, str(path / table))
            if (path / table).exists():
                files[table] = read_text(path / table, "csv", follow=False)
        if "cabling.csv" not in files:
            raise DiffError(str(path), "no cabling.csv (not an output directory of `fabric build`)")
        configs = path / CONFIGS
        _no_link(configs, str(configs))
        found: list[Path] = []
        if configs.is_dir():
            for root, dirs, names in os.walk(configs, onerror=_raise):  # (os.walk follows no link to a directory)
                for entry in sorted(dirs + names):
                    _no_link(Path(root) / entry, str(Path(root) / entry))
                found.extend(Path(root) / n for n in names)
                if len(found) > MAX_CONFIG_FILES:
                    raise DiffError(str(configs), f"more than {MAX_CONFIG_FILES:,} files")
        for file in sorted(found):
            text = read_text(file, "output", follow=False)
            if "\0" in text:
                raise DiffError(str(file), "holds a NUL byte: not a config fabric wrote")
            files[file.relative_to(path).as_posix()] = text
    except ReadError as exc:
        raise DiffError(exc.file, exc.message) from None
    except OSError as exc:
        raise DiffError(str(path), f"cannot be read ({exc.strerror or 'error'})") from None
    return Outputs.of(str(path), files, str(path))


def _raise(exc: OSError) -> None:
    raise exc


RENDERED = ("cabling", "inventory", "ip-plan", "asn-plan", "configs")  # the outputs that write TABLES and CONFIGS


def outputs_of(build: Build, name: str) -> Outputs:
    """The compared files of a build, rendered in memory (the other outputs are not rendered)."""
    files: dict[str, str] = {}
    for output in OUTPUTS:
        if output.name in RENDERED:
            for path, value in output.render(build).items():
                files[path] = file_bytes(value).decode()
    return Outputs.of(name, files)


def grown(old: Build, new: Design) -> Design:
    """NEW with OLD's assignments kept, as `fabric build --lock` keeps them, its moves allowed (to be listed)."""
    lock = validate_lock(lock_data(old), old.name)
    return replace(new, lock=LockInput(lock, old.name, allow_moves=True))


# --------------------------------------------------------------------------------------------- the diff


def _ends(row: Mapping[str, str]) -> tuple[str, str, str, str]:
    return (row["a_device"], row["a_port"], row["b_device"], row["b_port"])


def _cable(row: Mapping[str, str]) -> dict[str, str]:
    """A cable as the work order shows it: id, both ends as rack, U, device, port, and its labels."""
    out = {"cable_id": row["cable_id"], "fabric": row["fabric"]}
    for side in ("a", "b"):
        for key in CABLE_END:
            out[f"{side}_{key}"] = row.get(f"{side}_{key}", "")
        out[f"{side}_label"] = row.get(f"{side}_label", "")
    out["media"], out["part"], out["length_m"] = row.get("media", ""), row.get("part", ""), row.get("length_m", "")
    return out


def _position(cable: Mapping[str, str]) -> tuple[str, int, str, str]:
    u = cable.get("a_u", "")
    return (cable["a_rack"], int(u) if u.isdigit() else 0, cable["a_device"], cable["a_port"])


@dataclass(frozen=True)
class Diff:
    old: str
    new: str
    cables_add: list[dict[str, str]] = field(default_factory=list)
    cables_move: list[dict[str, Any]] = field(default_factory=list)  # {"cable_id", "from": cable, "to": cable}
    cables_remove: list[dict[str, str]] = field(default_factory=list)
    cables_relabel: list[dict[str, Any]] = field(default_factory=list)  # {"from", "to", "ends", "cable": new cable}
    devices_add: list[dict[str, str]] = field(default_factory=list)
    devices_remove: list[dict[str, str]] = field(default_factory=list)
    devices_move: list[dict[str, str]] = field(default_factory=list)
    racks_add: list[str] = field(default_factory=list)
    racks_remove: list[str] = field(default_factory=list)
    addresses_change: list[dict[str, str]] = field(default_factory=list)
    addresses_add: list[dict[str, str]] = field(default_factory=list)
    addresses_remove: list[dict[str, str]] = field(default_factory=list)
    asns_change: list[dict[str, str]] = field(default_factory=list)
    asns_add: list[dict[str, str]] = field(default_factory=list)
    asns_remove: list[dict[str, str]] = field(default_factory=list)
    configs: dict[str, str] = field(default_factory=dict)  # path → unified diff

    @property
    def disruptive(self) -> bool:
        """Does NEW change anything of OLD (rather than only add)?"""
        return any(
            (
                self.cables_move,
                self.cables_remove,
                self.cables_relabel,
                self.devices_remove,
                self.devices_move,
                self.racks_remove,
                self.addresses_change,
                self.addresses_remove,
                self.asns_change,
                self.asns_remove,
            )
        )

    @property
    def exit_code(self) -> int:
        return 1 if self.disruptive else 0

    def counts(self) -> dict[str, int]:
        return {
            name: len(getattr(self, name))
            for name in (
                "cables_add",
                "cables_move",
                "cables_remove",
                "cables_relabel",
                "devices_add",
                "devices_remove",
                "devices_move",
                "racks_add",
                "racks_remove",
                "addresses_change",
                "addresses_add",
                "addresses_remove",
                "asns_change",
                "asns_add",
                "asns_remove",
                "configs",
            )
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "only_adds": not self.disruptive,
            "counts": self.counts(),
            **{name: getattr(self, name) for name in self.counts()},
        }

    def text(self) -> str:
        c = self.counts()
        switches = sum(1 for d in self.devices_add if d["layer"] != "node")
        lines = [
            f"{printable(self.old)} → {printable(self.new)}: "
            + ("only adds" if not self.disruptive else "CHANGES WHAT EXISTS")
            + f"; cables: {c['cables_add']} to add, {c['cables_move']} to move, {c['cables_remove']} to remove"
            + (f", {c['cables_relabel']} to relabel" if c["cables_relabel"] else "")
            + f"; {switches} switch(es), {c['devices_add'] - switches} node(s) and {c['racks_add']} rack(s) to add"
            + f"; {c['addresses_change']} address(es) and {c['asns_change']} ASN(s) change"
            + f"; {c['configs']} switch config(s) change"
        ]

        def section(title: str, items: Iterable[str]) -> None:
            body = [printable(i) for i in items]
            if body:
                lines.append(f"\n{title} ({len(body)}):")
                lines.extend("  " + line for line in body)

        section("Racks to add", self.racks_add)
        section("Racks to remove", self.racks_remove)
        section("Devices to add", (f"{d['device']} ({d['layer']}, {d['model']}) in {_at(d)}" for d in self.devices_add))
        section(
            "Devices to remove",
            (f"{d['device']} ({d['layer']}, {d['model']}) from {_at(d)}" for d in self.devices_remove),
        )
        section("Devices to move", (f"{d['device']}: {d['from']} → {d['to']}" for d in self.devices_move))
        section("Cables to add (a end first: rack, U, device, port)", (_line(x) for x in self.cables_add))
        section(
            "Cables to move (re-plug the end that changes)",
            (f"{_line(m['from'])}  ⇒  {_line(m['to'])}" for m in self.cables_move),
        )
        section("Cables to remove", (_line(x) for x in self.cables_remove))
        section("Cables to relabel", (f"{r['from']} → {r['to']}: {r['ends']}" for r in self.cables_relabel))
        section(
            "Addresses that change",
            (f"{a['device']} {a['interface']}: {a['from']} → {a['to']}" for a in self.addresses_change),
        )
        section("Addresses removed", (f"{a['device']} {a['interface']}: {a['address']}" for a in self.addresses_remove))
        section("ASNs that change", (f"{a['device']}: {a['from']} → {a['to']}" for a in self.asns_change))
        section("ASNs removed", (f"{a['device']}: {a['asn']}" for a in self.asns_remove))
        out = "\n".join(lines) + "\n"
        for text in self.configs.values():
            out += "\n" + "".join(printable(line) + "\n" for line in text.splitlines())
        return out


def _at(d: Mapping[str, str]) -> str:
    return f"{d.get('rack') or '?'} U{d.get('u') or '?'}"


def _end(cable: Mapping[str, str], side: str) -> str:
    u = cable.get(f"{side}_u", "")
    where = f"{cable.get(f'{side}_rack') or '?'}-U{int(u):02d}" if u.isdigit() else cable.get(f"{side}_rack") or "?"
    return f"{where} {cable[f'{side}_device']} {cable[f'{side}_port']}"


def _line(cable: Mapping[str, str]) -> str:
    return f"{cable['cable_id']} {_end(cable, 'a')} > {_end(cable, 'b')}" + (
        f" [{cable['media']} {cable['part']} {cable['length_m']} m]" if cable.get("part") else ""
    )


def _cables(old: Outputs, new: Outputs, diff: Diff) -> None:
    before = {_ends(r): r for r in old.rows("cabling.csv")}
    after = {_ends(r): r for r in new.rows("cabling.csv")}
    gone = [before[k] for k in before if k not in after]
    added = [after[k] for k in after if k not in before]
    for k in before.keys() & after.keys():
        if before[k]["cable_id"] != after[k]["cable_id"]:
            diff.cables_relabel.append(
                {
                    "from": before[k]["cable_id"],
                    "to": after[k]["cable_id"],
                    "ends": f"{k[0]}:{k[1]} — {k[2]}:{k[3]}",
                    "cable": _cable(after[k]),
                }
            )
    by_end: dict[tuple[str, str], dict[str, str]] = {}
    for row in added:
        by_end.setdefault((row["a_device"], row["a_port"]), row)
        by_end.setdefault((row["b_device"], row["b_port"]), row)
    used: set[int] = set()
    for row in gone:
        to = by_end.get((row["a_device"], row["a_port"])) or by_end.get((row["b_device"], row["b_port"]))
        if to is not None and id(to) not in used:
            used.add(id(to))
            diff.cables_move.append({"cable_id": row["cable_id"], "from": _cable(row), "to": _cable(to)})
        else:
            diff.cables_remove.append(_cable(row))
    diff.cables_add.extend(_cable(r) for r in added if id(r) not in used)
    diff.cables_add.sort(key=_position)
    diff.cables_remove.sort(key=_position)
    diff.cables_move.sort(key=lambda m: _position(m["from"]))
    diff.cables_relabel.sort(key=lambda r: r["from"])


def _devices(old: Outputs, new: Outputs, diff: Diff) -> None:
    before = {r["device"]: r for r in old.rows("inventory.csv")}
    after = {r["device"]: r for r in new.rows("inventory.csv")}
    keep = ("device", "layer", "model", "fabric", "rack", "u")
    diff.devices_add.extend({k: r.get(k, "") for k in keep} for name, r in after.items() if name not in before)
    diff.devices_remove.extend({k: r.get(k, "") for k in keep} for name, r in before.items() if name not in after)
    for name, r in before.items():
        if name in after and (r.get("rack"), r.get("u")) != (after[name].get("rack"), after[name].get("u")):
            a = after[name]
            diff.devices_move.append(
                {
                    "device": name,
                    "from": _at(r),
                    "to": _at(a),
                    **{k: r.get(k, "") for k in ("layer", "model", "fabric")},
                    **{f"from_{k}": r.get(k, "") for k in ("rack", "u")},
                    **{f"to_{k}": a.get(k, "") for k in ("rack", "u")},
                }
            )
    racks_before = {r.get("rack") for r in before.values()} - {"", None}
    racks_after = {r.get("rack") for r in after.values()} - {"", None}
    diff.racks_add.extend(sorted(str(r) for r in racks_after - racks_before))
    diff.racks_remove.extend(sorted(str(r) for r in racks_before - racks_after))


def _family(address: str) -> str:
    return "ipv6" if ":" in address else "ipv4"


def _addresses(old: Outputs, new: Outputs, diff: Diff) -> None:
    def table(out: Outputs) -> dict[tuple[str, str, str], str]:
        return {(r["device"], r["interface"], _family(r["address"])): r["address"] for r in out.rows("ip-plan.csv")}

    before, after = table(old), table(new)
    for key, address in before.items():
        row = {"device": key[0], "interface": key[1], "family": key[2]}
        if key not in after:
            diff.addresses_remove.append({**row, "address": address})
        elif after[key] != address:
            diff.addresses_change.append({**row, "from": address, "to": after[key]})
    diff.addresses_add.extend(
        {"device": k[0], "interface": k[1], "family": k[2], "address": a} for k, a in after.items() if k not in before
    )


def _asns(old: Outputs, new: Outputs, diff: Diff) -> None:
    before = {r["device"]: r["asn"] for r in old.rows("asn-plan.csv")}
    after = {r["device"]: r["asn"] for r in new.rows("asn-plan.csv")}
    for device, asn in before.items():
        if device not in after:
            diff.asns_remove.append({"device": device, "asn": asn})
        elif after[device] != asn:
            diff.asns_change.append({"device": device, "from": asn, "to": after[device]})
    diff.asns_add.extend({"device": d, "asn": a} for d, a in after.items() if d not in before)


def _configs(old: Outputs, new: Outputs, diff: Diff) -> None:
    before, after = old.configs(), new.configs()
    for path in sorted(before.keys() | after.keys()):
        a, b = before.get(path, ""), after.get(path, "")
        if a != b:
            lines = difflib.unified_diff(
                a.splitlines(keepends=True), b.splitlines(keepends=True), f"old/{path}", f"new/{path}"
            )
            diff.configs[path] = "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def diff_outputs(old: Outputs, new: Outputs) -> Diff:
    diff = Diff(old.name, new.name)
    _cables(old, new, diff)
    _devices(old, new, diff)
    _addresses(old, new, diff)
    _asns(old, new, diff)
    _configs(old, new, diff)
    return diff
