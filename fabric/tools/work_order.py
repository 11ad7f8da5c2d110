"""The floor's work order of a diff (`fabric diff OLD NEW --work-order DIR`): work-order.csv and work-order.xlsx.

One row per action a floor team takes, sorted by rack and U so that the team can split it by rack (or by shift:
filter the rows of the racks it works). The actions:

- `add-cable`, `remove-cable`: both ends (rack, U, device, port, label), the cable's id, medium, part and length;
- `move-cable`: the end that stays (rack, U, device, port), the new other end (peer_*) and the one it leaves
  (was_peer_*): re-plug that end; the new cable id and labels, the old id in was_cable_id;
- `relabel-cable`: the same ends, a new id (was_cable_id the old one) and labels;
- `rack-device`, `unrack-device`, `move-device`: a device (its model in `part`) at its rack and U; a move's
  old place in was_peer_rack and was_peer_u.

Addresses, ASNs and configs are not floor work; they stay in the diff's text and JSON. Both files are rendered
here in memory (bytes); writing them is the writer's (fabric/write). CSV cells are formula-safe (the tables'
guard); the workbook writes every text cell as a string, never a formula, with its dates fixed: the same
diff gives the same bytes.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import xlsxwriter

from fabric.model.rendered import Rendered
from fabric.render.outputs.tables import csv_text
from fabric.render.outputs.workbook import FIXED_DATE
from fabric.tools.diff import Diff

# The columns, declared once: (name, width in the workbook).
COLUMNS: tuple[tuple[str, int], ...] = (
    ("action", 14),
    ("rack", 7),
    ("u", 5),
    ("device", 18),
    ("port", 10),
    ("peer_rack", 9),
    ("peer_u", 7),
    ("peer_device", 18),
    ("peer_port", 10),
    ("was_peer_rack", 9),
    ("was_peer_u", 7),
    ("was_peer_device", 18),
    ("was_peer_port", 10),
    ("cable_id", 16),
    ("was_cable_id", 16),
    ("fabric", 12),
    ("label", 60),
    ("peer_label", 60),
    ("media", 10),
    ("part", 18),
    ("length_m", 8),
)
NAMES = tuple(name for name, _ in COLUMNS)
LENGTH = NAMES.index("length_m")
CSV_FILE = "work-order.csv"
XLSX_FILE = "work-order.xlsx"
# Within one rack and U: what leaves first (cables before their device), then what comes (devices before cables).
ORDER = ("remove-cable", "unrack-device", "move-device", "move-cable", "relabel-cable", "rack-device", "add-cable")


def _u(value: str) -> int | str:
    return int(value) if value.isdigit() else value


def _end(cable: Mapping[str, str], side: str, prefix: str = "") -> dict[str, Any]:
    return {
        f"{prefix}rack": cable.get(f"{side}_rack", ""),
        f"{prefix}u": _u(cable.get(f"{side}_u", "")),
        f"{prefix}device": cable.get(f"{side}_device", ""),
        f"{prefix}port": cable.get(f"{side}_port", ""),
    }


def _cable_row(action: str, cable: Mapping[str, str], flip: bool = False) -> dict[str, Any]:
    near, far = ("b", "a") if flip else ("a", "b")
    return {
        "action": action,
        **_end(cable, near),
        **_end(cable, far, "peer_"),
        "cable_id": cable.get("cable_id", ""),
        "fabric": cable.get("fabric", ""),
        "label": cable.get(f"{near}_label", ""),
        "peer_label": cable.get(f"{far}_label", ""),
        "media": cable.get("media", ""),
        "part": cable.get("part", ""),
        "length_m": cable.get("length_m", ""),  # as cabling.csv writes it; a number in the workbook
    }


def _move_row(move: Mapping[str, Any]) -> dict[str, Any]:
    """The end the old and the new cable share stays; the other end is re-plugged from was_peer_* to peer_*."""
    old, new = move["from"], move["to"]
    stays_a = (new["a_device"], new["a_port"]) in {(old["a_device"], old["a_port"]), (old["b_device"], old["b_port"])}
    row = _cable_row("move-cable", new, flip=not stays_a)
    old_far = "b" if (old["a_device"], old["a_port"]) == (row["device"], row["port"]) else "a"
    row.update(_end(old, old_far, "was_peer_"))
    row["was_cable_id"] = old.get("cable_id", "")
    return row


def _device_row(action: str, d: Mapping[str, str], rack: str = "rack", u: str = "u") -> dict[str, Any]:
    return {
        "action": action,
        "rack": d.get(rack, ""),
        "u": _u(d.get(u, "")),
        "device": d.get("device", ""),
        "fabric": d.get("fabric", ""),
        "part": d.get("model", ""),
    }


def work_order_rows(diff: Diff) -> list[tuple[Any, ...]]:
    """The work order's rows (tuples in COLUMNS order), sorted by rack, U, action, device and port."""
    rows: list[dict[str, Any]] = []
    rows.extend(_device_row("unrack-device", d) for d in diff.devices_remove)
    for d in diff.devices_move:
        row = _device_row("move-device", d, "to_rack", "to_u")
        row.update(was_peer_rack=d.get("from_rack", ""), was_peer_u=_u(d.get("from_u", "")))
        rows.append(row)
    rows.extend(_device_row("rack-device", d) for d in diff.devices_add)
    rows.extend(_cable_row("remove-cable", c) for c in diff.cables_remove)
    rows.extend(_move_row(m) for m in diff.cables_move)
    for r in diff.cables_relabel:
        row = _cable_row("relabel-cable", r["cable"])
        row["was_cable_id"] = r["from"]
        rows.append(row)
    rows.extend(_cable_row("add-cable", c) for c in diff.cables_add)

    def key(row: Mapping[str, Any]) -> tuple[str, int, str, int, str, str]:
        u = row["u"]
        return (
            row["rack"] or "~",  # the unplaced last
            u if isinstance(u, int) else 0,
            str(u),
            ORDER.index(row["action"]),
            row["device"],
            row.get("port", ""),
        )

    return [tuple(row.get(name, "") for name in NAMES) for row in sorted(rows, key=key)]


