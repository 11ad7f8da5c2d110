"""The hardware catalog: switches, node types and cable media, as data.

The built-in parts live in `catalog.yaml` next to this module (read from its JSON copy, `catalog.json`); a spec
may add or override parts with its own files (`catalog: [my-parts.yaml]`), which are validated like the spec.
Prices are placeholders for the user to override: the catalog says so in every price field.
"""

# No `from __future__ import annotations`: pydantic would compile each annotation string (see fabric/spec/schema/).
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, Field, field_validator, model_validator

from fabric.model.kinds import MEDIA_KINDS, MediaKind
from fabric.spec.platforms import check_platform, platform_names, port_name
from fabric.spec.schema import (
    PART_RE,
    Float,
    Int,
    StrictModel,
    check_name,
    check_port,
    check_template,
)

Top = Literal["finned", "flat"]
TOP_DOC = (
    "Thermal top of the cage (OSFP): `finned` (the module carries its heat sink: switches) or `flat` (the cage has a "
    "riding heat sink: NICs, DGX H100/H200); a finned module does not fit a flat cage. None: either."
)
PORTS_PER_CAGE_DOC = "Ports one cage holds: 2 for a twin-port OSFP (2 x 400G), 1 for a single-port cage. None: any."

UNVERIFIED_DOC = (
    "Values not checked against a vendor datasheet: field names, each optionally followed by `: what` "
    "(`power_w`, `ports: NDR200 port names`). `fabric catalog` shows them."
)


# A list entry's bounds live on its type, so `[400, true, 1e12]` is refused entry by entry.
SpeedGbps = Annotated[Int, Field(ge=1, le=100_000)]
LengthM = Annotated[Float, Field(gt=0, le=100_000)]


