"""cabling.md: the cabling plan for people, by fabric and by rack (the a-end's rack)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from fabric.pipeline import Build
from fabric.render.registry import Output, one_file
from fabric.render.templating import render


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def cabling_md(build: Build) -> str:
    fabrics: list[dict[str, Any]] = []
    by_fabric: dict[str, list[Any]] = defaultdict(list)
    for cable in build.plan.cables:
        by_fabric[cable.link.fabric].append(cable)
    for key in build.topology.fabrics:
        cables = by_fabric.get(key, [])
        racks: dict[str, list[dict[str, str]]] = defaultdict(list)
        for c in cables:
            link = c.link
            racks[c.a_rack or "unplaced"].append(
                {
                    "id": c.cable_id,
                    "tier": link.tier,
                    "a": f"{link.a} {link.a_port}",
                    "a_pos": f"U{c.a_u}" if c.a_u else "",
                    "b": f"{link.b} {link.b_port}",
                    "b_pos": f"{c.b_rack} U{c.b_u}" if c.b_u else c.b_rack,
                    "speed": str(link.speed_gbps),
                    "media": c.media_kind or "none",
                    "part": c.part,
                    "length": _fmt(c.length_m),
                }
            )
        lengths = Counter((c.media_kind or "none", _fmt(c.length_m)) for c in cables)
        tiers = Counter(c.link.tier for c in cables)
        fabrics.append(
            {
                "name": key,
                "technology": build.topology.fabrics[key].technology,
                "total": len(cables),
                "tiers": sorted(tiers.items()),
                "lengths": sorted(lengths.items(), key=lambda kv: (kv[0][0], float(kv[0][1] or 0))),
                "racks": sorted(racks.items()),
            }
        )
    return render("docs/cabling.md.j2", design=build.name, fabrics=fabrics)


OUTPUTS: tuple[Output, ...] = (one_file("cabling-doc", "cabling.md", cabling_md),)
