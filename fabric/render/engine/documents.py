"""Where the documents for people change shape: above `documents.split_above` cables they are written per rack
or row of racks behind an index (cabling.md, cabling.xlsx), the report links its cable and address tables, and the
rack elevations are drawn as SVG only (their PNGs are four fifths of the layout time), the floor plan too.
Machine-readable outputs (cabling.csv, ip-plan.csv, …) are the same at every size."""

from __future__ import annotations

from fabric.pipeline import Build


def split(build: Build) -> bool:
    """Whether the design's documents for people are written per rack (or row) with an index."""
    return len(build.allocation.cables) > build.design.spec.documents.split_above
