"""Rack-scale NVLink systems (DGX GB200 NVL72): the catalog's trays, the bundled 1-SU design's counts from
NVIDIA's RA text, the NVLink domain as the lowest locality level, Slurm blocks and IMEX files per domain."""

from __future__ import annotations

import ipaddress
from collections import Counter
from functools import cache

import hostlist
import yaml

from fabric import render_all
from fabric.analysis.headroom import headroom
from fabric.analysis.jobs import placement
from fabric.analysis.locality import locality
from fabric.pipeline import Build, build_fabric
from fabric.spec.catalog import builtin_catalog
from fabric.spec.loader import load_spec_text
from tests.conftest import DESIGNS, built

DESIGN = "gb200-nvl72-1su"


@cache
def _files() -> dict[str, str]:
    return {k: v.decode() for k, v in render_all(built(DESIGN)).items() if k.startswith(("slurm/", "imex/", "k8s/"))}


def _variant(old: str, new: str) -> Build:
    text = (DESIGNS / f"{DESIGN}.yaml").read_text(encoding="utf-8")
    assert old in text
    return build_fabric(load_spec_text(text.replace(old, new), f"{DESIGN}-variant.yaml", DESIGNS))


def test_catalog_trays_and_their_rack_systems() -> None:
    nodes = builtin_catalog().nodes
    gb200 = nodes["dgx-gb200-tray"]
    assert gb200.gpus == 4
    compute = gb200.ports["compute"]
    assert (compute.speed_gbps, compute.connector, compute.ports_per_cage) == (400, "osfp", 1)
    assert [p.rail for p in compute.port_list()] == [0, 1, 2, 3]  # one ConnectX-7 per GPU
    assert len(gb200.ports["storage"].port_list()) + len(gb200.ports["inband"].port_list()) == 4  # 2 x BF-3, 2 ports
    system = gb200.rack_system
    assert system is not None
    assert (system.trays, system.gpus, system.nvlink_switch_trays, system.nvlink_switch_chips) == (18, 72, 9, 18)
    assert (system.mgmt_switches, system.mgmt_switch_model, system.cooling) == (2, "sn2201", "liquid")
    assert "power_kw" in system.unverified  # the GB200 rack's power is from the press only
    assert system.mgmt_switch_model in builtin_catalog().switches
    gb300 = nodes["gb300-nvl72-tray"].rack_system
    assert (
        gb300 is not None and gb300.power_kw == 142 and "power_kw" not in gb300.unverified
    )  # NVL72 RA: "up to 142 kW"
    for name, part in nodes.items():
        if part.rack_system is not None:  # a domain's GPUs are its trays' GPUs; a tray's power its share of the rack
            assert part.rack_system.gpus == part.gpus * part.rack_system.trays, name
            assert (
                abs(part.power_w * part.rack_system.trays - part.rack_system.power_kw * 1000) < part.rack_system.trays
            )


def test_one_su_has_the_ras_counts() -> None:
    """RA-11338-001: an SU is 8 racks of 18 trays (576 GPUs); 4 rails, each a spine-leaf group of 8 leaves (one
    per rack) and 6 spines, non-blocking: 32 leaves, 24 spines, 576 tray-leaf and 576 leaf-spine cables."""
    build = built(DESIGN)
    assert build.errors == []
    topo = build.topology
    ft = topo.fabrics["compute"]
    layers = Counter(topo.devices[s].layer for s in ft.switches)
    assert layers == {"leaf": 32, "spine": 24}
    tiers = Counter(str(link.tier) for link in ft.links)
    assert tiers == {"node-leaf": 576, "leaf-spine": 576}
    trays = [d for d in topo.devices.values() if d.layer == "node" and d.group == "gpu"]
    assert len(trays) == 144
    assert sum(build.design.catalog.nodes[d.model].gpus for d in trays) == 576
    assert sorted(Counter(d.rack for d in trays).values()) == [18] * 8
    # rail-aligned: each leaf holds one rail of one rack's 18 trays, and its spines only that rail's leaves
    for leaf in (s for s in ft.switches if topo.devices[s].layer == "leaf"):
        down = [link.a for link in ft.links if link.b == leaf and str(link.tier) == "node-leaf"]
        assert len(down) == 18 and len({topo.devices[n].rack for n in down}) == 1, leaf
    for spine in (s for s in ft.switches if topo.devices[s].layer == "spine"):
        leaves = Counter(link.a for link in ft.links if link.b == spine)
        assert len(leaves) == 8 and set(leaves.values()) == {3}, spine
        assert len({topo.devices[leaf].plane for leaf in leaves}) == 1


