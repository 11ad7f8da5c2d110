"""A fabric as the traffic model sees it: switches, directed switch-to-switch links (each cable both ways, a
parallel cable its own ECMP member) and the NIC ports of the scheduler nodes, as numpy arrays.

Link ids: the directed switch links first (0 … E−1, sorted by the switch they leave), then each NIC port's
uplink (node → leaf: E + p), then its downlink (leaf → node: E + P + p)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from fabric.analysis.figures import SMALL_SWITCHES
from fabric.analysis.traffic.fairness import Floats, Ints, ranges
from fabric.model.kinds import Tier
from fabric.model.topology import FabricTopology

BFS_CELLS = 20_000_000  # root × switch cells of one pass of breadth-first searches


class Net:
    """Switches and directed links with their capacities (Gb/s), and NIC ports on leaves; hop distances to leaves
    made on first use, kept per leaf."""

    def __init__(
        self,
        switches: Sequence[str],
        pairs: Iterable[tuple[int, int, float]],
        ports: Sequence[tuple[int, float]],
    ) -> None:
        """`pairs`: one cable between switches a and b of its speed; `ports`: (leaf, Gb/s) per NIC port."""
        self.names = list(switches)
        n = len(self.names)
        a, b, cap = [], [], []
        for x, y, gbps in pairs:
            a += [x, y]
            b += [y, x]
            cap += [gbps, gbps]
        src = np.asarray(a, dtype=np.int64)
        order = np.argsort(src, kind="stable")
        self.src: Ints = src[order]
        self.dst: Ints = np.asarray(b, dtype=np.int64)[order]
        self.edges = len(self.src)
        self.ptr: Ints = np.searchsorted(self.src, np.arange(n + 1)).astype(np.int64)
        where = np.empty(len(order), dtype=np.int64)
        where[order] = np.arange(len(order))
        self.pair_edges: Ints = where.reshape(-1, 2)  # per cable of `pairs`: its link ids a → b and b → a
        self.pair_links: list[int] = []  # per cable: its index in the fabric's links (fabric_net)
        self.port_links: list[int] = []  # per NIC port: its link's index in the fabric's links (fabric_net)
        self.port_leaf: Ints = np.asarray([p[0] for p in ports], dtype=np.int64)
        self.port_speed: Floats = np.asarray([p[1] for p in ports], dtype=np.float64)
        self.capacity: Floats = np.concatenate(
            [np.asarray(cap, dtype=np.float64)[order], self.port_speed, self.port_speed]
        )
        self._dist: dict[int, Ints] = {}

    @property
    def ports(self) -> int:
        return len(self.port_leaf)

    def up(self, port: Ints) -> Ints:
        return self.edges + port

    def down(self, port: Ints) -> Ints:
        return self.edges + self.ports + port

    def distances(self, leaves: Ints) -> tuple[Ints, Ints]:
        """(row per leaf of `leaves`, hop distances from every switch to each distinct leaf: -1 unreachable)."""
        wanted, row = np.unique(leaves, return_inverse=True)
        missing = [int(x) for x in wanted if int(x) not in self._dist]
        if missing:
            chunk = max(1, BFS_CELLS // max(1, len(self.names)))  # roots at once: bounded memory at 100k GPUs
            for start in range(0, len(missing), chunk):
                roots = missing[start : start + chunk]
                for leaf, dist in zip(roots, self._bfs(np.asarray(roots, dtype=np.int64)), strict=True):
                    self._dist[leaf] = dist
        table = np.stack([self._dist[int(x)] for x in wanted]) if len(wanted) else np.zeros((0, len(self.names)))
        return row.astype(np.int64), table.astype(np.int64)

    def _bfs(self, roots: Ints) -> list[Ints]:
        """Hop distances from each root: scipy's breadth-first search (C) on the undirected switch graph; up to
        SMALL_SWITCHES switches `frontier_distances` (numpy), as loading scipy takes longer than the searches."""
        if len(self.names) <= SMALL_SWITCHES:
            return list(frontier_distances(self.ptr, self.dst, len(self.names), roots))
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import shortest_path

        n = len(self.names)
        graph = csr_matrix((np.ones(self.edges), (self.src, self.dst)), shape=(n, n))
        dist = shortest_path(graph, method="D", directed=True, unweighted=True, indices=roots)
        dist[np.isinf(dist)] = -1
        return list(dist.astype(np.int64))


def frontier_distances(ptr: Ints, dst: Ints, n: int, roots: Ints) -> Ints:
    """Hop distances (-1: unreachable) from each root to the n switches (a row per root) over the directed links
    `dst[ptr[v] … ptr[v + 1] − 1]` leaving each switch v: a breadth-first search of every root at once, one hop
    of all their frontiers per numpy pass (the distances scipy's shortest_path gives, unweighted)."""
    dist = np.full((len(roots), n), -1, dtype=np.int64)
    row = np.arange(len(roots), dtype=np.int64)
    at = np.asarray(roots, dtype=np.int64)
    dist[row, at] = 0
    hop = 0
    while len(at):
        hop += 1
        row = np.repeat(row, ptr[at + 1] - ptr[at])
        nxt = dst[ranges(ptr, at)]
        new = dist[row, nxt] < 0
        row, nxt = row[new], nxt[new]
        dist[row, nxt] = hop
        reached = np.unique(row * n + nxt)  # each (root, switch) once in the next frontier
        row, at = reached // n, reached % n
    return dist


def fabric_net(ft: FabricTopology, nodes: Sequence[str]) -> tuple[Net, dict[str, list[int]]]:
    """The fabric's Net with the NIC ports of `nodes`, and each node's ports in rail order (the order of its links
    where a port has no rail): port i of every node is NCCL's rail i."""
    index = {name: i for i, name in enumerate(ft.switches)}
    wanted = set(nodes)
    pairs = []
    pair_links = []
    found: dict[str, list[tuple[int, int, int, int]]] = {n: [] for n in nodes}
    for i, link in enumerate(ft.links):
        if link.tier == Tier.PEER:  # an MLAG peer link is no path of the Clos
            continue
        if link.tier == Tier.NODE_LEAF:
            if link.a in wanted:
                rail = link.rail if link.rail is not None else -1
                found[link.a].append((rail, i, index[link.b], link.speed_gbps))
        else:
            pairs.append((index[link.a], index[link.b], float(link.speed_gbps)))
            pair_links.append(i)
    ports: list[tuple[int, float]] = []
    port_links: list[int] = []
    by_node: dict[str, list[int]] = {}
    for node in nodes:
        mine = []
        for _, i, leaf, gbps in sorted(found[node]):
            mine.append(len(ports))
            ports.append((leaf, float(gbps)))
            port_links.append(i)
        by_node[node] = mine
    net = Net(ft.switches, pairs, ports)
    net.pair_links, net.port_links = pair_links, port_links
    return net, by_node
