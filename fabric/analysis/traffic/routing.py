"""Paths of flows over a Net: static ECMP (one hashed next hop per switch) and packet spraying (every next hop
on a shortest path, in equal parts).

ECMP: at each switch a queue pair (QP) takes one of the links towards its destination leaf that lie on a
shortest path (the equal-cost next hops a BGP or OSPF fabric installs; in a Clos the up-down paths), chosen by
the switch's hash. The hash of a QP's headers is modelled as an independent uniform draw per switch: a QP visits
a switch once, and a hash with a per-switch seed (which fabrics set to avoid polarisation) decorrelates the
hops. The draws come from numpy's PCG64 seeded with the seed number: the same seed gives the same paths."""

from __future__ import annotations

import numpy as np

from fabric.analysis.traffic.fairness import Floats, Ints
from fabric.analysis.traffic.net import Net


def _next_hops(net: Net, cur: Ints, dist: Ints) -> tuple[Ints, Ints, Ints]:
    """For each item at switch `cur` with distances `dist` (row per item): (item, edge) of every link to a switch
    one hop nearer, and the count per item."""
    deg = net.ptr[cur + 1] - net.ptr[cur]
    total = int(deg.sum())
    item = np.repeat(np.arange(len(cur)), deg)
    starts = np.cumsum(deg) - deg
    edge = net.ptr[cur][item] + (np.arange(total) - starts[item])
    here = dist[item, cur[item]]
    ok = dist[item, net.dst[edge]] == here - 1
    count = np.bincount(item[ok], minlength=len(cur))
    return item[ok], edge[ok], count


def ecmp(net: Net, src_leaf: Ints, dst_leaf: Ints, seed: int) -> tuple[Ints, Ints]:
    """Each QP's switch-to-switch links under static ECMP: (QP, link) pairs."""
    rng = np.random.Generator(np.random.PCG64(seed))
    row, table = net.distances(dst_leaf)
    qps: list[Ints] = []
    links: list[Ints] = []
    live = np.nonzero(src_leaf != dst_leaf)[0]
    cur = src_leaf[live]
    while len(live):
        dist = table[row[live]]
        item, edge, count = _next_hops(net, cur, dist)
        if (count == 0).any():  # unreachable: the flow is cut (a fabric in pieces); it keeps no path
            keep = count > 0
            live, cur, dist = live[keep], cur[keep], dist[keep]
            item, edge, count = _next_hops(net, cur, dist)
        pick = np.floor(rng.random(len(live)) * count).astype(np.int64)
        first = np.cumsum(count) - count
        chosen = edge[first + pick]
        qps.append(live)
        links.append(chosen)
        cur = net.dst[chosen]
        arrived = cur == dst_leaf[live]
        live, cur = live[~arrived], cur[~arrived]
    if not qps:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(qps), np.concatenate(links)


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
        item, edge, count = _next_hops(net, cur, table[row[live]])
        frac = share[item] / count[item]
        flows.append(live[item])
        links.append(edge)
        parts.append(frac)
        nxt = net.dst[edge]
        owner = live[item]
        away = nxt != dst_leaf[owner]
        # merge what reaches the same switch for the same flow: the state stays one entry per (flow, switch)
        key = owner[away] * len(net.names) + nxt[away]
        uniq, inv = np.unique(key, return_inverse=True)
        share = np.bincount(inv, weights=frac[away], minlength=len(uniq))
        live = uniq // len(net.names)
        cur = uniq % len(net.names)
    if not flows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate(flows), np.concatenate(links), np.concatenate(parts)
