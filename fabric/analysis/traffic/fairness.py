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


def max_min(rows: Ints, cols: Ints, weights: Floats, capacity: Floats, demand: Floats) -> Floats:
    """The max-min fair rate of each flow. Flow `rows[i]` crosses link `cols[i]` with `weights[i]` (> 0);
    `capacity` per link, `demand` per flow (its rate never exceeds it)."""
    flows = len(demand)
    links = len(capacity)
    rate = np.zeros(flows)
    active = demand > 0
    left = capacity.astype(np.float64).copy()
    while active.any():
        on = active[rows]
        if not on.all():  # the frozen flows' entries are done with: each round reads only the rising ones
            rows, cols, weights = rows[on], cols[on], weights[on]
            on = np.ones(len(rows), dtype=bool)
        load = np.bincount(cols, weights=weights, minlength=links)  # d(load)/d(rate) per link
        loaded = load > 0
        step = np.inf
        if loaded.any():
            step = float(np.min(left[loaded] / load[loaded]))
        step = min(step, float(np.min(demand[active] - rate[active])))
        rate[active] += step
        left -= step * load
        full = loaded & (left <= EPS * capacity)
        left[full] = 0.0
        stopped = np.zeros(flows, dtype=bool)
        hit = full[cols] & on
        stopped[rows[hit]] = True
        stopped |= active & (rate >= demand * (1 - EPS))
        active &= ~stopped
    return rate
