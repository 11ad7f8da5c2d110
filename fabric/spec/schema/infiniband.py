"""An InfiniBand fabric's subnet settings (`fabrics.<f>.infiniband`): OpenSM, partitions and QoS."""

# No `from __future__ import annotations` in the model modules: pydantic would compile each annotation string
# at import; written ones are evaluated once, by Python.
import re
from typing import Literal, Self

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from fabric.spec.schema.types import (
    Bool,
    Int,
    SecretRef,
    StrictModel,
    check_groups,
    check_name,
    no_entries,
)

ROUTING_ENGINES = (
    "ftree",
    "updn",
    "dnup",
    "minhop",
    "lash",
    "dor",
    "nue",
    "dfsssp",
    "sssp",
    "ar_ftree",
    "ar_updn",
    "no_fallback",
)

ABS_PATH_RE = re.compile(r"/[A-Za-z0-9._+@/-]{0,254}\Z")


class Partition(StrictModel):
    """A P_Key partition (partitions.conf). Members are node groups; their ports in this fabric join it."""

    name: str = Field(description="Partition name (letters, digits, `.`, `_`, `-`).")
    pkey: Int = Field(ge=1, le=0x7FFF, description="P_Key, 15 bits (0x7fff is the default partition).")
    members: list[str] | Literal["all"] = Field(
        default="all",
        description="Node groups that are full members. `all`: every port (`ALL`, switches included, for the "
        "default partition; `ALL_CAS` for another).",
    )
    limited: list[str] = Field(
        default_factory=no_entries,
        description="Node groups that are limited members: they talk to full members only, not to each other.",
    )
    ipoib: Bool = Field(default=True, description="Create the IPoIB broadcast group.")
    mtu: Literal[256, 512, 1024, 2048, 4096] | None = Field(
        default=None, description="MTU of the IPoIB broadcast group. Default: `infiniband.mtu`."
    )
    rate_gbps: Int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="Rate of the IPoIB broadcast group, Gb/s. Default: the slowest member port, so that every "
        "member can join.",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_name(value)

    @field_validator("limited")
    @classmethod
    def _limited(cls, value: list[str]) -> list[str]:
        return check_groups(value)

    @field_validator("members")
    @classmethod
    def _members(cls, value: list[str] | str) -> list[str] | str:
        return value if isinstance(value, str) else check_groups(value)

    @model_validator(mode="after")
    def _membership(self) -> Self:
        if self.members == "all" and self.limited:
            raise ValueError("`members: all` makes every port a full member; list full members to use `limited`")
        both = sorted(set(self.limited) & set(self.members if isinstance(self.members, list) else []))
        if both:
            raise ValueError(f"node group `{both[0]}` is both a full and a limited member")
        return self


class SubnetManager(StrictModel):
    hosts: list[str] = Field(
        default_factory=no_entries,
        description="Node names that run the SM, master first; each gets its own opensm.conf, bound to its first "
        "port in this fabric.",
    )

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        for host in value:
            check_name(host)
        return value

    priority: Int = Field(
        default=15, ge=0, le=15, description="SM priority of the master; standby i (1-based) gets `priority - i`."
    )
    flavor: Literal["ufm", "upstream"] | None = Field(
        default=None,
        description="Which OpenSM the SM hosts run. `ufm`: NVIDIA's OpenSM inside UFM: the adaptive-routing engine "
        "`ar_updn` by default and UFM's paths (`/opt/ufm/files/conf/opensm`, log `/opt/ufm/files/log/opensm.log`). "
        "`upstream`: upstream OpenSM (`ftree,updn`, `/etc/opensm`). Settings written in the spec "
        "(`routing_engine`, `config_dir`, `log_file`) win over the flavor's defaults. None: `ufm` when every SM "
        "host's node type is a UFM appliance (catalog `subnet_manager: ufm`), else `upstream`.",
    )
    m_key: SecretRef | None = Field(
        default=None,
        description="M_Key the SM sets on every port (opensm.conf `m_key`): a secret reference whose value is a "
        "64-bit number, `0x` and up to 16 hex digits. It is written into opensm.conf only. None: OpenSM's 0 (no "
        "M_Key).",
    )
    m_key_protection_level: Int = Field(
        default=1,
        ge=0,
        le=2,
        description="With `m_key`: 0 lets any Get read the key, 1 returns it as zero (diagnostics such as "
        "ibnetdiscover still work), 2 fails Gets without the key.",
    )
    sm_key: SecretRef | None = Field(
        default=None,
        description="SM_Key the SMs authenticate each other with (opensm.conf `sm_key`), a secret reference like "
        "`m_key`. None: OpenSM's default 0x1.",
    )


