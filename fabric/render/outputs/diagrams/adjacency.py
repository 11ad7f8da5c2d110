"""A fabric's nodes and links in the order its networkx graph (`FabricTopology.graph`) holds them, without
building that graph.

The pictures need little of it: which nodes are in the fabric with their layer there, a node's neighbours,
and the links in the graph's iteration order (it fixes the order of boxes and edges in the .dot source, so
the same order keeps the same bytes). At 100k GPUs the MultiGraph of 300,000 edges cost more than drawing.
The orders are networkx's: nodes as `graph` adds them (the fabric's switches, then link ends as they come),
and edges node by node, each node's neighbours in the order they were joined, an edge once from its first end.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fabric.model.kinds import Layer, Tier
from fabric.model.topology import FabricTopology, Link
from fabric.render.engine.memo import per_object


@dataclass(frozen=True)
class Adjacency:
    layers: dict[str, str]  # node → its layer in this fabric (another fabric's switch is a `node` here), in order
    adj: dict[str, dict[str, list[Link]]]  # node → neighbour → links, in the order they were added

    def edges(self) -> Iterator[Link]:
        """Every link once, in the order `graph.edges(data="link")` gives them."""
        seen: set[str] = set()
        for node, neighbours in self.adj.items():
            for other, links in neighbours.items():
                if other not in seen:
                    yield from links
            seen.add(node)

    def edges_of(self, node: str) -> Iterator[tuple[str, Link]]:
        """(other end, link) of every link of `node`, as `graph.edges(node, data="link")` gives them."""
        for other, links in self.adj[node].items():
            for link in links:
                yield other, link


@per_object
def adjacency(ft: FabricTopology) -> Adjacency:
    own = set(ft.switches)
    layers: dict[str, str] = {name: ft.devices[name].layer for name in ft.switches}
    for link in ft.links:
        if link.a not in own and link.a not in layers:
            layers[link.a] = Layer.NODE
    adj: dict[str, dict[str, list[Link]]] = {name: {} for name in layers}
    peer = Tier.PEER
    # (get before set: setdefault would make a list for each of the 600,000 link ends at 100k GPUs)
    for link in ft.links:
        if link.tier == peer:  # as in `graph`: an MLAG peer link is no path of the Clos
            continue
        a, b = link.a, link.b
        row_a = adj.get(a)
        if row_a is None:  # an end no switch list or earlier link named: networkx adds it here
            layers[a] = Layer.NODE
            row_a = adj[a] = {}
        row_b = adj.get(b)
        if row_b is None:
            layers[b] = Layer.NODE
            row_b = adj[b] = {}
        links = row_a.get(b)
        if links is None:
            row_a[b] = [link]
        else:
            links.append(link)
        if b != a:
            links = row_b.get(a)
            if links is None:
                row_b[a] = [link]
            else:
                links.append(link)
    return Adjacency(layers, adj)
