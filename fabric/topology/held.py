"""What an earlier build (the design's lock) chose for a fabric that its spec left to fabric, so that a grown spec
only adds: the spine count and where each node port is cabled.

A Clos generator sizes the spines for the leaves it has (the fewest that take every uplink) and spreads nodes
evenly over the leaves; both change with the node count. Given the lock's choices it keeps them while they still
fit (the locked spines have ports for the new leaves; a locked leaf port is still a down port and free): a locked
node port stays on its leaf port, new ones take free ports of the leaves there are, and new leaves come after the
locked ones (allocation/lock.py then keeps their cable ids, addresses and ASNs). What does not fit is generated as
without a lock, and allocation reports the moves grouped by cause.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabric.spec.lock import Lock


@dataclass(frozen=True)
class Held:
    """One fabric's choices in the lock: its spine count (all planes) and each cabled node port's leaf port."""

    spines: int = 0
    leaves: int = 0
    ports: Mapping[tuple[str, str], tuple[str, str]] = field(default_factory=dict)  # (device, port) → (leaf, port)


def held_choices(lock: Lock) -> dict[str, Held]:
    """Per fabric key of the lock, what it holds (a cable to a locked leaf from other than a leaf of its fabric is a
    node port, or a switch's management port on an out-of-band fabric: `a` that end)."""
    leaves: dict[str, str] = {}  # leaf → fabric
    name, layer, _, fabric = lock.columns["devices"][:4]
    for n, lay, fab in zip(name, layer, fabric, strict=True):
        if lay == "leaf":
            leaves[n] = fab
    ports: dict[str, dict[tuple[str, str], tuple[str, str]]] = {}
    _, fabrics, a_device, a_port, b_device, b_port = lock.columns["cables"]
    for fab, a, ap, b, bp in zip(fabrics, a_device, a_port, b_device, b_port, strict=True):
        if leaves.get(b) == fab and leaves.get(a) != fab:  # (not an MLAG peer link)
            ports.setdefault(fab, {})[(a, ap)] = (b, bp)
    return {
        key: Held(spines=f.spine, leaves=f.leaf, ports=ports.get(key, {}))
        for key, f in lock.spec.fabrics.items()
        if f.technology  # every locked fabric
    }