class IbQos(StrictModel):
    """InfiniBand QoS (opensm.conf `qos_*`): service levels (SL) onto virtual lanes (VL) and VL arbitration.

    Defaults follow OpenSM's built-in tables (VL0 high priority, the other VLs low priority at weight 4),
    cut to `max_vls`.
    """

    max_vls: Literal[1, 2, 4, 8, 15] = Field(default=8, description="Data VLs the SM configures (`qos_max_vls`).")
    high_limit: Int = Field(
        default=0,
        ge=0,
        le=255,
        description="IBA HighLimit (`qos_high_limit`): high-priority data sent before a pending low-priority "
        "packet must go (0: one packet; 255: unlimited).",
    )
    vlarb_high: dict[Int, Int] | None = Field(
        default=None, description="High-priority arbitration, VL → weight (0–255). Default: VL0 weight 4."
    )
    vlarb_low: dict[Int, Int] | None = Field(
        default=None, description="Low-priority arbitration, VL → weight (0–255). Default: VL1 … weight 4 each."
    )
    sl2vl: list[Int] | None = Field(
        default=None,
        min_length=16,
        max_length=16,
        description="The VL of each of the 16 SLs. Default: SL i → VL i mod max_vls.",
    )

    @model_validator(mode="after")
    def _lanes(self) -> Self:
        for name in ("vlarb_high", "vlarb_low"):
            table = getattr(self, name) or {}
            for vl, weight in table.items():
                if not 0 <= vl < self.max_vls:
                    raise ValueError(
                        f"{name}: VL {vl} is not a data VL (0–{self.max_vls - 1} with max_vls {self.max_vls})"
                    )
                if not 0 <= weight <= 255:
                    raise ValueError(f"{name}: weight {weight} of VL {vl} is not in 0–255")
        for sl, vl in enumerate(self.sl2vl or []):
            if not 0 <= vl < self.max_vls:
                raise ValueError(f"sl2vl: SL {sl} maps to VL {vl}; data VLs are 0–{self.max_vls - 1}")
        return self

    def tables(self) -> tuple[dict[Int, Int], dict[Int, Int], list[Int]]:
        """High and low arbitration tables and the SL→VL map, defaults filled in."""
        high = self.vlarb_high if self.vlarb_high is not None else {0: 4}
        low = self.vlarb_low if self.vlarb_low is not None else {vl: 4 for vl in range(1, self.max_vls)} or {0: 4}
        sl2vl = self.sl2vl if self.sl2vl is not None else [sl % self.max_vls for sl in range(16)]
        return dict(sorted(high.items())), dict(sorted(low.items())), list(sl2vl)


def _absolute(value: str) -> str:
    if not value.startswith("/"):
        raise ValueError(f"{value!r} must be an absolute path (OpenSM resolves nothing)")
    if not ABS_PATH_RE.match(value) or "/../" in value + "/" or "/./" in value + "/":
        raise ValueError("must be a plain absolute path (letters, digits, '.', '_', '+', '@', '-' and '/'; no '..')")
    return value


