"""Interface addresses (address and prefix length) made cheaply from integers, a million at 100k GPUs.

An `ipaddress.IPv4Interface` builds its network (and that network's address objects) when it is made, for rows
most of which only ever become text. These are `IPv4Interface`/`IPv6Interface`
(every method, comparison, hash and `isinstance` behave the same) that keep the integer and the prefix length
and make `network` and `netmask` on first use. The allocator made the values, so they are not validated again.
"""

from __future__ import annotations

from functools import cached_property
from ipaddress import IPv4Address, IPv4Interface, IPv4Network, IPv6Address, IPv6Interface, IPv6Network
from operator import attrgetter
from socket import AF_INET6, inet_ntop
from typing import Any

_V4_ALL = (1 << 32) - 1
_V6_ALL = (1 << 128) - 1


def v6_text(value: int) -> str:
    """RFC 5952 text, as ipaddress writes it, from libc's inet_ntop (ipaddress's zero-run compression is
    Python); below ::1:0:0:0 inet_ntop may write an IPv4 tail that ipaddress does not, so ipaddress."""
    if value >> 48:
        return inet_ntop(AF_INET6, value.to_bytes(16, "big"))
    return str(IPv6Address(value))


def v4_text(value: int) -> str:
    """Dotted decimal, as ipaddress writes it, in a fifth of its time (it joins a map of str over the bytes)."""
    return f"{value >> 24}.{(value >> 16) & 255}.{(value >> 8) & 255}.{value & 255}"


class FastIPv4Address(IPv4Address):
    """An IPv4Address made from an integer without validation, written as text quickly."""

    __slots__ = ()

    def __init__(self, value: int) -> None:
        if not 0 <= value <= _V4_ALL:  # arithmetic past the end (address + n) raises as IPv4Address does
            IPv4Address.__init__(self, value)
        self._ip = value

    def __str__(self) -> str:
        return v4_text(self._ip)

    def __reduce__(self) -> tuple[Any, ...]:
        return IPv4Address, (self._ip,)

    def __repr__(self) -> str:
        return f"IPv4Address({str(self)!r})"


class FastIPv6Address(IPv6Address):
    """An IPv6Address made from an integer without validation, written as text through inet_ntop (a BGP session's
    local address a link end: ~800,000 at 100k GPUs on RoCE, ~8 million at a million)."""

    __slots__ = ()

    def __init__(self, value: int) -> None:
        if not 0 <= value <= _V6_ALL:  # arithmetic past the end raises as IPv6Address does
            IPv6Address.__init__(self, value)
        self._ip = value
        self._scope_id = None

    def __str__(self) -> str:
        return v6_text(self._ip)

    def __reduce__(self) -> tuple[Any, ...]:
        return IPv6Address, (self._ip,)

    def __repr__(self) -> str:
        return f"IPv6Address({str(self)!r})"


class LazyIPv4Interface(IPv4Interface):
    def __init__(self, value: int, prefixlen: int = 32) -> None:  # no super().__init__: that is the cost saved
        if not 0 <= value <= _V4_ALL:  # (the default prefix and this check: as IPv4Interface for address + n)
            IPv4Address.__init__(self, value)
        self._ip = value
        self._prefixlen = prefixlen

    @cached_property
    def network(self) -> IPv4Network:  # type: ignore[override]
        return IPv4Network((self._ip, self._prefixlen), strict=False)

    @cached_property
    def netmask(self) -> IPv4Address:  # type: ignore[override]
        return self.network.netmask

    @property
    def ip(self) -> IPv4Address:
        return FastIPv4Address(self._ip)

    def __str__(self) -> str:
        return f"{v4_text(self._ip)}/{self._prefixlen}"

    def __hash__(self) -> int:  # IPv4Interface's value, without making the network
        return hash((self._ip, self._prefixlen, self._ip & (_V4_ALL ^ (_V4_ALL >> self._prefixlen))))

    def __reduce__(self) -> tuple[Any, ...]:
        return IPv4Interface, (str(self),)

    def __repr__(self) -> str:
        return f"IPv4Interface({str(self)!r})"


class LazyIPv6Interface(IPv6Interface):
    def __init__(self, value: int, prefixlen: int = 128) -> None:
        if not 0 <= value <= _V6_ALL:
            IPv6Address.__init__(self, value)
        self._ip = value
        self._prefixlen = prefixlen
        self._scope_id = None

    @cached_property
    def network(self) -> IPv6Network:  # type: ignore[override]
        return IPv6Network((self._ip, self._prefixlen), strict=False)

    @cached_property
    def netmask(self) -> IPv6Address:  # type: ignore[override]
        return self.network.netmask

    @property
    def ip(self) -> IPv6Address:
        return FastIPv6Address(self._ip)

    def __hash__(self) -> int:
        return hash((self._ip, self._prefixlen, self._ip & (_V6_ALL ^ (_V6_ALL >> self._prefixlen))))

    def __str__(self) -> str:
        return f"{v6_text(self._ip)}/{self._prefixlen}"

    def __reduce__(self) -> tuple[Any, ...]:
        return IPv6Interface, (str(self),)

    def __repr__(self) -> str:
        return f"IPv6Interface({str(self)!r})"


def ip_text(interface: IPv4Interface | IPv6Interface) -> str:
    """`str(interface.ip)`, without making the address object for one of ours."""
    if type(interface) is LazyIPv4Interface:
        return v4_text(interface._ip)
    if type(interface) is LazyIPv6Interface:
        return v6_text(interface._ip)
    return str(interface.ip)


_SUFFIX = tuple(f"/{n}" for n in range(129))


def interface_text(interface: LazyIPv4Interface | LazyIPv6Interface) -> str:
    """`str(interface)` of one of ours in one call (its text written inline, not through __str__ and v4_text):
    the configs and plans of 100k GPUs on RoCE write ~2 million."""
    value = interface._ip
    if type(interface) is LazyIPv4Interface:
        return f"{value >> 24}.{(value >> 16) & 255}.{(value >> 8) & 255}.{value & 255}/{interface._prefixlen}"
    if value >> 48:
        return inet_ntop(AF_INET6, value.to_bytes(16, "big")) + _SUFFIX[interface._prefixlen]
    return str(interface)


def network_text(interface: IPv4Interface | IPv6Interface) -> str:
    """`str(interface.network)`, without making the network for one of ours."""
    if type(interface) is LazyIPv4Interface:
        value = interface._ip & (_V4_ALL ^ (_V4_ALL >> interface._prefixlen))
        return v4_text(value) + _SUFFIX[interface._prefixlen]
    if type(interface) is LazyIPv6Interface:
        return v6_text(interface._ip & (_V6_ALL ^ (_V6_ALL >> interface._prefixlen))) + _SUFFIX[interface._prefixlen]
    return str(interface.network)


def address_text(interface: IPv4Interface | IPv6Interface) -> str:
    """`str(interface)`, in one call for one of ours."""
    if type(interface) in (LazyIPv4Interface, LazyIPv6Interface):
        return interface_text(interface)  # type: ignore[arg-type]
    return str(interface)


def prefix_length(interface: IPv4Interface | IPv6Interface) -> int:
    """An interface's prefix length, read without making its network (which a lazy interface makes on first use)."""
    return int(getattr(interface, "_prefixlen", None) or interface.network.prefixlen)


# int() of many addresses, by C: int(address) is a Python method call per address
address_integer = attrgetter("_ip")
