"""The topology stage: NVIDIA's published SuperPOD counts, rail wiring, ports, names, tiers, planes."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from fabric import build_fabric, load_spec_text
from fabric.model.topology import Link
from fabric.spec.catalog import builtin_catalog
from tests.conftest import REPO, built

# NVIDIA RA-11333-001, table 4: SU → (nodes, leaves, spines, compute+UFM cables, leaf-spine cables)
SUPERPOD = {1: (31, 8, 4, 252, 256), 2: (63, 16, 8, 508, 512), 3: (95, 24, 16, 764, 768), 4: (127, 32, 16, 1020, 1024)}
# The bundled 2-SU design builds the 4-SU spine layer (16) so that it grows to 3 and 4 SU in place; table 4's 8 is
# the fewest that fit, what the same design gives without `spines: 16` (test_2su_without_the_pin_has_table_4s_spines).
BUNDLED_SPINES = {2: 16}


@pytest.mark.parametrize("su", sorted(SUPERPOD))
def test_superpod_counts_match_nvidia_table_4(su: int) -> None:
    nodes, leaves, spines, node_cables, spine_cables = SUPERPOD[su]
    build = built(f"superpod-h100-{su}su")
    fig = build.figures["compute"]
    assert sum(1 for d in build.topology.devices.values() if d.group == "gpu") == nodes
    assert fig.tiers == 2
    assert fig.switches == {"leaf": leaves, "spine": BUNDLED_SPINES.get(su, spines), "core": 0}
    assert fig.links == {"node-leaf": node_cables, "leaf-spine": spine_cables, "spine-core": 0}
    assert fig.oversubscription["leaf"] <= 1.0
    assert fig.bisection_pct == pytest.approx(100.0)
    assert [f for f in build.findings if f.severity.name == "ERROR"] == []


def test_2su_without_the_pin_has_table_4s_spines() -> None:
    text = (REPO / "designs" / "superpod-h100-2su.yaml").read_text()
    assert "tiers: auto, spines: 16," in text
    build = build_fabric(load_spec_text(text.replace("tiers: auto, spines: 16,", "tiers: auto,")))
    assert build.figures["compute"].switches == {"leaf": 16, "spine": SUPERPOD[2][2], "core": 0}
    assert build.figures["compute"].links["leaf-spine"] == SUPERPOD[2][4]


def _compute_links(su: int) -> list[Link]:
    return list(built(f"superpod-h100-{su}su").topology.fabrics["compute"].links)


@pytest.mark.parametrize("su", [1, 4])
def test_gpu_i_of_every_node_lands_on_its_sus_rail_i_leaf(su: int) -> None:
    devices = built(f"superpod-h100-{su}su").topology.devices
    gpu_links = [lk for lk in _compute_links(su) if lk.tier == "node-leaf" and devices[lk.a].group == "gpu"]
    assert len(gpu_links) == 8 * (32 * su - 1)  # 8 rails of every DGX (one node per design left out for the UFMs)
    for link in gpu_links:
        node, leaf = devices[link.a], devices[link.b]
        assert leaf.rail == link.rail
        assert leaf.su == node.index // 32 + 1  # `reserved_slots: 1`: dgx001-031 in SU 1, then 32 a SU
        assert leaf.name == f"su{leaf.su}-rail{leaf.rail}-leaf"


def test_dgx_port_to_rail_map_follows_the_user_guide() -> None:
    ports = builtin_catalog().nodes["dgx-h100"].ports["compute"].port_list()
    assert {p.rail: p.name for p in ports} == {
        0: "OSFP4P2",
        1: "OSFP3P2",
        2: "OSFP3P1",
        3: "OSFP4P1",
        4: "OSFP1P2",
        5: "OSFP2P2",
        6: "OSFP2P1",
        7: "OSFP1P1",
    }
    first = [link for link in _compute_links(1) if link.a == "dgx001"]
    assert {(link.a_port, link.b) for link in first} == {(p.name, f"su1-rail{p.rail}-leaf") for p in ports}


def test_node_slot_s_uses_down_port_s_and_ufm_takes_the_freed_slot() -> None:
    links = _compute_links(4)
    by_leaf: dict[str, list[Link]] = defaultdict(list)
    for link in links:
        if link.tier == "node-leaf":
            by_leaf[link.b].append(link)
    # dgx096 is slot 0 of SU 4; the 32nd slot of SU 1 (`reserved_slots: 1`, the DGX the RA leaves out) holds the
    # 4 UFM appliances on rails 0-3, where no DGX of a later SU comes
    assert [link.a for link in by_leaf["su4-rail0-leaf"][:2]] == ["dgx096", "dgx097"]
    assert [link.b_port for link in by_leaf["su4-rail0-leaf"][:2]] == ["sw1p1", "sw1p2"]
    assert [link.a for link in by_leaf["su1-rail0-leaf"]][-2:] == ["dgx031", "ufm001"]
    ufm = sorted((link.a, link.b, link.b_port) for link in links if link.a.startswith("ufm"))
    assert ufm == [(f"ufm00{i + 1}", f"su1-rail{i}-leaf", "sw16p2") for i in range(4)]
    assert all(link.speed_gbps == 200 for link in links if link.a.startswith("ufm"))


def test_every_leaf_reaches_every_spine_evenly() -> None:
    per_pair = Counter((link.a, link.b) for link in _compute_links(4) if link.tier == "leaf-spine")
    assert set(per_pair.values()) == {2}  # 32 uplinks over 16 spines
    assert len(per_pair) == 32 * 16


@pytest.mark.parametrize("design", ["superpod-h100-4su", "roce-512", "lab"])
def test_no_port_is_used_twice(design: str) -> None:
    ends: Counter[tuple[str, str]] = Counter()
    for ft in built(design).topology.fabrics.values():
        for link in ft.links:
            ends[(link.a, link.a_port)] += 1
            ends[(link.b, link.b_port)] += 1
    assert ends and max(ends.values()) == 1


def test_four_su_fabrics() -> None:
    figures = built("superpod-h100-4su").figures
    assert figures["storage"].switches == {"leaf": 8, "spine": 4, "core": 0}
    assert figures["storage"].oversubscription["leaf"] <= 4 / 3
    assert figures["inband"].switches == {"leaf": 8, "spine": 2, "core": 0}
    assert figures["oob"].switches == {"leaf": 5, "spine": 2, "core": 0}
    # every BMC and every management port of the other fabrics' switches is on the out-of-band fabric
    oob = {link.a for link in built("superpod-h100-4su").topology.fabrics["oob"].links if link.tier == "node-leaf"}
    devices = built("superpod-h100-4su").topology.devices
    others = {d.name for d in devices.values() if d.fabric in ("compute", "storage", "inband")}
    nodes = {d.name for d in devices.values() if d.layer == "node"}
    assert oob == others | nodes


def test_dual_homed_nodes_land_on_two_leaves() -> None:
    links = built("superpod-h100-4su").topology.fabrics["inband"].links
    leaves: dict[str, set[str]] = defaultdict(set)
    for link in links:
        if link.tier == "node-leaf":
            leaves[link.a].add(link.b)
    assert all(len(v) == 2 for name, v in leaves.items() if name.startswith(("dgx", "stor", "head", "ufm")))


def test_roce_512_uses_400g_breakouts_on_sn5600() -> None:
    build = built("roce-512")
    fig = build.figures["compute"]
    assert fig.switches == {"leaf": 8, "spine": 4, "core": 0}
    assert fig.links == {"node-leaf": 512, "leaf-spine": 512, "spine-core": 0}
    ports = {link.b_port for link in build.topology.fabrics["compute"].links}
    assert "swp1s0" in ports and "swp1s1" in ports  # Cumulus names breakouts from s0
    assert {link.speed_gbps for link in build.topology.fabrics["compute"].links} == {400}


def test_lab_is_two_spines_by_four_leaves() -> None:
    build = built("lab")
    fig = build.figures["compute"]
    assert fig.switches == {"leaf": 4, "spine": 2, "core": 0}
    links = build.topology.fabrics["compute"].links
    assert Counter(link.b for link in links if link.tier == "node-leaf") == {f"leaf{i}": 2 for i in range(1, 5)}
    assert Counter((link.a, link.b) for link in links if link.tier == "leaf-spine") == {
        (f"leaf{i}", f"spine{j}"): 1 for i in range(1, 5) for j in (1, 2)
    }
    assert all(len(link.a_port) <= 15 and "/" not in link.b_port for link in links)


def _spec(nodes: int, topology: str, extra: str = "") -> str:
    return f"""
