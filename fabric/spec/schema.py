"""The spec: pydantic models of the YAML a user writes.

Every model forbids unknown keys and is frozen. Field descriptions are the spec reference
(`docs/spec-reference.md` is generated from them by `fabric schema --markdown`), so they say
what a field means, its default and, where several places can set it, the precedence.
Cross-references (part names, node groups, fabrics) are checked by `loader.py`, which knows
the catalog; this module checks only what one field or one object can tell on its own.
"""

# No `from __future__ import annotations` in the model modules: pydantic would compile each annotation string
# at import (~8 ms in all); written ones are evaluated once, by Python.
import contextlib
import math
import re
import string
from fractions import Fraction
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_interface, ip_network
from typing import Annotated, Any, Literal, Self, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from fabric.model.kinds import ROLES, SWITCH_LAYERS, MediaKind, Role, SwitchLayer
from fabric.spec.platforms import PlatformName

FABRIC_ROLES = ROLES
LAYERS = SWITCH_LAYERS
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

# Names become file names, hostnames and config words: letters, digits, '.', '_', '-', at most 64, and `\Z`
# (not `$`, which accepts a final newline).
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
NAME_RULE = "must start with a letter or digit and hold only letters, digits, '.', '_' and '-'"
MAX_NAME = 64
PORT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:-]{0,63}\Z")
ENV_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
HOST_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\Z")
ABS_PATH_RE = re.compile(r"/[A-Za-z0-9._+@/-]{0,254}\Z")


def is_name(value: str) -> bool:
    return bool(NAME_RE.match(value)) and ".." not in value and len(value) <= MAX_NAME


def no_entries() -> list[Any]:
    """An empty list: the default of a list field. (Not `list` itself: pydantic reads every default factory's
    signature, and list's is parsed from its text, ~0.3 ms a field at each import.)"""
    return []


class StrictModel(BaseModel):
    # defer_build: a model nested in the spec (or in a catalog file) is validated by its root's validator, which
    # holds its schema; only a root builds a validator of its own (Spec at import, CatalogFile when the catalog is
    # first read), and a nested model when something validates it alone. A validator and serializer per model
    # cost ~10 ms of every import. A section's default is made by model_construct, not by validating {} (which
    # would build the section's own validator): the same value, as those sections have no model validators and
    # pydantic validates no default (tests/unit/pipeline/test_startup.py checks both).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


def _only_bool(value: Any) -> Any:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


# YAML `true` is not the number 1, and `1` or `"yes"` is not true.
Int = Annotated[int, BeforeValidator(_not_bool)]
Float = Annotated[float, BeforeValidator(_not_bool)]
Bool = Annotated[bool, BeforeValidator(_only_bool)]


def check_name(value: str) -> str:
    if not NAME_RE.match(value):
        raise ValueError(NAME_RULE)
    if ".." in value:
        raise ValueError("must not hold '..'")
    if len(value) > MAX_NAME:
        raise ValueError(f"is longer than {MAX_NAME} characters")
    return value


def check_port(value: str) -> str:
    if not PORT_RE.match(value) or ".." in value:
        raise ValueError("is not a port name (letters, digits, '.', '_', '/', ':' and '-', at most 64)")
    return value


def check_host(value: str) -> str:
    """An IP address or an RFC 1123 hostname (a service a switch is pointed at)."""
    with contextlib.suppress(ValueError):
        ip_address(value)
        return value
    labels = value.split(".")
    if len(value) > 253 or not all(HOST_LABEL.match(label) for label in labels) or labels[-1].isdigit():
        raise ValueError("is neither an IP address nor a hostname (RFC 1123: letters, digits, '-' and '.')")
    return value


def check_template(template: str, allowed: tuple[str, ...], *, kind: str = "name") -> str:
    """A name template is a Python format string whose fields are among `allowed`; what it expands to is a
    valid name (`kind` name, port or part number), so no template can reach outside its directory or line."""
    try:
        fields = [(f, spec) for _, f, spec, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise ValueError(f"is not a valid name template ({exc})") from None
    for name, spec in fields:
        base = name.split(".")[0].split("[")[0]
        if base not in allowed or base != name:
            raise ValueError(f"uses {{{name}}}; a template may use {', '.join('{' + a + '}' for a in allowed)}")
        if spec and not re.fullmatch(r"0?[0-9]{1,2}d?", spec):
            raise ValueError(f"formats {{{name}}} with `{spec}`; only a zero-padded width such as `:03d` is allowed")
    probe = {a: 1 for a in allowed}
    try:
        expanded = template.format(**probe)
    except (ValueError, KeyError, IndexError) as exc:
        raise ValueError(f"is not a valid name template ({exc})") from None
    pattern = {"name": NAME_RE, "port": PORT_RE, "part": PART_RE}[kind]
    if not pattern.match(expanded) or ".." in expanded or len(expanded) > MAX_NAME:
        raise ValueError(f"expands to `{expanded}`" if _printable(expanded) else "expands to an invalid name")
    return template


PART_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]{0,63}\Z")


def _printable(value: str) -> bool:
    return value.isprintable() and len(value) <= 64


MAX_RATIO = 100


def parse_ratio(value: Any) -> Any:
    """'4:3' → 1.333…, 2 → 2.0. Down-to-up bandwidth; 1.0 is non-blocking."""
    if isinstance(value, bool):
        raise ValueError("must be a ratio like '1:1' or '4:3', or a number")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        if not value > 0:
            raise ValueError("must be positive")
        if value > MAX_RATIO or value < 1 / MAX_RATIO:
            raise ValueError(f"must be between 1:{MAX_RATIO} and {MAX_RATIO}:1")
        return float(value)
    if isinstance(value, str):
        match = re.fullmatch(r"\s*([0-9]{1,6}(?:\.[0-9]{1,6})?)\s*:\s*([0-9]{1,6}(?:\.[0-9]{1,6})?)\s*", value)
        if match:
            down, up = Fraction(match.group(1)), Fraction(match.group(2))
            if down <= 0 or up <= 0:
                raise ValueError("both sides of a ratio must be positive")
            if not 1 / MAX_RATIO <= down / up <= MAX_RATIO:
                raise ValueError(f"must be between 1:{MAX_RATIO} and {MAX_RATIO}:1")
            return float(down / up)
    raise ValueError(f"{value!r} is not a ratio like '1:1' or '4:3'")


