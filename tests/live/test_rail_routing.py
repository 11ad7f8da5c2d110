"""Per-rail source routing, live: two servers of designs/roce-512.yaml, each a network namespace with its first two
rail NICs (veth), and a "leaves" namespace that routes between the rails (a bridge per rail with the rail leaf's
gateway). The generated netplan.yaml's IPv4 addresses, tables, routes and rules are applied with `ip`; the
kernel's route lookup must send each NIC's traffic, also to the other rail, out of that NIC to its own rail's
gateway, and a ping from a NIC's address must leave by that NIC (its counters). Without the rules the lookup
picks the other NIC for the other rail's subnet, so the test can fail.

Needs root and iproute2 (and iputils-ping); skips without them, or fails under FABRIC_REQUIRE_REAL=1.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from ipaddress import ip_interface
from typing import Any

import pytest
import yaml

from fabric.render.outputs.hosts import roce_files
from tests.conftest import built, require_root, require_tool

pytestmark = pytest.mark.real

TAG = f"{os.getpid() % 100000}"
SERVERS = ("gpu001", "gpu002")
RAILS = 2  # the first two NICs of each server
LEAVES = f"rl{TAG}"


def _ns(name: str) -> str:
    return f"r{SERVERS.index(name)}-{TAG}"


def _ip(ns: str | None, *args: str) -> str:
    cmd = ["ip", *(["-n", ns] if ns else []), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)}: {done.stderr.strip()}")
    return done.stdout


def _netplans() -> dict[str, dict[str, Any]]:
    build = built("roce-512")
    out = {}
    for name in SERVERS:
        text = roce_files(build.roce[name])[f"hosts/{name}/netplan.yaml"]
        ethernets = yaml.safe_load(text)["network"]["ethernets"]
        out[name] = {nic: ethernets[nic] for nic in list(ethernets)[:RAILS]}
    return out


def _v4(value: str) -> bool:
    return ":" not in value


def _apply(ns: str, nic: str, entry: dict[str, Any], rules: bool) -> None:
    """What netplan's networkd renderer sets for one NIC, IPv4 only, with `ip`."""
    _ip(ns, "link", "set", nic, "mtu", str(entry["mtu"]), "up")
    for address in filter(_v4, entry["addresses"]):
        _ip(ns, "addr", "add", address, "dev", nic)
    if not rules:
        return
    for route in entry["routes"]:
        if not _v4(route["to"]):
            continue
        via = ["via", route["via"]] if "via" in route else []
        scope = ["scope", route["scope"]] if "scope" in route else []
        _ip(ns, "route", "add", route["to"], *via, "dev", nic, *scope, "table", str(route["table"]))
    for rule in entry["routing-policy"]:
        if _v4(rule["from"]):
            _ip(ns, "rule", "add", "from", rule["from"], "table", str(rule["table"]), "priority", str(rule["priority"]))


@pytest.fixture(scope="module", autouse=True)
def tools() -> None:
    require_root("network namespaces")
    require_tool("ip", "apt-get install iproute2")
    require_tool("ping", "apt-get install iputils-ping")


def _lab(rules: bool) -> Iterator[dict[str, dict[str, Any]]]:
    netplans = _netplans()
    namespaces = [LEAVES, *(_ns(s) for s in SERVERS)]
    try:
        for ns in namespaces:
            _ip(None, "netns", "add", ns)
            _ip(ns, "link", "set", "lo", "up")
        subprocess.run(["ip", "netns", "exec", LEAVES, "sysctl", "-qw", "net.ipv4.ip_forward=1"], check=True)
        for rail in range(RAILS):
            _ip(LEAVES, "link", "add", f"br{rail}", "type", "bridge")
            _ip(LEAVES, "link", "set", f"br{rail}", "up")
        gateways: set[tuple[int, str]] = set()
        for s, name in enumerate(SERVERS):
            for rail, (nic, entry) in enumerate(netplans[name].items()):
                peer = f"s{s}r{rail}"
                _ip(None, "link", "add", nic, "netns", _ns(name), "type", "veth", "peer", "name", peer, "netns", LEAVES)
                _ip(LEAVES, "link", "set", peer, "master", f"br{rail}", "up")
                _apply(_ns(name), nic, entry, rules)
                address = ip_interface(next(filter(_v4, entry["addresses"])))
                gateway = next(r["via"] for r in entry["routes"] if r["to"] == "0.0.0.0/0")
                gateways.add((rail, f"{gateway}/{address.network.prefixlen}"))
        for rail, gateway in sorted(gateways):  # the rail leaf's gateway, as the leaf's SVI holds it
            _ip(LEAVES, "addr", "add", gateway, "dev", f"br{rail}")
        yield netplans
    finally:
        for ns in namespaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


def _route(ns: str, to: str, source: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = json.loads(_ip(ns, "-j", "route", "get", to, "from", source))
    return found[0]


def _address(entry: dict[str, Any]) -> str:
    return str(ip_interface(next(filter(_v4, entry["addresses"]))).ip)


def _tx(ns: str, nic: str) -> int:
    stats = json.loads(_ip(ns, "-j", "-s", "link", "show", nic))[0]["stats64"]["tx"]["packets"]
    return int(stats)


def test_each_nic_sends_by_itself_to_every_rail() -> None:
    for netplans in _lab(rules=True):
        a, b = SERVERS
        for nic, entry in netplans[a].items():
            source = _address(entry)
            gateway = next(r["via"] for r in entry["routes"] if r["to"] == "0.0.0.0/0")
            for peer_nic, peer in netplans[b].items():
                target = _address(peer)
                route = _route(_ns(a), target, source)
                assert route["dev"] == nic, (nic, peer_nic, route)
                if peer_nic != nic:  # the other rail's subnet: through this rail's leaf
                    assert route.get("gateway") == gateway, route
                before = _tx(_ns(a), nic)
                ping = subprocess.run(
                    ["ip", "netns", "exec", _ns(a), "ping", "-c", "2", "-W", "2", "-I", source, target],
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
                assert ping.returncode == 0, ping.stdout + ping.stderr
                assert _tx(_ns(a), nic) >= before + 2  # the echo requests left by this NIC


def test_without_the_rules_the_other_rail_goes_out_of_the_wrong_nic() -> None:
    for netplans in _lab(rules=False):
        a, b = SERVERS
        (_, entry0), (nic1, _) = list(netplans[a].items())
        other_rail = _address(list(netplans[b].values())[1])
        route = _route(_ns(a), other_rail, _address(entry0))
        assert route["dev"] == nic1  # the main table's connected route, not nic0's rail
