"""Delivered bandwidth of a collective over the fabric's routing: connections (patterns.py) split into queue
pairs, routed (routing.py) and shared max-min fairly (fairness.py); per NIC port as a percentage of its rate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fabric.analysis.traffic.fairness import Floats, max_min
from fabric.analysis.traffic.net import Net
from fabric.analysis.traffic.patterns import connections
from fabric.analysis.traffic.routing import ecmp, spray

ROUTINGS = ("ecmp", "adaptive")


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


def port_rates(net: Net, src: np.ndarray, dst: np.ndarray, share: Floats, routing: str, qps: int, seed: int) -> Floats:
    """Gb/s each NIC port of `src` delivers: the sum of its connections' max-min fair rates."""
    speed = net.port_speed[src]
    if routing == "adaptive":
        flows, links, frac = spray(net, net.port_leaf[src], net.port_leaf[dst])
        demand = speed * share
        n = len(src)
        owner = np.arange(n)
    else:
        owner = np.repeat(np.arange(len(src)), qps)
        flows, links = ecmp(net, net.port_leaf[src][owner], net.port_leaf[dst][owner], seed)
        frac = np.ones(len(flows))
        demand = (speed * share / qps)[owner]
        n = len(owner)
    ends = np.arange(n)
    rows = np.concatenate([flows, ends, ends])
    cols = np.concatenate([links, net.up(src[owner]), net.down(dst[owner])])
    weights = np.concatenate([frac, np.ones(2 * n)])
    rate = max_min(rows, cols, weights, net.capacity, demand)
    return np.bincount(src[owner], weights=rate, minlength=net.ports)


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
) -> TrafficFigure:
    """The figure of `pattern` among the nodes whose NIC ports are `ports` (placement order)."""
    src, dst, share = connections(ports, pattern, distance, pxn)
    used = np.unique(src)
    runs = 1 if routing == "adaptive" else seeds
    samples = []
    for seed in range(runs):
        rates = port_rates(net, src, dst, share, routing, qps, seed)
        samples.append(100.0 * rates[used] / net.port_speed[used])
    pct = np.concatenate(samples) if samples else np.zeros(1)
    return TrafficFigure(
        pattern,
        routing,
        None if routing == "adaptive" else qps,
        runs,
        round(float(pct.mean()), 2),
        round(float(np.median(pct)), 2),
        round(float(np.percentile(pct, 5)), 2),
        distance if pattern == "shift" else None,
        pxn if pattern == "all-to-all" else None,
    )
