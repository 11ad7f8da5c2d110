"""diagrams/: every picture as its DOT source, and as SVG and PNG laid out by the real `dot`.

Without `dot` the sources are still written (the command line says once how to install graphviz).
The `dot` runs are independent, so they run side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.pipeline import Build
from fabric.render.engine.memo import per_build
from fabric.render.engine.registry import Output
from fabric.render.outputs.diagrams.dot import have_dot, layout, to_dot
from fabric.render.outputs.diagrams.graph import Diagram
from fabric.render.outputs.diagrams.racks import elevation_diagrams, elevation_pages, floor_diagram, floor_title
from fabric.render.outputs.diagrams.rails import rails_diagram
from fabric.render.outputs.diagrams.topology import fit_runs, topology_diagram, topology_title

VIEWS = ("topology", "rails", "racks", "floor")


@dataclass(frozen=True)
class Drawn:
    diagram: Diagram
    dot: str
    svg: bytes | None
    png: bytes | None


def detailed(build: Build, key: str) -> bool:
    settings = build.design.spec.diagrams
    if settings.topology != "auto":
        return settings.topology == "detailed"
    return len(build.topology.fabrics[key].switches) <= settings.aggregate_above


def diagrams(build: Build, views: tuple[str, ...] = VIEWS) -> list[Diagram]:
    out: list[Diagram] = []
    if "topology" in views:
        out.extend(_topology(build))
    if "rails" in views:
        out.extend(_rails(build))
    if "racks" in views:
        out.extend(elevation_diagrams(build))
    if "floor" in views:
        out.extend(_floor(build))
    return out


@per_build
def _runs(build: Build) -> dict[str, dict[str, str]]:
    """Per fabric, the runs its detailed picture is drawn in to fit the width (`auto` only: asked for
    `detailed`, every switch is a box however wide)."""
    settings = build.design.spec.diagrams
    return {
        key: fit_runs(build, key, settings.width_pt) if settings.topology == "auto" and detailed(build, key) else {}
        for key in build.topology.fabrics
    }


@per_build
def _topology(build: Build) -> list[Diagram]:
    runs = _runs(build)
    return [topology_diagram(build, key, detailed(build, key), runs[key]) for key in build.topology.fabrics]


@per_build
def _rails(build: Build) -> list[Diagram]:
    return [d for d in (rails_diagram(build, key) for key in build.topology.fabrics) if d is not None]


@per_build
def _floor(build: Build) -> list[Diagram]:
    return [floor_diagram(build)] if build.topology.racks else []


@dataclass(frozen=True)
class Listed:
    """A picture by its name and title: what report.md links."""

    name: str
    title: str


def listed(build: Build) -> list[Listed]:
    """The pictures' names and titles in order, without drawing the topology, the rack elevations (hundreds of
    pages at scale) or the floor: their titles come from the fabric and the pages alone."""
    keys = list(build.topology.fabrics)
    return [
        *(
            Listed(f"topology-{key}", topology_title(build, key, detailed(build, key), _runs(build)[key]))
            for key in keys
        ),
        *(Listed(d.name, d.title) for d in _rails(build)),
        *(Listed(name, title) for name, title, _ in elevation_pages(build)),
        *([Listed("floor", floor_title(build))] if build.topology.racks else []),
    ]


def draw(items: list[Diagram], with_dot: bool | None = None) -> list[Drawn]:
    """Sources, and with `dot` their SVG and PNG (a diagram drawn without dot keeps its own SVG, no PNG)."""
    sources = [to_dot(d) for d in items]
    if not (have_dot() if with_dot is None else with_dot):
        return [Drawn(d, src, d.svg, None) for d, src in zip(items, sources, strict=True)]
    laid = [(d, src) for d, src in zip(items, sources, strict=True) if d.svg is None]
    jobs = [(src, "svg") for _, src in laid] + [(src, "png") for d, src in laid if d.png]
    from concurrent.futures import ThreadPoolExecutor  # (here: a build without pictures need not load it)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda job: layout(*job), jobs))
    svgs = iter(results[: len(laid)])
    pngs = iter(results[len(laid) :])
    out = []
    for d, src in zip(items, sources, strict=True):
        if d.svg is not None:
            out.append(Drawn(d, src, d.svg, None))
        else:
            out.append(Drawn(d, src, next(svgs), next(pngs) if d.png else None))
    return out


@per_build
def drawn(build: Build) -> list[Drawn]:
    return draw(diagrams(build))


def files(items: list[Drawn]) -> dict[str, str | bytes]:
    out: dict[str, str | bytes] = {}
    for item in items:
        base = f"diagrams/{item.diagram.name}"
        out[base + ".dot"] = item.dot
        if item.svg is not None:
            out[base + ".svg"] = item.svg
        if item.png is not None:
            out[base + ".png"] = item.png
    return out


OUTPUTS: tuple[Output, ...] = (Output("diagrams", lambda build: files(drawn(build)), together="diagrams", weight=1.2),)
