"""The hardware catalog: switches, node types and cable media, as data.

The built-in parts live in `catalog.yaml` next to this module; a spec may add or override parts
with its own files (`catalog: [my-parts.yaml]`), which are validated like the spec. Prices are
placeholders for the user to override: the catalog says so in every price field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import Field, field_validator, model_validator

from fabric.spec.schema import (
    MEDIA_KINDS,
    PART_RE,
    Float,
    Int,
    StrictModel,
    check_name,
    check_port,
    check_template,
)
from fabric.topology.portnames import port_name


class PortMode(StrictModel):
    """One way to run a cage: `ports` logical ports of `speed_gbps` each."""

    ports: Int = Field(ge=1, le=8, description="Logical ports per cage in this mode.")
    speed_gbps: Int = Field(ge=1, le=100_000)
    name: str = Field(
        description="Port name template (Cumulus/Linux style; SONiC and EOS name ports their own way); fields "
        "`{cage}`, `{sub}` (1-based), `{sub0}` (0-based), `{n}` (1-based in the group)."
    )

    @field_validator("name")
    @classmethod
    def _template(cls, value: str) -> str:
        return check_template(value, ("cage", "sub", "sub0", "n"), kind="port")


class SwitchPortGroup(StrictModel):
    group: str
    cages: Int = Field(ge=1, le=1024)
    first_cage: Int = Field(default=1, ge=0, le=1024)
    connector: str
    lanes: Int = Field(default=4, ge=1, le=8, description="Electrical lanes per cage (SONiC names ports by lane).")
    modes: tuple[PortMode, ...] = Field(min_length=1, description="Ways to run the cages; the first is the default.")

    @field_validator("group")
    @classmethod
    def _group(cls, value: str) -> str:
        return check_name(value)


class SwitchModel(StrictModel):
    description: str
    vendor: str = ""
    technology: Literal["infiniband", "ethernet"]
    u: Int = Field(ge=1, le=60)
    power_w: Int = Field(ge=0, le=1_000_000, description="Maximum power with optics, W.")
    list_price_usd: Float = Field(
        default=0, ge=0, le=1e9, description="Placeholder list price: override with your quote."
    )
    platform: Literal["sonic", "cumulus", "eos", "frr"] | None = Field(
        default=None,
        description="Default network OS of an Ethernet switch; none for InfiniBand switches (the subnet manager "
        "configures them).",
    )
    mgmt_port: str = Field(default="mgmt0", description="Out-of-band management port (1G RJ45).")
    sonic_hwsku: str | None = Field(default=None, description="SONiC HwSKU of the model, for DEVICE_METADATA.")
    ports: tuple[SwitchPortGroup, ...] = Field(min_length=1)

    @field_validator("mgmt_port")
    @classmethod
    def _mgmt(cls, value: str) -> str:
        return check_port(value)

    @field_validator("sonic_hwsku")
    @classmethod
    def _hwsku(cls, value: str | None) -> str | None:
        if value is not None and not PART_RE.match(value):
            raise ValueError("is not a HwSKU name (letters, digits, '.', '_', '/', '+' and '-')")
        return value

    @model_validator(mode="after")
    def _platform(self) -> SwitchModel:
        if self.technology == "ethernet" and self.platform is None:
            raise ValueError("an Ethernet switch needs a default `platform` (sonic, cumulus, eos or frr)")
        if self.technology == "infiniband" and self.platform is not None:
            raise ValueError("InfiniBand switches have no `platform`: the subnet manager configures them")
        return self


class NodePort(StrictModel):
    name: str
    rail: Int | None = Field(default=None, ge=0, le=64, description="Rail (= GPU index) of a compute port.")
    cage: str | None = Field(default=None, description="Physical cage the port sits in.")
    hca: str | None = Field(
        default=None,
        description="InfiniBand: the host channel adapter (RDMA device, e.g. `mlx5_0`) this port belongs to. "
        "Ports naming the same HCA are ports 1, 2, … of one adapter. Default: the port's own name.",
    )

    @field_validator("hca")
    @classmethod
    def _hca(cls, value: str | None) -> str | None:
        return None if value is None else check_name(value)

    @field_validator("name", "cage")
    @classmethod
    def _port(cls, value: str | None) -> str | None:
        return None if value is None else check_port(value)


class NodePortGroup(StrictModel):
    technology: Literal["infiniband", "ethernet", "any"] = "any"
    speed_gbps: Int = Field(ge=1, le=100_000)
    connector: str = "osfp"
    ports: list[NodePort] | None = Field(default=None, description="Ports in order; or give `count` and `name`.")
    count: Int | None = Field(default=None, ge=1, le=1024)
    name: str | None = Field(default=None, description="Port name template with `{n}` (1-based).")

    @model_validator(mode="after")
    def _ports_given(self) -> NodePortGroup:
        if self.ports is None and (self.count is None or self.name is None):
            raise ValueError("give `ports`, or `count` and `name`")
        if self.ports is not None and self.count is not None:
            raise ValueError("give `ports` or `count`, not both")
        if self.name is not None:
            check_template(self.name, ("n",), kind="port")
        return self

    def port_list(self) -> list[NodePort]:
        if self.ports is not None:
            return list(self.ports)
        assert self.count is not None and self.name is not None
        return [NodePort(name=self.name.format(n=i + 1)) for i in range(self.count)]


class NodeType(StrictModel):
    description: str
    gpus: Int = Field(default=0, ge=0, le=1024)
    u: Int = Field(ge=1, le=60)
    power_w: Int = Field(ge=0, le=1_000_000)
    list_price_usd: Float = Field(
        default=0, ge=0, le=1e9, description="Placeholder list price: override with your quote."
    )
    ports: dict[str, NodePortGroup] = Field(
        description="Port groups by name (`compute`, `storage`, `inband`, `bmc`, …)."
    )


class Media(StrictModel):
    kind: Literal["dac", "acc", "aoc", "mmf", "smf", "copper"]
    description: str
    technologies: list[Literal["infiniband", "ethernet"]]
    speeds_gbps: list[Int] = Field(min_length=1)
    reach_m: Float = Field(gt=0, le=100_000)
    lengths_m: list[Float] = Field(min_length=1, description="Orderable lengths, ascending.")
    part: str = Field(
        description="Part number template; `{code}` is the LinkX length code (`030` = 30 m, `01A` = 1.5 m), "
        "`{length}` the length in metres."
    )
    price_usd: Float = Field(
        default=0, ge=0, le=1e9, description="Placeholder price per cable (both ends' optics included)."
    )
    price_per_m_usd: Float = Field(default=0, ge=0, le=1e9, description="Placeholder price per metre.")

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        assert value in MEDIA_KINDS
        return value

    @field_validator("part")
    @classmethod
    def _part(cls, value: str) -> str:
        return check_template(value, ("code", "length"), kind="part")

    @field_validator("lengths_m")
    @classmethod
    def _ascending(cls, value: list[Float]) -> list[Float]:
        if value != sorted(value):
            raise ValueError("lengths must be ascending")
        return value


class CatalogFile(StrictModel):
    """A catalog file: the built-in one or a user's part file."""

    switches: dict[str, SwitchModel] = Field(default_factory=dict)
    nodes: dict[str, NodeType] = Field(default_factory=dict)
    media: dict[str, Media] = Field(default_factory=dict, description="Cable media in order of preference.")

    @field_validator("switches", "nodes", "media")
    @classmethod
    def _part_names(cls, value: dict[str, object]) -> dict[str, object]:
        for name in value:
            check_name(name)
        return value