def check_unverified(model: type[StrictModel], value: tuple[str, ...]) -> tuple[str, ...]:
    """Each entry names a field of the part (`field` or `field: note`)."""
    for entry in value:
        field = entry.split(":", 1)[0].strip()
        if field not in model.model_fields:
            raise ValueError(f"`{field}` is no field of the part (fields: {', '.join(model.model_fields)})")
    return value


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
    lanes: Int = Field(
        default=4,
        ge=1,
        le=8,
        description="Electrical lanes per cage (SONiC names ports by lane). Default from the connector: 1 for "
        "SFP and RJ45, 8 for OSFP and QSFP-DD, else 4.",
    )
    modes: tuple[PortMode, ...] = Field(min_length=1, description="Ways to run the cages; the first is the default.")
    top: Top | None = Field(default=None, description=TOP_DOC)
    ports_per_cage: Int | None = Field(default=None, ge=1, le=8, description=PORTS_PER_CAGE_DOC)
    lane_map: tuple[Annotated[Int, Field(ge=0, le=65_535)], ...] | None = Field(
        default=None,
        description="First ASIC (SerDes) lane of each cage, in cage order, as the platform's SONiC port_config.ini "
        "gives them (SONiC `PORT.lanes`); a cage's lanes follow on from its first. Default: lanes counted from 0 in "
        "cage order. Port names do not change: SONiC names ports by their place, not their ASIC lanes.",
    )

    @model_validator(mode="after")
    def _lane_map(self) -> Self:
        if self.lane_map is not None:
            if len(self.lane_map) != self.cages:
                raise ValueError(f"`lane_map` gives {len(self.lane_map)} first lanes for {self.cages} cages")
            firsts = sorted(self.lane_map)
            if any(b - a < self.lanes for a, b in pairwise(firsts)):
                raise ValueError(f"`lane_map` gives two cages one lane (each cage has {self.lanes} lanes)")
        return self

    @model_validator(mode="before")
    @classmethod
    def _lanes(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "lanes" not in data and isinstance(data.get("connector"), str):
            data = {**data, "lanes": lanes_of(data["connector"])}
        return data

    @field_validator("group")
    @classmethod
    def _group(cls, value: str) -> str:
        return check_name(value)


def lanes_of(connector: str) -> int:
    """Electrical lanes of a cage by its connector: SFP (SFP+, SFP28, SFP56) and RJ45 one, OSFP and QSFP-DD eight."""
    kind = connector.lower()
    if kind.startswith(("sfp", "rj45")):
        return 1
    if kind.startswith(("osfp", "qsfp-dd", "qsfpdd")):
        return 8
    return 4


def node_lane_gbps(group: "NodePortGroup") -> int:
    """The signalling of a node port group: its speed over the electrical lanes of one port, which are its
    connector's lanes shared by the ports of a cage; a single-port OSFP adapter cage has four (NVIDIA LinkX: "Single-
    port OSFP RHS 400G 4-channels ConnectX-7/OSFP adapters"; a twin-port OSFP, 8 channels, is two ports of four).
    HDR 200G on QSFP56 is 50 (50G-PAM4), NDR 400G 100 (100G-PAM4); a group's `lane_gbps` where given (NDR200 on a
    ConnectX-7: 2 x 100G-PAM4)."""
    if group.lane_gbps:
        return group.lane_gbps
    lanes = lanes_of(group.connector)
    per_cage = group.ports_per_cage or 1
    per_port = 4 if group.connector.lower().startswith("osfp") and per_cage == 1 else max(1, lanes // per_cage)
    return group.speed_gbps // per_port


def _optional_name(value: str) -> str:
    return check_name(value) if value else value


# a vendor or GPU model is a name (or empty): it becomes a NetBox directory and a Slurm Gres token
OptionalName = Annotated[str, AfterValidator(_optional_name)]


class SwitchModel(StrictModel):
    description: str
    vendor: OptionalName = ""
    technology: Literal["infiniband", "ethernet"]
    u: Int = Field(ge=1, le=60)
    power_w: Int = Field(ge=0, le=1_000_000, description="Maximum power with optics, W.")
    list_price_usd: Float = Field(
        default=0, ge=0, le=1e9, description="Placeholder list price: override with your quote."
    )
    platform: str | None = Field(
        default=None,
        description="Default network OS of an Ethernet switch; none for InfiniBand switches (the subnet manager "
        "configures them).",
    )
    mgmt_port: str = Field(default="mgmt0", description="Out-of-band management port (1G RJ45).")
    sonic_hwsku: str | None = Field(default=None, description="SONiC HwSKU of the model, for DEVICE_METADATA.")
    ports: tuple[SwitchPortGroup, ...] = Field(min_length=1)
    unverified: tuple[str, ...] = Field(default=(), description=UNVERIFIED_DOC)

    @field_validator("unverified")
    @classmethod
    def _unverified(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_unverified(cls, value)

    _known_platform = field_validator("platform")(check_platform)

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
    def _platform(self) -> Self:
        if self.technology == "ethernet" and self.platform is None:
            raise ValueError(f"an Ethernet switch needs a default `platform` ({', '.join(platform_names())})")
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
    top: Top | None = Field(default=None, description=TOP_DOC)
    ports_per_cage: Int | None = Field(default=None, ge=1, le=8, description=PORTS_PER_CAGE_DOC)
    lane_gbps: Int | None = Field(
        default=None,
        ge=1,
        le=1_000,
        description="The NIC's signalling, Gb/s a lane, where a port runs on fewer lanes than its cage's: a "
        "ConnectX-7 at NDR200 runs 2 lanes of 100G-PAM4 (so 100), not 4 of 50G-PAM4 (HDR). None: `speed_gbps` over "
        "the port's lanes.",
    )
    ethernet_max_gbps: Int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="The fastest Ethernet speed one port of the NIC runs, where below `speed_gbps` (ConnectX-8: "
        "800G as XDR InfiniBand, Ethernet 2 x 400GbE, no 800GbE on one port). None: `speed_gbps`.",
    )
    ports: list[NodePort] | None = Field(default=None, description="Ports in order; or give `count` and `name`.")
    count: Int | None = Field(default=None, ge=1, le=1024)
    name: str | None = Field(default=None, description="Port name template with `{n}` (1-based).")

    @model_validator(mode="after")
    def _ports_given(self) -> Self:
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


class RackSystem(StrictModel):
    """The rack-scale NVLink system a node type is one compute tray of (DGX GB200 NVL72): its `trays` stand in
    one rack and form one NVLink domain. The NVLink switch trays, in-rack management switches and power shelves
    are part of the system, not devices of the design; a tray's `power_w` is its share of the rack's power."""

    name: str = Field(description="The system (`DGX GB200 NVL72`).")
    trays: Int = Field(ge=1, le=1024, description="Compute trays per rack: the nodes of one NVLink domain.")
    gpus: Int = Field(ge=1, le=4096, description="GPUs in one NVLink domain.")
    nvlink_switch_trays: Int = Field(default=0, ge=0, le=1024, description="NVLink switch trays per rack.")
    nvlink_switch_chips: Int = Field(default=0, ge=0, le=4096, description="NVLink switch chips per rack.")
    nvlink_gbytes_per_gpu: Int = Field(
        default=0, ge=0, le=1_000_000, description="NVLink bandwidth per GPU, GB/s (both directions)."
    )
    mgmt_switches: Int = Field(default=0, ge=0, le=16, description="In-rack management (OOB) switches.")
    mgmt_switch_model: str | None = Field(default=None, description="Their model (`sn2201`).")
    power_shelves: Int = Field(default=0, ge=0, le=64, description="Power shelves per rack.")
    power_kw: Float = Field(gt=0, le=10_000, description="The full rack's maximum power, kW.")
    cooling: Literal["liquid", "hybrid", "air"] = Field(
        default="liquid", description="`liquid`: direct liquid cooling of the hot parts (a CDU is needed)."
    )
    unverified: tuple[str, ...] = Field(default=(), description=UNVERIFIED_DOC)

    @field_validator("unverified")
    @classmethod
    def _unverified(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_unverified(cls, value)


class NodeType(StrictModel):
    description: str
    vendor: OptionalName = Field(default="", description="Manufacturer (NetBox device types); empty: `Generic`.")
    gpus: Int = Field(default=0, ge=0, le=1024)
    gpu_model: OptionalName | None = Field(
        default=None, description="GPU type for Slurm's `Gres=gpu:<type>:<count>` (e.g. `h100`); none: untyped."
    )
    gpu_power_w: Int | None = Field(
        default=None, ge=1, le=10_000, description="One GPU's power limit (TDP), W: the GPU power alert's threshold."
    )
    gpu_temp_max_c: Int | None = Field(
        default=None, ge=1, le=150, description="GPU temperature above which the GPU temperature alert fires, °C."
    )
    gpu_bf16_tflops: Float | None = Field(
        default=None,
        ge=0,
        le=1e6,
        description="One GPU's dense (no sparsity) BF16 tensor throughput, TFLOPS, from the GPU's datasheet: "
        "`fabric plan` ranks by compute per dollar with it.",
    )
    gpu_fp8_tflops: Float | None = Field(
        default=None,
        ge=0,
        le=1e6,
        description="One GPU's dense FP8 tensor throughput, TFLOPS; none: the GPU has no FP8 (`fabric plan "
        "--precision fp8` then counts its BF16 rate).",
    )
    u: Int = Field(ge=1, le=60)
    power_w: Int = Field(ge=0, le=1_000_000)
    list_price_usd: Float = Field(
        default=0, ge=0, le=1e9, description="Placeholder list price: override with your quote."
    )
    subnet_manager: Literal["ufm", "upstream"] | None = Field(
        default=None,
        description="The OpenSM this node type runs as an InfiniBand SM host: `ufm` for a UFM appliance (NVIDIA's "
        "OpenSM); none: a server, upstream OpenSM. `infiniband.sm.flavor` defaults from it.",
    )
    ports: dict[str, NodePortGroup] = Field(
        description="Port groups by name (`compute`, `storage`, `inband`, `bmc`, …)."
    )
    rack_system: RackSystem | None = Field(
        default=None,
        description="The rack-scale NVLink system this node type is a compute tray of; its trays in one rack are "
        "one NVLink domain (Slurm block, IMEX domain, a locality level).",
    )
    unverified: tuple[str, ...] = Field(default=(), description=UNVERIFIED_DOC)

    @field_validator("unverified")
    @classmethod
    def _unverified(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_unverified(cls, value)


class MediaEnd(StrictModel):
    """The plug at one end of a cable assembly (DAC, ACC, AOC, copper): the cages it fits."""

    connectors: list[str] = Field(
        min_length=1,
        max_length=8,
        description="Cage types the plug fits (`osfp`; a QSFP56 plug also sits in a QSFP28 or QSFP112 cage).",
    )
    top: Top | None = Field(default=None, description=TOP_DOC)
    ports_per_cage: Int | None = Field(
        default=None, ge=1, le=8, description="Ports of the cage the plug fills: 2 for a twin-port OSFP plug."
    )
    plugs: Int = Field(default=1, ge=1, le=8, description="Plugs at this end: a 1:2 splitter's split end has 2.")

    def fits(self, connector: str, top: str | None, ports_per_cage: int | None) -> bool:
        """Whether the plug goes into a cage of this connector, thermal top and ports per cage (None: any)."""
        return (
            connector in self.connectors
            and (top is None or self.top is None or self.top == top)
            and (ports_per_cage is None or self.ports_per_cage is None or self.ports_per_cage == ports_per_cage)
        )


class Media(StrictModel):
    kind: MediaKind
    description: str
    technologies: list[Literal["infiniband", "ethernet"]]
    speeds_gbps: list[SpeedGbps] = Field(min_length=1, max_length=64)
    reach_m: Float = Field(gt=0, le=100_000)
    lengths_m: list[LengthM] = Field(min_length=1, max_length=256, description="Orderable lengths, ascending.")
    part: str = Field(
        description="Part number template; `{code}` is the LinkX length code (`030` = 30 m, `01A` = 1.5 m), "
        "`{length}` the length in metres."
    )
    price_usd: Float = Field(
        default=0,
        ge=0,
        le=1e9,
        description="Placeholder price per cable: DAC, AOC and copper with their ends; fibre (mmf, smf) without the "
        "transceivers, which are counted separately (catalog `transceivers`).",
    )
    price_per_m_usd: Float = Field(default=0, ge=0, le=1e9, description="Placeholder price per metre.")
    links: Int = Field(
        default=1,
        ge=1,
        le=8,
        description="Logical links one cable carries between one pair of cages (an OSFP-to-OSFP twin-port DAC/ACC: "
        "2, both 400G links of a cage pair); the BOM counts one cable per cage pair up to this many links.",
    )
    ends: tuple[MediaEnd, MediaEnd] | None = Field(
        default=None,
        description="Its plugs, one end each (DAC, ACC, AOC, copper): the cages each end fits. None for fibre (mmf, "
        "smf: its ends are transceivers, chosen per cage) or where no datasheet gives them (then any cage).",
    )
    unverified: tuple[str, ...] = Field(default=(), description=UNVERIFIED_DOC)

    @field_validator("unverified")
    @classmethod
    def _unverified(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_unverified(cls, value)

    def fits(self, a: tuple[str, str | None, int | None] | None, b: tuple[str, str | None, int | None] | None) -> bool:
        """Whether its plugs fit a link's two cages (connector, top, ports per cage; None: unknown), either way
        round; a medium without `ends` fits any; a splitter (an end of several plugs) only two known cages."""
        if self.ends is None:
            return True
        x, y = self.ends
        if (a is None or b is None) and max(x.plugs, y.plugs) > 1:
            return False
        return ((a is None or x.fits(*a)) and (b is None or y.fits(*b))) or (
            (a is None or y.fits(*a)) and (b is None or x.fits(*b))
        )

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
    def _ascending(cls, value: list[float]) -> list[float]:
        if value != sorted(value):
            raise ValueError("lengths must be ascending")
        return value


class LinkFibres(StrictModel):
    """How many fibres one link at a speed needs."""

    speed_gbps: SpeedGbps
    fibres: Int = Field(ge=1, le=16)


class Transceiver(StrictModel):
    """A pluggable optic: one per used cage of an optical (mmf/smf) link end; DAC, AOC and copper need none."""

    description: str
    connector: str = Field(description="Cage type it plugs into (osfp, qsfp112, qsfp56, qsfp28).")
    media_kinds: list[Literal["mmf", "smf"]] = Field(min_length=1)
    speeds_gbps: list[SpeedGbps] = Field(
        min_length=1, max_length=64, description="Link speeds it carries (per logical port)."
    )
    links: Int = Field(default=1, ge=1, le=8, description="Logical links one transceiver serves (twin-port OSFP: 2).")
    top: Top | None = Field(default=None, description=TOP_DOC)
    ports_per_cage: Int = Field(
        default=1, ge=1, le=8, description="Ports of the cage it serves: 2 for a twin-port OSFP module, else 1."
    )
    fibres_per_link: tuple[LinkFibres, ...] = Field(
        default=(),
        description="Fibres (MPO/LC cables) one link needs at a speed, where not 1: an 800G link between twin-port "
        "2 x SR4/DR4 modules is two 4-lane links, two MPO-12/APC fibres (`[{speed_gbps: 800, fibres: 2}]`).",
    )
    lane_gbps: tuple[SpeedGbps, ...] = Field(
        default=(),
        max_length=8,
        description="Optical lane rates it runs, Gb/s a lane (what the fibre carries, which the far transceiver must "
        "share): 100 for NDR/400GbE 100G-PAM4 modules, 50 for HDR/200GbE 50G-PAM4, 25 for 100G 4 x 25G NRZ. Without "
        "`host_lane_gbps`, its electrical lanes run the same rate (no gearbox). Empty: not declared, not checked.",
    )
    host_lane_gbps: tuple[SpeedGbps, ...] = Field(
        default=(),
        max_length=8,
        description="Electrical (host, cage-side) lane rates where they differ from the optical ones (a gearbox: a "
        "100G DR1 QSFP28 runs 4 x 25G NRZ to the cage and one 100G-PAM4 lambda on the fibre).",
    )
    part: str = ""
    power_w: Float = Field(default=0, ge=0, le=10_000)
    price_usd: Float = Field(default=0, ge=0, le=1e9, description="Placeholder price: override with your quote.")
    unverified: tuple[str, ...] = Field(default=(), description=UNVERIFIED_DOC)

    @field_validator("unverified")
    @classmethod
    def _unverified(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_unverified(cls, value)

    @model_validator(mode="after")
    def _gearbox(self) -> Self:
        if self.host_lane_gbps and not self.lane_gbps:
            raise ValueError("host_lane_gbps needs lane_gbps (the optical lane rates)")
        return self

    def fits(self, connector: str, top: str | None, ports_per_cage: int | None) -> bool:
        """Whether it plugs into a cage of this connector, thermal top and ports per cage (None: not declared)."""
        return (
            self.connector == connector
            and (top is None or self.top is None or self.top == top)
            and (ports_per_cage is None or self.ports_per_cage == ports_per_cage)
        )

    def fibres(self, speed_gbps: int) -> int:
        """Fibres one link at `speed_gbps` needs (1 unless `fibres_per_link` says otherwise)."""
        return next((f.fibres for f in self.fibres_per_link if f.speed_gbps == speed_gbps), 1)


class RackPart(StrictModel):
    description: str
    u: Int = Field(default=48, ge=1, le=60)
    price_usd: Float = Field(default=0, ge=0, le=1e9, description="Placeholder price: override with your quote.")


class PduPart(StrictModel):
    description: str
    kw: Float = Field(gt=0, le=10_000, description="Power it can deliver, kW.")
    price_usd: Float = Field(default=0, ge=0, le=1e9, description="Placeholder price: override with your quote.")


class CatalogFile(StrictModel):
    """A catalog file: the built-in one or a user's part file."""

    switches: dict[str, SwitchModel] = Field(default_factory=dict)
    nodes: dict[str, NodeType] = Field(default_factory=dict)
    media: dict[str, Media] = Field(default_factory=dict, description="Cable media in order of preference.")
    transceivers: dict[str, Transceiver] = Field(default_factory=dict, description="Optics, first match wins.")
    racks: dict[str, RackPart] = Field(default_factory=dict)
    pdus: dict[str, PduPart] = Field(default_factory=dict)

    @field_validator("switches", "nodes", "media")
    @classmethod
    def _part_names(cls, value: dict[str, object]) -> dict[str, object]:
        for name in value:
            check_name(name)
        return value


@dataclass(frozen=True)
class Catalog:
    """The built-in parts merged with the spec's part files, by kind and name."""

    switches: Mapping[str, SwitchModel]
    nodes: Mapping[str, NodeType]
    media: Mapping[str, Media]
    transceivers: Mapping[str, Transceiver] = field(default_factory=dict)
    racks: Mapping[str, RackPart] = field(default_factory=dict)
    pdus: Mapping[str, PduPart] = field(default_factory=dict)

    def merged(self, extra: CatalogFile) -> "Catalog":
        """User parts override built-in ones of the same name and add new ones (kept after the built-ins)."""
        return Catalog(
            switches={**self.switches, **extra.switches},
            nodes={**self.nodes, **extra.nodes},
            media={**self.media, **extra.media},
            transceivers={**self.transceivers, **extra.transceivers},
            racks={**self.racks, **extra.racks},
            pdus={**self.pdus, **extra.pdus},
        )


@cache
def builtin_catalog() -> Catalog:
    """The bundled parts. Read from catalog.json, catalog.yaml's data as JSON (tests/unit/spec/test_catalog.py keeps
    the two in step; `pytest --update-golden` rewrites it): json parses it many times faster than the YAML reader with
    positions, a cost of every process's first build. Validated by the same models as ever."""
    text = Path(__file__).with_name("catalog.json").read_text(encoding="utf-8")  # as resources.py finds templates
    data = CatalogFile.model_validate(json.loads(text))
    return Catalog(
        switches=data.switches,
        nodes=data.nodes,
        media=data.media,
        transceivers=data.transceivers,
        racks=data.racks,
        pdus=data.pdus,
    )


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
    asic_lane: int | None = None  # first ASIC lane where the catalog's lane map says (None: `lane`)


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
            asic = None if group.lane_map is None else group.lane_map[cage - group.first_cage] + (sub - 1) * per_port
            catalog_name = mode.name.format(cage=cage, sub=sub, sub0=sub - 1, n=n)
            name = port_name(
                platform, catalog_name, cage=cage, sub=sub, n=n, lane=lane, lanes=per_port, cage_lanes=group.lanes
            )
            ports.append(
                SwitchPort(
                    name, cage, sub, mode.speed_gbps, group.group, group.connector, mode.ports, lane, per_port, asic
                )
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


# --------------------------------------------------------------------------------------------- consistency


@dataclass(frozen=True, slots=True)
class PortClash:
    """Two ports of one part that share a name: where (a YAML path under the part), what and how to fix it."""

    path: tuple[str | int, ...]  # under the part: ("ports", 0, "modes", 1, "name")
    message: str
    hint: str


def switch_port_clashes(model: SwitchModel) -> list[PortClash]:
    """Port names that two ports of `model` share: within one mode of a cage group (a name template that lacks
    what tells its ports apart: `{cage}`/`{n}`, or a breakout's `{sub}`), or between two cage groups, as the
    catalog names them and as each platform the model can run names them (EOS: `Ethernet<cage>/<lane>`, so two
    groups may not number their cages alike). One finding per mode or group pair, with the first shared name."""
    clashes: list[PortClash] = []
    platforms: tuple[str | None, ...] = (None, *platform_names()) if model.technology == "ethernet" else (None,)
    seen_pairs: set[tuple[int, int]] = set()
    for platform in platforms:
        named = "" if platform is None else f" as {platform} names them"
        owner: dict[str, int] = {}
        for i, group in enumerate(model.ports):
            in_group: set[str] = set()
            for j, mode in enumerate(group.modes):
                names: set[str] = set()
                for port in _group_ports(model, i, mode, platform):
                    if port.name not in names:
                        names.add(port.name)
                        continue
                    if platform is None:
                        clashes.append(
                            PortClash(
                                ("ports", i, "modes", j, "name"),
                                f"mode {mode.ports} x {mode.speed_gbps}G of cage group `{group.group}` names two "
                                f"ports `{port.name}` (template `{mode.name}`)",
                                _template_hint(mode),
                            )
                        )
                    elif _mode_unique(model, i, mode):  # else reported above, as the catalog names them
                        clashes.append(
                            PortClash(
                                ("ports", i, "modes", j, "name"),
                                f"mode {mode.ports} x {mode.speed_gbps}G of cage group `{group.group}`{named} has "
                                f"two ports `{port.name}`",
                                "give each cage group its own cage numbers (`first_cage`)",
                            )
                        )
                    break
                in_group |= names
            for name in sorted(in_group):
                other = owner.setdefault(name, i)
                if other != i and (other, i) not in seen_pairs:
                    seen_pairs.add((other, i))
                    clashes.append(
                        PortClash(
                            ("ports", i, "group"),
                            f"cage groups `{model.ports[other].group}` and `{group.group}`{named} both have a port "
                            f"`{name}`",
                            "give each cage group its own cage numbers (`first_cage`) or name template",
                        )
                    )
                    break
    return clashes


def _mode_unique(model: SwitchModel, i: int, mode: PortMode) -> bool:
    """Whether the catalog's own names of one mode are unique (a platform's clash is then reported as its own)."""
    names = [p.name for p in _group_ports(model, i, mode, None)]
    return len(names) == len(set(names))


def _template_hint(mode: PortMode) -> str:
    fields = set(_template_fields(mode.name))
    if not fields & {"cage", "n"}:
        return "name each cage: put `{cage}` or `{n}` in the template (as in `swp{n}`)"
    if mode.ports > 1 and not fields & {"sub", "sub0", "n"}:
        return "a breakout names each sub-port: put `{sub}` or `{sub0}` in the template (as in `swp{cage}s{sub0}`)"
    return "make the template name every port of the mode apart (`{cage}`, `{sub}`, `{n}`)"


def _template_fields(template: str) -> list[str]:
    from string import Formatter

    return [f for _, f, _, _ in Formatter().parse(template) if f]


def node_port_clashes(node: NodeType) -> list[PortClash]:
    """Port names a node type gives twice (within a port group or in two groups): two cables would land on one port.
    One finding per name."""
    clashes: list[PortClash] = []
    owner: dict[str, str] = {}
    for group_name, group in node.ports.items():
        seen: set[str] = set()  # the names of this group's ports so far
        for k, port in enumerate(group.port_list()):
            other = owner.setdefault(port.name, group_name)
            again = port.name in seen
            seen.add(port.name)
            if other == group_name and not again:
                continue
            if group.ports is not None:
                where: tuple[str | int, ...] = ("ports", group_name, "ports", k, "name")
                hint = "give every port of the node type its own name"
            else:
                where = ("ports", group_name, "name")
                hint = f"name each port: put `{{n}}` in the template (e.g. `{group.name}{{n}}`)"
            if other != group_name:
                hint = "give every port of the node type its own name (a port belongs to one port group)"
            place = (
                f"port group `{group_name}` names"
                if other == group_name
                else f"port groups `{other}` and `{group_name}` name"
            )
            clashes.append(PortClash(where, f"{place} port `{port.name}` twice", hint))
            if group.ports is None:
                break
    return clashes
