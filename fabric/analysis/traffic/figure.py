"""A traffic figure: what a collective pattern gets of the NIC rate under a routing (no numpy here: summary.json
and the CLI read it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TrafficFigure:
    """A pattern under a routing: the delivered share of the NIC rate per GPU, over every port and seed."""

    pattern: str
    routing: str
    qps: int | None  # queue pairs per connection (ECMP); None for adaptive routing, which sprays packets
    seeds: int
    mean_pct: float
    p50_pct: float
    p5_pct: float
    distance: int | None = None  # shift only
    pxn: bool | None = None  # all-to-all only
