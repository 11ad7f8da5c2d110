"""Routed nodes' sessions (`dual_homing: host_routing`) on every platform: their own peer group, a prefix-list
per node that accepts its own loopback only, a maximum-prefix that tears a leaking session down; fabric sessions
warn past twice the prefixes the plan originates. One intent value, every platform's syntax."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from fabric import render_all
from fabric.intent.ethernet.model import FABRIC_PREFIX_HEADROOM, HOST_MAXIMUM_PREFIX
from tests.support.design_variants import on_platform

LEAF, SPINE = "configs/leaf1/", "configs/spine1/"


def leaf_intent(unnumbered: bool = False) -> Any:
    return on_platform("lab-dual", "frr", unnumbered).intents["leaf1"].bgp


def test_each_routed_node_is_accepted_for_its_own_loopback_only() -> None:
    build = on_platform("lab-dual", "frr")
    bgp = build.intents["leaf1"].bgp
    hosts = bgp.hosts
    # an IPv4 and an IPv6 session per routed port, each with the node's own policy
    assert [(n.peer_device, n.v6) for n in hosts] == [("srv1", False), ("srv2", False), ("srv1", True), ("srv2", True)]
    for n in hosts:
        loopback = build.hosts[n.peer_device].loopback_v4.network
        assert [r.prefix for r in n.accept] == [loopback] and n.prefix_list == f"HOST-{n.peer_device}"
    # the spine sessions carry no host policy; a spine has no host sessions at all
    assert [n.peer_device for n in bgp.neighbors if not n.host] == ["spine1", "spine2"] * 2
    assert build.intents["spine1"].bgp.hosts == ()


def test_the_fabric_limit_is_twice_the_plans_prefixes_rounded_up_to_a_power_of_two() -> None:
    build = on_platform("lab-dual", "frr")
    rows = build.allocation.addresses
    loopbacks = [r for r in rows if r.purpose in ("loopback", "host-loopback") and r.address.version == 4]
    assert len(loopbacks) == 10  # 6 switches, 4 servers; lab-dual has no server subnets
    assert FABRIC_PREFIX_HEADROOM * 10 == 20
    assert build.intents["leaf1"].bgp.maximum_prefix == 32
    assert build.intents["leaf1"].bgp.host_maximum_prefix == HOST_MAXIMUM_PREFIX


@pytest.mark.parametrize("platform", ["frr", "sonic"])
def test_frr_binds_the_lists_per_session(platform: str) -> None:
    text = render_all(on_platform("lab-dual", platform))[LEAF + "frr.conf"].decode()
    assert "ip prefix-list HOST-srv1 seq 10 permit 10.255.0.7/32\n" in text
    assert " neighbor 10.254.0.17 peer-group HOSTS\n" in text and " neighbor 10.254.0.0 peer-group FABRIC\n" in text
    assert "  neighbor 10.254.0.17 prefix-list HOST-srv1 in\n" in text
    assert "  neighbor HOSTS maximum-prefix 10 force\n" in text
    assert "  neighbor FABRIC maximum-prefix 32 warning-only\n" in text
    assert "  neighbor HOSTS route-map FABRIC-OUT out\n" in text and "neighbor HOSTS route-map FABRIC-IN" not in text
    spine = render_all(on_platform("lab-dual", platform))[SPINE + "frr.conf"].decode()
    assert "HOSTS" not in spine and "HOST-" not in spine  # a spine has no routed nodes


def test_a_fabric_without_routed_nodes_has_no_host_group() -> None:
    text = render_all(on_platform("lab", "frr"))[LEAF + "frr.conf"].decode()
    assert "HOSTS" not in text and "maximum-prefix" in text and " force" not in text


def test_eos_numbered_binds_per_session_unnumbered_per_group() -> None:
    numbered = render_all(on_platform("lab-dual", "eos"))[LEAF + "startup-config"].decode()
    assert "      neighbor 10.254.0.17 prefix-list HOST-srv1 in\n" in numbered
    assert "   neighbor HOSTS maximum-routes 10\n" in numbered
    assert "   neighbor FABRIC maximum-routes 32 warning-only\n" in numbered
    unnumbered = render_all(on_platform("lab-dual", "eos", True))[LEAF + "startup-config"].decode()
    # `neighbor interface` takes no policy: the group accepts this leaf's nodes' loopbacks, a switch's never
    assert "      neighbor HOSTS prefix-list HOSTS-IN in\n" in unnumbered
    assert "ip prefix-list HOSTS-IN\n   seq 10 permit 10.255.0.7/32\n   seq 20 permit 10.255.0.8/32\n!" in unnumbered
    assert "prefix-list HOST-srv1" not in unnumbered
    # both families on the session: EOS counts them together
    assert "   neighbor HOSTS maximum-routes 20\n" in unnumbered


def test_eos_structured_config_says_the_same() -> None:
    config = yaml.safe_load(render_all(on_platform("lab-dual", "eos"))[LEAF + "structured-config.yaml"])
    groups = {g["name"]: g for g in config["router_bgp"]["peer_groups"]}
    assert groups["HOSTS"]["maximum_routes"] == 10 and "maximum_routes_warning_only" not in groups["HOSTS"]
    assert groups["FABRIC"]["maximum_routes"] == 32 and groups["FABRIC"]["maximum_routes_warning_only"] is True
    neighbors = {n["ip_address"]: n for n in config["router_bgp"]["address_family_ipv4"]["neighbors"]}
    assert neighbors == {
        "10.254.0.17": {"ip_address": "10.254.0.17", "prefix_list_in": "HOST-srv1"},
        "10.254.0.19": {"ip_address": "10.254.0.19", "prefix_list_in": "HOST-srv2"},
    }
    lists = {p["name"]: p for p in config["prefix_lists"]}
    assert lists["HOST-srv1"]["sequence_numbers"] == [{"sequence": 10, "action": "permit 10.255.0.7/32"}]


def test_nvue_binds_the_lists_per_neighbor() -> None:
    config = yaml.safe_load(render_all(on_platform("lab-dual", "cumulus"))[LEAF + "startup.yaml"])
    body = next(item["set"] for item in config if "set" in item)
    bgp = body["vrf"]["default"]["router"]["bgp"]
    policy = body["router"]["policy"]
    assert policy["prefix-list"]["HOST-srv1"]["rule"]["10"]["match"] == {"10.255.0.7/32": {}}
    srv1 = bgp["neighbor"]["10.254.0.17"]
    assert srv1["peer-group"] == "HOSTS"
    assert srv1["address-family"]["ipv4-unicast"]["policy"]["inbound"]["prefix-list"] == "HOST-srv1"
    hosts = bgp["peer-group"]["HOSTS"]["address-family"]["ipv4-unicast"]
    assert hosts["prefix-limits"] == {"inbound": {"maximum": 10}}
    assert "inbound" not in hosts["policy"]  # no fabric-wide inbound map: the per-node list decides
    fabric = bgp["peer-group"]["FABRIC"]["address-family"]["ipv4-unicast"]
    assert fabric["prefix-limits"] == {"inbound": {"maximum": 32, "warning-only": "on"}}
    assert bgp["neighbor"]["10.254.0.0"]["peer-group"] == "FABRIC"
