"""The physical BOM of every bundled design, as a table: switches, transceivers per side, fibres per medium, and
copper/AOC cables straight and splitter (issue 25's counts), read from the BOM lines (`fabric build`'s bom.csv).

    .venv/bin/python benchmarks/physical_counts.py            # every design in designs/, a Markdown table
    .venv/bin/python benchmarks/physical_counts.py roce-512   # some
    .venv/bin/python benchmarks/physical_counts.py --by-fabric          # a row per design and fabric

Counts, not timings: what a purchaser orders. A fibre line is one MPO (or LC) fibre per row of cabling-physical.csv
(an 800G twin-port link is two; a 1:2 splitter fibre one per two legs); a twin-port DAC/ACC one cable per cage
pair; a splitter one cable per switch cage. The compatibility rules and their sources are in docs/spec/catalog.md
and fabric/spec/catalog.yaml.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from fabric import Build, build_fabric
from fabric.costing import costing
from fabric.spec.loader import load_spec

DESIGNS = Path(__file__).resolve().parent.parent / "designs"
COPPER = ("dac", "acc", "aoc")


def counts(path: Path, fabric: str | None = None) -> dict[str, object]:
    """The counts of one design (of one of its fabrics where given)."""
    build = _build(path)
    media = build.design.catalog.media
    row: Counter[str] = Counter()
    fibres: Counter[str] = Counter()
    copper: Counter[str] = Counter()
    for line in costing(build).lines:
        if fabric is not None and line.fabric != fabric:
            continue
        if line.category == "switch":
            row["switches"] += line.count
        elif line.category == "transceiver":
            row[line.detail] += line.count  # "switch side", "node side"
        elif line.category == "cable":
            key = line.detail.split()[0]
            medium = media[key]
            split = max((e.plugs for e in medium.ends or ()), default=1) > 1
            if medium.kind in COPPER:
                copper[f"{medium.kind} {'splitter' if split else 'straight'}"] += line.count
            elif medium.kind in ("mmf", "smf"):
                fibres[key] += line.count
    return {
        "design": path.stem if fabric is None else f"{path.stem} {fabric}",
        "switches": row["switches"],
        "switch side": row["switch side"],
        "node side": row["node side"],
        "fibres": sum(fibres.values()),
        "by medium": ", ".join(f"{k} {n:,}" for k, n in sorted(fibres.items())) or "–",
        "copper": ", ".join(f"{k} {n:,}" for k, n in sorted(copper.items())) or "–",
    }


_BUILDS: dict[Path, Build] = {}


def _build(path: Path) -> Build:
    if path not in _BUILDS:
        _BUILDS.clear()
        _BUILDS[path] = build_fabric(load_spec(path))
    return _BUILDS[path]


def main(args: list[str]) -> None:
    by_fabric = "--by-fabric" in args
    names = [a for a in args if not a.startswith("--")]
    paths = [DESIGNS / f"{n}.yaml" for n in names] if names else sorted(DESIGNS.glob("*.yaml"))
    print(
        "| design | switches | switch-side transceivers | node-side transceivers | fibres | fibres by medium "
        "| DAC/ACC/AOC (straight, splitter) |"
    )
    print("|---|---:|---:|---:|---:|---|---|")
    for path in paths:
        fabrics = list(_build(path).topology.fabrics) if by_fabric else [None]
        for fabric in fabrics:
            _row(counts(path, fabric))


def _row(c: dict[str, object]) -> None:
    print(
        f"| `{c['design']}` | {c['switches']:,} | {c['switch side']:,} | {c['node side']:,} | {c['fibres']:,} "
        f"| {c['by medium']} | {c['copper']} |"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