def test_the_nvlink_domain_is_the_lowest_level() -> None:
    build = built(DESIGN)
    loc = locality(build.design, build.topology)
    assert loc is not None and loc.domain_level
    assert len(loc.domains) == 8
    for domain, switch in zip(loc.domains, loc.levels[0], strict=True):
        assert (switch.name, switch.nodes, switch.nvlink) == (domain.name, domain.nodes, "DGX GB200 NVL72")
        assert len(domain.nodes) == 18 and domain.gpus == 72
        assert len(switch.members) == 4  # the rack's four rail leaves
    assert [s.name for s in loc.blocks()] == [d.name for d in loc.domains]
    assert loc.levels[1][0].children == tuple(d.name for d in loc.domains)
    # compact placement fills a domain before the next: an 18-tray job stays inside one
    order = placement(loc)
    assert order[:18] == list(loc.domains[0].nodes)


def test_job_bandwidth_names_the_domain_a_small_job_stays_in() -> None:
    build = build_fabric(DESIGNS / f"{DESIGN}.yaml", jobs=True)
    assert build.jobs is not None
    by_nodes = {r.nodes: r for r in build.jobs.rows}
    assert by_nodes[16].span == "nvl-a01" and by_nodes[16].nvlink
    assert by_nodes[32].span != "nvl-a01" and not by_nodes[32].nvlink


def test_slurm_has_one_block_per_domain_and_block_sizes_from_the_domain() -> None:
    files = _files()
    lines = files["slurm/topology-block.conf"].splitlines()
    blocks = [dict(p.split("=", 1) for p in line.split()) for line in lines if line.startswith("BlockName=")]
    assert len(blocks) == 8
    assert all(len(hostlist.expand_hostlist(b["Nodes"])) == 18 for b in blocks)
    assert "BlockSizes=18,36,72,144" in lines
    data = yaml.safe_load(files["slurm/topology.yaml"])
    assert [(t["topology"], t["cluster_default"]) for t in data] == [("tree", False), ("block", True)]
    assert data[1]["block"]["block_sizes"] == [18, 36, 72, 144]


def test_kubernetes_labels_carry_the_domain() -> None:
    nodes = list(yaml.safe_load_all(_files()["k8s/node-labels.yaml"]))
    tier0 = Counter(n["metadata"]["labels"]["fabric.topograph.run/tier-0"] for n in nodes)
    assert len(tier0) == 8 and set(tier0.values()) == {18} and "nvl-a01" in tier0
    domain = Counter(n["metadata"]["labels"]["fabric.topology/nvlink-domain"] for n in nodes)
    assert domain == tier0  # the NVLink-domain label: the same grouping under a key of its own
    hypernodes = [h for h in yaml.safe_load_all(_files()["k8s/volcano-hypernodes.yaml"]) if h]
    lowest = [h for h in hypernodes if h["spec"]["tier"] == 1]
    assert sorted(h["metadata"]["name"] for h in lowest) == sorted(tier0)
    assert {h["spec"]["tierName"] for h in lowest} == {"nvlink"}
    kueue = list(yaml.safe_load_all(_files()["k8s/kueue-topology.yaml"]))
    levels = [level["nodeLabel"] for level in kueue[0]["spec"]["levels"]]
    assert levels[-2:] == ["fabric.topograph.run/tier-0", "kubernetes.io/hostname"]  # the domain, then the host


