"""The lock read by columns (fabric/spec/lock.py) takes only what the schema (fabric/spec/lock_checks.py's
models) takes, both derived from the format's rules (fabric/model/lock_format.py): a lock as a
build writes it is read so, and anything else goes to the schema, which reads it or says what is wrong where
(tests/unit/allocation/test_growth.py: the findings of bad locks)."""

from __future__ import annotations

import json
import random
from ipaddress import IPv4Interface, IPv6Interface, ip_interface
from typing import Any

import pytest

from fabric.model import lock_format
from fabric.model.findings import FabricError
from fabric.render.outputs.lock import lock_json
from fabric.spec import lock as spec_lock
from fabric.spec.lock_checks import column_check, every, lines
from fabric.spec.schema import is_name
from tests.conftest import built
from tests.unit.allocation.test_growth import _built

ADDRESS, NAME, OPT_NAME, PORT = (
    lines(r.pattern, r.optional)
    for r in (lock_format.ADDRESS, lock_format.NAME, lock_format.OPT_NAME, lock_format.PORT)
)


def _fast(data: Any) -> spec_lock.Lock | None:
    """The lock read by columns, or None (for the schema)."""
    found = spec_lock._by_columns(data)
    return None if found is None else spec_lock._lock(found)


def _data(design: str) -> Any:
    return json.loads(lock_json(built(design) if design == "lab" else _built(design)))


@pytest.mark.parametrize("design", ["lab", "superpod-2su"])
def test_columns_and_schema_read_a_written_lock_alike(design: str) -> None:
    data = _data(design)
    fast = _fast(data)
    assert fast is not None and fast == spec_lock._by_schema(data, "x.json")
    assert fast.as_data() == data and len(fast.addresses) == len(data["addresses"]) > 0
    assert len(fast.guids) == len(data["guids"]) and (design == "lab") == (not fast.guids)


def test_a_lock_written_otherwise_is_read_by_the_schema() -> None:
    data = _data("lab")
    v4 = next(a for a in data["addresses"] if ":" not in a["address"])
    v4["address"] = v4["address"].replace("/", "/0")  # a prefix length with a leading zero: ipaddress takes it
    del data["devices"][0]["u"]  # a key with a default
    assert _fast(data) is None
    lock = spec_lock.parse_lock(json.dumps(data), "x.json")
    assert lock.devices[0].u == 0 and sum(a.address == v4["address"] for a in lock.addresses) == 1


TRICKY = [
    *("1.2.3.4/24", "0.0.0.0/0", "255.255.255.255/32", "1.2.3.04/24", "256.1.1.1/8", "1.2.3.4/33", "1.2.3.4"),
    *("1.2.3.4/255.255.255.0", "1.2.3/24", " 1.2.3.4/24", "1.2.3.4/24 ", "1.2.3.4/-1", "\u0661.2.3.4/24"),
    *("::/0", "::1/128", "1::/64", "1:2:3:4:5:6:7:8/64", "1:2:3:4:5:6:7::/64", "::2:3:4:5:6:7:8/64"),
    *("1:2:3:4:5:6:7:8:9/64", "1::2::3/64", "12345::/64", "::ffff:1.2.3.4/128", "fe80::1%eth0/64", "FD00::1/64"),
    *("fd00::1/129", "fd00::1", ":::/64", "1:::2/64", "1:2:3:4:5:6:7/64", ":1::/64", "1::2:/64", "fd00::1/064"),
]


def _accepted(text: str) -> bool:
    try:
        ip_interface(text)
    except ValueError:
        return False
    return True


def test_the_address_pattern_takes_no_address_ipaddress_refuses_and_every_one_it_writes() -> None:
    fast = [t for t in TRICKY if every(ADDRESS, [t])]
    assert fast and all(_accepted(t) for t in fast)
    assert len(fast) == 9 and "1:2:3:4:5:6:7::/64" in fast  # the others go to the schema
    rng = random.Random(7)
    written = []
    for _ in range(3000):  # ipaddress's own text, zero runs of every length and place included
        groups = [rng.choice((0, 0, 1, 0xFFFF, rng.randrange(1 << 16))) for _ in range(8)]
        value = sum(g << (16 * (7 - k)) for k, g in enumerate(groups))
        written.append(str(IPv6Interface((value, rng.randrange(129)))))
        written.append(str(IPv4Interface((rng.randrange(1 << 32) >> rng.randrange(32), rng.randrange(33)))))
    assert every(ADDRESS, written) and len(set(written)) > 5000


