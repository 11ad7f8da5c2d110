"""Ethernet underlay settings: routing, RoCE QoS, the ASN plan and address pools."""

# No `from __future__ import annotations` in the model modules: pydantic would compile each annotation string
# at import; written ones are evaluated once, by Python.
from ipaddress import IPv4Network, IPv6Network
from typing import Literal, Self

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from fabric.spec.schema.types import (
    Bool,
    Int,
    Network4,
    Network6,
    SecretRef,
    StrictModel,
)


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
