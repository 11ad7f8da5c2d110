"""A fabric's switch graph as lists, built once per fabric from its links; both engines read it (the arrays
engine converts it)."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.fast.memo import per_object
from fabric.model.kinds import Tier
from fabric.model.topology import LAYER_RANK, FabricTopology


@dataclass
class Pairs:
    """An undirected capacitated graph: each pair (src < dst) once."""

    n: int
    src: list[int]
    dst: list[int]
    cap: list[int]


@dataclass
class SwitchGraph:
    """A fabric's switches as lists: rank, plane, pair capacities and endpoint links."""

    names: list[str]
    rank: list[int]
    plane: list[int]
    pairs: Pairs
    counts: list[int]
    endpoints: list[tuple[int, int]]  # (leaf index, Gb/s) per endpoint link, by leaf


@dataclass(frozen=True)
class GraphFigures:
    """The graph figures of a fabric: components, bisection, worst failure and ECMP width."""

    components: int
    bisection_gbps: float
    reduced_vertices: int
    worst: tuple[str, float] | None  # element, bisection without it
    notes: tuple[str, ...]
    min_ecmp_width: int | None
    ecmp_worst_pair: tuple[str, str] | None
    ecmp_short: tuple[tuple[str, str, int, int], ...]


@per_object
def switch_lists(ft: FabricTopology) -> SwitchGraph:
    """The switch graph, from the fabric's links (its networkx graph is not needed); made once per fabric for the
    figures and the job table (callers only read it)."""
    names = list(ft.switches)
    index = {n: i for i, n in enumerate(names)}
    rank = [LAYER_RANK[ft.devices[n].layer] for n in names]
    plane = [ft.devices[n].plane or 0 for n in names]
    # a switch's endpoint links grouped by endpoint in order of first appearance, as FabricTopology.graph
    # yields them: the balanced splits take endpoints in this order
    below: dict[int, dict[str, list[int]]] = {}
    agg: dict[tuple[int, int], list[int]] = {}
    # (get before set: setdefault would build its default for each of the 300,000 links at 100k GPUs)
    for link in ft.links:
        tier = link.tier
        if tier == Tier.PEER:  # an MLAG peer link is a cable, not a path of the Clos (as in the graph)
            continue
        if tier == Tier.NODE_LEAF:
            leaf = index[link.b]
            group = below.get(leaf)
            if group is None:
                group = below[leaf] = {}
            speeds = group.get(link.a)
            if speeds is None:
                group[link.a] = [link.speed_gbps]
            else:
                speeds.append(link.speed_gbps)
        else:
            a, b = index[link.a], index[link.b]
            key = (a, b) if a < b else (b, a)
            entry = agg.get(key)
            if entry is None:
                agg[key] = [link.speed_gbps, 1]
            else:
                entry[0] += link.speed_gbps
                entry[1] += 1
    endpoints = [(leaf, gbps) for leaf in sorted(below) for speeds in below[leaf].values() for gbps in speeds]
    keys = sorted(agg)
    pairs = Pairs(len(names), [k[0] for k in keys], [k[1] for k in keys], [agg[k][0] for k in keys])
    return SwitchGraph(names, rank, plane, pairs, [agg[k][1] for k in keys], endpoints)
