"""Addresses as text, as `str()` writes them, faster where ipaddress is slow.

ipaddress writes IPv6 text in Python (~10 µs an address); a 100k-GPU RoCE fabric's configs hold ~1M of them.
libc's inet_ntop writes the same RFC 5952 text (the first longest run of two or more zero groups as `::`,
lower-case hex without leading zeros), except for addresses whose first 80 bits are zero (which it may write
with an IPv4 tail) and scoped ones: those go to ipaddress. tests/test_iptext.py compares the two.
"""

from __future__ import annotations

import socket
from ipaddress import IPv4Address, IPv4Interface, IPv6Address, IPv6Interface


def text(address: IPv4Address | IPv6Address | IPv4Interface | IPv6Interface) -> str:
    """`str(address)`."""
    kind = type(address)
    if kind is IPv6Interface or kind is IPv6Address:
        value = int(address)
        if value >> 48 and address.scope_id is None:  # type: ignore[union-attr]
            plain = socket.inet_ntop(socket.AF_INET6, value.to_bytes(16, "big"))
            return f"{plain}/{address.network.prefixlen}" if kind is IPv6Interface else plain  # type: ignore[union-attr]
    return str(address)