class InfinibandSettings(StrictModel):
    """InfiniBand subnet settings: rendered into `infiniband/<fabric>/` (opensm.conf, GUID files, partitions.conf,
    node-name-map, topology.net)."""

    subnet_prefix: str = Field(default="0xfe80000000000000", description="64-bit subnet prefix, hex.")
    routing_engine: list[str] = Field(
        default_factory=lambda: ["ftree", "updn"],
        description="OpenSM routing engines in order (default `[ftree, updn]`; `[ar_updn]` with `sm.flavor: "
        "ufm`). OpenSM tries each; fabric appends `no_fallback` (unless the "
        "list has `minhop` or `no_fallback`) so that a failing list never falls back to minhop silently.",
    )
    lmc: Int = Field(default=0, ge=0, le=7, description="LID mask control; ftree needs 0.")
    mtu: Literal[256, 512, 1024, 2048, 4096] = Field(default=4096, description="IB MTU in bytes.")
    sm: SubnetManager = Field(default_factory=SubnetManager.model_construct)
    partitions: list[Partition] = Field(
        default_factory=lambda: [Partition(name="Default", pkey=0x7FFF)],
        description="P_Key partitions. Without one of P_Key 0x7fff, partitions.conf gets an explicit "
        "`Default=0x7fff : ALL=limited, SELF=full` (every port reaches the SM, not each other).",
    )
    inventory: str | None = Field(
        default=None,
        description="GUID inventory, a CSV file relative to the spec with columns `device,port,node_guid` and "
        "optionally `port_guid` (see the README). Devices it lacks get placeholder GUIDs derived from their "
        "names, marked as such in every file and announced by a `placeholder-guids` warning.",
    )
    compute_groups: list[str] | None = Field(
        default=None,
        description="Node groups whose ports are ftree compute nodes (`cn_guid_file`). Default: every attached "
        "group not in `io_groups`.",
    )
    io_groups: list[str] = Field(
        default_factory=no_entries,
        description="Node groups listed as ftree I/O nodes (`io_guid_file`), e.g. storage or UFM hosts.",
    )
    max_reverse_hops: Int = Field(
        default=0, ge=0, le=8, description="Wrong-way hops I/O nodes may take (`max_reverse_hops`)."
    )
    sweep_interval_s: Int = Field(
        default=10,
        ge=0,
        le=1_000_000,
        description="Seconds between light sweeps; 0 disables periodic sweeps (traps still trigger heavy ones).",
    )
    qos: IbQos | None = Field(default=None, description="QoS and SL-to-VL mapping; `null` leaves QoS off.")
    config_dir: str = Field(
        default="/etc/opensm",
        description="Where the generated files are installed; opensm.conf names them there. With `sm.flavor: "
        "ufm` the default is UFM's `/opt/ufm/files/conf/opensm`.",
    )
    log_file: str = Field(
        default="/var/log/opensm.log",
        description="OpenSM's log file. With `sm.flavor: ufm` the default is UFM's `/opt/ufm/files/log/opensm.log`.",
    )
    log_max_size_mb: Int = Field(
        default=0, ge=0, le=1_000_000, description="Restart the log when it grows past this many MB (0: unlimited)."
    )
    dump_dir: str = Field(default="/var/log", description="Where OpenSM dumps its tables (`dump_files_dir`).")
    sharp: Bool = Field(
        default=False, description="Enable SHARP aggregation. Not supported yet: a `not-supported` warning, no effect."
    )
    adaptive_routing: Bool = Field(
        default=False,
        description="Use adaptive routing (NVIDIA OpenSM, UFM). Not supported yet: a `not-supported` warning.",
    )

    @field_validator("subnet_prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if not re.fullmatch(r"0x[0-9a-fA-F]{16}", value):
            raise ValueError("must be 0x followed by 16 hex digits")
        return value.lower()

    @field_validator("routing_engine")
    @classmethod
    def _engines(cls, value: list[str]) -> list[str]:
        for engine in value:
            if engine not in ROUTING_ENGINES:
                raise ValueError(f"unknown routing engine {engine!r}; known: {', '.join(ROUTING_ENGINES)}")
        if not [e for e in value if e != "no_fallback"]:
            raise ValueError("name at least one routing engine")
        if len(set(value)) != len(value):
            raise ValueError("lists an engine twice")
        return value

    @field_validator("io_groups")
    @classmethod
    def _io(cls, value: list[str]) -> list[str]:
        return check_groups(value)

    @field_validator("compute_groups")
    @classmethod
    def _cn(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else check_groups(value)

    @field_validator("config_dir", "log_file", "dump_dir")
    @classmethod
    def _paths(cls, value: str) -> str:
        return _absolute(value)

    @model_validator(mode="after")
    def _groups(self) -> Self:
        both = sorted(set(self.io_groups) & set(self.compute_groups or []))
        if both:
            raise ValueError(f"node group `{both[0]}` is both a compute and an I/O group")
        names = [p.name for p in self.partitions]
        if len(set(names)) != len(names):
            raise ValueError("partition names must be unique")
        return self