@dataclass(frozen=True)
class Catalog:
    switches: Mapping[str, SwitchModel]
    nodes: Mapping[str, NodeType]
    media: Mapping[str, Media]

    def merged(self, extra: CatalogFile) -> Catalog:
        """User parts override built-in ones of the same name and add new ones (kept after the built-ins)."""
        return Catalog(
            switches={**self.switches, **extra.switches},
            nodes={**self.nodes, **extra.nodes},
            media={**self.media, **extra.media},
        )


@cache
def builtin_catalog() -> Catalog:
    from fabric.spec.yamlio import parse_yaml

    text = resources.files("fabric.spec").joinpath("catalog.yaml").read_text(encoding="utf-8")
    data = CatalogFile.model_validate(parse_yaml(text, "catalog.yaml").data)
    return Catalog(switches=data.switches, nodes=data.nodes, media=data.media)


# --------------------------------------------------------------------------------------------- ports


@dataclass(frozen=True, slots=True)
class SwitchPort:
    """A logical port of a switch, after breakout."""

    name: str
    cage: int
    sub: int
    speed_gbps: int
    group: str
    connector: str
    breakout: int  # logical ports per cage in the mode used
    lane: Int = 0  # first electrical lane, counted over the whole switch from 0
    lanes: Int = 1  # electrical lanes of this logical port


