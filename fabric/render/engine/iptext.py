"""Addresses as text, as `str()` writes them, faster: a 100k-GPU RoCE fabric's configs hold ~1M addresses, and
ipaddress writes each in Python. The text comes from the allocator's functions (fabric/fast/addresses.py: IPv6
through libc's inet_ntop, which writes RFC 5952 as ipaddress does); scoped addresses go to ipaddress.
tests/unit/render/test_iptext.py and tests/unit/fast/test_addresses.py compare.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Interface, IPv6Address, IPv6Interface
from operator import attrgetter

from fabric.fast.addresses import LazyIPv4Interface, LazyIPv6Interface, interface_text, v4_text, v6_text
from fabric.pipeline import Build
from fabric.render.engine.memo import per_build


def text(address: IPv4Address | IPv6Address | IPv4Interface | IPv6Interface) -> str:
    """`str(address)`: the allocator's text functions for ipaddress's own values (exact types: the allocator's
    lazy interfaces already write themselves so, and another subclass may write itself otherwise)."""
    kind = type(address)
    if kind is LazyIPv4Interface or kind is LazyIPv6Interface:  # the plan's: ~2 million calls at 100k GPUs
        return interface_text(address)  # type: ignore[arg-type]
    if type(address) is IPv4Interface:
        return f"{v4_text(int(address))}/{address.network.prefixlen}"
    if type(address) is IPv4Address:
        return v4_text(int(address))
    if type(address) is IPv6Interface and address.scope_id is None:
        return f"{v6_text(int(address))}/{address.network.prefixlen}"
    if type(address) is IPv6Address and address.scope_id is None:
        return v6_text(int(address))
    return str(address)


# the outputs that print every address of the plan render together, so each address becomes text once
PLAN_ADDRESSES = "plan-addresses"


@dataclass(frozen=True)
class PlanColumns:
    """The plan's address rows as columns, in plan order (ip-plan.csv, NetBox and the lock print them all)."""

    device: list[str]
    interface: list[str]
    address: list[str]  # as text
    peer_device: list[str]
    peer_interface: list[str]
    purpose: list[str]
    fabric: list[str]


@per_build
def plan_columns(build: Build) -> PlanColumns:
    rows = build.allocation.addresses

    def column(name: str) -> list[str]:
        return list(map(attrgetter(name), rows))

    return PlanColumns(
        column("device"),
        column("interface"),
        list(build.allocation.address_texts)
        if build.allocation.address_texts is not None
        else [text(r.address) for r in rows],
        column("peer_device"),
        column("peer_interface"),
        column("purpose"),
        column("fabric"),
    )
