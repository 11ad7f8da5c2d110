"""Max-min fair sharing of directed links by fluid flows (progressive filling), vectorised with numpy.

Every flow's rate rises at the same pace until a link it crosses is full or it reaches its demand; those flows freeze
and the rest keep rising. All rising flows share one rate (the water level), so a round costs a pass over the links
and the entries of the flows it freezes, not over every flow. A flow may cross a link with a weight below one (packet
spraying puts a fraction of the flow on each path): the link's load is the sum of weight times rate. The result is
the unique max-min fair allocation (Bertsekas and Gallager, Data Networks, 2nd ed., section 6.5.2)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

EPS = 1e-9  # relative: links whose water level is this close to the lowest are full in the same round


def _ranges(ptr: Ints, idx: Ints) -> Ints:
    """The positions ptr[i] … ptr[i + 1] − 1 of each i of `idx`, concatenated."""
    start = ptr[idx]
    size = ptr[idx + 1] - start
    total = int(size.sum())
    offset = np.repeat(start - (np.cumsum(size) - size), size)
    return offset + np.arange(total)


def max_min(rows: Ints, cols: Ints, weights: Floats, capacity: Floats, demand: Floats) -> Floats:
    """The max-min fair rate of each flow. Flow `rows[i]` crosses link `cols[i]` with `weights[i]` (> 0);
    `capacity` per link, `demand` per flow (its rate never exceeds it)."""
    flows = len(demand)
    used = np.flatnonzero(np.bincount(cols, minlength=len(capacity)))  # only the links some flow crosses
    renumber = np.zeros(len(capacity), dtype=np.int64)
    renumber[used] = np.arange(len(used))
    cols = renumber[cols]
    links = len(used)
    base = capacity[used].astype(np.float64)  # capacity less what the frozen flows take
    by_flow = np.argsort(rows, kind="stable")
    flow_ptr = np.searchsorted(rows[by_flow], np.arange(flows + 1))
    by_link = np.argsort(cols, kind="stable")
    link_ptr = np.searchsorted(cols[by_link], np.arange(links + 1))
    load = np.bincount(cols, weights=weights, minlength=links)  # weight of the rising flows per link
    rate = np.zeros(flows)
    alive = np.ones(flows, dtype=bool)
    first = np.zeros(flows, dtype=np.int64)  # scratch: a frozen flow's place in its round's list
    by_demand = np.argsort(demand, kind="stable")
    next_demand = 0
    left = flows
    level = 0.0
    while left:
        while not alive[by_demand[next_demand]]:
            next_demand += 1
        loaded = load > EPS
        fill = np.full(links, np.inf)
        fill[loaded] = base[loaded] / load[loaded]  # the water level at which each link is full
        level = max(level, min(float(fill.min()), float(demand[by_demand[next_demand]])))
        full = np.nonzero(loaded & (fill <= level * (1 + EPS)))[0]
        on_full = rows[by_link[_ranges(link_ptr, full)]]
        reached = by_demand[next_demand:][demand[by_demand[next_demand:]] <= level * (1 + EPS)]
        frozen = np.concatenate([on_full, reached])
        frozen = frozen[alive[frozen]]
        first[frozen] = np.arange(len(frozen))  # each flow once: the last of its places wins
        frozen = frozen[first[frozen] == np.arange(len(frozen))]
        rate[frozen] = np.minimum(level, demand[frozen])
        alive[frozen] = False
        left -= len(frozen)
        entries = by_flow[_ranges(flow_ptr, frozen)]
        load -= np.bincount(cols[entries], weights=weights[entries], minlength=links)
        base -= np.bincount(cols[entries], weights=weights[entries] * rate[rows[entries]], minlength=links)
        load[full] = 0.0
    return rate
