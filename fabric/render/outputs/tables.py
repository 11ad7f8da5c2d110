"""The CSV outputs. Leading columns are contracts other tools read: add columns at the end, never rename."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Sequence

from fabric.fast import csvtext
from fabric.pipeline import Build
from fabric.render.engine import iptext
from fabric.render.engine.registry import Output, one_file

CABLING_COLUMNS = (
    "cable_id",
    "fabric",
    "plane",
    "rail",
    "tier",
    "a_rack",
    "a_u",
    "a_device",
    "a_port",
    "b_rack",
    "b_u",
    "b_device",
    "b_port",
    "speed_gbps",
    "media",
    "part",
    "length_m",
    "a_label",
    "b_label",
    # added after the contract columns
    "media_name",
    "route_m",
    "a_model",
    "b_model",
    # InfiniBand: the HCA (RDMA device) of a server end, and both ends' IB port numbers
    "a_hca",
    "a_ib_port",
    "b_ib_port",
)
IP_PLAN_COLUMNS = ("device", "interface", "address", "peer_device", "peer_interface", "purpose", "fabric")
ASN_PLAN_COLUMNS = ("device", "fabric", "layer", "asn", "router_id")
INVENTORY_COLUMNS = (
    "device",
    "layer",
    "model",
    "fabric",
    "group",
    "plane",
    "su",
    "rail",
    "pod",
    "rack",
    "u",
    "height_u",
    "power_w",
    "platform",
)


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def as_text(value: object) -> object:
    """A cell a spreadsheet will not run as a formula: text starting with = + - @ gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return "" if value is None else value


def _may_hold_formula(text: str, row_starts: str | None = None) -> bool:
    """Whether a cell of this CSV text could start with a formula character: = + @ tab or CR anywhere (plans seldom
    hold them), - where a cell starts (names hold many elsewhere), maybe after the quote that opens the cell.
    Substring tests in C: a regular expression over the 96 MB cabling.csv of 100k GPUs took a second. With the
    first character of every row after the header (`row_starts`, of a text without quotes) a row's first cell
    is looked up there: a two-character search ("\\n-") crosses the whole text at ~1 ns a character."""
    if any(c in text for c in "=+@\t\r"):
        return True
    if '"' in text:
        starts: tuple[str, ...] = (",-", "\n-", ',"-', '\n"-')
    elif row_starts is not None:
        return ",-" in text or "-" in row_starts or text.startswith("-")
    else:
        starts = (",-", "\n-")  # (without a quote, no cell is quoted)
    return any(p in text for p in starts) or text.startswith(("-", '"-'))


def csv_text(
    columns: Sequence[str],
    rows: Iterable[Sequence[object]] | Callable[[], Iterable[Sequence[object]]],
    *,
    plain: bool = False,
) -> str:
    """CSV with every text cell made formula-safe (see `as_text`). `rows` may be a function that gives them:
    then the table is first written as it is, and only if its text shows a cell that could need the apostrophe
    (seldom: a negative number will do) is it written again cell by cell (7.8M cells at 100k GPUs). `plain`: the
    function's rows are tuples that seldom hold None or a cell to quote, so try them joined by commas first."""
    if callable(rows):
        done = csvtext.joined_rows(columns, rows()) if plain else None
        text, row_starts = done if done is not None else (csvtext.written(columns, rows()), None)
        if not _may_hold_formula(text, row_starts):
            return text
        rows = rows()
    start = FORMULA_START  # `as_text` inlined; the csv module writes None as an empty field itself
    return csvtext.written(
        columns, ([("'" + v if isinstance(v, str) and v.startswith(start) else v) for v in r] for r in rows)
    )


def formula_safe(text: str) -> str:
    """CSV text (header first, as `csv.writer(out, lineterminator="\\n")` writes it) with every cell made
    formula-safe (`as_text`): the text itself when no cell could need the apostrophe, else read and written again."""
    if not _may_hold_formula(text):
        return text
    header, *rows = csv.reader(io.StringIO(text))
    return csv_text(header, rows)


def _length(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


class LengthTexts(dict[float | None, str]):
    """Lengths as the tables write them, each made once; but zero, whose two signs are one key and two texts."""

    def __missing__(self, value: float | None) -> str:
        text = _length(value)
        if value is None or value != 0:
            self[value] = text
        return text


def cabling_csv(build: Build) -> str:
    models = {name: device.model for name, device in build.topology.devices.items()}
    ib_ends = build.infiniband.ends
    lengths = LengthTexts()
    none = ("", "")

    def rows() -> Iterable[Sequence[object]]:
        # "" for None, as csv writes it: then the rows can be joined as they are (csv_text's `plain`)
        for c in build.allocation.cables:
            link = c.link
            a_label, b_label = c.labels()
            if ib_ends:
                a_hca, a_ib = ib_ends.get((link.a, link.a_port), none)
                b_ib = ib_ends.get((link.b, link.b_port), none)[1]
            else:
                a_hca = a_ib = b_ib = ""
            yield (
                c.cable_id,
                link.fabric,
                "" if link.plane is None else link.plane,
                "" if link.rail is None else link.rail,
                link.tier,
                c.a_rack,
                "" if c.a_u is None else c.a_u,
                link.a,
                link.a_port,
                c.b_rack,
                "" if c.b_u is None else c.b_u,
                link.b,
                link.b_port,
                link.speed_gbps,
                c.media_kind,
                c.part,
                lengths[c.length_m],
                a_label,
                b_label,
                c.media,
                lengths[c.route_m],
                models[link.a],
                models[link.b],
                "" if a_hca is None else a_hca,
                a_ib,
                b_ib,
            )

    return csv_text(CABLING_COLUMNS, rows, plain=True)


def csv_columns(header: Sequence[str], columns: Sequence[Sequence[object]]) -> str:
    """`csv_text` of a table given as columns: written in bulk (csvtext), then, only if its text shows a cell
    that could need the apostrophe, again cell by cell."""
    text = csvtext.table(header, columns)
    if not _may_hold_formula(text):
        return text
    return csv_text(header, zip(*columns, strict=True))


def ip_plan_csv(build: Build) -> str:
    c = iptext.plan_columns(build)
    return csv_columns(
        IP_PLAN_COLUMNS, (c.device, c.interface, c.address, c.peer_device, c.peer_interface, c.purpose, c.fabric)
    )


def asn_plan_csv(build: Build) -> str:
    return csv_text(
        ASN_PLAN_COLUMNS, ((r.device, r.fabric, r.layer, r.asn, r.router_id) for r in build.allocation.asns)
    )


def inventory_csv(build: Build) -> str:
    return csv_text(
        INVENTORY_COLUMNS,
        lambda: (  # a function: the table is written as it is unless its text shows a formula character
            (
                d.name,
                d.layer,
                d.model,
                d.fabric,
                d.group,
                d.plane,
                d.su,
                d.rail,
                d.pod,
                d.rack,
                d.u,
                d.height_u,
                d.power_w,
                d.platform,
            )
            for d in build.topology.devices.values()
        ),
    )


OUTPUTS: tuple[Output, ...] = (
    one_file("cabling", "cabling.csv", cabling_csv, weight=2.4),
    one_file("ip-plan", "ip-plan.csv", ip_plan_csv, together=iptext.PLAN_ADDRESSES, weight=2.0),
    one_file("asn-plan", "asn-plan.csv", asn_plan_csv),
    one_file("inventory", "inventory.csv", inventory_csv),
)
