"""A Clos generator's leaves: how a leaf's ports split into downlinks and uplinks, and a leaf under construction."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from fabric.spec.catalog import SwitchPort
from fabric.topology.attach import Endpoint


@dataclass
class Leaf:
    """A leaf under construction: its free down ports and what it connects."""

    plane: int
    su: int | None
    rail: int | None
    down: list[SwitchPort]
    used: dict[int, Endpoint] = field(default_factory=dict)  # down-port index → endpoint
    uplinks: int = 0
    name: str = ""
    pod: int | None = None
    index: int = 0
    scan: int = 0  # no free down port below this one (next_free)

    def free(self) -> int:
        return len(self.down) - len(self.used)

    def next_free(self) -> int:
        """The lowest free down port. Ports are only ever taken, so the search resumes where the last one ended
        (a scan from 0 was quadratic in the ports of a leaf)."""
        i, used = self.scan, self.used
        while i in used:
            i += 1
        if i >= len(self.down):
            raise ValueError(f"leaf {self.name or '?'}: no free down port")
        self.scan = i
        return i

    def free_of_signalling(self, lane_gbps: int) -> int | None:
        """The lowest free down port whose cage carries only links of the signalling an endpoint of `lane_gbps`
        (Gb/s a lane) would give its own (the slower of the two ends' rates: fabric/allocation/optics.py,
        mixed_cages); None if no cage has room. Any free port for an endpoint of unknown signalling (0)."""
        if not lane_gbps:
            return self.next_free() if self.free() else None
        down, used = self.down, self.used
        for i in range(self.scan, len(down)):
            if i in used:
                continue
            port = down[i]
            mine = min(lane_gbps, port.speed_gbps // max(1, port.lanes))
            if all(
                not e.lane_gbps or min(e.lane_gbps, down[j].speed_gbps // max(1, down[j].lanes)) == mine
                for j, e in used.items()
                if down[j].cage == port.cage
            ):
                return i
        return None

    def used_bw(self) -> int:
        return sum(min(e.speed_gbps, self.down[i].speed_gbps) for i, e in self.used.items())


def smallest_divisor_at_least(n: int, low: int) -> int | None:
    """The smallest divisor of n that is ≥ low (None if low > n)."""
    for m in range(max(1, low), n + 1):
        if n % m == 0:
            return m
    return None


def split_leaf_ports(
    layout: Sequence[SwitchPort], ratio: float, downlinks: int | None, uplinks: int | None
) -> tuple[list[SwitchPort], list[SwitchPort], str | None]:
    """Down and up ports of a leaf; an error message if the counts cannot be met."""
    speeds = sorted({p.speed_gbps for p in layout})
    if len(speeds) > 1:
        down_pool = [p for p in layout if p.speed_gbps == speeds[0]]
        up_pool = [p for p in layout if p.speed_gbps == speeds[-1]]
        d = downlinks or len(down_pool)
        u = uplinks or len(up_pool)
        if d > len(down_pool) or u > len(up_pool):
            return (
                [],
                [],
                (
                    f"asks for {d} down and {u} up ports; the model has {len(down_pool)} "
                    f"× {speeds[0]}G and {len(up_pool)} × {speeds[-1]}G"
                ),
            )
        return down_pool[:d], up_pool[:u], None
    k = len(layout)
    if downlinks and uplinks:
        d, u = downlinks, uplinks
    elif uplinks:
        u, d = uplinks, k - uplinks
    elif downlinks:
        d = downlinks
        u = min(k - d, math.ceil(d / ratio))
    else:
        u = math.ceil(k / (1 + ratio))
        d = k - u
    if d < 1 or u < 1 or d + u > k:
        return [], [], f"asks for {d} down and {u} up ports; the model has {k} at {speeds[0]}G"
    return list(layout[:d]), list(layout[d : d + u]), None
