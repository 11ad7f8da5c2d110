"""address_text writes what str() writes, for every kind of address the plan holds (a property, not samples)."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, IPv6Address, IPv6Interface

from hypothesis import given
from hypothesis import strategies as st

from fabric.render.addresses import address_text

# groups drawn mostly from 0 and a few values, so that runs of zero groups of every length and place occur
GROUP = st.one_of(st.just(0), st.just(0xFFFF), st.integers(0, 0xFFFF))
V6 = st.lists(GROUP, min_size=8, max_size=8).map(lambda gs: sum(g << (16 * (7 - i)) for i, g in enumerate(gs)))


@given(V6, st.integers(0, 128))
def test_ipv6_text_is_strs(number: int, prefixlen: int) -> None:
    assert address_text(IPv6Interface((number, prefixlen))) == str(IPv6Interface((number, prefixlen)))
    assert address_text(IPv6Address(number)) == str(IPv6Address(number))


@given(st.integers(0, 2**32 - 1), st.integers(0, 32))
def test_ipv4_text_is_strs(number: int, prefixlen: int) -> None:
    assert address_text(IPv4Interface((number, prefixlen))) == str(IPv4Interface((number, prefixlen)))
    assert address_text(IPv4Address(number)) == str(IPv4Address(number))


def test_the_ipv4_tailed_and_other_values_keep_str() -> None:
    for text in ("::ffff:102:304", "::102:304", "::1", "::", "::ffff:0:0/96", "64:ff9b::102:304/96"):
        value = IPv6Interface(text)
        assert address_text(value) == str(value)
    assert address_text("fd00::1/127") == "fd00::1/127" and address_text(7) == "7"