def test_no_domain_label_on_other_designs_or_when_switched_off() -> None:
    text = render_all(built("superpod-h100-1su"))["k8s/node-labels.yaml"].decode()
    assert "nvlink-domain" not in text
    build = _variant("addressing:", "exports: {kubernetes: {nvlink_label: null}}\naddressing:")
    assert "nvlink-domain" not in render_all(build)["k8s/node-labels.yaml"].decode()


def test_imex_nodes_files_are_the_trays_inband_addresses() -> None:
    build = built(DESIGN)
    files = _files()
    loc = locality(build.design, build.topology)
    assert loc is not None
    plan: dict[str, list[str]] = {}
    for row in build.allocation.addresses:
        if row.purpose == "server" and row.fabric == "converged" and row.address.version == 4:
            plan.setdefault(row.device, []).append(str(row.address.ip))
    nodes_files = sorted(k for k in files if k.endswith("/nodes_config.cfg"))
    assert nodes_files == sorted(f"imex/{d.name}/nodes_config.cfg" for d in loc.domains)
    for domain in loc.domains:
        lines = files[f"imex/{domain.name}/nodes_config.cfg"].splitlines()
        assert len(lines) == 18
        assert lines == [plan[n][0] for n in domain.nodes]  # the first in-band port's address, in tray order
        assert all(ipaddress.ip_address(line) for line in lines)
        config = files[f"imex/{domain.name}/config.cfg"]
        assert "IMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg" in config.splitlines()
    every = [line for k in nodes_files for line in files[k].splitlines()]
    assert len(every) == len(set(every)) == 144


def test_no_inband_fabric_no_imex_files() -> None:
    build = _variant("  converged:  ", "  frontend:\n    role: storage\n   ")
    assert not any(k.startswith("imex/") for k in render_all(build))


# The RA's storage and in-band fabric (RA-11338-001, network-fabrics.html: five networks on four physical
# fabrics, one of them the "Storage and In-band Ethernet Fabric"; abstract.html: Spectrum-4 Ethernet for
# storage; Mission Control N/S guide, introduction: SN5600 the in-band switch). From a secondary summary of
# the RA's PDF (its section on the storage and in-band fabric, Figures 4.6-4.9) [unverified]: 4 x 200GbE a tray
# on its BlueField-3s, node side blocking 5:3, storage side 16 x 800G a SU non-blocking.
RA_BF3_PORTS_PER_TRAY = 4  # 2 BlueField-3 x 2 ports
RA_BF3_GBPS = 200
RA_NODE_SIDE_BLOCKING = (5, 3)


def test_storage_and_inband_share_one_converged_ethernet_fabric() -> None:
    build = built(DESIGN)
    spec, topo = build.design.spec, build.topology
    ethernet = [k for k, f in spec.fabrics.items() if f.technology == "ethernet"]
    assert ethernet == ["converged"] and spec.fabric_role("converged") == "converged"
    ft = topo.fabrics["converged"]
    assert {topo.devices[s].model for s in ft.switches} == {"sn5600"}  # Spectrum-4
    node_links = [link for link in ft.links if str(link.tier) == "node-leaf"]
    per_node = Counter(link.a for link in node_links)
    groups = Counter(topo.devices[n].group for n in per_node)
    assert groups == {"gpu": 144, "storage": 16, "mgmt": 8}  # trays, storage servers, in-band management
    trays = [n for n in per_node if topo.devices[n].group == "gpu"]
    assert {per_node[n] for n in trays} == {RA_BF3_PORTS_PER_TRAY}
    assert {link.speed_gbps for link in node_links if link.a in trays} == {RA_BF3_GBPS}
    for tray in ("gb001", "gb144"):  # both ports of both BlueField-3s; a port pair on two different leaves
        home = {link.a_port: link.b for link in node_links if link.a == tray}
        assert sorted(home) == ["LBF3-P1", "LBF3-P2", "RBF3-P1", "RBF3-P2"]
        assert home["LBF3-P1"] != home["RBF3-P1"] and home["LBF3-P2"] != home["RBF3-P2"]
    leaves = [s for s in ft.switches if topo.devices[s].layer == "leaf"]
    spines = [s for s in ft.switches if topo.devices[s].layer == "spine"]
    assert (len(leaves), len(spines)) == (4, 4)  # fabric's counts [unverified: the RA's were not read]
    for leaf in leaves:  # 5:3 by bandwidth: 160 x 200G down, 96 x 200G up
        up = sum(link.speed_gbps for link in ft.links if link.a == leaf and str(link.tier) == "leaf-spine")
        assert up == 96 * RA_BF3_GBPS
        assert build.topology.devices[leaf].model == "sn5600"
    down_ports, up_ports = 160, 96
    assert down_ports * RA_NODE_SIDE_BLOCKING[1] == up_ports * RA_NODE_SIDE_BLOCKING[0]
    assert Counter(str(link.tier) for link in ft.links) == {"node-leaf": 624, "leaf-spine": 384}