# Editors see what a user may write (the JSON Schema's input types), the models hold what it means.
RatioText = Annotated[str, Field(pattern=r"^\s*\d+(\.\d+)?\s*:\s*\d+(\.\d+)?\s*$")]
Ratio = Annotated[float, BeforeValidator(parse_ratio, json_schema_input_type=RatioText | float)]


def _network(version: int) -> Any:
    def parse(value: Any) -> Any:
        if isinstance(value, IPv4Network | IPv6Network):
            return value
        if not isinstance(value, str):
            raise ValueError(f"must be an IPv{version} prefix such as {'10.0.0.0/16' if version == 4 else 'fd00::/48'}")
        try:
            network = ip_network(value, strict=False)
        except ValueError:
            raise ValueError(f"{value!r} is not an IPv{version} prefix") from None
        if network.version != version:
            raise ValueError(f"{value} is not an IPv{version} prefix")
        if ip_interface(value).ip != network.network_address:
            raise ValueError(f"{value} has host bits set; did you mean {network}?")
        return network

    return parse


Network4 = Annotated[IPv4Network, BeforeValidator(_network(4))]
Network6 = Annotated[IPv6Network, BeforeValidator(_network(6))]


def format_ratio(value: float) -> str:
    """1.0 → '1:1', 1.333… → '4:3', 1.0156 → '1.02:1'."""
    frac = Fraction(value).limit_denominator(16)
    if abs(float(frac) - value) < 1e-9:
        return f"{frac.numerator}:{frac.denominator}"
    return f"{value:.2f}:1"


# --------------------------------------------------------------------------------------------- racks


class RackLayout(StrictModel):
    """Where racks stand. Racks are named `<row><position>` (A01, A02, …) and filled row by row."""

    rows: list[str] = Field(default=["A"], min_length=1, description="Row names, front to back.")
    per_row: Int | None = Field(
        default=None,
        ge=1,
        le=10_000,
        description="Racks per row. Default: as many as the design needs, spread over the rows.",
    )
    rack_units: Int = Field(default=48, ge=4, le=60, description="Usable rack units per rack.")
    reserved_u: Int = Field(
        default=0, ge=0, le=60, description="Units kept free at the top of every rack (patch panels)."
    )
    power_kw: Float = Field(default=40.0, gt=0, le=10_000, description="Power budget per rack, kW.")
    pitch_m: Float = Field(default=0.6, gt=0, le=100, description="Rack width: distance between neighbouring racks, m.")
    depth_m: Float = Field(default=1.2, gt=0, le=100, description="Rack depth, m.")
    row_gap_m: Float = Field(default=1.8, ge=0, le=100, description="Aisle between rows, m.")
    layout: Literal["sequential", "superpod"] = Field(
        default="sequential",
        description="`sequential`: each node group, then each fabric's switches, in racks of their own, one after "
        "another (a node's leaf can stand far away). `superpod`: as DGX SuperPODs stand, each scalable unit's nodes "
        "followed by a network rack with that SU's leaf switches (of every fabric with SUs), and the spines, cores, "
        "other switches and other node groups in central racks between the first and the second half of the SUs; "
        "cables to the leaves get short.",
    )

    @field_validator("rows")
    @classmethod
    def _unique_rows(cls, rows: list[str]) -> list[str]:
        for row in rows:
            check_name(row)
        if len(set(rows)) != len(rows):
            raise ValueError("row names must be unique")
        return rows


# --------------------------------------------------------------------------------------------- nodes


class NodeGroup(StrictModel):
    """A group of identical servers (GPU nodes, storage, UFM or management hosts)."""

    group: str = Field(description="Group name, referenced by `fabrics.<f>.attach[].group`.")
    type: str = Field(description="Node type from the catalog (e.g. `dgx-h100`).")
    count: Int = Field(ge=1, description="Number of nodes.")
    per_rack: Int | None = Field(
        default=None, ge=1, le=10_000, description="Nodes per rack. Default: as many as fit by rack units and power."
    )
    name: str = Field(
        default="{group}{index:03d}",
        description="Node name template; fields `{group}` and `{index}` (1-based, from `start`).",
    )
    start: Int = Field(default=1, ge=0, le=1_000_000_000, description="Index of the first node.")

    @field_validator("group")
    @classmethod
    def _group_name(cls, value: str) -> str:
        return check_name(value)

    @field_validator("name")
    @classmethod
    def _template(cls, value: str) -> str:
        return check_template(value, ("group", "index"))


# --------------------------------------------------------------------------------------------- topology


