"""Max-min fair sharing of directed links by fluid flows (progressive filling), vectorised with numpy.

Every flow's rate rises at the same pace until a link it crosses is full or it reaches its demand; those flows
freeze and the rest keep rising. A flow may cross a link with a weight below one (packet spraying puts a
fraction of the flow on each path): the link's load is the sum of weight times rate. The result is the unique
max-min fair allocation (Bertsekas and Gallager, Data Networks, 2nd ed., section 6.5.2)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

EPS = 1e-9  # relative: a link within this fraction of its capacity is full
# relative: the links whose fair level is within this of the lowest fill in the same round (a level a hundredth of
# a per mille apart: below the figures' two decimals of a percent; far closer than the closed forms' levels 1/m)
LEVEL = 1e-5


def max_min(rows: Ints, cols: Ints, weights: Floats, capacity: Floats, demand: Floats) -> Floats:
    """The max-min fair rate of each flow. Flow `rows[i]` crosses link `cols[i]` with `weights[i]` (> 0);
    `capacity` per link, `demand` per flow (its rate never exceeds it)."""
    flows = len(demand)
    used, cols = np.unique(cols, return_inverse=True)  # only the links some flow crosses: each round is O(those)
    capacity = capacity[used].astype(np.float64)
    left = capacity.copy()
    rate = np.zeros(flows)
    alive = demand > 0
    act = np.nonzero(alive)[0]  # the rising flows
    on = alive[rows]
    rows, cols, weights = rows[on], cols[on], weights[on]
    while len(act):
        if 2 * len(rows) < len(left):  # few entries left: renumber the links they cross, so a round stays small
            used, cols = np.unique(cols, return_inverse=True)
            capacity, left = capacity[used], left[used]
        links = len(left)
        load = np.bincount(cols, weights=weights, minlength=links)  # d(load)/d(rate) per link
        loaded = load > 0
        level = np.full(links, np.inf)
        level[loaded] = left[loaded] / load[loaded]
        step = min(float(level.min()), float(np.min(demand[act] - rate[act])))
        rate[act] += step
        left -= step * load
        full = loaded & ((left <= EPS * capacity) | (level <= step * (1 + LEVEL)))
        left[full] = 0.0
        alive[rows[full[cols]]] = False
        alive[act[rate[act] >= demand[act] * (1 - EPS)]] = False
        act = act[alive[act]]
        on = alive[rows]  # the frozen flows' entries are done with: each round reads only the rising ones
        rows, cols, weights = rows[on], cols[on], weights[on]
    return rate