def test_the_converged_fabric_is_lossless_and_nccl_stays_on_the_compute_fabric() -> None:
    """Storage on the converged fabric is RoCE (lossless by default, as on a storage fabric); the trays' NCCL file
    is the compute fabric's: a tray whose compute fabric is InfiniBand gets its HCAs, and the converged fabric's
    BlueField-3 ports only as NCCL's bootstrap sockets."""
    build = built(DESIGN)
    files = render_all(build)
    assert "hosts/gb001/nic-qos.sh" in files and "LBF3-P1" in files["hosts/gb001/nic-qos.sh"].decode()
    lines = files["hosts/gb001/nccl.env"].decode().splitlines()
    assert [line for line in lines if line.startswith("NCCL_IB_HCA")] == ["NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_4,mlx5_5"]
    assert [line for line in lines if line.startswith("NCCL_SOCKET_IFNAME")] == [
        "NCCL_SOCKET_IFNAME==LBF3-P2,LBF3-P1,RBF3-P2,RBF3-P1"
    ]
    dual = render_all(built(DUAL))  # negative: an Ethernet compute fabric's trays keep their nccl.env
    env = dual["hosts/gb001/nccl.env"].decode()
    assert "over the compute fabric" in env and "BF3" not in env.split("NCCL_IB_HCA")[1].splitlines()[0]


def test_the_converged_fabric_without_its_role_is_no_in_band_fabric() -> None:
    build = _variant("  converged:  ", "  north-south:\n    role: storage\n   ")
    files = render_all(build)
    assert not any(k.startswith("imex/") for k in files)  # a storage fabric's addresses are not IMEX's
    assert "hosts/gb001/nic-qos.sh" in files  # still RoCE (storage)


def test_domains_below_a_larger_switch_group_are_a_level_of_their_own() -> None:
    """Two racks per leaf group (scalable_unit 36): the leaf group holds two domains, which become a level."""
    build = _variant(
        "scalable_unit: 18, planes: 4, tiers: 2, spines: 6, downlinks: 18, uplinks: 18}",
        "scalable_unit: 36, planes: 4, tiers: 2, spines: 4, downlinks: 36, uplinks: 28}",
    )
    loc = locality(build.design, build.topology)  # (oversubscribed now: an error, not the point here)
    assert loc is not None and loc.domain_level
    assert len(loc.levels[0]) == 8 and all(s.layer == "nvlink" and len(s.nodes) == 18 for s in loc.levels[0])
    assert {s.speed_gbps for s in loc.levels[0]} == {400}  # the trays' links, as topology.conf's LinkSpeed
    assert len(loc.levels[1]) == 4 and all(len(s.children) == 2 and s.level == 1 for s in loc.levels[1])
    assert not [f for f in build.findings if f.code.startswith("nvlink-")]


def test_a_domain_across_leaf_groups_is_no_level_and_a_warning() -> None:
    build = _variant("scalable_unit: 18,", "scalable_unit: 12,")
    loc = locality(build.design, build.topology)
    assert loc is not None and not loc.domain_level and len(loc.domains) == 8
    assert not any(s.nvlink for s in loc.switches)
    split = [f for f in build.findings if f.code == "nvlink-domain-split"]
    assert len(split) == 1 and split[0].path == "fabrics.compute.topology"


