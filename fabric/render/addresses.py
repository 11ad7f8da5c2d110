"""Addresses as text, fast: `str()` of an ipaddress interface is pure Python (an IPv6 one ~3 µs, its zero-run
compression most of it) and a 100k-GPU RoCE plan prints a million addresses in each of ip-plan.csv, NetBox
and the lock. The C library's inet_ntop writes the same text (RFC 5952: lower case, the first longest run of
two or more zero groups as `::`), except that it writes a few IPv6 addresses with an IPv4 tail; those, and
anything that is not an ipaddress interface or address, keep `str()`.
"""

from __future__ import annotations

import socket
from ipaddress import IPv4Address, IPv4Interface, IPv6Address, IPv6Interface

_V4_TAIL = 1 << 48  # below ::1:0:0:0 inet_ntop may write ::a.b.c.d or ::ffff:a.b.c.d; ipaddress never does


def address_text(value: object) -> str:
    """`str(value)`, the same text, from the C library for ipaddress interfaces and addresses."""
    kind = value.__class__
    if kind is IPv6Interface or kind is IPv6Address:
        number = int(value)  # type: ignore[call-overload]
        if number >= _V4_TAIL:
            text = socket.inet_ntop(socket.AF_INET6, number.to_bytes(16, "big"))
            return f"{text}/{value.network.prefixlen}" if kind is IPv6Interface else text  # type: ignore[attr-defined]
    elif kind is IPv4Interface or kind is IPv4Address:
        text = socket.inet_ntop(socket.AF_INET, int(value).to_bytes(4, "big"))  # type: ignore[call-overload]
        return f"{text}/{value.network.prefixlen}" if kind is IPv4Interface else text  # type: ignore[attr-defined]
    return str(value)
