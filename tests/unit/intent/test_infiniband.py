"""InfiniBand subnet intent: GUIDs (inventory and placeholders), IB port numbering, rates, ftree roles, SM
hosts, partitions, the checks, the rendered files and the topology.net round trip."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path

import pytest

from fabric import render_all
from fabric.intent.infiniband.guids import (
    GuidNeed,
    assign_guids,
    format_guid,
    is_placeholder,
    parse_guid,
    parse_inventory,
    placeholder_guid,
)
from fabric.intent.infiniband.ports import Numberings, SwitchNumbering, node_cas, parse_rate, plan_rate
from fabric.intent.infiniband.subnet import Subnet
from fabric.pipeline import Build, build_fabric
from fabric.render.outputs.infiniband import _header
from fabric.render.outputs.infiniband.netfile import topology_net
from fabric.spec.catalog import SwitchModel, builtin_catalog, switch_ports
from fabric.spec.loader import load_spec_text
from fabric.tools.ibnetdiscover import parse_ibnetdiscover
from tests.conftest import REPO, built

QM9700 = builtin_catalog().switches["qm9700"]


def switch_numbering(model: SwitchModel, used: Iterable[tuple[str, int]]) -> SwitchNumbering:
    """The numbering of one switch from the ports its links use: (port name, link speed)."""
    return Numberings().of("", model, used)


def _subnet(build: Build, fabric: str = "compute", plane: int | None = None) -> Subnet:
    subnet = build.infiniband.subnet(fabric, plane)
    assert subnet is not None
    return subnet


# --------------------------------------------------------------------------------------------- GUIDs


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0x946dae0300aa1b20", 0x946DAE0300AA1B20),
        ("0X1f", 0x1F),
        ("946dae0300aa1b20", 0x946DAE0300AA1B20),
        ("946d:ae03:00aa:1b20", 0x946DAE0300AA1B20),
        (" 0x1 ", 1),
        ("0x0", None),
        ("0xZZ", None),
        ("946dae0300aa1b2", None),  # 15 bare digits: ambiguous, refused
        ("0x946dae0300aa1b2000", None),  # more than 64 bits
        ("12", None),
    ],
)
def test_guid_forms(text: str, value: int | None) -> None:
    assert parse_guid(text) == value


def test_placeholders_are_stable_marked_and_leave_room_for_ports() -> None:
    guid = placeholder_guid("dgx017 mlx5_2")
    assert guid == placeholder_guid("dgx017 mlx5_2") != placeholder_guid("dgx017 mlx5_3")
    assert is_placeholder(guid) and format_guid(guid).startswith("0xfab0") and guid & 0xFF == 0
    assert not is_placeholder(0x946DAE0300AA1B20)


def test_assign_guids_from_inventory_and_placeholders() -> None:
    inventory = parse_inventory(
        "device,port,node_guid,port_guid\n"
        "leaf1,,0x10,\n"
        "gpu1,mlx5_0,0x100,\n"  # by HCA name
        "gpu1,OSFP3P2,0x200,0x2ff\n",  # by cabled port name, with the real port GUID
        "inv.csv",
        "x",
    )
    assert inventory.findings == ()
    needs = [
        GuidNeed("leaf1", None, ()),
        GuidNeed("spine1", None, ()),
        GuidNeed("gpu1", "mlx5_0", ("OSFP4P2",)),
        GuidNeed("gpu1", "mlx5_3", ("OSFP3P2",)),
        GuidNeed("gpu2", "mlx5_0", ("OSFP4P2",)),
    ]
    guids, unused = assign_guids(needs, inventory)
    assert unused == []
    assert guids["leaf1"].node == 0x10 and not guids["leaf1"].placeholder and guids["leaf1"].source_line == 2
    assert guids["gpu1 mlx5_0"].ports == (0x101,)  # node GUID + port number
    assert guids["gpu1 mlx5_3"].node == 0x200 and guids["gpu1 mlx5_3"].ports == (0x2FF,)
    assert guids["spine1"].placeholder and guids["gpu2 mlx5_0"].ports == (guids["gpu2 mlx5_0"].node + 1,)


def test_placeholders_avoid_inventory_guids() -> None:
    taken = placeholder_guid("spine1")
    inventory = parse_inventory(f"device,port,node_guid\nleaf1,,{format_guid(taken)}\n", "inv.csv", "x")
    guids, _ = assign_guids([GuidNeed("leaf1", None, ()), GuidNeed("spine1", None, ())], inventory)
    assert guids["leaf1"].node == taken
    assert guids["spine1"].node not in (taken, 0) and guids["spine1"].node == placeholder_guid("spine1", 1)


def test_unmatched_inventory_rows_are_returned() -> None:
    inventory = parse_inventory("device,port,node_guid\nleaf9,,0x10\ngpu1,mlx5_7,0x20\nleaf1,mlx5_0,0x30\n", "i", "x")
    guids, unused = assign_guids([GuidNeed("leaf1", None, ()), GuidNeed("gpu1", "mlx5_0", ("p",))], inventory)
    assert [r.device for r in unused] == ["leaf9", "gpu1", "leaf1"]  # a switch row must not name a port
    assert guids["leaf1"].placeholder


@pytest.mark.parametrize(
    ("text", "code", "line"),
    [
        ("", "inventory-format", 1),
        ("name,guid\nleaf1,0x1\n", "inventory-format", 1),
        ("device,port,node_guid\nleaf1,,0xZZ\n", "inventory-guid", 2),
        ("device,port,node_guid,port_guid\ngpu1,mlx5_0,0x10,nope\n", "inventory-guid", 2),
        ("device,port,node_guid\n,,0x10\n", "inventory-guid", 2),
        ("device,port,node_guid\nleaf1,,0x10\nleaf1,,0x11\n", "duplicate-guid", 3),
        ("device,port,node_guid\nleaf1,,0x10\nleaf2,,0x10\n", "duplicate-guid", 3),
        ("device,port,node_guid,port_guid\ngpu1,mlx5_0,0x10,0x20\nleaf2,,0x20\n", "duplicate-guid", 3),
    ],
)
def test_bad_inventories_are_findings_at_their_line(text: str, code: str, line: int) -> None:
    inventory = parse_inventory(text, "inv.csv", "fabrics.compute.infiniband.inventory")
    assert [(f.code, f.file, f.line) for f in inventory.findings] == [(code, "inv.csv", line)]
    assert inventory.findings[0].path == "fabrics.compute.infiniband.inventory" and inventory.findings[0].hint
    assert all(r.line != line for r in inventory.rows)  # the offending row is not used


def test_comments_and_blank_lines_in_an_inventory() -> None:
    inventory = parse_inventory("device,port,node_guid\n# collected 2025-01-01\n\nleaf1,,0x10\n", "i", "x")
    assert inventory.findings == () and [r.line for r in inventory.rows] == [4]


# --------------------------------------------------------------------------------------------- ports and rates


def test_quantum_cage_n_holds_ib_ports_2n_minus_1_and_2n() -> None:
    numbering = switch_numbering(QM9700, [("sw5p2", 400)])
    assert numbering.per_cage == 2 and numbering.nports == 64
    assert numbering.number("sw1p1") == 1 and numbering.number("sw5p1") == 9 and numbering.number("sw5p2") == 10
    assert numbering.number("sw32p2") == 64 and numbering.number("nope") is None
    assert [numbering.name(p) for p in (1, 10, 64)] == ["sw1p1", "sw5p2", "sw32p2"]
    assert numbering.name(65) == "port 65"
    for port in switch_ports(QM9700, 400):
        assert numbering.name(numbering.number(port.name) or 0) == port.name


def test_a_split_switch_numbers_four_ports_per_cage() -> None:
    numbering = switch_numbering(QM9700, [("sw2s3", 200), ("sw1p1", 400)])
    assert numbering == SwitchNumbering(QM9700, 4)
    assert numbering.number("sw2s3") == 7 and numbering.nports == 128 and numbering.name(7) == "sw2s3"


def test_a_switch_without_links_uses_its_default_breakout() -> None:
    assert switch_numbering(QM9700, []).per_cage == 2


@pytest.mark.parametrize(
    ("gbps", "rate"), [(400, "4xNDR"), (200, "4xHDR"), (800, "4xXDR"), (100, "4xEDR"), (56, "4xFDR"), (1, None)]
)
def test_planned_rates(gbps: int, rate: str | None) -> None:
    planned = plan_rate(gbps)
    assert (str(planned) if planned else None) == rate
    if planned:
        assert planned.gbps == gbps and parse_rate(str(planned)) == planned


@pytest.mark.parametrize("text", ["4xNDR", "1xSDR", "12xQDR", "2xNDR", "4xFDR10"])
def test_rates_parse(text: str) -> None:
    rate = parse_rate(text)
    assert rate is not None and str(rate) == text


@pytest.mark.parametrize("text", ["4xFOO", "3xNDR", "NDR", "x4NDR", ""])
def test_bad_rates_do_not_parse(text: str) -> None:
    assert parse_rate(text) is None


def test_dgx_h100_has_one_single_port_hca_per_rail() -> None:
    cas = node_cas(builtin_catalog().nodes["dgx-h100"])
    assert cas["OSFP4P2"].hca == "mlx5_0" and cas["OSFP1P1"].hca == "mlx5_11" and cas["OSFP4P2"].number == 1
    assert len({cas[p].hca for p in cas if p.startswith("OSFP")}) == 8
    assert cas["SLOT1P1"].hca == "SLOT1P1"  # no RDMA device name in the catalog: the port's own name


# --------------------------------------------------------------------------------------------- the intent


def test_superpod_1su_subnet() -> None:
    build = built("superpod-h100-1su")
    subnet = _subnet(build)
    assert subnet.directory == "infiniband/compute" and subnet.tiers == 2
    assert len(subnet.switches) == 12 and len(subnet.cas) == 31 * 8 + 4 and len(subnet.links) == 508
    assert [r.key for r in subnet.roots] == ["spine01", "spine02", "spine03", "spine04"]
    assert len(subnet.compute) == 248 and {p.group for p in subnet.compute} == {"gpu"}
    assert [p.device for p in subnet.io] == ["ufm001", "ufm002", "ufm003", "ufm004"]
    # its SM hosts are UFM appliances: NVIDIA's OpenSM with adaptive routing (sm.flavor defaults to ufm)
    assert subnet.flavor == "ufm" and subnet.engines == ("ar_updn", "no_fallback") and subnet.fallback_appended
    assert [(h.host, h.priority, h.master, h.file) for h in subnet.sm] == [
        ("ufm001", 15, True, "opensm.conf"),
        ("ufm002", 14, False, "opensm-ufm002.conf"),
    ]
    gpu17 = subnet.by_key["dgx017 mlx5_3"]
    assert gpu17.device == "dgx017" and gpu17.hca == "mlx5_3" and gpu17.nports == 1 and not gpu17.switch
    for link in subnet.links:
        node = subnet.by_key[link.a.node]
        if not node.switch:
            assert link.a.guid == node.guid + link.a.port
        assert link.b.guid == subnet.by_key[link.b.node].guid
    assert len({n.guid for n in subnet.nodes}) == len(subnet.nodes)
    assert all(n.placeholder for n in subnet.nodes)
    assert build.infiniband.ends[("dgx017", "OSFP3P2")] == ("mlx5_3", 1)


def test_cabling_csv_names_the_hca_and_ib_ports() -> None:
    build = built("superpod-h100-1su")
    rows = list(csv.DictReader(io.StringIO(render_all(build)["cabling.csv"].decode())))
    numbering = _subnet(build).numbering
    assert (len(rows), sum(1 for r in rows if r["tier"] == "node-leaf")) == (508, 252)
    for row in rows:
        assert int(row["b_ib_port"]) == numbering[row["b_device"]].number(row["b_port"])
        if row["tier"] == "node-leaf":
            assert row["a_ib_port"] == "1"
            assert row["a_hca"] == ("ib0" if row["a_device"].startswith("ufm") else _hca(row["a_port"]))
        else:
            assert row["a_hca"] == "" and int(row["a_ib_port"]) == numbering[row["a_device"]].number(row["a_port"])
    leaf = next(r for r in rows if r["b_port"] == "sw5p2")
    assert leaf["b_ib_port"] == "10"


def _hca(port: str) -> str:
    return node_cas(builtin_catalog().nodes["dgx-h100"])[port].hca


def test_three_tiers_have_cores_as_roots() -> None:
    subnet = _subnet(built("lab-ib-3tier"))
    assert subnet.tiers == 3 and len(subnet.roots) == 8 and {r.layer for r in subnet.roots} == {"core"}
    assert len(subnet.cas) == 384 and len(subnet.compute) == 384 and subnet.io == ()
    assert [h.host for h in subnet.sm] == ["gpu001", "gpu002"]


def test_lab_ib_partitions() -> None:
    subnet = _subnet(built("lab-ib"))
    names = [p.name for p in subnet.partitions]
    assert names == ["Default", "compute", "storage", "mgmt"]
    default = subnet.partitions[0]
    assert default.added and default.self_full and default.keyword == "ALL" and not default.ipoib
    compute = subnet.partitions[1]
    full = {m.label.split(" (")[0] for m in compute.members if m.membership == "full"}
    limited = {m.label.split(" (")[0] for m in compute.members if m.membership == "limited"}
    assert full == {f"node0{i} mlx5_0" for i in range(1, 7)}
    assert limited == {"fs1 stor1", "fs1 stor2", "fs2 stor1", "fs2 stor2"}
    assert compute.rate_gbps == 400 and compute.rate_code == 21 and compute.mtu_code == 5
    mgmt = subnet.partitions[3]
    assert mgmt.rate_gbps == 200 and mgmt.rate_code == 17  # the UFM appliances' HDR ports are the slowest


SMALL = """
name: small
nodes:
  - {group: gpu, type: ib-server, count: 8, name: "n{index}"}
  - {group: sm, type: ufm-appliance, count: 1}
