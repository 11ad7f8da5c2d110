"""The connections of the collectives training runs, between the NIC ports of a job's nodes (in placement order):
(source port, destination port, share of the source port's rate it asks for)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fabric.analysis.traffic.fairness import Floats, Ints

PATTERNS = ("all-reduce", "all-to-all", "shift")
ALL_TO_ALL_PEERS = 16  # shifts an all-to-all of more nodes is modelled by, spread evenly over the distances
# connections an all-to-all is modelled with, at most: a job of more than 8,192 ports takes fewer shifts (at 100k
# GPUs one or two), each a larger share of its ports' rate, so the figure is then a lower bound of the all-to-all's
MAX_CONNECTIONS = 131_072

Connections = tuple[Ints, Ints, Floats]


def shift(ports: Sequence[Sequence[int]], distance: int) -> Connections:
    """Each node's rail i to rail i of the node `distance` further on (around the job): NCCL's rail-aligned
    ring (all-reduce) at distance 1, the fat tree's stress permutation at others."""
    return _shifted(_rails(ports), distance)


def _rails(ports: Sequence[Sequence[int]]) -> Ints:
    """The job's ports as a node × rail grid: each node's first `rails` ports, rails the fewest any node has."""
    rails = min(len(p) for p in ports)
    return np.asarray([p[:rails] for p in ports], dtype=np.int64).reshape(len(ports), rails)


def _shifted(grid: Ints, distance: int) -> Connections:
    """shift() on the grid: row n's ports to those of row n + distance (around the job), rail by rail."""
    src = grid.ravel()
    dst = np.roll(grid, -distance, axis=0).ravel()
    return src, dst, np.ones(len(src))


def distances(k: int, pairs: int) -> list[int]:
    """The peer distances an all-to-all of k nodes is modelled by, `pairs` connections each: all k − 1, or up to
    ALL_TO_ALL_PEERS (fewer when MAX_CONNECTIONS asks) at the middles of even steps (a single one crosses the job's
    halves, as most of an all-to-all's traffic does)."""
    peers = max(1, min(ALL_TO_ALL_PEERS, MAX_CONNECTIONS // max(1, pairs)))
    if k - 1 <= peers:
        return list(range(1, k))
    return [1 + ((2 * i + 1) * (k - 1)) // (2 * peers) for i in range(peers)]  # mid-steps: one peer is k / 2 away


def all_to_all(ports: Sequence[Sequence[int]], pxn: bool) -> Connections:
    """Every node to every other (through its shifts, distances()): with PXN (NCCL's default since 2.12) the data
    for GPU j of the peer first moves over NVLink to GPU j here and leaves on rail j, so each rail talks to its own
    rail; without it each NIC talks to every NIC of the peer."""
    k = len(ports)
    rails = min(len(p) for p in ports)
    ds = distances(k, k * rails if pxn else sum(len(p) for p in ports) * rails)
    grid = _rails(ports)
    parts = []
    for d in ds:
        if pxn:
            parts.append(_shifted(grid, d))
        else:
            a = [x for n in range(k) for x in ports[n] for _ in ports[(n + d) % k]]
            b = [y for n in range(k) for _ in ports[n] for y in ports[(n + d) % k]]
            parts.append((np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64), np.ones(len(a))))
    src: Ints = np.concatenate([p[0] for p in parts])
    dst: Ints = np.concatenate([p[1] for p in parts])
    return src, dst, np.ones(len(src))


def connections(ports: Sequence[Sequence[int]], pattern: str, distance: int, pxn: bool) -> Connections:
    """The pattern's connections; each port's rate is split evenly over the connections it sources."""
    if pattern == "all-reduce":
        src, dst, _ = shift(ports, 1)
    elif pattern == "shift":
        src, dst, _ = shift(ports, distance)
    else:
        src, dst, _ = all_to_all(ports, pxn)
    fanout = np.bincount(src)
    return src, dst, 1.0 / fanout[src]