def _mode_for(group: SwitchPortGroup, speed: int | None) -> PortMode:
    if speed is not None:
        for mode in group.modes:
            if mode.speed_gbps == speed:
                return mode
    return group.modes[0]


def _group_ports(model: SwitchModel, group_index: int, mode: PortMode, platform: str | None) -> list[SwitchPort]:
    group = model.ports[group_index]
    base = sum(g.cages * g.lanes for g in model.ports[:group_index])
    per_port = max(1, group.lanes // mode.ports)
    ports = []
    n = 0
    for cage in range(group.first_cage, group.first_cage + group.cages):
        for sub in range(1, mode.ports + 1):
            n += 1
            lane = base + (cage - group.first_cage) * group.lanes + (sub - 1) * per_port
            name = port_name(
                platform, mode.name, cage=cage, sub=sub, n=n, lane=lane, lanes=per_port, cage_lanes=group.lanes
            )
            ports.append(
                SwitchPort(name, cage, sub, mode.speed_gbps, group.group, group.connector, mode.ports, lane, per_port)
            )
    return ports


@cache
def switch_ports(model: SwitchModel, speed: int | None, platform: str | None = None) -> tuple[SwitchPort, ...]:
    """Logical ports of `model` with every cage group run at `speed` where it can (else its default mode),
    named as `platform` names them (None: the catalog's names)."""
    ports: list[SwitchPort] = []
    for i, group in enumerate(model.ports):
        ports.extend(_group_ports(model, i, _mode_for(group, speed), platform))
    return tuple(ports)


@cache
def port_candidates(model: SwitchModel, platform: str | None = None) -> dict[str, tuple[SwitchPort, ...]]:
    """Every name a port of `model` can have, with the port it is in each mode that has the name
    (`swp5s1` is both the second of 2 × 50G and of 4 × 25G); modes in catalog order."""
    names: dict[str, list[SwitchPort]] = {}
    for i, group in enumerate(model.ports):
        for mode in group.modes:
            for port in _group_ports(model, i, mode, platform):
                names.setdefault(port.name, []).append(port)
    return {name: tuple(ports) for name, ports in names.items()}


def radix(model: SwitchModel, speed: int | None) -> int:
    """Logical ports at `speed` (cages that cannot run at it are not counted)."""
    return sum(1 for p in switch_ports(model, speed) if speed is None or p.speed_gbps == speed)


def best_speed(model: SwitchModel, wanted: int) -> int:
    """The fastest speed ≤ wanted any port mode of `model` offers; else its slowest."""
    speeds = sorted({m.speed_gbps for g in model.ports for m in g.modes})
    fitting = [s for s in speeds if s <= wanted]
    return fitting[-1] if fitting else speeds[0]
