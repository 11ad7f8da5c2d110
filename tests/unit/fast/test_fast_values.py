"""The cheap constructors of the core stages behave as the values they stand for (fabric.fast.frozen.maker,
fabric.fast.addresses): equality, hash, text, pickling, immutability. Speed itself lives in benchmarks/."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Callable
from ipaddress import IPv4Address, IPv4Interface, IPv6Interface

import pytest

from fabric.fast.addresses import LazyIPv4Interface, LazyIPv6Interface, ip_text
from fabric.fast.frozen import maker
from fabric.intent.ethernet import PortIntent
from fabric.intent.infiniband.subnet import IbNode
from fabric.model.topology import Link, new_link


def test_maker_gives_the_frozen_class() -> None:
    args = ("compute", "leaf-spine", "leaf01", "Ethernet0", "spine01", "Ethernet8", 400, None, 3)
    fast, slow = new_link(*args), Link(*args)
    assert type(fast) is Link
    assert (fast, hash(fast), repr(fast)) == (slow, hash(slow), repr(slow))
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert dataclasses.replace(fast, speed_gbps=100) == dataclasses.replace(slow, speed_gbps=100)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.speed_gbps = 100  # type: ignore[misc]
    port = maker(PortIntent)("Ethernet0", 1, 0, 1, 400, (1, 2), 9216, False, "unused")  # defaults filled
    assert port == PortIntent("Ethernet0", 1, 0, 1, 400, (1, 2), 9216, False, "unused")


def test_maker_refuses_what_it_cannot_make() -> None:
    with pytest.raises(TypeError, match="__post_init__"):
        maker(IbNode)  # its node id comes from __post_init__ unless the caller gives it

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        x: int

    with pytest.raises(TypeError, match="frozen slots"):
        maker(NoSlots)

    @dataclasses.dataclass(frozen=True, slots=True)
    class KeywordOnly:
        x: int
        y: int = dataclasses.field(default=0, kw_only=True)

    with pytest.raises(TypeError, match="positional init fields only"):
        maker(KeywordOnly)


def test_maker_fills_defaults_and_factories() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Filled:
        x: int
        tags: list[str] = dataclasses.field(default_factory=list)
        note: str = "-"

    make = maker(Filled)
    a, b = make(1), make(1)
    assert (a, type(a), a.tags is not b.tags) == (Filled(1), Filled, True)  # a new list each, as Filled's
    assert make(2, ["t"], note="n") == Filled(2, ["t"], "n")
    with pytest.raises(TypeError):
        make()  # x is required, as it is for Filled


@pytest.mark.parametrize(
    ("value", "prefix", "lazy", "real"),
    [
        (0x0A000105, 31, LazyIPv4Interface, IPv4Interface),
        (0xFFFFFFFF, 32, LazyIPv4Interface, IPv4Interface),
        (0, 0, LazyIPv4Interface, IPv4Interface),
        (0xC0A80001, 24, LazyIPv4Interface, IPv4Interface),
        ((0xFD00 << 112) + 5, 64, LazyIPv6Interface, IPv6Interface),
        ((0xFD00 << 112) + 6, 127, LazyIPv6Interface, IPv6Interface),
        (5, 128, LazyIPv6Interface, IPv6Interface),  # below ::1:0:0:0: ipaddress's text, not inet_ntop's
        ((0xFFFF << 32) + 0x0A000001, 127, LazyIPv6Interface, IPv6Interface),  # ::ffff:10.0.0.1
    ],
)
def test_lazy_interfaces_are_interfaces(value: int, prefix: int, lazy: type, real: type) -> None:
    a, b = lazy(value, prefix), real((value, prefix))
    assert isinstance(a, real)
    assert (str(a), repr(a), f"{a}", hash(a)) == (str(b), repr(b), f"{b}", hash(b))
    assert a == b and b == a and not a < b and not b < a
    assert (a.network, a.netmask, a.ip, str(a.ip), a.with_netmask) == (
        b.network,
        b.netmask,
        b.ip,
        str(b.ip),
        b.with_netmask,
    )
    assert ip_text(a) == str(b.ip)
    assert (repr(a.ip), hash(a.ip), a.ip.compressed, a.ip.exploded) == (
        repr(b.ip),
        hash(b.ip),
        b.ip.compressed,
        b.ip.exploded,
    )
    assert a.ip == b.ip and b.ip == a.ip
    for step in (1, -1):  # arithmetic past either end raises alike
        assert _outcome(lambda step=step: a.ip + step) == _outcome(lambda step=step: b.ip + step)
    assert pickle.loads(pickle.dumps(a)) == b and copy.deepcopy(a) == b
    assert pickle.loads(pickle.dumps(a.ip)) == b.ip and type(pickle.loads(pickle.dumps(a.ip))) is type(b.ip)


def _outcome(make: Callable[..., object]) -> object:
    try:
        value = make()
    except ValueError as exc:
        return type(exc)
    return (value, str(value))


def test_lazy_address_arithmetic_is_checked() -> None:
    top = LazyIPv4Interface(0xFFFFFFFF, 24)
    with pytest.raises(ValueError):
        top.ip + 1
    with pytest.raises(ValueError):
        top + 1
    assert top.ip - 1 == IPv4Address("255.255.255.254")
    assert LazyIPv4Interface(5, 24) + 1 == IPv4Interface("0.0.0.6/32")
