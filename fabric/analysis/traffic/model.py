"""Delivered bandwidth of a collective over the fabric's routing: connections (patterns.py) split into queue
pairs, routed (routing.py) and shared max-min fairly (fairness.py); per NIC port as a percentage of its rate."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fabric.analysis.traffic.fairness import Floats, Ints, max_min, max_min_shared
from fabric.analysis.traffic.figure import TrafficFigure
from fabric.analysis.traffic.net import Net
from fabric.analysis.traffic.patterns import connections
from fabric.analysis.traffic.routing import ecmp, spray, tables

ROUTINGS = ("ecmp", "adaptive", "sm")  # sm: the subnet manager's tables (an InfiniBand fabric's; sm.py)
SINGLE = ("adaptive", "sm")  # routings with one outcome: no hash seeds, no queue pairs
SEED = 29  # the hash stream's seed: the same spec gives the same figures


def port_rates(
    net: Net,
    src: Ints,
    dst: Ints,
    share: Floats,
    routing: str,
    qps: int,
    seed: int,
    copies: int = 1,
    table: Ints | None = None,
) -> Floats:
    """Gb/s each NIC port delivers (a row per copy): the sum of its connections' max-min fair rates. `copies`
    independent hash outcomes of one seeded stream are shared out at once, as one fabric per copy. `table`: the
    forwarding tables routing `sm` follows (routing.tables)."""
    speed = net.port_speed[src]
    if routing == "adaptive":
        return _sprayed(net, src, dst, speed * share)[None, :]
    if routing in SINGLE:
        copies = 1
        if routing == "sm":
            if table is None:
                raise ValueError("routing sm needs the subnet manager's tables")
            flows, links = tables(net, table, net.port_leaf[src], dst)
            frac = np.ones(len(flows))
        else:
            flows, links, frac = spray(net, net.port_leaf[src], net.port_leaf[dst])
        demand = speed * share
        owner = np.arange(len(src))
    else:
        owner = np.tile(np.repeat(np.arange(len(src)), qps), copies)
        flows, links = ecmp(net, net.port_leaf[src][owner], net.port_leaf[dst][owner], seed)
        frac = np.ones(len(flows))
        demand = (speed * share / qps)[owner]
    n = len(owner)
    per_copy = n // copies
    span = len(net.capacity)
    offset = (np.arange(n) // per_copy) * span  # each copy on a fabric of its own
    ends = np.arange(n)
    rows = np.concatenate([flows, ends, ends])
    cols = np.concatenate([links + offset[flows], net.up(src[owner]) + offset, net.down(dst[owner]) + offset])
    weights = np.concatenate([frac, np.ones(2 * n)])
    rate = max_min(rows, cols, weights, np.tile(net.capacity, copies), demand)
    sent = np.bincount(src[owner] + (offset // span) * net.ports, weights=rate, minlength=copies * net.ports)
    return np.asarray(sent, dtype=np.float64).reshape(copies, net.ports)


def _sprayed(net: Net, src: Ints, dst: Ints, demand: Floats) -> Floats:
    """Gb/s each NIC port delivers under packet spraying: the flows between two leaves share one set of sprayed
    paths (a class), so memory grows with the leaf pairs' paths, not every flow's (max_min_shared)."""
    n = len(net.names)
    uniq, flow_class = np.unique(net.port_leaf[src] * n + net.port_leaf[dst], return_inverse=True)
    classes, links, frac = spray(net, uniq // n, uniq % n)  # a class within one leaf gets no switch link
    ends = np.arange(len(src))
    rate = max_min_shared(
        flow_class.astype(np.int64),
        np.concatenate([ends, ends]),
        np.concatenate([net.up(src), net.down(dst)]),
        classes,
        links,
        frac,
        net.capacity,
        demand,
    )
    return np.bincount(src, weights=rate, minlength=net.ports).astype(np.float64)


def traffic(
    net: Net,
    ports: Sequence[Sequence[int]],
    pattern: str,
    routing: str,
    *,
    qps: int = 1,
    seeds: int = 16,
    distance: int = 1,
    pxn: bool = True,
    table: Ints | None = None,
) -> TrafficFigure:
    """The figure of `pattern` among the nodes whose NIC ports are `ports` (placement order); `table`: the
    subnet manager's forwarding tables, for routing `sm`."""
    src, dst, share = connections(ports, pattern, distance, pxn)
    if not len(src):
        return TrafficFigure(pattern, routing, None if routing in SINGLE else qps, 0, 0.0, 0.0, 0.0)
    used = np.unique(src)
    runs = 1 if routing in SINGLE else seeds
    rates = port_rates(net, src, dst, share, routing, qps, SEED, runs, table)
    pct = (100.0 * rates[:, used] / net.port_speed[used]).ravel()
    return TrafficFigure(
        pattern,
        routing,
        None if routing in SINGLE else qps,
        runs,
        round(float(pct.mean()), 2),
        round(float(np.median(pct)), 2),
        round(float(np.percentile(pct, 5)), 2),
        distance if pattern == "shift" else None,
        pxn if pattern == "all-to-all" else None,
    )
