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


def ranges(ptr: Ints, idx: Ints) -> Ints:
    """The positions ptr[i] … ptr[i + 1] − 1 of each i of `idx`, concatenated."""
    start = ptr[idx]
    size = ptr[idx + 1] - start
    total = int(size.sum())
    offset = np.repeat(start - (np.cumsum(size) - size), size)
    return offset + np.arange(total)


def first_alive(alive: npt.NDArray[np.bool_], order: Ints, start: int) -> int:
    """The first position from `start` of `order` whose flow is alive (one is): looked at in blocks that double,
    as a round may have frozen many flows of the lowest demands."""
    step = 64
    while start < len(order):
        block = alive[order[start : start + step]]
        if block.any():
            return start + int(block.argmax())
        start += step
        step *= 2
    raise ValueError("no flow is alive")  # the callers look only while some flow rises: never a silent loop


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
    demand_sorted = demand[by_demand]  # the flows reaching their demand by a level are a prefix of the rest
    next_demand = 0
    left = flows
    level = 0.0
    while left:
        next_demand = first_alive(alive, by_demand, next_demand)
        fill = np.divide(base, load, out=np.full(links, np.inf), where=load > EPS)  # the level each link is full at
        level = max(level, min(float(fill.min()), float(demand_sorted[next_demand])))
        full = np.flatnonzero(fill <= level * (1 + EPS))
        on_full = rows[by_link[ranges(link_ptr, full)]]
        reached = by_demand[next_demand : np.searchsorted(demand_sorted, level * (1 + EPS), side="right")]
        frozen = np.concatenate([on_full, reached])
        frozen = frozen[alive[frozen]]
        first[frozen] = np.arange(len(frozen))  # each flow once: the last of its places wins
        frozen = frozen[first[frozen] == np.arange(len(frozen))]
        rate[frozen] = np.minimum(level, demand[frozen])
        alive[frozen] = False
        left -= len(frozen)
        entries = by_flow[ranges(flow_ptr, frozen)]
        load -= np.bincount(cols[entries], weights=weights[entries], minlength=links)
        base -= np.bincount(cols[entries], weights=weights[entries] * rate[rows[entries]], minlength=links)
        load[full] = 0.0
    return rate


def max_min_shared(
    flow_class: Ints,
    own_rows: Ints,
    own_cols: Ints,
    class_rows: Ints,
    class_cols: Ints,
    class_weights: Floats,
    capacity: Floats,
    demand: Floats,
) -> Floats:
    """`max_min` where many flows cross the same links with the same weights: each flow `f` crosses its own links
    (`own_rows`, `own_cols`, weight 1: its NIC links) and those of its class `flow_class[f]` (-1: none), given once
    per class (`class_rows`, `class_cols`, `class_weights`: packet spraying between two leaves). The same
    progressive filling: a link's load is its own flows' weight plus each class's weight times the class's rising
    flows, and a full link freezes every rising flow of every class on it. Memory grows with flows plus class
    entries, not flows times their paths (a sprayed all-to-all over a 3-tier fabric puts every flow on every
    core)."""
    flows = len(demand)
    classes = int(max(class_rows.max(initial=-1), flow_class.max(initial=-1))) + 1
    used = np.flatnonzero(
        np.bincount(own_cols, minlength=len(capacity)) + np.bincount(class_cols, minlength=len(capacity))
    )
    renumber = np.zeros(len(capacity), dtype=np.int64)
    renumber[used] = np.arange(len(used))
    own_cols, class_cols = renumber[own_cols], renumber[class_cols]
    links = len(used)
    base = capacity[used].astype(np.float64)
    own_by_flow = np.argsort(own_rows, kind="stable")
    own_flow_ptr = np.searchsorted(own_rows[own_by_flow], np.arange(flows + 1))
    own_by_link = np.argsort(own_cols, kind="stable")
    own_link_ptr = np.searchsorted(own_cols[own_by_link], np.arange(links + 1))
    by_class = np.argsort(class_rows, kind="stable")
    class_ptr = np.searchsorted(class_rows[by_class], np.arange(classes + 1))
    class_by_link = np.argsort(class_cols, kind="stable")
    class_link_ptr = np.searchsorted(class_cols[class_by_link], np.arange(links + 1))
    member_order = np.argsort(flow_class, kind="stable")
    members_of = member_order[flow_class[member_order] >= 0]
    member_ptr = np.searchsorted(flow_class[members_of], np.arange(classes + 1))
    rising = np.bincount(flow_class[flow_class >= 0], minlength=classes).astype(np.float64)  # per class
    load = np.bincount(own_cols, minlength=links) + np.bincount(
        class_cols, weights=class_weights * rising[class_rows], minlength=links
    )
    rate = np.zeros(flows)
    alive = np.ones(flows, dtype=bool)
    first = np.zeros(flows, dtype=np.int64)
    by_demand = np.argsort(demand, kind="stable")
    demand_sorted = demand[by_demand]  # the flows reaching their demand by a level are a prefix of the rest
    next_demand = 0
    left = flows
    level = 0.0
    while left:
        next_demand = first_alive(alive, by_demand, next_demand)
        fill = np.divide(base, load, out=np.full(links, np.inf), where=load > EPS)
        level = max(level, min(float(fill.min()), float(demand_sorted[next_demand])))
        full = np.flatnonzero(fill <= level * (1 + EPS))
        on_full = own_rows[own_by_link[ranges(own_link_ptr, full)]]
        hit = np.unique(class_rows[class_by_link[ranges(class_link_ptr, full)]])
        hit = hit[rising[hit] > 0]
        in_hit = members_of[ranges(member_ptr, hit)]
        reached = by_demand[next_demand : np.searchsorted(demand_sorted, level * (1 + EPS), side="right")]
        frozen = np.concatenate([on_full, in_hit, reached])
        frozen = frozen[alive[frozen]]
        first[frozen] = np.arange(len(frozen))
        frozen = frozen[first[frozen] == np.arange(len(frozen))]
        rate[frozen] = np.minimum(level, demand[frozen])
        alive[frozen] = False
        left -= len(frozen)
        entries = own_by_flow[ranges(own_flow_ptr, frozen)]
        load -= np.bincount(own_cols[entries], minlength=links)
        base -= np.bincount(own_cols[entries], weights=rate[own_rows[entries]], minlength=links)
        k = flow_class[frozen]
        mine = k >= 0
        gone = np.bincount(k[mine], minlength=classes).astype(np.float64)
        taken = np.bincount(k[mine], weights=rate[frozen][mine], minlength=classes)
        changed = np.flatnonzero(gone)
        rising -= gone
        entries = by_class[ranges(class_ptr, changed)]
        row = class_rows[entries]
        load -= np.bincount(class_cols[entries], weights=class_weights[entries] * gone[row], minlength=links)
        base -= np.bincount(class_cols[entries], weights=class_weights[entries] * taken[row], minlength=links)
        load[full] = 0.0
    return rate
