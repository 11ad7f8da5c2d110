"""cabling.md: the cabling plan for people, by fabric and by rack (the a-end's rack).

Above `documents.split_above` cables one file of some 300,000 rows is for nobody: cabling.md keeps the totals
and becomes an index, and each rack gets `cabling/<rack>.md` with its cables (cabling.csv holds them all).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, NamedTuple

from fabric.model.cable import Cable
from fabric.pipeline import Build
from fabric.render.documents import split
from fabric.render.registry import Output
from fabric.render.templating import render

UNPLACED = "unplaced"  # the group of cables whose a-end is in no rack


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


class Row(NamedTuple):
    """A cable as the table shows it, in column order: the templates unpack it (a dict's `r.id` cost Jinja a
    failed attribute lookup per value, 3 million at 100k GPUs)."""

    id: str
    tier: str
    a: str
    a_pos: str
    b: str
    b_pos: str
    speed: str
    media: str
    part: str
    length: str


def _row(c: Cable) -> Row:
    link = c.link
    return Row(
        c.cable_id,
        link.tier,
        f"{link.a} {link.a_port}",
        f"U{c.a_u}" if c.a_u else "",
        f"{link.b} {link.b_port}",
        f"{c.b_rack} U{c.b_u}" if c.b_u else c.b_rack,
        str(link.speed_gbps),
        c.media_kind or "none",
        c.part,
        _fmt(c.length_m),
    )


def rack_file(rack: str) -> str:
    return f"cabling/{rack}.md"


def cabling_md(build: Build) -> dict[str, str]:
    per_rack = split(build)
    fabrics: list[dict[str, Any]] = []
    by_fabric: dict[str, list[Cable]] = defaultdict(list)
    for cable in build.plan.cables:
        by_fabric[cable.link.fabric].append(cable)
    rack_docs: dict[str, list[dict[str, Any]]] = defaultdict(list)  # rack → its part of every fabric
    for key in build.topology.fabrics:
        cables = by_fabric.get(key, [])
        racks: dict[str, list[Row]] = defaultdict(list)
        for c in cables:
            racks[c.a_rack or UNPLACED].append(_row(c))
        lengths = Counter((c.media_kind or "none", _fmt(c.length_m)) for c in cables)
        tiers = Counter(c.link.tier for c in cables)
        technology = build.topology.fabrics[key].technology
        if per_rack:
            for rack, rows in sorted(racks.items()):
                rack_docs[rack].append({"name": key, "technology": technology, "rows": rows})
        fabrics.append(
            {
                "name": key,
                "technology": technology,
                "total": len(cables),
                "tiers": sorted(tiers.items()),
                "lengths": sorted(lengths.items(), key=lambda kv: (kv[0][0], float(kv[0][1] or 0))),
                "racks": [] if per_rack else sorted(racks.items()),
                "index": [(rack, len(rows), rack_file(rack)) for rack, rows in sorted(racks.items())],
            }
        )
    files = {"cabling.md": render("docs/cabling.md.j2", design=build.name, fabrics=fabrics, split=per_rack)}
    for rack, parts in sorted(rack_docs.items()):
        files[rack_file(rack)] = render(
            "docs/cabling-rack.md.j2", design=build.name, rack=rack, fabrics=parts, index="../cabling.md"
        )
    return files


OUTPUTS: tuple[Output, ...] = (Output("cabling-doc", cabling_md),)