class ClosTopology(StrictModel):
    """A generated folded Clos (fat tree / spine-leaf) of 2 or 3 tiers."""

    kind: Literal["fat-tree", "spine-leaf", "clos"] = Field(
        description="`fat-tree`, `spine-leaf` and `clos` are the same generator."
    )
    tiers: Literal["auto", 2, 3] = Field(
        default="auto",
        description="Switch tiers. `auto`: the fewest tiers that reach every endpoint at the target oversubscription.",
    )
    rail_optimized: Bool = Field(
        default=False,
        description="Port i (GPU i) of every node in a scalable unit lands on that unit's rail-i leaf.",
    )
    scalable_unit: Int | None = Field(
        default=None, ge=1, le=1_000_000, description="Nodes per scalable unit (SU). Required when `rail_optimized`."
    )
    planes: Int = Field(
        default=1,
        ge=1,
        le=8,
        description="Parallel identical fabrics. A node's attached ports are dealt over the planes in turn "
        "(port j → plane j mod planes, ports ordered by rail).",
    )
    partial_su: Literal["full", "populated"] = Field(
        default="full",
        description="`full` (NVIDIA's rule): a partly filled SU still gets all its leaves and uplinks. "
        "`populated`: the last SU's leaves get only the uplinks their connected ports need.",
    )
    leaves: Int | None = Field(default=None, ge=1, le=100_000, description="At least this many leaves (per plane).")
    spines: Int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="Spines (per plane; per pod in 3 tiers). Default: the fewest that fit, spread evenly.",
    )
    cores: Int | None = Field(
        default=None, ge=1, le=100_000, description="Cores per core group (3 tiers). Default: the fewest that fit."
    )
    downlinks: Int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description="Node-facing ports per leaf. Default: from the radix and oversubscription.",
    )
    uplinks: Int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description="Spine-facing ports per leaf. Default: from the radix and oversubscription.",
    )
    spine_uplinks: Int | None = Field(default=None, ge=1, le=4096, description="Core-facing ports per spine (3 tiers).")

    @model_validator(mode="after")
    def _su_needed(self) -> Self:
        if self.rail_optimized and self.scalable_unit is None:
            raise ValueError("rail_optimized needs scalable_unit (nodes per SU, e.g. 32)")
        return self


class ExplicitSwitch(StrictModel):
    name: str = Field(description="Switch name, unique in the design.")
    model: str = Field(description="Switch model from the catalog.")
    layer: SwitchLayer = Field(description="Tier of the switch.")
    rack: str | None = Field(default=None, description="Rack name (e.g. `C03`); needed for cable lengths.")
    u: Int | None = Field(default=None, ge=1, le=60, description="Lowest rack unit the switch occupies.")
    plane: Int | None = Field(default=None, ge=1, le=8, description="Plane, when the fabric has several.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_name(value)

    @field_validator("rack")
    @classmethod
    def _rack(cls, value: str | None) -> str | None:
        return None if value is None else check_name(value)


class ExplicitLink(StrictModel):
    a: str = Field(description="One end, `device:port`.")
    b: str = Field(description="Other end, `device:port`.")
    media: str | None = Field(default=None, description="Media part name; default: chosen by distance.")
    length_m: Float | None = Field(
        default=None, gt=0, le=10_000, description="Cable length; default: from rack positions."
    )

    @field_validator("a", "b")
    @classmethod
    def _end(cls, value: str) -> str:
        device, _, port = value.partition(":")
        if not device or not port:
            raise ValueError("is not `device:port`")
        if not is_name(device):
            raise ValueError(f"device {NAME_RULE} (at most {MAX_NAME}, no '..')")
        check_port(port)
        return value


class ExplicitTopology(StrictModel):
    """A topology given by hand: switches and links. All checks run on it as on a generated one."""

    kind: Literal["explicit"]
    switches: list[ExplicitSwitch] = Field(min_length=1)
    links: list[ExplicitLink] = Field(min_length=1)
    rail_optimized: Bool = Field(default=False, description="Check that every leaf carries the ports of one rail only.")


class CsvTopology(StrictModel):
    """A topology imported from a cabling CSV in fabric's own `cabling.csv` format."""

    kind: Literal["cabling-csv"]
    file: str = Field(description="CSV path, relative to the spec file.")
    rail_optimized: Bool = Field(default=False, description="Check that every leaf carries the ports of one rail only.")
    models: dict[str, str] = Field(
        default_factory=dict,
        description="Switch model per device name; default: `fabrics.<f>.switches.<layer>` by the row's `tier`.",
    )

    @field_validator("models")
    @classmethod
    def _devices(cls, value: dict[str, str]) -> dict[str, str]:
        for device in value:
            check_name(device)
        return value


Topology = Annotated[
    ClosTopology | ExplicitTopology | CsvTopology,
    Field(discriminator="kind"),
]


# --------------------------------------------------------------------------------------------- fabric parts


class SwitchChoice(StrictModel):
    model: str = Field(description="Switch model from the catalog.")
    platform: PlatformName | None = Field(
        default=None,
        description="Network OS of this layer's switches. Precedence: this field → `fabrics.<f>.platform` → the "
        "catalog model's default platform.",
    )


def _switch_choice(value: Any) -> Any:
    return {"model": value} if isinstance(value, str) else value


SwitchRef = Annotated[SwitchChoice, BeforeValidator(_switch_choice, json_schema_input_type=str | SwitchChoice)]


class LayerSwitches(StrictModel):
    """Switch model per layer: a model name, or `{model, platform}`."""

    leaf: SwitchRef
    spine: SwitchRef | None = Field(default=None, description="Default: the leaf model.")
    core: SwitchRef | None = Field(default=None, description="Default: the spine model.")

    def for_layer(self, layer: str) -> SwitchChoice:
        if layer == "leaf":
            return self.leaf
        if layer == "spine":
            return self.spine or self.leaf
        return self.core or self.spine or self.leaf


class OversubscriptionByLayer(StrictModel):
    leaf: Ratio = Field(default=1.0, description="Leaf down:up bandwidth.")
    spine: Ratio = Field(default=1.0, description="Spine down:up bandwidth (3 tiers).")


def _oversub(value: Any) -> Any:
    return value if isinstance(value, dict | OversubscriptionByLayer) else {"leaf": value, "spine": value}


Oversubscription = Annotated[
    OversubscriptionByLayer,
    BeforeValidator(_oversub, json_schema_input_type=RatioText | float | OversubscriptionByLayer),
]


class NodeAttach(StrictModel):
    group: str = Field(description="Node group (`nodes[].group`).")
    ports: str = Field(description="Port group of the node type (e.g. `compute`, `storage`, `inband`, `bmc`).")

    @field_validator("group", "ports")
    @classmethod
    def _names(cls, value: str) -> str:
        return check_name(value)


class SwitchMgmtAttach(StrictModel):
    switch_mgmt: list[str] | Literal["all"] = Field(
        description="Attach the management ports of these fabrics' switches (`all`: every other fabric)."
    )

    @field_validator("switch_mgmt")
    @classmethod
    def _fabrics(cls, value: list[str] | str) -> list[str] | str:
        if isinstance(value, list):
            for name in value:
                check_name(name)
        return value


def _attach_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "switch-mgmt-attach" if "switch_mgmt" in value else "node-attach"
    return "switch-mgmt-attach" if isinstance(value, SwitchMgmtAttach) else "node-attach"


Attach = Annotated[
    Annotated[NodeAttach, Tag("node-attach")] | Annotated[SwitchMgmtAttach, Tag("switch-mgmt-attach")],
    Discriminator(_attach_tag),
]


class CablingPolicy(StrictModel):
    """How cables are chosen and sized. Precedence: `fabrics.<f>.cabling` → `cabling` → built-in default."""

    media: list[MediaKind] | None = Field(
        default=None, description="Allowed media kinds, in order of preference. Default: any, catalog order."
    )
    slack_pct: Float | None = Field(
        default=None, ge=0, le=100, description="Extra length on top of the route, %. Default 10."
    )
    service_loop_m: Float | None = Field(
        default=None, ge=0, le=1000, description="Fixed extra per cable, m. Default 1.0."
    )
    tray_height_m: Float | None = Field(
        default=None, ge=0, le=100, description="Cable tray above the racks, m. Default 0.3."
    )


class Naming(StrictModel):
    """Switch name templates. Fields: `{plane}`, `{su}`, `{pod}`, `{index}` (1-based), `{rail}` (GPU index, 0-based)."""

    prefix: str | None = Field(
        default=None,
        description="Put before every switch name. Default: none for the fabric named `compute`, else `<fabric>-`.",
    )
    leaf: str | None = Field(
        default=None, description="Default: `su{su}-rail{rail}-leaf` when rail-optimized, else `leaf{index:02d}`."
    )
    spine: str | None = Field(
        default=None, description="Default: `spine{index:02d}`; `pod{pod}-spine{index:02d}` in 3 tiers."
    )
    core: str = Field(default="core{index:02d}", description="Core switch names.")

    @field_validator("leaf", "spine", "core")
    @classmethod
    def _template(cls, value: str | None) -> str | None:
        return None if value is None else check_template(value, ("plane", "su", "rail", "pod", "index"))

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        if value is not None and value and not is_name(value + "x"):
            raise ValueError(f"a prefix {NAME_RULE} (at most {MAX_NAME - 1}, no '..')")
        return value


class SecretRef(StrictModel):
    """A secret is never written in the spec: it names an environment variable or a file."""

    env: str | None = Field(default=None, description="Environment variable holding the secret.")
    file: str | None = Field(default=None, description="File holding the secret (relative to the spec).")

    @field_validator("env")
    @classmethod
    def _env(cls, value: str | None) -> str | None:
        if value is not None and not ENV_RE.match(value):
            raise ValueError("is not an environment variable name (letters, digits and '_')")
        return value

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.env is None) == (self.file is None):
            raise ValueError("give exactly one of `env` or `file`")
        return self


