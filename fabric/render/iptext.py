"""Addresses as text, as `str()` writes them, faster: libc's inet_ntop instead of ipaddress's Python.

A 100k-GPU RoCE fabric's configs hold ~1M addresses, ipaddress writes one in 2-10 µs. For IPv4 inet_ntop
writes the same dotted quad; for IPv6 the same RFC 5952 text (the first longest run of two or more zero
groups as `::`, lower-case hex without leading zeros), except for addresses whose first 80 bits are zero
(which it may write with an IPv4 tail) and scoped ones: those go to ipaddress. tests/test_iptext.py compares.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, IPv6Address, IPv6Interface
from socket import AF_INET, AF_INET6, inet_ntop

from fabric.pipeline import Build
from fabric.render.memo import per_build


def text(address: IPv4Address | IPv6Address | IPv4Interface | IPv6Interface) -> str:
    """`str(address)`."""
    if type(address) is IPv4Interface:  # (exact types: a subclass may write itself otherwise)
        return f"{inet_ntop(AF_INET, int(address).to_bytes(4, 'big'))}/{address.network.prefixlen}"
    if type(address) is IPv4Address:
        return inet_ntop(AF_INET, int(address).to_bytes(4, "big"))
    if type(address) is IPv6Interface or type(address) is IPv6Address:
        value = int(address)
        if value >> 48 and address.scope_id is None:
            plain = inet_ntop(AF_INET6, value.to_bytes(16, "big"))
            return f"{plain}/{address.network.prefixlen}" if isinstance(address, IPv6Interface) else plain
    return str(address)


# the outputs that print every address of the plan render together, so each address becomes text once
PLAN_ADDRESSES = "plan-addresses"


@per_build
def plan_texts(build: Build) -> list[str]:
    """The text of each address of the plan, in plan order (ip-plan.csv, NetBox and the lock print them all)."""
    return [text(r.address) for r in build.plan.addresses]
