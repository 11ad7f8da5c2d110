"""iptext.text writes what str() writes for every kind of address, the IPv6 forms inet_ntop writes otherwise
included (zero runs of every length and place, ties, IPv4 tails, scopes)."""

from __future__ import annotations

import random
from ipaddress import IPv4Address, IPv4Interface, IPv6Address, IPv6Interface

from fabric.render.engine import iptext


def _addresses() -> list[int]:
    rng = random.Random(9)
    values = [0, 1, 2**128 - 1, 0xFFFF << 32, (0xFFFF << 32) | 0x01020304, 0x01020304, 1 << 48, (1 << 48) - 1]
    for _ in range(4000):
        groups = [rng.choice((0, 0, 0, 1, 0xFFFF, rng.randrange(1 << 16))) for _ in range(8)]
        values.append(int.from_bytes(b"".join(g.to_bytes(2, "big") for g in groups), "big"))
    return values


def test_ipv6_text_as_str_writes_it() -> None:
    checked = 0
    for value in _addresses():
        address = IPv6Address(value)
        assert iptext.text(address) == str(address)
        for prefix in (64, 127, 128):
            interface = IPv6Interface((value, prefix))
            assert iptext.text(interface) == str(interface)
        checked += 1
    assert checked == 4008


def test_ipv4_text_as_str_writes_it() -> None:
    rng = random.Random(4)
    values = [0, 1, 2**32 - 1, 0x0A000001, *(rng.randrange(2**32) for _ in range(2000))]
    for value in values:
        assert iptext.text(IPv4Address(value)) == str(IPv4Address(value))
        for prefix in (0, 24, 31, 32):
            assert iptext.text(IPv4Interface((value, prefix))) == str(IPv4Interface((value, prefix)))
    assert len(values) == 2004


def test_scoped_and_ipv4_addresses_as_str_writes_them() -> None:
    cases = [IPv6Address("fe80::1%eth0"), IPv4Address("10.0.0.1"), IPv4Interface("10.16.0.1/31"), IPv6Address("::")]
    assert [iptext.text(a) for a in cases] == ["fe80::1%eth0", "10.0.0.1", "10.16.0.1/31", "::"]
