"""A diagram as plain data (boxes, edges, clusters); dot.py turns it into DOT syntax.

The views decide what is drawn; nothing here knows about fabrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Box:
    id: str
    label: str  # plain text, or an HTML-like label (see `html`)
    html: bool = False
    attrs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Edge:
    a: str  # box id, optionally `id:port`
    b: str
    label: str = ""
    attrs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Cluster:
    id: str
    label: str
    boxes: tuple[str, ...]
    attrs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Diagram:
    """One picture: written as `<name>.dot`, `.svg` and `.png` under diagrams/."""

    name: str  # path below diagrams/, without suffix
    title: str
    boxes: tuple[Box, ...]
    edges: tuple[Edge, ...] = ()
    clusters: tuple[Cluster, ...] = ()
    ranks: tuple[tuple[str, ...], ...] = ()  # box ids drawn side by side
    graph_attrs: Mapping[str, str] = field(default_factory=dict)
    png: bool = True  # also rendered as PNG (for slides)
    svg: bytes | None = None  # drawn without dot (rack elevations at scale): this SVG, and no PNG
    orders: tuple[tuple[str, ...], ...] = ()  # box ids of one rank kept left to right in this order