def test_a_rack_short_of_trays_is_a_warning_naming_the_power() -> None:
    build = _variant("power_kw: 135", "power_kw: 100")
    partial = [f for f in build.findings if f.code == "nvlink-domain-partial"]
    assert len(partial) == 1
    assert partial[0].path == "nodes[group=gpu].per_rack"
    assert "132.0 kW" in partial[0].hint
    assert not [f for f in built(DESIGN).findings if f.code == "nvlink-domain-partial"]


def test_racks_that_cannot_feed_an_nvl72_are_a_rack_power_error() -> None:
    build = _variant("power_kw: 135", "power_kw: 100")
    [power] = [f for f in build.findings if f.code == "rack-power"]
    assert power.severity.name == "ERROR" and power.path == "racks.power_kw"
    assert "DGX GB200 NVL72 rack draws 132.0 kW" in power.message and "at least 132" in power.hint
    assert not [f for f in build.findings if f.code == "rack-power" and f is not power]  # once per system
    assert not [f for f in _variant("power_kw: 135", "power_kw: 132").findings if f.code == "rack-power"]
    assert not [f for f in built(DESIGN).findings if f.code == "rack-power"]


def test_plan_candidates_come_in_whole_nvl72_racks() -> None:
    from fabric.plan.candidates import Request, enumerate_candidates, node_count
    from fabric.plan.document import spec_data

    catalog = builtin_catalog()
    tray = catalog.nodes["dgx-gb200-tray"]
    assert node_count(tray, 100) == 36 and node_count(tray, 72) == 18  # GPUs in multiples of the domain
    assert node_count(catalog.nodes["dgx-b200"], 100) == 13
    request = Request(gpus=100, nodes=("dgx-gb200-tray",), technologies=("infiniband",), switches=("qm9700",))
    rail = [c for c in enumerate_candidates(catalog, request) if c.rail_optimized]
    assert rail and {c.scalable_unit for c in rail} == {18}
    data = spec_data(rail[0], 100, catalog)
    assert data["nodes"][0]["count"] == 36 and data["nodes"][0]["per_rack"] == 18
    assert data["racks"]["power_kw"] == 132
    build = build_fabric(load_spec_text(yaml.safe_dump(data), "plan.yaml", DESIGNS))
    loc = locality(build.design, build.topology)
    assert loc is not None and loc.domain_level and len(loc.domains) == 2
    assert not [f for f in build.findings if f.code.startswith("nvlink-")]


# The RA's rules beyond one SU (network-fabrics page), and the counts they give for 4 SUs, by hand:
RA_RACKS_PER_SU, RA_TRAYS_PER_RACK, RA_RAILS = 8, 18, 4  # an SU is 8 racks; a tray has 4 ConnectX-7, one per rail
RA_SLG_LEAVES, RA_SLG_SPINES, RA_CORE_GROUPS = 8, 6, 6  # an SLG: 8 leaves (one per rack), 6 spines; 6 core groups
QM9700_PORTS = 64  # NDR ports of a QM9700 (the catalog's; the RA names NDR 400G)
MULTI = "gb200-nvl72-4su"