def test_the_name_and_port_patterns_take_what_the_schema_takes() -> None:
    names = ["a", "leaf-01", "A.b_c", "a" * 64, "a" * 65, "a..b", "-a", ".a", "a b", "a\nb", "", "\u00e4", "a/b"]
    for name in names:
        assert every(NAME, [name]) == is_name(name) == lock_format.NAME.takes(name), name
    assert every(NAME, ["a", "b"]) and not every(NAME, ["a", ""])
    assert every(PORT, ["Ethernet1/1", "", "swp1s0:1"])
    ports = column_check(lock_format.PORT)
    assert ports(["Ethernet1/1", "a..b"]) is None and ports([1]) is None
    assert not every(NAME, ["a", "b\n"]) and not every(OPT_NAME, ["a\n"])
    assert not every(OPT_NAME, ["\0"]) and not every(NAME, ["a", "\0"])


def test_a_lock_file_as_large_as_the_largest_benchmark_s_is_read() -> None:
    """RoCE at 100k GPUs writes a 247 MB lock: the limit leaves room for one four times as large."""
    from fabric.spec.reading import LIMITS, MIB

    assert 4 * 247 * 10**6 <= LIMITS["lock"] <= 1024 * MIB


def test_a_true_among_numbers_is_refused_as_the_schema_refuses_it() -> None:
    data = _data("lab")
    data["devices"][0]["u"], data["devices"][1]["u"] = 1, True  # equal in a set of distinct values
    assert _fast(data) is None
    with pytest.raises(FabricError) as caught:
        spec_lock.parse_lock(json.dumps(data), "x.json")
    assert [(f.code, f.path) for f in caught.value.findings] == [("lock-invalid", "lock.devices.1.u")]


def test_a_name_read_by_columns_is_held_once() -> None:
    lock = _fast(_data("superpod-2su"))
    assert lock is not None
    same = [c.b_device for c in lock.cables if c.b_device == lock.cables[0].b_device]
    assert len(same) > 1 and all(d is same[0] for d in same)


HOSTILE: list[Any] = ["", " ", "a..b", "a\nb", "\0", "\x1b[2J", "é", "a" * 65, "../x", "1.2.3.04/24", "::1.2.3.4/128"]
HOSTILE += [1, 0, -1, 1001, 2**32, True, 1.0, None, [], {}, "1"]


@pytest.mark.parametrize("design", ["lab", "superpod-2su"])
def test_what_the_columns_take_in_any_field_the_schema_takes_alike(design: str) -> None:
    """Each odd value in each field of the first entry of each list: read by columns only when the schema reads
    the same lock; else the schema judges it."""
    base = _data(design)
    taken = 0
    for key in (k for k in lock_format.ENTRIES if base[k]):
        for field in base[key][0]:
            for value in HOSTILE:
                data = {**base, key: [{**base[key][0], field: value}, *base[key][1:]]}
                fast = _fast(data)
                if fast is not None:
                    taken += 1
                    assert fast == spec_lock._by_schema(data, "x.json"), (key, field, value)
    assert 10 < taken < 100  # the values valid in some field (e.g. "" as an optional name, 1 as a rack unit)


# --------------------------------------------------------------------------------------------- the lock whole


def _first(data: Any, key: str, **match: Any) -> dict[str, Any]:
    return next(e for e in data[key] if all(e[k] == v for k, v in match.items()))


def _tamper_scope_id(data: Any) -> None:
    _first(data, "addresses", purpose="loopback")["address"] = "fd00::1%x remote-as 666/128"


