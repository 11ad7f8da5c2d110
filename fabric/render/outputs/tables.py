"""The CSV outputs. Leading columns are contracts other tools read: add columns at the end, never rename."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice

from fabric.allocation.optics import CableEnd, PhysicalCable, longest_leg, physical_cables
from fabric.fast import csvtext
from fabric.fast.lazy import resolved
from fabric.model.cable import Cable, end_label
from fabric.model.rendered import TextPieces
from fabric.pipeline import Build
from fabric.render.engine import iptext
from fabric.render.engine.memo import per_build
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
    # each end's faceplate cage, the port's place in it and its electrical lanes (as cabling-physical.csv gives
    # them: `cage 34 port 1 lanes 1-4` for SONiC's Ethernet264, alias etp34a), and the physical cable carrying the
    # link (a twin-port cable or splitter carries several; an 800G link on two fibres names the first)
    "a_cage",
    "a_cage_port",
    "a_cage_lanes",
    "b_cage",
    "b_cage_port",
    "b_cage_lanes",
    "physical_id",
)
# cabling-physical.csv: one row per physical cable (a fibre of a link on several fibres; a twin-port cable carrying a
# cage pair's links); a side with several far ends (a splitter) lists them separated by "; "
PHYSICAL_COLUMNS = (
    "physical_id",
    "fabric",
    "tier",
    "links",
    "fibre",
    "speed_gbps",
    "media",
    "media_name",
    "part",
    "length_m",
    "a_rack",
    "a_u",
    "a_device",
    "a_model",
    "a_cage",
    "a_cage_ports",
    "a_cage_lanes",
    "a_interfaces",
    "a_transceiver",
    "a_transceiver_part",
    "b_rack",
    "b_u",
    "b_device",
    "b_model",
    "b_cage",
    "b_cage_ports",
    "b_cage_lanes",
    "b_interfaces",
    "b_transceiver",
    "b_transceiver_part",
    "a_label",
    "b_label",
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


ROWS_PER_PIECE = 20_000  # rows of a CSV file written as pieces (TextPieces): a few MB each


def csv_pieces(
    columns: Sequence[str], rows: Callable[[], Iterable[Sequence[object]]], *, plain: bool = False, per: int = 0
) -> Iterator[str]:
    """`csv_text` of the rows `rows()` gives, as pieces of `per` rows (default ROWS_PER_PIECE) after the header:
    together byte for byte the text `csv_text` makes, since each row is written and made formula-safe on its
    own (a piece whose text shows a formula character is written again cell by cell, the others as joined)."""
    head = csvtext.written(columns, ())
    yield head
    given = iter(rows())
    while piece := list(islice(given, per or ROWS_PER_PIECE)):
        yield csv_text(columns, lambda piece=piece: piece, plain=plain)[len(head) :]  # type: ignore[misc]


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


NO_CAGE = ("", "", "", "", "", "", "")


@per_build
def link_cages(build: Build) -> dict[str, tuple[str, str, str, str, str, str, str]]:
    """cable_id → both ends' cage, place in the cage and lanes (texts), and the physical cable's id: from the
    physical sheet (one pass over it; its ends group a side's ports per device, in link order)."""
    out: dict[str, tuple[str, str, str, str, str, str, str]] = {}

    def place(ends: tuple[CableEnd, ...], device: str, port: str) -> tuple[str, str, str]:
        for e in ends:
            if e.device == device and port in e.ports:
                k = e.ports.index(port)
                sub = str(e.subs[k]) if k < len(e.subs) else ""
                lanes = f"{e.lanes[k][0]}-{e.lanes[k][1]}" if k < len(e.lanes) else ""
                return e.cage, sub, lanes
        return "", "", ""

    for p in physical_cables(build.design.catalog, build.topology, build.allocation):
        if p.fibre > 1:
            continue  # the link's first fibre names it
        pid = p.physical_id.removesuffix("-F1") if p.fibres > 1 else p.physical_id
        for c in p.links:
            link = c.link
            out[c.cable_id] = (*place(p.a, link.a, link.a_port), *place(p.b, link.b, link.b_port), pid)
    return out


def place_text(cage: str, port: str, lanes: str) -> str:
    """An end's place on the faceplate, as cabling.csv's cage columns give it: `cage 34 port 1 lanes 1-4` (no port
    or lanes where the cage has one port or the catalog no lane map); "" where the end has no cage."""
    if not cage:
        return ""
    return f"cage {cage}" + (f" port {port}" if port else "") + (f" lanes {lanes}" if lanes else "")


def faceplate_labels(c: Cable, cages: tuple[str, str, str, str, str, str, str]) -> tuple[str, str]:
    """cabling.csv's labels with each end's faceplate place after its port (the `faceplate_label` column of the
    workbook's labels sheet): `compute-0001 A02-U01 leaf1 Ethernet264 (cage 34 port 1 lanes 1-4) > A01-U01 srv1
    eth1 (cage eth1 ...)`, so a technician finds the cage where the logical name (SONiC's Ethernet264) is not
    printed on the switch."""
    link = c.link
    a_place, b_place = place_text(*cages[0:3]), place_text(*cages[3:6])
    a = f"{end_label(c.a_rack, c.a_u)} {link.a} {link.a_port}" + (f" ({a_place})" if a_place else "")
    b = f"{end_label(c.b_rack, c.b_u)} {link.b} {link.b_port}" + (f" ({b_place})" if b_place else "")
    return f"{c.cable_id} {a} > {b}", f"{c.cable_id} {b} > {a}"


def cabling_csv(build: Build) -> str:
    return "".join(cabling_pieces(build))


def cabling_pieces(build: Build) -> Iterator[str]:
    """cabling.csv in pieces (TextPieces)."""
    models = {name: device.model for name, device in build.topology.devices.items()}
    ib_ends = resolved(build.infiniband.ends)
    lengths = LengthTexts()
    none = ("", "")
    cages = link_cages(build)

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
                *cages.get(c.cable_id, NO_CAGE),
            )

    return csv_pieces(CABLING_COLUMNS, rows, plain=True)