name: t
racks: {{rows: [A, B, C, D], rack_units: 48, power_kw: 45}}
nodes: [{{group: gpu, type: dgx-h100, count: {nodes}, per_rack: 4}}]
fabrics:
  compute:
    technology: infiniband
    topology: {topology}
    switches: {{leaf: qm9700}}
    attach: [{{group: gpu, ports: compute}}]
{extra}
addressing: {{mgmt: 10.128.0.0/14}}
"""


def test_three_tiers_when_two_cannot_reach() -> None:
    # 8,192 GPUs: 256 rail leaves > 64, so 3 tiers: pods of 4 SUs, N/(k/2) spines, N/k cores
    build = build_fabric(load_spec_text(_spec(1024, "{kind: fat-tree, rail_optimized: true, scalable_unit: 32}")))
    fig = build.figures["compute"]
    assert fig.tiers == 3
    assert fig.switches == {"leaf": 256, "spine": 256, "core": 128}
    assert fig.links == {"node-leaf": 8192, "leaf-spine": 8192, "spine-core": 8192}
    assert fig.bisection_pct == pytest.approx(100.0)
    devices = build.topology.devices
    assert devices["pod8-spine32"].pod == 8 and devices["core128"].layer == "core"
    assert {devices[f"su{su}-rail0-leaf"].pod for su in (1, 4, 5)} == {1, 2}


def test_planes_split_a_nodes_ports() -> None:
    build = build_fabric(
        load_spec_text(_spec(64, "{kind: fat-tree, rail_optimized: true, scalable_unit: 32, planes: 2}"))
    )
    links = build.topology.fabrics["compute"].links
    planes = {(link.a_port, link.plane) for link in links if link.a == "gpu001"}
    rails = {p.name: p.rail for p in builtin_catalog().nodes["dgx-h100"].ports["compute"].port_list()}
    assert planes == {(port, rail % 2 + 1) for port, rail in rails.items()}
    names = {link.b for link in links if link.tier == "node-leaf"}
    assert "p1-su1-rail0-leaf" in names and "p2-su2-rail7-leaf" in names
    fig = build.figures["compute"]
    assert fig.switches == {"leaf": 16, "spine": 8, "core": 0}  # per plane: 8 leaves (2 SUs × 4 rails), 4 spines
    assert fig.bisection_pct == pytest.approx(100.0)


def test_partial_su_full_vs_populated() -> None:
    full = build_fabric(load_spec_text(_spec(40, "{kind: fat-tree, rail_optimized: true, scalable_unit: 32}")))
    populated = build_fabric(
        load_spec_text(_spec(40, "{kind: fat-tree, rail_optimized: true, scalable_unit: 32, partial_su: populated}"))
    )
    assert full.figures["compute"].links["leaf-spine"] == 16 * 32  # NVIDIA's rule: full uplinks for SU 2
    # SU 2 holds 8 nodes: its leaves keep only the uplinks they need (rounded to the spine count)
    assert populated.figures["compute"].links["leaf-spine"] == 8 * 32 + 8 * 8
    assert populated.figures["compute"].bisection_pct == pytest.approx(100.0)


def test_auto_tiers_pick_two_at_the_limit() -> None:
    # 2,048 GPU ports = k²/2 for k = 64: the largest non-blocking 2-tier fabric
    build = build_fabric(load_spec_text(_spec(256, "{kind: fat-tree, rail_optimized: true, scalable_unit: 32}")))
    assert build.figures["compute"].tiers == 2
    assert build.figures["compute"].switches == {"leaf": 64, "spine": 32, "core": 0}


@pytest.mark.parametrize(
    ("topology", "says"),
    [
        ("{kind: fat-tree, scalable_unit: 32, reserved_slots: 1}", "reserved_slots needs rail_optimized"),
        ("{kind: fat-tree, rail_optimized: true, scalable_unit: 4, reserved_slots: 4}", "at least one node slot"),
    ],
)
def test_reserved_slots_out_of_place_is_a_finding(topology: str, says: str) -> None:
    from fabric.model.findings import FabricError

    text = (REPO / "designs" / "superpod-h100-1su.yaml").read_text()
    text = text.replace("{kind: fat-tree, rail_optimized: true, scalable_unit: 32, tiers: auto}", topology)
    with pytest.raises(FabricError) as caught:
        load_spec_text(text)
    assert [f.code for f in caught.value.findings] == ["spec-invalid"] and says in caught.value.findings[0].message


def test_reserved_slots_leave_the_first_sus_last_slots_to_the_non_rail_ports() -> None:
    text = (REPO / "designs" / "superpod-h100-1su.yaml").read_text().replace("count: 31,", "count: 33,")
    text = text.replace("scalable_unit: 32, tiers: auto}", "scalable_unit: 32, tiers: auto, reserved_slots: 2}")
    links = build_fabric(load_spec_text(text)).topology.fabrics["compute"].links
    rail0 = [(lk.a, lk.b, lk.b_port) for lk in links if lk.b.endswith("rail0-leaf") and lk.tier == "node-leaf"]
    assert ("dgx030", "su1-rail0-leaf", "sw15p2") in rail0 and ("dgx031", "su2-rail0-leaf", "sw1p1") in rail0
    assert ("dgx033", "su2-rail0-leaf", "sw2p1") in rail0
    assert [(a, p) for a, leaf, p in rail0 if a.startswith("ufm")] == [("ufm001", "sw16p1")]
