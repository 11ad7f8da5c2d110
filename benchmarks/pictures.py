"""Picture and report benchmark: time every picture-like output of a design.

    .venv/bin/python benchmarks/pictures.py designs/superpod-h100-4su.yaml
    .venv/bin/python benchmarks/pictures.py 100k            # a size of benchmarks/run.py

Prints seconds for building the plan, making the diagram sources, laying them out with `dot` (SVG and PNG,
side by side), the report, the workbook and the BOM. Printed, never asserted.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from laps import Laps
from run import SIZES, spec_text


def main(argv: list[str]) -> None:
    from fabric import build_fabric
    from fabric.costing import costing
    from fabric.render.outputs.diagrams import diagrams, drawn
    from fabric.render.outputs.report import report_html, report_md
    from fabric.render.outputs.workbook import cabling_xlsx

    target = argv[0] if argv else "designs/superpod-h100-4su.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        if target in SIZES:
            nodes, planes = SIZES[target]
            path = Path(tmp) / f"{target}.yaml"
            path.write_text(spec_text(target, nodes, planes))
        else:
            path = Path(target)
        lap = Laps()
        times = lap.times

        build = build_fabric(path)
        lap("plan")
        costing(build)
        lap("bom/power/tco")
        items = diagrams(build)
        lap("diagram sources")
        laid_out = drawn(build)  # what the report embeds, laid out once
        lap("dot (svg+png)")
        html = report_html(build)
        lap("report.html")
        report_md(build)
        lap("report.md")
        xlsx = cabling_xlsx(build)
        lap("cabling.xlsx")
    pictures = sum(len(d.svg or b"") + len(d.png or b"") for d in laid_out)
    print(
        f"{build.name}: {len(build.topology.racks):,} racks, {len(build.allocation.cables):,} cables, "
        f"{len(items)} diagrams "
        f"({pictures / 1e6:.1f} MB SVG+PNG), report.html {len(html) / 1e6:.1f} MB, "
        f"cabling.xlsx {len(xlsx) / 1e6:.1f} MB"
    )
    print("  " + "  ".join(f"{k}={v}s" for k, v in times.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
