"""The check context of the intent stage: the plan checks' context grown by the switch intents and the
InfiniBand subnets."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fabric.allocation.checks import AllocationContext
from fabric.intent.ethernet.model import DeviceIntent
from fabric.model.findings import Finding

if TYPE_CHECKING:  # (subnet.py is loaded only for a design with InfiniBand)
    from fabric.intent.hosts import RoceHost
    from fabric.intent.infiniband.subnet import Subnet


@dataclass(frozen=True)
class IntentContext(AllocationContext):
    """The plan checks' context with the switch intents, the InfiniBand subnets and the RoCE servers."""

    intents: Mapping[str, DeviceIntent]
    subnets: tuple[Subnet, ...]
    roce: Mapping[str, RoceHost] = field(default_factory=dict)  # servers on routed lossless fabrics (hosts.py)
    classes: tuple[DeviceIntent, ...] | None = None  # the first switch of each class (Intents.classes); None: every one

    @property
    def switches(self) -> Iterable[DeviceIntent]:
        """The switches a check that cannot tell a class's switches apart reads: the first of each class, in the
        order of the intents, where the build gives them (`fabric validate` makes no other), else every switch."""
        return self.intents.values() if self.classes is None else self.classes


IntentCheck = Callable[[IntentContext], Iterator[Finding]]
