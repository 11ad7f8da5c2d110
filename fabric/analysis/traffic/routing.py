"""Paths of flows over a Net: static ECMP (one hashed next hop per switch) and packet spraying (every next hop
on a shortest path, in equal parts).

ECMP: at each switch a queue pair (QP) takes one of the links towards its destination leaf that lie on a
shortest path (the equal-cost next hops a BGP or OSPF fabric installs; in a Clos the up-down paths), chosen by
the switch's hash. The hash of a QP's headers is modelled as an independent uniform draw per switch: a QP visits
a switch once, and a hash with a per-switch seed (which fabrics set to avoid polarisation) decorrelates the
hops. The draws come from numpy's PCG64 seeded with the seed number: the same seed gives the same paths."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import numpy.typing as npt

from fabric.analysis.traffic.fairness import Floats, Ints
from fabric.analysis.traffic.net import Net


def _nearer(net: Net, cur: Ints, drow: Ints, table: Ints) -> tuple[Ints, Ints, Ints, Ints]:
    """The links one hop nearer the destination leaf, worked out once per distinct (switch, leaf) of the items at
    switches `cur` bound for distance rows `drow`: (each item's distinct pair, the links grouped by pair, their count
    per pair, each pair's first link)."""
    n = len(net.names)
    key = drow * n + cur
    uniq, inv = np.unique(key, return_inverse=True)
    at = uniq % n
    row = uniq // n
    deg = net.ptr[at + 1] - net.ptr[at]
    pair = np.repeat(np.arange(len(uniq)), deg)
    starts = np.cumsum(deg) - deg
    edge = net.ptr[at][pair] + (np.arange(int(deg.sum())) - starts[pair])
    ok = table[row[pair], net.dst[edge]] == table[row[pair], at[pair]] - 1
    pair, edge = pair[ok], edge[ok]
    count = np.bincount(pair, minlength=len(uniq))
    return inv, edge, count, np.cumsum(count) - count


def _next_hops(net: Net, cur: Ints, drow: Ints, table: Ints) -> tuple[Ints, Ints, Ints]:
    """For each item at switch `cur` bound for the leaf of distance row `drow`: (item, edge) of every link to a
    switch one hop nearer, and the count per item."""
    inv, edge, count, first = _nearer(net, cur, drow, table)
    # per item: its pair's edges (first … first + count)
    c = count[inv]
    item = np.repeat(np.arange(len(cur)), c)
    base = np.cumsum(c) - c
    pos = first[inv][item] + (np.arange(int(c.sum())) - base[item])
    return item, edge[pos], c


def _pick(net: Net, cur: Ints, drow: Ints, table: Ints, u: Floats) -> tuple[Ints, npt.NDArray[np.bool_]]:
    """One next hop per item, the `u`-th fraction of its candidates: (edge per reachable item, reachable mask)."""
    inv, edge, count, first = _nearer(net, cur, drow, table)
    c = count[inv]
    reachable = c > 0
    pick = first[inv] + np.floor(u * c).astype(np.int64)
    return edge[pick[reachable]], reachable


def ecmp(net: Net, src_leaf: Ints, dst_leaf: Ints, seed: int) -> tuple[Ints, Ints]:
    """Each QP's switch-to-switch links under static ECMP: (QP, link) pairs."""
    rng = np.random.Generator(np.random.PCG64(seed))
    row, table = net.distances(dst_leaf)
    qps: list[Ints] = []
    links: list[Ints] = []
    live = np.nonzero(src_leaf != dst_leaf)[0]
    cur = src_leaf[live]
    while len(live):
        u = rng.random(len(live))
        picked = [_pick(net, cur[lo:hi], row[live[lo:hi]], table, u[lo:hi]) for lo, hi in _chunks(net, cur)]
        chosen = np.concatenate([c for c, _ in picked])
        reachable = np.concatenate([r for _, r in picked])
        live = live[reachable]  # an unreachable flow (a fabric in pieces) keeps no path
        qps.append(live)
        links.append(chosen)
        cur = net.dst[chosen]
        arrived = cur == dst_leaf[live]
        live, cur = live[~arrived], cur[~arrived]
    if not qps:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(qps), np.concatenate(links)


SPRAY_CELLS = 4_000_000  # switch-port cells one step of spraying looks at, at most (its scratch arrays' length)


def _chunks(net: Net, cur: Ints) -> list[tuple[int, int]]:
    """Ranges of the items at switches `cur` whose switches' ports add up to about SPRAY_CELLS each."""
    if not len(cur):
        return []
    cells = np.cumsum(net.ptr[cur + 1] - net.ptr[cur])
    cuts = np.searchsorted(cells, np.arange(SPRAY_CELLS, int(cells[-1]), SPRAY_CELLS), side="right")
    bounds = [0, *(int(c) for c in cuts if 0 < c < len(cur)), len(cur)]
    return [(a, b) for a, b in pairwise(bounds) if b > a]


def spray(net: Net, src_leaf: Ints, dst_leaf: Ints) -> tuple[Ints, Ints, Floats]:
    """Each flow's switch-to-switch links under packet spraying (the fluid ideal of adaptive routing): at each
    switch the flow's share splits evenly over the links one hop nearer. (flow, link, fraction) triples."""
    row, table = net.distances(dst_leaf)
    flows: list[Ints] = []
    links: list[Ints] = []
    parts: list[Floats] = []
    live = np.nonzero(src_leaf != dst_leaf)[0]
    cur = src_leaf[live]
    share = np.ones(len(live))
    while len(live):
        owner_parts, edge_parts, frac_parts = [], [], []
        for lo, hi in _chunks(net, cur):  # bounded scratch: a core level's links per flow are many
            item, edge, count = _next_hops(net, cur[lo:hi], row[live[lo:hi]], table)
            owner_parts.append(live[lo:hi][item])
            edge_parts.append(edge)
            frac_parts.append(share[lo:hi][item] / count[item])
        owner = np.concatenate(owner_parts)
        edge = np.concatenate(edge_parts)
        frac = np.concatenate(frac_parts)
        flows.append(owner)
        links.append(edge)
        parts.append(frac)
        nxt = net.dst[edge]
        away = nxt != dst_leaf[owner]
        # merge what reaches the same switch for the same flow: the state stays one entry per (flow, switch)
        key = owner[away] * len(net.names) + nxt[away]
        uniq, inv = np.unique(key, return_inverse=True)
        share = np.bincount(inv, weights=frac[away], minlength=len(uniq)).astype(np.float64)
        live = uniq // len(net.names)
        cur = uniq % len(net.names)
    if not flows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate(flows), np.concatenate(links), np.concatenate(parts)


DELIVER = -2  # a table entry at the destination's leaf: the port to the destination itself
NO_ROUTE = -1


def tables(net: Net, table: Ints, src_leaf: Ints, dst_port: Ints) -> tuple[Ints, Ints]:
    """Each flow's switch-to-switch links under forwarding tables (a subnet manager's): `table[switch, port]` is
    the link a switch forwards a packet for NIC port `port` on (DELIVER at its leaf, NO_ROUTE where there is none).
    One path per destination, whatever the queue pairs: (flow, link) pairs; a flow without a route keeps none."""
    flows: list[Ints] = []
    links: list[Ints] = []
    live = np.arange(len(src_leaf))
    cur = src_leaf
    for _ in range(len(net.names)):  # a loop in the tables ends here, its flow's links counted once per hop
        edge = table[cur, dst_port[live]]
        step = edge >= 0
        live, edge = live[step], edge[step]
        if not len(live):
            break
        flows.append(live)
        links.append(edge)
        cur = net.dst[edge]
    if not flows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(flows), np.concatenate(links)