fabrics:
  compute:
    technology: infiniband
    topology: {kind: fat-tree, leaves: 2, spines: 2, uplinks: 4%(planes)s}
    switches: {leaf: qm9700, spine: qm9700}
    attach: [{group: gpu, ports: ib}, {group: sm, ports: ib}]
    infiniband:
%(settings)s
"""


def _small(settings: str = "      sm: {hosts: [sm001]}", planes: str = "") -> Build:
    return build_fabric(load_spec_text(SMALL % {"settings": settings, "planes": planes}, "small.yaml"))


def test_more_planes_than_ports_is_a_finding() -> None:
    build = _small(planes=", planes: 2")  # ib-server nodes have one port
    assert [(f.code, f.path) for f in build.errors] == [("empty-fabric", "fabrics.compute.topology.planes")]
    assert build.infiniband.subnets == ()


def test_planes_are_subnets_of_their_own() -> None:
    text = SMALL.replace("ib-server", "storage-server").replace("ports: ib}, {group: sm", "ports: storage}, {group: sm")
    build = build_fabric(
        load_spec_text(text % {"settings": "      sm: {hosts: [sm001]}", "planes": ", planes: 2"}, "s")
    )
    assert [(s.fabric, s.plane, s.directory) for s in build.infiniband.subnets] == [
        ("compute", 1, "infiniband/compute/plane1"),
        ("compute", 2, "infiniband/compute/plane2"),
    ]
    one, two = build.infiniband.subnets
    assert {n.key for n in one.switches}.isdisjoint({n.key for n in two.switches})
    assert len(one.links) + len(two.links) == len(build.allocation.cables)
    assert any(f.code == "sm-host" and "plane" in f.message for f in build.findings)  # n1 has one port: plane 1
    assert sorted(p for p in render_all(build) if p.startswith("infiniband/")) == sorted(
        f"infiniband/compute/plane{p}/{name}"
        for p in (1, 2)
        for name in (
            "opensm.conf",
            "root_guids.txt",
            "cn_guids.txt",
            "partitions.conf",
            "node-name-map",
            "topology.net",
        )
    )


def test_an_engine_list_with_minhop_or_no_fallback_is_kept() -> None:
    for engines in ("[updn, minhop]", "[ftree, no_fallback]"):
        subnet = _subnet(_small(f"      routing_engine: {engines}"))
        assert not subnet.fallback_appended and "no_fallback" not in subnet.engines[:-1]
    subnet = _subnet(_small("      routing_engine: [updn, minhop]"))
    assert subnet.engines == ("updn", "minhop")


def test_checks_on_the_subnet() -> None:
    build = _small(
        "      compute_groups: [sm]\n      io_groups: [gpu]\n"
        "      partitions: [{name: Default, pkey: 0x7fff}, {name: none, pkey: 1, members: [], ipoib: false},"
        " {name: odd, pkey: 2, members: [gpu], rate_gbps: 123}]"
    )
    codes = {(f.code, f.path) for f in build.findings}
    assert ("empty-partition", "fabrics.compute.infiniband.partitions[1]") in codes
    assert ("partition-rate", "fabrics.compute.infiniband.partitions[2].rate_gbps") in codes
    assert not any(f.code == "ftree-admissible" for f in build.findings)  # the UFM port is the compute node
    build = _small("      compute_groups: []\n      io_groups: [gpu, sm]")
    assert any(f.code == "ftree-admissible" and "no compute nodes" in f.message for f in build.findings)


def test_an_unattached_sm_host_is_an_error() -> None:
    build = _small("      sm: {hosts: [sm001, n1]}")
    assert not [f for f in build.findings if f.code == "sm-host"]
    text = SMALL.replace("{group: sm, ports: ib}", "{group: gpu, ports: ib}").replace("[{group: gpu, ports: ib}, ", "[")
    build = build_fabric(load_spec_text(text % {"settings": "      sm: {hosts: [sm001]}", "planes": ""}, "s.yaml"))
    assert [f.message for f in build.findings if f.code == "sm-host"] == [
        "SM host `sm001` has no port in fabric `compute`"
    ]


def test_inventory_guids_reach_every_file(tmp_path: Path) -> None:
    (tmp_path / "guids.csv").write_text("device,port,node_guid\nleaf01,,0xb83fd20300a10000\nn1,mlx5_0,0x946dae03\n")
    text = SMALL % {"settings": "      inventory: guids.csv\n      sm: {hosts: [n1]}", "planes": ""}
    build = build_fabric(load_spec_text(text, "small.yaml", tmp_path))
    subnet = _subnet(build)
    assert subnet.by_key["leaf01"].guid == 0xB83FD20300A10000 and not subnet.by_key["leaf01"].placeholder
    files = {k: v.decode() for k, v in render_all(build).items() if k.startswith("infiniband/")}
    assert "guid 0x00000000946dae04\n" in files["infiniband/compute/opensm.conf"]
    assert "0x00000000946dae04 n1 mlx5_0 port 1\n" in files["infiniband/compute/cn_guids.txt"]
    assert '0xb83fd20300a10000 "leaf01"\n' in files["infiniband/compute/node-name-map"]
    assert "switchguid=0xb83fd20300a10000(b83fd20300a10000)\n" in files["infiniband/compute/topology.net"]
    warning = next(f for f in build.findings if f.code == "placeholder-guids")
    assert warning.message.startswith("11 of 13 switches and HCAs") and "guids.csv lacks them" in warning.message


# --------------------------------------------------------------------------------------------- files


def test_every_file_marks_placeholders() -> None:
    files = {p: d for p, d in render_all(built("lab-ib")).items() if p.startswith("infiniband/")}
    assert len(files) == 8  # opensm.conf (master and standby), 3 GUID files, partitions, node-name-map, topology
    for path, data in files.items():
        assert "# PLACEHOLDER GUIDs: 18 of the 18" in data.decode(), path


def test_no_placeholder_mark_without_placeholders(tmp_path: Path) -> None:
    rows = (
        ["device,port,node_guid"] + [f"leaf0{i},,0x{i}00" for i in (1, 2)] + [f"spine0{i},,0x{i}0000" for i in (1, 2)]
    )
    rows += [f"n{i},mlx5_0,0x{i}000000" for i in range(1, 9)] + ["sm001,ib0,0x99000000"]
    (tmp_path / "guids.csv").write_text("\n".join(rows) + "\n")
    text = SMALL % {"settings": "      inventory: guids.csv\n      sm: {hosts: [sm001]}", "planes": ""}
    build = build_fabric(load_spec_text(text, "small.yaml", tmp_path))
    assert not [f for f in build.findings if f.code == "placeholder-guids"]
    files = render_all(build)
    assert sum(1 for p in files if p.startswith("infiniband/")) >= 6
    for path, data in files.items():
        if path.endswith((".png", ".xlsx")):  # binary pictures and the workbook carry no GUIDs
            continue
        assert "PLACEHOLDER" not in data.decode() and "(placeholder)" not in data.decode(), path


def test_opensm_conf_says_why() -> None:
    files = render_all(built("superpod-h100-1su"))
    conf = files["infiniband/compute/opensm.conf"].decode()
    keys = [line.split()[0] for line in conf.splitlines() if line and not line.startswith("#")]
    assert keys == [
        "guid",
        "sm_priority",
        "subnet_prefix",
        "lmc",
        "routing_engine",
        "root_guid_file",
        "cn_guid_file",
        "io_guid_file",
        "max_reverse_hops",
        "partition_config_file",
        "node_name_map_name",
        "sweep_interval",
        "qos",
        "log_file",
        "force_log_flush",
        "log_max_size",
        "dump_files_dir",
    ]
    lines = conf.splitlines()
    for i, line in enumerate(lines):  # each non-default setting has its reason just above it
        if line.split(" ", 1)[0] in ("guid", "sm_priority", "routing_engine", "root_guid_file", "cn_guid_file"):
            assert lines[i - 1].startswith("#"), line
    standby = files["infiniband/compute/opensm-ufm002.conf"].decode()
    assert "sm_priority 14\n" in standby and "sm_priority 15\n" in conf
    assert [ln for ln in standby.splitlines() if ln.startswith("guid ")] != [
        ln for ln in conf.splitlines() if ln.startswith("guid ")
    ]
    assert "routing_engine ar_updn,no_fallback\n" in conf  # UFM appliances: sm.flavor ufm
    assert "root_guid_file /opt/ufm/files/conf/opensm/root_guids.txt\n" in conf


def test_qos_settings_in_opensm_conf() -> None:
    conf = render_all(built("lab-ib"))["infiniband/compute/opensm.conf"].decode()
    assert "qos TRUE\nqos_max_vls 4\nqos_high_limit 0\nqos_vlarb_high 0:4\nqos_vlarb_low 1:4,2:4,3:4\n" in conf
    assert "qos_sl2vl 0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3\n" in conf


def test_topology_net_round_trips() -> None:
    build = built("superpod-h100-1su")
    subnet = _subnet(build)
    text = render_all(build)["infiniband/compute/topology.net"].decode()
    discovered = parse_ibnetdiscover(text, "topology.net")
    assert discovered.findings == ()
    assert {g: n.description for g, n in discovered.nodes.items()} == {n.guid: n.key for n in subnet.nodes}
    planned = set()
    for link in subnet.links:
        a, b = subnet.by_key[link.a.node].guid, subnet.by_key[link.b.node].guid
        ends = sorted(((a, link.a.port), (b, link.b.port)))
        planned.add((ends[0][0], ends[0][1], ends[1][0], ends[1][1], str(link.rate)))
    assert {(d.a_guid, d.a_port, d.b_guid, d.b_port, d.rate) for d in discovered.links} == planned
    for line in text.splitlines():  # ibsim reads lines of up to 255 characters and takes `=` as an option
        assert len(line) < 256 and ("=" not in line or line.startswith(("switchguid=", "caguid=", "#")))
    assert topology_net(subnet, _header(subnet), list(subnet.links)) == text  # the IbLinks, made on demand, agree
    assert [(k.cable, k.a.node, k.a.port, k.a.guid, k.b.node, k.b.port, k.b.guid) for k in subnet.links] == list(
        subnet.wiring
    )
    # links given as cabled keep their own rate: a link trained at 1x shows so (fabric verify's tests cable so)
    import dataclasses

    links = list(subnet.links)
    assert links[2].rate is not None and links[2].rate.width == 4
    links[2] = dataclasses.replace(links[2], rate=dataclasses.replace(links[2].rate, width=1))
    discovered = parse_ibnetdiscover(topology_net(subnet, _header(subnet), links), "topology.net")
    rates = sorted(d.rate for d in discovered.links)
    assert rates.count(str(links[2].rate)) == 1 and len(rates) == len(links)


REAL = (REPO / "tests" / "data" / "ibnetdiscover-ibsim.txt").read_text()


def test_parse_ibnetdiscover_output() -> None:
    discovered = parse_ibnetdiscover(REAL, "real.txt")
    assert discovered.findings == ()
    kinds = sorted(n.kind for n in discovered.nodes.values())
    assert kinds == ["ca", "ca", "switch", "switch", "switch"]
    leaf2 = discovered.nodes[0xFAB0000000000300]
    assert leaf2.description == "leaf2" and leaf2.nports == 8
    assert len(discovered.links) == 4  # every cable printed on both ends, counted once
    rates = {(d.a_guid, d.a_port): d.rate for d in discovered.links}
    assert rates[(0xFAB0000000000300, 1)] == "2xSDR"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no InfiniBand nodes"),
        ("hello world\n", "not an ibnetdiscover line (neither"),
        ('[1]\t"S-01"[2]\n', "a port line outside a node"),
        ('Switch\t8 "leaf1"\t# "leaf1"\n', "has no GUID"),
        ('Switch\t8 "S-01"\n[9]\t"S-02"[1]\n', "port 9 of 'S-01', which has 8 ports"),
        ('Switch\t8 "S-01"\n[1]\t"x"[1]\n', "remote node 'x' is not in the file"),
        ('Switch\t8 "S-01"\nSwitch\t8 "S-01"\n', "is listed twice"),
    ],
)
def test_bad_ibnetdiscover_is_a_finding(text: str, message: str) -> None:
    discovered = parse_ibnetdiscover(text, "bad.txt")
    assert len(discovered.findings) == 1
    finding = discovered.findings[0]
    assert message in finding.message and finding.code == "discovered-format" and finding.hint
    assert finding.file == "bad.txt" and finding.line >= 1