def _tamper_netmask(data: Any) -> None:
    _first(data, "addresses", purpose="loopback")["address"] = "10.0.0.1/255.255.255.255"


def _tamper_loopback_zero(data: Any) -> None:
    entry = next(e for e in data["addresses"] if e["purpose"] == "loopback" and ":" not in e["address"])
    entry["address"] = entry["address"].replace("/32", "/0")


def _tamper_link_prefix(data: Any) -> None:
    entry = next(e for e in data["addresses"] if e["purpose"] == "p2p" and ":" not in e["address"])
    entry["address"] = entry["address"].replace("/31", "/24")


def _tamper_asn(asn: int) -> Any:
    def tamper(data: Any) -> None:
        data["asns"][0]["asn"] = asn

    return tamper


def _tamper_twice(key: str, field: str) -> Any:
    def tamper(data: Any) -> None:
        data[key][1][field] = data[key][0][field]

    return tamper


def _tamper_ghost(key: str, field: str, value: str) -> Any:
    def tamper(data: Any) -> None:
        data[key][-1][field] = value

    return tamper


TAMPERED = {
    "scope id": ("lab", _tamper_scope_id, "lock.addresses"),
    "netmask": ("lab", _tamper_netmask, "lock.addresses"),
    "loopback /0": ("lab", _tamper_loopback_zero, "lock.addresses"),
    "link /24": ("lab", _tamper_link_prefix, "lock.addresses"),
    "ASN 15169": ("lab", _tamper_asn(15169), "lock.asns.0.asn"),
    "ASN 23456": ("lab", _tamper_asn(23456), "lock.asns.0.asn"),
    "ASN 4294967295": ("lab", _tamper_asn(4294967295), "lock.asns.0.asn"),
    "ASN 65535": ("lab", _tamper_asn(65535), "lock.asns.0.asn"),
    "cable id twice": ("lab", _tamper_twice("cables", "id"), "lock.cables.1.id"),
    "router id twice": ("lab", _tamper_twice("asns", "router_id"), "lock.asns.1.router_id"),
    "ASN device twice": ("lab", _tamper_twice("asns", "device"), "lock.asns.1.device"),
    "GUID twice": ("superpod-2su", _tamper_twice("guids", "guid"), "lock.guids.1.guid"),
    "ghost cable end": ("lab", _tamper_ghost("cables", "b_device", "ghost"), "lock.cables."),
    "ghost address": ("lab", _tamper_ghost("addresses", "device", "ghost"), "lock.addresses."),
    "ghost fabric": ("lab", _tamper_ghost("asns", "fabric", "storage"), "lock.asns."),
}


@pytest.mark.parametrize("case", TAMPERED)
def test_a_tampered_lock_is_refused_where_it_is_wrong_without_quoting_it(case: str) -> None:
    design, tamper, path = TAMPERED[case]
    data = _data(design)
    spec_lock.parse_lock(json.dumps(data), "x.json")  # as written: valid
    tamper(data)
    for read in (
        lambda: spec_lock.parse_lock(json.dumps(data), "x.json"),
        lambda: spec_lock.validate_lock(data, "x.json"),
    ):
        with pytest.raises(FabricError) as caught:
            read()
        findings = caught.value.findings
        assert findings and {f.code for f in findings} == {"lock-invalid"}
        assert any(f.path.startswith(path) for f in findings), [f.path for f in findings]
        assert not any("666" in f.message or "ghost" in f.message or "storage" in f.message for f in findings)


@pytest.mark.parametrize("asn", [64512, 65534, 4200000000, 4294967294])
def test_asns_at_the_private_ranges_edges_are_kept(asn: int) -> None:
    data = _data("lab")
    data["asns"][0]["asn"] = asn
    assert spec_lock.parse_lock(json.dumps(data), "x.json").asns[0].asn == asn


def test_the_lock_s_private_ranges_are_the_allocator_s() -> None:
    from fabric.allocation.allocate import PRIVATE_ASN_RANGES

    assert lock_format.PRIVATE_ASNS == PRIVATE_ASN_RANGES