def _cage_text(end: CableEnd) -> str:
    """`cage 12 port 1/2` (both ports of a twin-port cage), `cage OSFP4 port 2`, `cage nic0`."""
    ports = f" port {'/'.join(map(str, end.subs))}" if end.subs else ""
    return f"cage {end.cage}{ports}"


# an end's texts that follow from its cage (its places, lanes, ports and `_cage_text`), made once per distinct cage
# shape: a few hundred at 100k GPUs, against 600,000 ends
ShapeTexts = dict[tuple[str, tuple[int, ...], tuple[tuple[int, int], ...], tuple[str, ...]], tuple[str, str, str, str]]


def shape_texts(e: CableEnd, texts: ShapeTexts) -> tuple[str, str, str, str]:
    """(places `1/2`, lanes `1-4 5-8`, ports, `_cage_text`) of the end's cage, from `texts` or made into it."""
    key = (e.cage, e.subs, e.lanes, e.ports)
    found = texts.get(key)
    if found is None:
        lanes = " ".join(f"{f}-{t}" for f, t in e.lanes)
        found = texts[key] = ("/".join(map(str, e.subs)), lanes, " ".join(e.ports), _cage_text(e))
    return found


def physical_labels(c: PhysicalCable, texts: ShapeTexts | None = None) -> tuple[str, str]:
    """What is printed on each end of a physical cable: its id, this end (rack-U, device, cage and ports), then the
    far end(s)."""
    shapes: ShapeTexts = {} if texts is None else texts

    def ends(side: tuple[CableEnd, ...]) -> str:
        return "; ".join([f"{end_label(e.rack, e.u)} {e.device} {shape_texts(e, shapes)[3]}" for e in side])

    a, b = ends(c.a), ends(c.b)
    return f"{c.physical_id} {a} > {b}", f"{c.physical_id} {b} > {a}"


def _end_cells(e: CableEnd, model: str, texts: ShapeTexts) -> tuple[object, ...]:
    places, lanes, ports, _ = shape_texts(e, texts)
    return (
        e.rack,
        "" if e.u is None else e.u,
        e.device,
        model,
        e.cage,
        places,
        lanes,
        ports,
        e.transceiver,
        e.transceiver_part,
    )


def _side_cells(
    side: tuple[CableEnd, ...], models: dict[str, str], texts: ShapeTexts | None = None
) -> tuple[object, ...]:
    """An end's cells; several far ends (a splitter) cell by cell, separated by "; "."""
    shapes: ShapeTexts = {} if texts is None else texts
    if len(side) == 1:
        return _end_cells(side[0], models[side[0].device], shapes)
    each = [_end_cells(e, models[e.device], shapes) for e in side]
    return tuple("; ".join(str(cells[k]) for cells in each) for k in range(len(each[0])))


def physical_rows(build: Build) -> Iterable[tuple[object, ...]]:
    """The rows of cabling-physical.csv (and of cabling.xlsx's `physical` sheet)."""
    models = {name: device.model for name, device in build.topology.devices.items()}
    lengths = LengthTexts()
    texts: ShapeTexts = {}
    for c in physical_cables(build.design.catalog, build.topology, build.allocation):
        first = c.links[0]
        link = first.link
        longest = first if len(c.links) == 1 else longest_leg(c.links)  # a splitter: as long as its longest leg
        yield (
            c.physical_id,
            link.fabric,
            link.tier,
            first.cable_id if len(c.links) == 1 else " ".join(x.cable_id for x in c.links),
            f"{c.fibre}/{c.fibres}" if c.fibres > 1 else "",
            link.speed_gbps,
            first.media_kind,
            first.media,
            longest.part,
            lengths[longest.length_m],
            *_side_cells(c.a, models, texts),
            *_side_cells(c.b, models, texts),
            *physical_labels(c, texts),
        )


def cabling_physical_csv(build: Build) -> str:
    return "".join(cabling_physical_pieces(build))


def cabling_physical_pieces(build: Build) -> Iterator[str]:
    """cabling-physical.csv in pieces (TextPieces)."""
    return csv_pieces(PHYSICAL_COLUMNS, lambda: physical_rows(build), plain=True)


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
    one_file("cabling", "cabling.csv", lambda build: TextPieces(lambda: cabling_pieces(build)), weight=2.4),
    # weight: ~50 µs a row on the 4-SU design (its own pass over the optics), scaled to ~400k rows; unmeasured at 100k
    one_file(
        "cabling-physical",
        "cabling-physical.csv",
        lambda build: TextPieces(lambda: cabling_physical_pieces(build)),
        weight=4.0,
    ),
    one_file("ip-plan", "ip-plan.csv", ip_plan_csv, together=iptext.PLAN_ADDRESSES, weight=2.0),
    one_file("asn-plan", "asn-plan.csv", asn_plan_csv),
    one_file("inventory", "inventory.csv", inventory_csv),
)
