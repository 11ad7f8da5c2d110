"""Fabrics under construction: what the topology builders (Clos generator, explicit and CSV fabrics) fill in
before the topology stage freezes them into a FabricTopology."""

from __future__ import annotations

from dataclasses import dataclass, field

from fabric.model.findings import Finding
from fabric.model.kinds import LayerName
from fabric.model.topology import ClosParams, Link


@dataclass
class SwitchDraft:
    """A switch while a fabric is generated (mutable: the generator fills it in)."""

    name: str
    layer: LayerName
    model: str
    platform: str | None
    plane: int | None
    su: int | None = None
    rail: int | None = None
    pod: int | None = None
    index: int = 0


@dataclass
class FabricDraft:
    """A fabric while it is generated: switches, links, findings and each switch's provisioned down ports."""

    switches: list[SwitchDraft] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    params: ClosParams | None = None
    tiers: int = 2
    findings: list[Finding] = field(default_factory=list)
    provisioned_down: dict[str, int] = field(default_factory=dict)  # switch → Gb/s of its down ports, cabled or not