def work_order_csv(rows: Sequence[Sequence[Any]]) -> str:
    return csv_text(NAMES, rows)


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def work_order_xlsx(rows: Sequence[Sequence[Any]], title: str) -> bytes:
    """One sheet, `work order`: frozen header, filters on every column (rack, action, …), the widths."""
    out = io.BytesIO()
    book = xlsxwriter.Workbook(out, {"constant_memory": True, "strings_to_formulas": False, "strings_to_urls": False})
    book.set_properties({"title": title, "created": FIXED_DATE, "author": "fabric"})
    bold = book.add_format({"bold": True, "bg_color": "#EEEEEE"})
    sheet = book.add_worksheet("work order")
    for col, (name, width) in enumerate(COLUMNS):
        sheet.set_column(col, col, width)
        sheet.write_string(0, col, name, bold)
    sheet.freeze_panes(1, 0)
    sheet.autofilter(0, 0, max(1, len(rows)), len(COLUMNS) - 1)
    for r, values in enumerate(rows, start=1):
        for col, value in enumerate(values):
            if value is None or value == "":
                continue
            if isinstance(value, int | float) and not isinstance(value, bool):
                sheet.write_number(r, col, value)
            elif col == LENGTH and _is_number(value):
                sheet.write_number(r, col, float(value))
            else:
                sheet.write_string(r, col, str(value))
    book.close()
    return out.getvalue()


def work_order(diff: Diff) -> Rendered:
    """work-order.csv and work-order.xlsx of `diff`, for the writer."""
    rows = work_order_rows(diff)
    title = f"work order {diff.old} → {diff.new}"
    return Rendered(
        {CSV_FILE: work_order_csv(rows).encode(), XLSX_FILE: work_order_xlsx(rows, title)},
        private=(),
    )
