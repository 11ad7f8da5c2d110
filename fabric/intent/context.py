"""The check context of the intent stage: the plan checks' context grown by the switch intents and the
InfiniBand subnets."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from fabric.allocation.checks import PlanContext
from fabric.intent.ethernet import DeviceIntent
from fabric.intent.infiniband.subnet import Subnet
from fabric.model.findings import Finding


@dataclass(frozen=True)
class IntentContext(PlanContext):
    intents: Mapping[str, DeviceIntent]
    subnets: tuple[Subnet, ...]


IntentCheck = Callable[[IntentContext], Iterator[Finding]]
