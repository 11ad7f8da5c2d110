"""Addresses as text: iptext.text and the allocator's lazy interfaces write what str() of ipaddress writes, for
every address (a property over zero runs of every length and place, IPv4 tails and prefixes)."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, IPv6Address, IPv6Interface

from hypothesis import given
from hypothesis import strategies as st

from fabric.fast.addresses import LazyIPv4Interface, LazyIPv6Interface, ip_text
from fabric.render.engine import iptext

# groups drawn mostly from 0 and a few values, so that runs of zero groups of every length and place occur
GROUP = st.one_of(st.just(0), st.just(0xFFFF), st.integers(0, 0xFFFF))
V6 = st.lists(GROUP, min_size=8, max_size=8).map(lambda gs: sum(g << (16 * (7 - i)) for i, g in enumerate(gs)))


@given(V6, st.integers(0, 128))
def test_ipv6_text_is_strs(number: int, prefixlen: int) -> None:
    real = IPv6Interface((number, prefixlen))
    assert iptext.text(real) == str(real) == str(LazyIPv6Interface(number, prefixlen))
    assert iptext.text(LazyIPv6Interface(number, prefixlen)) == str(real)
    assert iptext.text(IPv6Address(number)) == str(IPv6Address(number)) == ip_text(LazyIPv6Interface(number))


@given(st.integers(0, 2**32 - 1), st.integers(0, 32))
def test_ipv4_text_is_strs(number: int, prefixlen: int) -> None:
    real = IPv4Interface((number, prefixlen))
    assert iptext.text(real) == str(real) == str(LazyIPv4Interface(number, prefixlen))
    assert iptext.text(LazyIPv4Interface(number, prefixlen)) == str(real)
    assert iptext.text(IPv4Address(number)) == str(IPv4Address(number)) == ip_text(LazyIPv4Interface(number))


def test_the_ipv4_tailed_keep_ipaddress_text() -> None:
    checked = 0
    for text in ("::ffff:102:304/128", "::102:304/96", "::1/128", "::/0", "::ffff:0:0/96", "64:ff9b::102:304/96"):
        value = IPv6Interface(text)
        lazy = LazyIPv6Interface(int(value), value.network.prefixlen)
        assert iptext.text(value) == str(value) == str(lazy) == iptext.text(lazy)
        checked += 1
    assert checked == 6