def _check_groups(value: list[str]) -> list[str]:
    for group in value:
        check_name(group)
    if len(set(value)) != len(value):
        raise ValueError("lists a node group twice")
    return value


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
        return _check_groups(value)

    @field_validator("members")
    @classmethod
    def _members(cls, value: list[str] | str) -> list[str] | str:
        return value if isinstance(value, str) else _check_groups(value)

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
        description="OpenSM routing engines in order. OpenSM tries each; fabric appends `no_fallback` (unless the "
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
        default="/etc/opensm", description="Where the generated files are installed; opensm.conf names them there."
    )
    log_file: str = Field(default="/var/log/opensm.log", description="OpenSM's log file.")
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
        return _check_groups(value)

    @field_validator("compute_groups")
    @classmethod
    def _cn(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _check_groups(value)

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


class RoutingSettings(StrictModel):
    """Ethernet underlay routing (eBGP per RFC 7938)."""

    bgp_unnumbered: Bool = Field(default=False, description="BGP over IPv6 link-local (RFC 5549) instead of /31 links.")
    bfd: Bool = Field(default=False, description="BFD on fabric links.")
    bgp_password: SecretRef | None = Field(
        default=None, description="TCP MD5 password of every fabric BGP session (a secret reference)."
    )


class QosSettings(StrictModel):
    """RoCEv2 lossless profile (rendered into switch configs). Defaults as NVIDIA's RoCE profile."""

    profile: Literal["roce-lossless", "none"] = Field(default="roce-lossless")
    roce_dscp: Int = Field(default=26, ge=0, le=63)
    roce_priority: Int = Field(default=3, ge=0, le=7, description="Traffic class and PFC priority of RoCE.")
    cnp_dscp: Int = Field(default=48, ge=0, le=63)
    cnp_priority: Int = Field(default=6, ge=0, le=7, description="Strict-priority class of CNPs.")
    ecn_min_kb: Int = Field(default=150, ge=1, le=1_000_000)
    ecn_max_kb: Int = Field(default=1500, ge=1, le=1_000_000)
    ecn_probability: Int = Field(default=100, ge=1, le=100)
    pfc_watchdog: Bool = Field(default=True)

    @model_validator(mode="after")
    def _order(self) -> Self:
        if self.ecn_min_kb >= self.ecn_max_kb:
            raise ValueError("ecn_min_kb must be below ecn_max_kb")
        if self.roce_priority == self.cnp_priority:
            raise ValueError("roce_priority and cnp_priority must differ")
        if self.roce_dscp == self.cnp_dscp:
            raise ValueError("roce_dscp and cnp_dscp must differ")
        return self


class AsnPlan(StrictModel):
    """BGP ASNs per RFC 7938, from the private ranges 64512–65534 or 4200000000–4294967294.

    Precedence: `fabrics.<f>.asn` → `asn` → these defaults. Leaf ASNs continue across Ethernet fabrics.
    """

    scheme: Literal["rfc7938", "unique"] = Field(
        default="rfc7938",
        description="`rfc7938`: the top tier shares one ASN, each pod's spines share one, every leaf has its own. "
        "`unique`: every switch has its own (needs multipath-relax).",
    )
    core: Int = Field(default=64900, ge=1, le=4294967294, description="3 tiers: cores' ASN (`unique`: first core's).")
    spine: Int = Field(
        default=65000,
        ge=1,
        le=4294967294,
        description="Spines' ASN in 2 tiers; pod p's spines get `spine + p - 1` in 3 tiers (`unique`: first spine's).",
    )
    leaf_start: Int = Field(default=65100, ge=1, le=4294967294, description="First leaf ASN; leaves count up.")
    host_start: Int = Field(
        default=4210000000,
        ge=1,
        le=4294967294,
        description="`dual_homing: host_routing`: the first server's ASN; every routed server has its own, counting "
        "up across fabrics in attach order.",
    )


_RESERVED_V4 = tuple(IPv4Network(n) for n in ("0.0.0.0/8", "127.0.0.0/8", "224.0.0.0/3"))
_RESERVED_V6 = tuple(IPv6Network(n) for n in ("::/8", "fe80::/10", "ff00::/8"))


class Addressing(StrictModel):
    """Address pools (Ethernet fabrics). Allocation is index-based and deterministic."""

    loopback: Network4 = Field(default=IPv4Network("10.0.0.0/16"), description="One /32 per Ethernet switch.")
    p2p: Network4 = Field(default=IPv4Network("10.1.0.0/16"), description="One /31 per switch-to-switch link.")
    servers: Network4 = Field(default=IPv4Network("10.2.0.0/15"), description="One subnet per leaf for its node ports.")
    server_prefix: Int | None = Field(
        default=None,
        ge=8,
        le=30,
        description="Prefix length of a leaf's server subnet. Default: the smallest that holds its ports and gateway.",
    )
    mgmt: Network4 = Field(
        default=IPv4Network("192.168.0.0/20"), description="Management address of every switch and node BMC."
    )
    ipv6: Network6 | None = Field(
        default=IPv6Network("fd00::/48"),
        description="IPv6 pool (/48 or larger): /128 loopbacks, /127 links, one /64 per leaf. `null` for IPv4 only.",
    )

    @field_validator("ipv6")
    @classmethod
    def _v6_size(cls, value: IPv6Network | None) -> IPv6Network | None:
        if value is not None and value.prefixlen > 56:
            raise ValueError("the IPv6 pool must be a /56 or larger")
        if value is not None and (value.prefixlen < 16 or any(value.overlaps(r) for r in _RESERVED_V6)):
            raise ValueError("the IPv6 pool must be a /16 to /56 outside ::/8, fe80::/10 and ff00::/8")
        return value

    @field_validator("loopback", "p2p", "servers", "mgmt")
    @classmethod
    def _v4_sane(cls, value: IPv4Network) -> IPv4Network:
        if value.prefixlen < 8 or any(value.overlaps(r) for r in _RESERVED_V4):
            raise ValueError("an IPv4 pool must be a /8 or smaller, outside 0.0.0.0/8, 127.0.0.0/8 and 224.0.0.0/3")
        return value


class Management(StrictModel):
    """Management services for switch configs (rendered by later outputs)."""

    ntp: list[str] = Field(default_factory=no_entries, description="NTP servers.")
    syslog: list[str] = Field(default_factory=no_entries, description="Syslog servers.")
    dns: list[str] = Field(default_factory=no_entries, description="DNS servers.")
    domain: str | None = Field(default=None, description="DNS domain of the switches.")
    snmp_community: SecretRef | None = Field(default=None, description="SNMP read community (a secret reference).")
    snmp_location: str | None = Field(default=None)
    gateway: str | None = Field(default=None, description="Default gateway of the management network.")

    @field_validator("ntp", "syslog", "dns")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        for host in value:
            check_host(host)
        return value

    @field_validator("domain")
    @classmethod
    def _domain(cls, value: str | None) -> str | None:
        if value is not None:
            check_host(value)
            with contextlib.suppress(ValueError):
                ip_address(value)
                raise ValueError("is an address, not a DNS domain")
        return value

    @field_validator("gateway")
    @classmethod
    def _gateway(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ip_address(value)
            except ValueError:
                raise ValueError("is not an IP address") from None
        return value

    @field_validator("snmp_location")
    @classmethod
    def _location(cls, value: str | None) -> str | None:
        if value is not None and len(value) > 255:
            raise ValueError("is longer than 255 characters")
        return value


DURATION_RE = re.compile(r"^[1-9][0-9]*(ms|s|m|h|d)$")


def _duration(value: str) -> str:
    if not DURATION_RE.match(value):
        raise ValueError(f"{value!r} is not a Prometheus duration such as `30s`, `5m` or `1h`")
    return value


Duration = Annotated[str, BeforeValidator(lambda v: _duration(v) if isinstance(v, str) else v)]


class ExporterPorts(StrictModel):
    """TCP ports of the exporters Prometheus scrapes (each exporter's documented default)."""

    node: Int = Field(default=9100, ge=1, le=65535, description="node_exporter on every node and the exporter host.")
    dcgm: Int = Field(default=9400, ge=1, le=65535, description="NVIDIA dcgm-exporter on every GPU node.")
    snmp: Int = Field(default=9116, ge=1, le=65535, description="snmp_exporter on the exporter host (switches).")
    infiniband: Int = Field(
        default=9683, ge=1, le=65535, description="infiniband-exporter (ibqueryerrors) on each subnet-manager host."
    )
    frr: Int = Field(default=9342, ge=1, le=65535, description="frr_exporter on every FRR-based switch (BGP sessions).")
    ipmi: Int = Field(default=9290, ge=1, le=65535, description="ipmi_exporter on the exporter host (BMC power).")


class AlertThresholds(StrictModel):
    """When alerts fire. Rates are per second unless the name says otherwise."""

    link_down_for: Duration = Field(default="2m", description="A planned link must be down this long to alert.")
    flap_window: Duration = Field(default="10m", description="Window in which link state changes are counted.")
    flaps: Int = Field(default=3, ge=1, description="Link state changes (IB: link-downed events) in `flap_window`.")
    port_errors_per_min: Float = Field(
        default=10.0,
        gt=0,
        description="Symbol errors (InfiniBand) or input errors (Ethernet: FCS/CRC, IF-MIB ifInErrors) per minute "
        "over `flap_window`.",
    )
    pfc_pause_per_s: Float = Field(
        default=1000.0, gt=0, description="PFC pause frames per second on the lossless priority, sustained 5 minutes."
    )
    ecn_marked_per_s: Float = Field(
        default=10000.0, gt=0, description="ECN-marked RoCE packets received per second by a NIC, sustained 5 minutes."
    )
    gpu_temp_c: Int | None = Field(
        default=None, ge=1, le=150, description="GPU temperature limit, °C. Default: the node type's `gpu_temp_max_c`."
    )
    gpu_power_pct: Float = Field(
        default=100.0, gt=0, le=200, description="Alert when a GPU draws more than this % of its `gpu_power_w`."
    )
    gpu_idle: Bool = Field(default=False, description="Alert on GPUs idle while a job holds them (off by default).")
    gpu_idle_util_pct: Float = Field(default=10.0, ge=0, le=100, description="`gpu_idle`: utilisation below this %.")
    gpu_idle_for: Duration = Field(default="30m", description="`gpu_idle`: for this long.")
    rack_power_pct: Float = Field(
        default=100.0, gt=0, le=200, description="Alert when a rack draws more than this % of `racks.power_kw`."
    )


class MonitoringSettings(StrictModel):
    """Prometheus scrape targets, alert rules, runbook and Grafana dashboards under `monitoring/`."""

    enabled: Bool = Field(default=True, description="Write `monitoring/`.")
    scrape_interval: Duration = Field(default="30s")
    evaluation_interval: Duration = Field(default="30s")
    exporter_host: str = Field(
        default="localhost",
        description="Host running the central exporters (snmp_exporter, ipmi_exporter) and the node_exporter whose "
        "textfile collector serves `monitoring/textfile/fabric_plan.prom`.",
    )
    snmp_module: str = Field(default="if_mib", description="snmp_exporter module for switch interfaces.")
    runbook_url: str = Field(
        default="runbook.md",
        description="Where `monitoring/runbook.md` is published; an alert's `runbook` annotation is this + `#anchor`.",
    )
    ports: ExporterPorts = Field(default_factory=ExporterPorts.model_construct)
    thresholds: AlertThresholds = Field(default_factory=AlertThresholds.model_construct)

    @field_validator("exporter_host", "snmp_module")
    @classmethod
    def _plain(cls, value: str) -> str:
        return check_name(value)

    @field_validator("runbook_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value or any(c.isspace() or c in "\"'#" for c in value):
            raise ValueError("must be a URL or path without spaces, quotes or `#`")
        return value


class Fabric(StrictModel):
    """One fabric: compute, storage, in-band or out-of-band; InfiniBand or Ethernet."""

    role: Role | None = Field(
        default=None, description="Fabric role. Default: the fabric's key when it is one of the four roles."
    )
    technology: Literal["infiniband", "ethernet"]
    topology: Topology
    switches: LayerSwitches
    oversubscription: Oversubscription = Field(
        default_factory=OversubscriptionByLayer.model_construct,
        description='Target down:up bandwidth, `"1:1"` or `{leaf: "4:3", spine: "1:1"}`. '
        "Checked per switch and per tier.",
    )
    attach: list[Attach] = Field(default_factory=no_entries, description="What connects to the leaves.")
    speed_gbps: Int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="Switch port speed; cages break out to reach it. Default: the fastest node port attached.",
    )
    cabling: CablingPolicy | None = None
    naming: Naming = Field(default_factory=Naming.model_construct)
    infiniband: InfinibandSettings | None = Field(default=None, description="InfiniBand fabrics only.")
    routing: RoutingSettings | None = Field(default=None, description="Ethernet fabrics only.")
    qos: QosSettings | None = Field(
        default=None,
        description="Ethernet fabrics only. Default: the RoCE lossless profile on compute and storage fabrics, "
        "none on in-band and out-of-band ones (`profile: none` turns it off).",
    )
    mtu: Int | None = Field(default=None, ge=1500, le=9216, description="Ethernet switch MTU. Default 9216.")
    platform: PlatformName | None = Field(
        default=None,
        description="Network OS of every switch of this Ethernet fabric (a layer's `switches.<layer>.platform` "
        "wins). Default: the catalog model's platform.",
    )
    asn: AsnPlan | None = Field(default=None, description="Per-fabric ASN plan; default: the design's `asn`.")
    dual_homing: Literal["none", "host_routing", "bond"] | None = Field(
        default=None,
        description="How a node's ports on this Ethernet fabric work together. `none`: each port is an address in "
        "its leaf's server subnet (one default gateway per port, no failover). `host_routing`: each port is a "
        "routed link (a /31, or unnumbered) with its own eBGP session to its leaf; the node gets a loopback and a "
        "private ASN and advertises the loopback, so it stays reachable while any one link is up (fabric writes "
        "`hosts/<node>/frr.conf` and `netplan.yaml`). `bond`: leaves come in pairs (leaf 2k-1 and 2k) that run MLAG "
        "over 2 peer-link cables each (planned cables; they take 2 down ports per leaf); a node's two ports are one "
        "LACP bond in its pair's server subnet, behind a virtual gateway both leaves answer for (EOS, Cumulus; a "
        "platform without MLAG is a finding; fabric writes `hosts/<node>/netplan.yaml`). Generated, "
        "non-rail-optimized one-plane fabrics only. Default: `none` on every role.",
    )

    @model_validator(mode="after")
    def _technology_fields(self) -> Self:
        if self.technology == "infiniband":
            for name in ("routing", "qos", "mtu", "asn", "platform", "dual_homing"):
                if getattr(self, name) is not None:
                    raise ValueError(f"`{name}` applies to Ethernet fabrics only")
        elif self.infiniband is not None:
            raise ValueError("`infiniband` applies to InfiniBand fabrics only")
        return self

    def platform_of(self, layer: str, default: str | None) -> str | None:
        """The network OS of a layer's switches (precedence as documented on the fields)."""
        choice = self.switches.for_layer(layer).platform if layer else None
        return choice or self.platform or default


# --------------------------------------------------------------------------------------------- cluster exports

LABEL_PRESETS = ("topograph", "topograph-legacy", "kueue", "gke")
_LABEL_KEY_RE = re.compile(
    r"^(?:(?=.{1,253}/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)


def _label_key(value: str | None) -> str | None:
    if value is not None and not _LABEL_KEY_RE.match(value):
        raise ValueError(f"{value!r} is not a Kubernetes label key (`[prefix/]name`, name ≤ 63 characters)")
    return value


class SlurmSettings(StrictModel):
    """Which nodes the scheduler exports (Slurm and Kubernetes) cover, and from which fabric."""

    fabric: str | None = Field(
        default=None, description="Fabric whose locality the schedulers see. Default: the first `compute` fabric."
    )
    groups: list[str] | None = Field(
        default=None,
        description="Node groups that are scheduler nodes. Default: the groups attached to that fabric whose node "
        "type has GPUs (all attached groups when none has).",
    )
    link_speed: Bool = Field(
        default=True, description="Write `LinkSpeed=<Gb/s>` (the links below each switch) into topology.conf."
    )

    @field_validator("groups")
    @classmethod
    def _groups(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _check_groups(value)


class TopologyLabels(StrictModel):
    """Node label keys per locality level, set one by one; a level without a key is not labelled.

    `tier0` is the lowest logical switch (a scalable unit's merged rail leaves, or a leaf), `tier1` the one
    above (spine group or pod), `tier2` the next (core group), `host` the node itself.
    """

    tier0: str | None = Field(default=None, description="Key of the lowest switch level.")
    tier1: str | None = Field(default=None, description="Key of the level above `tier0`.")
    tier2: str | None = Field(default=None, description="Key of the level above `tier1`.")
    tier3: str | None = Field(default=None, description="Key of the level above `tier2`.")
    host: str | None = Field(
        default=None,
        description="Extra per-host key (e.g. GKE's `gce-topology-host`); `kubernetes.io/hostname` "
        "is always the last Kueue level.",
    )

    @field_validator("tier0", "tier1", "tier2", "tier3", "host")
    @classmethod
    def _key(cls, value: str | None) -> str | None:
        return _label_key(value)


class KubernetesSettings(StrictModel):
    """Topology labels and objects for Kueue, Volcano and NVIDIA topograph (`k8s/`)."""

    preset: Literal["topograph", "topograph-legacy", "kueue", "gke"] = Field(
        default="topograph",
        description="Label keys: `topograph` (`fabric.topograph.run/tier-N`, topograph 1.0+), `topograph-legacy` "
        "(`network.topology.nvidia.com/leaf|spine|core`, topograph 0.3–0.5), `kueue` (Kueue's example keys "
        "`cloud.provider.com/topology-rack|block`), `gke` (`cloud.google.com/gce-topology-subblock|block|host`).",
    )
    labels: TopologyLabels = Field(
        default_factory=TopologyLabels.model_construct, description="Keys set one by one; each wins over the preset's."
    )
    group_label: str = Field(
        default="fabric.topology/node-group",
        description="Label holding a node's group; the Kueue ResourceFlavor selects the nodes by it.",
    )
    topology_name: str = Field(default="fabric", description="Name of the Kueue Topology and ResourceFlavor.")
    volcano_members: Literal["exact", "label"] = Field(
        default="exact",
        description="Volcano HyperNode members of the lowest tier: nodes by exact name, or by the tier-0 label.",
    )

    @field_validator("group_label")
    @classmethod
    def _group_key(cls, value: str) -> str:
        return _label_key(value) or value

    @field_validator("topology_name")
    @classmethod
    def _object_name(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", value):
            raise ValueError("must be a DNS label: lower-case letters, digits and '-', at most 63 characters")
        return value


class NetboxSettings(StrictModel):
    """NetBox bulk-import files (`netbox/`)."""

    site: str | None = Field(default=None, description="Site name. Default: the design name.")
    status: Literal["planned", "staged", "active"] = Field(
        default="planned", description="Status of the imported devices (sites, racks and cables follow it)."
    )


class Exports(StrictModel):
    """Cluster-side exports: scheduler topology (Slurm, Kubernetes) and the NetBox import."""

    scheduler: SlurmSettings = Field(default_factory=SlurmSettings.model_construct)
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings.model_construct)
    netbox: NetboxSettings = Field(default_factory=NetboxSettings.model_construct)


class Costs(StrictModel):
    """Cost and total-cost-of-ownership settings. Every default is a PLACEHOLDER: put your own rates here.

    Capital cost is the bill of materials (catalog prices, themselves placeholders); energy is the design's
    power × `load_pct` × `pue` × `energy_usd_per_kwh` × 8,760 h a year; space is racks × `space_usd_per_rack_month`
    × 12; support is `support_pct_per_year` of the capital cost every year.
    """

    years: Int = Field(default=5, ge=1, le=10, description="Years of the total cost of ownership (3–5 is usual).")
    energy_usd_per_kwh: Float = Field(default=0.10, ge=0, description="Price of energy, USD per kWh (placeholder).")
    pue: Float = Field(
        default=1.3, ge=1, le=3, description="Power usage effectiveness of the datacenter (placeholder)."
    )
    load_pct: Float = Field(
        default=80,
        gt=0,
        le=100,
        description="Average draw as a percentage of the catalog's maximum power (placeholder).",
    )
    space_usd_per_rack_month: Float = Field(
        default=1500, ge=0, description="Datacenter space and cooling per rack and month, USD (placeholder)."
    )
    support_pct_per_year: Float = Field(
        default=8, ge=0, le=100, description="Hardware support per year, percent of the capital cost (placeholder)."
    )
    rack: str = Field(default="rack-48u", description="Rack enclosure from the catalog's `racks`, one per rack used.")
    pdu: str = Field(default="pdu-3ph-17kw", description="Rack PDU from the catalog's `pdus`.")
    pdus_per_rack: Int | None = Field(
        default=None,
        ge=0,
        description="PDUs per rack. Default: enough PDUs to carry the rack's power budget (`racks.power_kw`), "
        "twice over (A and B feeds).",
    )


class Diagrams(StrictModel):
    """How the pictures are drawn."""

    topology: Literal["auto", "detailed", "aggregated"] = Field(
        default="auto",
        description="Topology diagrams: `detailed` draws every switch, `aggregated` one box per scalable unit, pod "
        "or tier group; `auto` aggregates a fabric of more than `aggregate_above` switches.",
    )
    aggregate_above: Int = Field(default=32, ge=1, description="`auto`: switches above which a fabric is aggregated.")


class Documents(StrictModel):
    """The documents for people at scale. `cabling.csv` (and the other machine-readable plans) always hold every
    cable; above `split_above` cables, `cabling.md` becomes an index of one file per rack (`cabling/<rack>.md`),
    `cabling.xlsx` an index of those (or, with `row_workbooks`, of one workbook per row of racks,
    `cabling/row-<row>.xlsx`), and `report.html` links the cable and address tables instead of embedding them."""

    split_above: Int = Field(
        default=10_000,
        ge=1,
        description="Cables above which the cabling documents are written per rack (Markdown) and per row of racks "
        "(workbooks) with an index, and the report links its cable and address tables.",
    )
    row_workbooks: Bool = Field(
        default=False,
        description="Above `split_above`, also write one workbook per row of racks (`cabling/row-<row>.xlsx`). "
        "Off by default: at 300,000 cables they are 9.6 million cells, some 40 s of CPU; cabling.csv holds every "
        "cable and cabling.xlsx lists the per-rack documents.",
    )


class Spec(StrictModel):
    """A cluster design: racks, node groups and fabrics."""

    model_config = ConfigDict(defer_build=False)  # the root (see StrictModel)

    name: str = Field(description="Design name; outputs go to `output/<name>/`.")
    description: str = Field(default="", max_length=1024, description="Free text (one line).")
    catalog: list[str] = Field(
        default_factory=no_entries,
        description="Extra part files (relative to the spec), merged over the built-in catalog.",
    )
    racks: RackLayout = Field(default_factory=RackLayout.model_construct)
    nodes: list[NodeGroup] = Field(min_length=1)
    fabrics: dict[str, Fabric] = Field(min_length=1, description="Fabrics by name.")
    addressing: Addressing = Field(default_factory=Addressing.model_construct)
    asn: AsnPlan = Field(default_factory=AsnPlan.model_construct)
    cabling: CablingPolicy = Field(default_factory=CablingPolicy.model_construct)
    management: Management = Field(default_factory=Management.model_construct)
    exports: Exports = Field(default_factory=Exports.model_construct)
    costs: Costs = Field(
        default_factory=Costs.model_construct, description="Cost and TCO rates (placeholders to override)."
    )
    diagrams: Diagrams = Field(default_factory=Diagrams.model_construct)
    documents: Documents = Field(default_factory=Documents.model_construct)
    monitoring: MonitoringSettings = Field(default_factory=MonitoringSettings.model_construct)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_name(value)

    @field_validator("fabrics")
    @classmethod
    def _fabric_keys(cls, value: dict[str, Fabric]) -> dict[str, Fabric]:
        for key in value:
            check_name(key)
        return value

    def fabric_role(self, key: str) -> Role:
        fabric = self.fabrics[key]
        if fabric.role:
            return fabric.role
        return next((r for r in get_args(Role) if r == key), "compute")

    def dual_homing(self, key: str) -> str:
        """How the nodes of fabric `key` use their ports: `none`, `host_routing` or `bond` (default `none`; an
        out-of-band fabric's ports are management addresses, so it is always `none`)."""
        fabric = self.fabrics[key]
        if fabric.technology != "ethernet" or self.fabric_role(key) == "oob":
            return "none"
        return fabric.dual_homing or "none"


# pydantic leaves the bounds of an optional constrained number (`Int | None = Field(ge=1)`) as its own
# keywords in the JSON schema; editors know JSON Schema's names
_JSON_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _json_bounds(node: Any) -> Any:
    if isinstance(node, dict):
        number = node.get("type") in ("integer", "number")
        return {(_JSON_BOUNDS.get(k, k) if number else k): _json_bounds(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_json_bounds(v) for v in node]
    return node


def json_schema() -> dict[str, Any]:
    """The spec's JSON schema (`fabric schema`, docs/fabric.schema.json) for editors."""
    return dict(_json_bounds(Spec.model_json_schema()))
