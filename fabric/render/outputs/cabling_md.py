"""cabling.md: the cabling plan for people, by fabric and by rack (the a-end's rack).

Above `documents.split_above` cables one file of some 300,000 rows is for nobody: cabling.md keeps the totals
and becomes an index, and each rack gets `cabling/<rack>.md` with its cables (cabling.csv holds them all).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from functools import partial
from operator import attrgetter
from typing import Any

from fabric.allocation.optics import CableEnd, PhysicalCable, longest_leg, physical_cables
from fabric.model.cable import Cable
from fabric.model.rendered import TextPieces
from fabric.pipeline import Build
from fabric.render.engine.documents import split
from fabric.render.engine.lines import fill
from fabric.render.engine.registry import Output
from fabric.render.engine.templating import render
from fabric.render.outputs.tables import LengthTexts, ShapeTexts, shape_texts

UNPLACED = "unplaced"  # the group of cables whose a-end is in no rack
LINES = "docs/_cabling-lines.j2"  # the rack files' line shapes


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


Row = tuple[str, str, str, str, str, str, str, str, str, str]
"""A cable as the tables show it, in column order: id, tier, a end, its U, b end, its rack and U, Gb/s, media, part,
length (the templates unpack it: a dict's `r.id` cost Jinja a failed attribute lookup per value)."""


def _rows(cables: Sequence[Cable]) -> list[Row]:
    """The cables' rows, the texts that repeat (positions, speeds, lengths) made once."""
    a_pos: dict[int | None, str] = {}
    b_pos: dict[tuple[str, int | None], str] = {}
    speeds: dict[int, str] = {}
    lengths = LengthTexts()
    out: list[Row] = []
    for c in cables:
        link = c.link
        a_u = a_pos.get(c.a_u)
        if a_u is None:
            a_u = a_pos[c.a_u] = f"U{c.a_u}" if c.a_u else ""
        b_u = b_pos.get((c.b_rack, c.b_u))
        if b_u is None:
            b_u = b_pos[(c.b_rack, c.b_u)] = f"{c.b_rack} U{c.b_u}" if c.b_u else c.b_rack
        speed = speeds.get(link.speed_gbps)
        if speed is None:
            speed = speeds[link.speed_gbps] = str(link.speed_gbps)
        length = lengths[c.length_m]
        out.append(
            (
                c.cable_id,
                link.tier,
                f"{link.a} {link.a_port}",
                a_u,
                f"{link.b} {link.b_port}",
                b_u,
                speed,
                c.media_kind or "none",
                c.part,
                length,
            )
        )
    return out


PhysicalRow = tuple[str, str, str, str, str, str, str, str, str]
"""A physical cable as the tables show it: its id, the links it carries (or its fibre `1/2`), the a end(s) (device,
U, cage, ports in the cage, lanes), their transceiver part, the b end(s), their rack and U, their transceiver
part, the cable's part and length."""


def _end_text(end: CableEnd, with_rack: bool, texts: ShapeTexts) -> str:
    """`leaf1 cage 31 port 1/2 lanes 1-4 5-8` (`U5` before the cage on the a side: the row is the a end's rack);
    the cage's texts made once per cage shape (`shape_texts`)."""
    _, lanes, _, cage = shape_texts(end, texts)
    where = "" if with_rack else (f" U{end.u}" if end.u else "")
    return f"{end.device}{where} {cage}" + (f" lanes {lanes}" if lanes else "")


def _physical_by_rack(build: Build) -> dict[str, dict[str, list[PhysicalCable]]]:
    """fabric → the a end's rack → its physical cables (cabling-physical.csv's cables, in its order)."""
    out: dict[str, dict[str, list[PhysicalCable]]] = defaultdict(lambda: defaultdict(list))
    for p in physical_cables(build.design.catalog, build.topology, build.allocation):
        first = p.links[0]
        out[first.link.fabric][first.a_rack or UNPLACED].append(p)
    return out


def _physical_rows(cables: Sequence[PhysicalCable]) -> list[PhysicalRow]:
    """The physical cables' rows."""
    lengths = LengthTexts()
    texts: ShapeTexts = {}
    out: list[PhysicalRow] = []
    for p in cables:
        first = p.links[0]
        longest = first if len(p.links) == 1 else longest_leg(p.links)
        links = (
            " ".join(c.cable_id for c in p.links)
            if len(p.links) > 1
            else (f"{p.fibre}/{p.fibres}" if p.fibres > 1 else "")
        )
        a, b = p.a, p.b
        if len(a) == 1 and len(b) == 1:  # most cables: one end a side
            e, f = a[0], b[0]
            a_text, a_part = _end_text(e, False, texts), e.transceiver_part
            b_text, b_part = _end_text(f, True, texts), f.transceiver_part
            b_pos = f"{f.rack} U{f.u}" if f.u else f.rack
        else:
            a_text = "; ".join([_end_text(e, False, texts) for e in a])
            a_part = "; ".join(dict.fromkeys(e.transceiver_part for e in a))
            b_text = "; ".join([_end_text(e, True, texts) for e in b])
            b_part = "; ".join(dict.fromkeys(e.transceiver_part for e in b))
            b_pos = "; ".join(dict.fromkeys(f"{e.rack} U{e.u}" if e.u else e.rack for e in b))
        out.append(
            (p.physical_id, links, a_text, a_part, b_text, b_pos, b_part, longest.part, lengths[longest.length_m])
        )
    return out


def _lengths(cables: Sequence[Cable]) -> Counter[tuple[str, str]]:
    """Cables per (media, length as the tables show it), counted on the plan's values and then formatted."""
    counted = Counter(zip(map(_MEDIA, cables), map(_LENGTH, cables), strict=True))
    if any(length == 0 for _, length in counted):  # 0.0 and -0.0: one key, two texts
        return Counter((c.media_kind or "none", _fmt(c.length_m)) for c in cables)
    out: Counter[tuple[str, str]] = Counter()
    for (kind, length), n in counted.items():
        out[(kind or "none", _fmt(length))] += n
    return out


_MEDIA, _LENGTH, _TIER = attrgetter("media_kind"), attrgetter("length_m"), attrgetter("link.tier")


def rack_file(rack: str) -> str:
    return f"cabling/{rack}.md"


def cabling_md(build: Build) -> dict[str, str | TextPieces]:
    per_rack = split(build)
    fabrics: list[dict[str, Any]] = []
    by_fabric: dict[str, list[Cable]] = defaultdict(list)
    for cable in build.allocation.cables:
        by_fabric[cable.link.fabric].append(cable)
    # rack → its fabrics' cables and physical cables: their rows are made with the rack's file, as the writer takes
    # it (a million GPUs' rows of every rack at once were ~2 GiB of a render worker)
    rack_docs: dict[str, list[tuple[str, str, list[Cable], list[PhysicalCable]]]] = defaultdict(list)
    physical = _physical_by_rack(build)
    for key in build.topology.fabrics:
        cables = by_fabric.get(key, [])
        racks: dict[str, list[Cable]] = defaultdict(list)
        for c in cables:
            racks[c.a_rack or UNPLACED].append(c)
        lengths = _lengths(cables)
        tiers = Counter(map(_TIER, cables))
        technology = build.topology.fabrics[key].technology
        if per_rack:
            for rack, mine in sorted(racks.items()):
                rack_docs[rack].append((key, technology, mine, physical[key][rack]))
        fabrics.append(
            {
                "name": key,
                "technology": technology,
                "total": len(cables),
                "tiers": sorted(tiers.items()),
                "lengths": sorted(lengths.items(), key=lambda kv: (kv[0][0], float(kv[0][1] or 0))),
                "racks": [] if per_rack else [(rack, _rows(mine)) for rack, mine in sorted(racks.items())],
                "physical": {} if per_rack else {rack: _physical_rows(p) for rack, p in physical[key].items()},
                "index": [(rack, len(mine), rack_file(rack)) for rack, mine in sorted(racks.items())],
            }
        )
    files: dict[str, str | TextPieces] = {
        "cabling.md": render("docs/cabling.md.j2", design=build.name, fabrics=fabrics, split=per_rack)
    }
    for rack, parts in sorted(rack_docs.items()):
        # each made as the writer takes it: never all 0.9 GB of them at once (a million GPUs)
        files[rack_file(rack)] = TextPieces(partial(_rack_doc_pieces, build.name, rack, parts))
    return files


def _rack_doc_pieces(
    design: str, rack: str, parts: list[tuple[str, str, list[Cable], list[PhysicalCable]]]
) -> Iterator[str]:
    """cabling/<rack>.md: the template's header, then per fabric the `rack_fabric` line shape and a `row` per cable,
    and the `physical_fabric` shape and a `physical_row` per physical cable."""
    yield render("docs/cabling-rack.md.j2", design=design, rack=rack, index="../cabling.md")
    for name, technology, cables, physical in parts:
        yield fill(LINES, "rack_fabric", [(name, technology, str(len(cables)))])
        yield fill(LINES, "row", _rows(cables))
        yield fill(LINES, "physical_fabric", [(name, str(len(physical)))])
        yield fill(LINES, "physical_row", _physical_rows(physical))


OUTPUTS: tuple[Output, ...] = (Output("cabling-doc", cabling_md, weight=1.0),)
