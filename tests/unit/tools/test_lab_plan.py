"""The lab's plan of RoCE servers: set up from their generated netplan.yaml and sysctl.conf (no root needed)."""

from __future__ import annotations

from fabric.tools.lab import HostRoute, HostRule, plan_lab
from tests.conftest import built
from tests.support.design_variants import roce_two_su


def test_multi_nic_roce_servers_get_their_netplan_tables_and_rules() -> None:
    plan = plan_lab(roce_two_su(), prefix="x-")
    assert len(plan.switches) == 18 and len(plan.hosts) == 4 and len(plan.leaves) == 16
    ns = "x-h-gpu001"
    assert plan.host_routes == {}  # no main-table default on a server with 8 rail NICs (it would clash)
    assert plan.host_mtus[ns] == [(f"nic{i}", 9000) for i in range(8)]
    assert plan.host_addresses[ns][:2] == [("nic0", "10.2.0.2/29"), ("nic0", "fd00:0:0:2::2/64")]
    assert len(plan.host_addresses[ns]) == 16  # IPv4 and IPv6 per NIC
    assert plan.host_table_routes[ns][:2] == [
        HostRoute("nic0", "10.2.0.0/29", None, "link", 100),
        HostRoute("nic0", "0.0.0.0/0", "10.2.0.1", None, 100),
    ]
    assert len(plan.host_table_routes[ns]) == 32 and {r.table for r in plan.host_table_routes[ns]} == set(
        range(100, 108)
    )
    assert plan.host_rules[ns][0] == HostRule("10.2.0.2", 100, 1000) and len(plan.host_rules[ns]) == 16
    assert plan.host_sysctls[ns] == [
        "net.ipv4.conf.all.arp_ignore=1",
        "net.ipv4.conf.all.arp_announce=2",
        "net.ipv4.conf.all.rp_filter=2",
        "net.ipv4.conf.default.rp_filter=2",
    ]


def test_a_one_nic_server_keeps_its_default_gateway() -> None:
    plan = plan_lab(built("lab"), prefix="x-")
    assert plan.host_routes["x-h-srv1"] == ["172.16.0.1", "fd00:1ab:0:2::1"]
    assert plan.host_addresses["x-h-srv1"] == [("eth1", "172.16.0.2/24"), ("eth1", "fd00:1ab:0:2::2/64")]
    assert len(plan.host_rules["x-h-srv1"]) == 2 and len(plan.host_table_routes["x-h-srv1"]) == 4