def test_four_sus_have_the_counts_of_the_ras_rules() -> None:
    sus = 4
    racks = sus * RA_RACKS_PER_SU  # 32
    trays = racks * RA_TRAYS_PER_RACK  # 576
    slgs = sus * RA_RAILS  # 16, one per SU and rail
    leaves = slgs * RA_SLG_LEAVES  # 128 = racks x rails
    spines = slgs * RA_SLG_SPINES  # 96
    leaf_up = RA_TRAYS_PER_RACK  # non-blocking: 18 down, 18 up = 3 links to each of the 6 spines
    spine_up = RA_SLG_LEAVES * leaf_up // RA_SLG_SPINES  # 24 down (8 leaves x 3), 24 up
    # one core group per spine index and rail plane: spine j of the plane's 4 SLGs, 96 ports → 2 QM9700
    per_group = -(-sus * spine_up // QM9700_PORTS)
    assert spine_up % per_group == 0  # every spine has the same links to each core of its group
    cores = RA_RAILS * RA_CORE_GROUPS * per_group
    assert (racks, trays, leaves, spines, per_group, cores) == (32, 576, 128, 96, 2, 48)

    build = built(MULTI)
    assert build.errors == []
    topo = build.topology
    ft = topo.fabrics["compute"]
    layer = {s: topo.devices[s].layer for s in ft.switches}
    assert Counter(layer.values()) == {"leaf": leaves, "spine": spines, "core": cores}
    tiers = Counter(str(link.tier) for link in ft.links)
    assert tiers == {"node-leaf": trays * RA_RAILS, "leaf-spine": leaves * leaf_up, "spine-core": spines * spine_up}
    gpus = [d for d in topo.devices.values() if d.layer == "node" and d.group == "gpu"]
    assert len(gpus) == trays and sorted(Counter(d.rack for d in gpus).values()) == [RA_TRAYS_PER_RACK] * racks
    # an SLG: a spine's leaves are one rail's leaves of one SU's 8 racks, 3 links each
    rack_of_leaf = {}
    for link in ft.links:
        if str(link.tier) == "node-leaf":
            rack_of_leaf.setdefault(link.b, set()).add(topo.devices[link.a].rack)
    assert all(len(r) == 1 for r in rack_of_leaf.values())
    slg_racks: set[frozenset[str]] = set()
    for spine in (s for s in ft.switches if layer[s] == "spine"):
        down = Counter(link.a for link in ft.links if link.b == spine)
        assert len(down) == RA_SLG_LEAVES and set(down.values()) == {3}, spine
        assert len({topo.devices[leaf].plane for leaf in down}) == 1
        slg_racks.add(frozenset(next(iter(rack_of_leaf[leaf])) for leaf in down))
    assert len(slg_racks) == sus and all(len(r) == RA_RACKS_PER_SU for r in slg_racks)  # the same 8 racks per rail
    # core group j: spine j of every SLG of its plane, the same links to each of its cores
    for core in (s for s in ft.switches if layer[s] == "core"):
        up = Counter(link.a for link in ft.links if link.b == core)
        assert len(up) == sus and set(up.values()) == {spine_up // per_group}, core
        assert len({s.rsplit("-spine", 1)[1] for s in up}) == 1  # one spine index
    loc = locality(build.design, build.topology)
    assert loc is not None and loc.domain_level and len(loc.domains) == racks
    # headroom: the spines' 24 leaf ports are taken (their 16 spare ports are no room); a core's 16 spare ports
    # take one more SLG (12 links from its spine): one SU more, 8 racks of 18 trays
    room = headroom(build.design, build.topology, "compute")
    assert room is not None and room.nodes == RA_RACKS_PER_SU * RA_TRAYS_PER_RACK


def test_four_sus_converge_storage_and_inband_too() -> None:
    build = built(MULTI)
    topo = build.topology
    assert build.design.spec.fabric_role("converged") == "converged"
    ft = topo.fabrics["converged"]
    per_node = Counter(link.a for link in ft.links if str(link.tier) == "node-leaf")
    trays = [n for n in per_node if topo.devices[n].group == "gpu"]
    assert len(trays) == 576 and {per_node[n] for n in trays} == {RA_BF3_PORTS_PER_TRAY}
    assert Counter(topo.devices[n].group for n in per_node) == {"gpu": 576, "storage": 56, "mgmt": 8}
    assert Counter(topo.devices[s].layer for s in ft.switches) == {"leaf": 16, "spine": 6}  # fabric's [unverified]
    assert not [f for f in build.findings if f.code == "cage-mixed-mode"]


def test_without_spine_downlinks_a_pod_is_not_an_su() -> None:
    """The negative case: spines that face down with all but their 24 uplinks take 13 leaves a pod, across SUs."""
    text = (DESIGNS / f"{MULTI}.yaml").read_text(encoding="utf-8")
    old = "      spine_downlinks: 24        # 8 leaves x 3: a pod is one SU's rack leaves of one rail\n"
    assert old in text
    build = build_fabric(load_spec_text(text.replace(old, ""), "variant.yaml", DESIGNS))
    ft = build.topology.fabrics["compute"]
    assert ft.params is not None and (ft.params.leaves_per_pod, ft.params.pods, ft.params.spine_uplinks) == (13, 3, 24)
    assert ft.params.leaves_per_pod != RA_SLG_LEAVES


DUAL = "gb300-nvl72-dual-plane"


def _gpu_planes(build: Build) -> dict[tuple[str, int], list[int]]:
    """(tray, rail) → the planes of that GPU's compute ports."""
    topo = build.topology
    ft = topo.fabrics["compute"]
    rails = {p.name: p.rail for p in build.design.catalog.nodes["gb300-nvl72-tray"].ports["compute"].port_list()}
    planes: dict[tuple[str, int], list[int]] = {}
    for link in ft.links:
        if str(link.tier) == "node-leaf":
            rail = rails[link.a_port]
            assert rail is not None
            planes.setdefault((link.a, rail), []).append(topo.devices[link.b].plane or 1)
    return planes


def test_gb300_dual_plane_splits_each_connectx8_across_the_planes() -> None:
    """NVL72 AI factory RA: each ConnectX-8's bandwidth split across two planes, each plane a separate fabric."""
    build = built(DUAL)
    assert build.errors == [] and not [f for f in build.findings if f.code.startswith("nvlink-")]
    topo = build.topology
    ft = topo.fabrics["compute"]
    trays, rails, racks_per_leaf = 144, 4, 2
    leaves_per_plane = trays // (18 * racks_per_leaf) * rails  # 16: a leaf per rail and 2 racks
    per_plane = Counter((topo.devices[s].plane, topo.devices[s].layer) for s in ft.switches)
    assert per_plane == {(1, "leaf"): leaves_per_plane, (1, "spine"): 6, (2, "leaf"): leaves_per_plane, (2, "spine"): 6}
    tiers = Counter((str(link.tier), topo.devices[link.b].plane) for link in ft.links)
    assert tiers == {(t, p): trays * rails for t in ("node-leaf", "leaf-spine") for p in (1, 2)}  # 1:1 per plane
    for link in ft.links:  # no link joins the planes
        if str(link.tier) == "leaf-spine":
            assert topo.devices[link.a].plane == topo.devices[link.b].plane
    gpus = _gpu_planes(build)
    assert len(gpus) == trays * rails and set(map(tuple, gpus.values())) == {(1, 2)}  # every GPU in both planes
    loc = locality(build.design, build.topology)
    assert loc is not None and loc.domain_level and len(loc.domains) == 8 and {d.gpus for d in loc.domains} == {72}
    inband = topo.fabrics["inband"]
    homes = Counter(link.a for link in inband.links if str(link.tier) == "node-leaf")
    assert len(homes) == trays and set(homes.values()) == {2}
    for tray in ("gb001", "gb144"):  # "two 400 Gb/s ports per node to two separate switches"
        assert len({link.b for link in inband.links if link.a == tray}) == 2


def test_one_plane_puts_both_ports_of_a_connectx8_in_it() -> None:
    text = (DESIGNS / f"{DUAL}.yaml").read_text(encoding="utf-8")
    old = "scalable_unit: 36, planes: 2, tiers: 2, spines: 6, downlinks: 36, uplinks: 36"
    assert old in text
    new = "scalable_unit: 18, tiers: 2, spines: 12, downlinks: 36, uplinks: 36"
    build = build_fabric(load_spec_text(text.replace(old, new), "variant.yaml", DESIGNS))
    assert build.errors == []
    gpus = _gpu_planes(build)
    assert len(gpus) == 144 * 4 and set(map(tuple, gpus.values())) == {(1, 1)}
