"""Network OSes, as each describes itself in `templates/<platform>/platform.yaml`: how it names ports and its
management port, the largest MTU it takes and which features it supports. The folder's name is the platform's
name; the spec's `platform` fields are validated against these names, the topology names ports with them, the
intent checks capabilities against them and fabric/render/platforms/ renders with them.

Adding a network OS: its `templates/<name>/` (platform.yaml and templates), its renderer module under
fabric/render/platforms/ and its tests; nothing else lists platforms.
"""

# No `from __future__ import annotations`: pydantic would compile each annotation string (see fabric/spec/schema/).
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from fabric.spec.resources import templates_dir

Feature = Literal["bgp-unnumbered", "roce-lossless", "pfc-watchdog", "breakout", "mlag"]

# feature → (severity when a platform lacks it, what the platform then cannot do)
FEATURES: Mapping[Feature, tuple[Literal["error", "warning"], str]] = {
    "bgp-unnumbered": ("error", "run BGP unnumbered (RFC 5549)"),
    "roce-lossless": ("error", "apply the RoCE lossless profile (DSCP maps, PFC, ECN)"),
    "pfc-watchdog": ("warning", "run a PFC watchdog: the lossless class runs without one"),
    "breakout": ("error", "break cages out into several ports"),
    "mlag": ("error", "run MLAG on a leaf pair (`dual_homing: bond`): its bonds would have no peer"),
}

PORT_FIELDS = ("catalog", "cage", "sub", "sub0", "n", "lane", "cage_lane")


class PlatformTraits(BaseModel):
    """What a platform says about itself (platform.yaml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    port_name: str = Field(
        description="Port name template: `{catalog}` (the catalog's Linux-style name), `{cage}`, `{sub}` (1-based "
        "port of the cage), `{sub0}`, `{n}` (1-based in the group), `{lane}` (first electrical lane over the "
        "switch, 0-based), `{cage_lane}` (first lane within the cage, 1-based)."
    )
    single_lane_port_name: str | None = Field(
        default=None, description="Template for the port of a single-lane cage (SFP, RJ45); default `port_name`."
    )
    mgmt_port: str | None = Field(default=None, description="Management port; default the catalog model's.")
    max_mtu: int = Field(default=9216, ge=1280, le=9216)
    supports: frozenset[Feature] = frozenset()
    peer_svi: str = Field(
        default="Vlan{vlan}",
        description="The interface of an MLAG pair's peer VLAN, `{vlan}` its number (NVUE: a subinterface of the "
        "peer link).",
    )
    bgp_in_frr: bool = Field(
        default=False, description="BGP runs in FRR, so frr_exporter can read its sessions (EOS runs its own)."
    )
    mlag_peer_link_local: bool = Field(
        default=False,
        description="BGP to the MLAG peer runs over the peer VLAN's link-local address (interface peering), "
        "also on numbered fabrics.",
    )

    @field_validator("port_name", "single_lane_port_name")
    @classmethod
    def _template(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                value.format(**dict.fromkeys(PORT_FIELDS, 1))
            except (KeyError, IndexError, ValueError) as exc:
                raise ValueError(f"bad port name template {value!r}: fields are {', '.join(PORT_FIELDS)}") from exc
        return value

    def port(self, catalog: str, *, cage: int, sub: int, n: int, lane: int, lanes: int, cage_lanes: int) -> str:
        """The name of logical port `sub` of `cage` (`lanes` electrical lanes each; the cage has `cage_lanes`)."""
        template = self.single_lane_port_name if cage_lanes == 1 and self.single_lane_port_name else self.port_name
        return template.format(
            catalog=catalog, cage=cage, sub=sub, sub0=sub - 1, n=n, lane=lane, cage_lane=1 + (sub - 1) * lanes
        )

    def mgmt(self, default: str) -> str:
        return self.mgmt_port or default


@cache
def platforms() -> Mapping[str, PlatformTraits]:
    """Every platform of the installation, by name (in name order)."""
    from fabric.spec.yamlio import parse_yaml

    found: dict[str, PlatformTraits] = {}
    for path in sorted(templates_dir().glob("*/platform.yaml")):
        data = parse_yaml(path.read_text(encoding="utf-8"), str(path)).data
        found[path.parent.name] = PlatformTraits.model_validate(data)
    return found


def platform_names() -> tuple[str, ...]:
    return tuple(platforms())


def check_platform(value: str | None) -> str | None:
    """A pydantic validator: `value` names a platform of the registry."""
    names = platform_names()
    if value is not None and value not in names:
        shown = ", ".join(f"'{n}'" for n in names[:-1]) + f" or '{names[-1]}'"
        raise ValueError(f"Input should be {shown}")
    return value


class Choices:
    """Annotation marker: the value is one of `names()` (the spec reference lists them)."""

    def __init__(self, names: Callable[[], Sequence[str]]) -> None:
        self.names = names


PlatformName = Annotated[str, AfterValidator(check_platform), Choices(platform_names)]


def port_name(
    platform: str | None, catalog: str, *, cage: int, sub: int, n: int, lane: int, lanes: int, cage_lanes: int
) -> str:
    """A switch port as `platform` names it (None: the catalog's name)."""
    if platform is None:
        return catalog
    return platforms()[platform].port(catalog, cage=cage, sub=sub, n=n, lane=lane, lanes=lanes, cage_lanes=cage_lanes)


def mgmt_port(platform: str | None, default: str) -> str:
    """The management port as `platform` names it (`default`: the catalog model's)."""
    return platforms()[platform].mgmt(default) if platform is not None else default
