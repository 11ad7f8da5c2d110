"""The check context of the intent stage: the plan checks' context grown by the switch intents and the
InfiniBand subnets."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabric.allocation.checks import AllocationContext
from fabric.intent.ethernet.model import DeviceIntent
from fabric.model.findings import Finding

if TYPE_CHECKING:  # (subnet.py is loaded only for a design with InfiniBand)
    from fabric.intent.infiniband.subnet import Subnet


@dataclass(frozen=True)
class IntentContext(AllocationContext):
    """The plan checks' context with the switch intents and the InfiniBand subnets."""

    intents: Mapping[str, DeviceIntent]
    subnets: tuple[Subnet, ...]


IntentCheck = Callable[[IntentContext], Iterator[Finding]]
