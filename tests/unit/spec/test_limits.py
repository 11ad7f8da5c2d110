"""Bounds on total work (issue 24): counted before expansion from every node group, part and fabric, each a
`too-large` finding that states its limit, answered in well under 5 s whatever the counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.model.findings import FabricError
from fabric.spec.limits import MAX_LINKS, MAX_NODE_PORTS, MAX_NODES, MAX_SWITCH_PORTS
from fabric.spec.loader import load_spec_text

PART = """
switches:
  huge-8192:
    description: a switch no vendor makes
    technology: ethernet
    platform: sonic
    u: 1
    power_w: 1000
    list_price_usd: 1000
    ports:
      - group: p
        cages: 1024
        connector: osfp
        lanes: 8
        modes: [{ports: 8, speed_gbps: 100, name: "swp{cage}s{sub}"}]
nodes:
  many-ports:
    description: a node of 1,024 ports
    u: 1
    power_w: 500
    list_price_usd: 8000
    ports:
      data: {technology: ethernet, speed_gbps: 100, connector: qsfp28, count: 1024, name: "eth{n}"}
"""


def spec(nodes: str, topology: str = "{kind: clos}", leaf: str = "sn4600c", extra: str = "") -> str:
    return f"""
name: big
catalog: [parts.yaml]
nodes:
{nodes}
  - {{group: srv, type: linux-server, count: 4, name: "srv{{index}}"}}
fabrics:
  compute:
    technology: ethernet
    topology: {topology}
    switches: {{leaf: {leaf}}}
    platform: sonic
    attach: [{{group: srv, ports: data}}{extra}]
"""


def refusal(text: str, tmp_path: Path) -> str:
    (tmp_path / "parts.yaml").write_text(PART)
    # refused while loading, before anything is expanded (no timing asserted: speed is the benchmarks' business,
    # and the hostile cases run these sizes under a hang guard)
    with pytest.raises(FabricError) as caught:
        load_spec_text(text, "big.yaml", tmp_path)
    (finding,) = caught.value.findings
    assert finding.code == "too-large"
    return finding.message


def test_a_group_attached_to_no_fabric_counts(tmp_path: Path) -> None:
    message = refusal(spec('  - {group: idle, type: linux-server, count: 300000000, name: "i{index}"}'), tmp_path)
    assert "300,000,004 nodes in all" in message and f"at most {MAX_NODES:,}" in message


def test_node_ports_count_whatever_the_fabric(tmp_path: Path) -> None:
    message = refusal(spec('  - {group: idle, type: many-ports, count: 2000, name: "i{index}"}'), tmp_path)
    assert "2,048,008 ports" in message  # every port group counted, the 4 servers' data and BMC ports too
    assert "ports in all" in message and f"at most {MAX_NODE_PORTS:,}" in message


def test_a_part_files_switch_does_not_lift_the_link_bound(tmp_path: Path) -> None:
    # 1,900 nodes of 1,024 ports attached under an 8,192-port switch: within the Clos capacity, not the links
    nodes = '  - {group: gpu, type: many-ports, count: 1900, name: "g{index}"}'
    message = refusal(spec(nodes, leaf="huge-8192", extra=", {group: gpu, ports: data}"), tmp_path)
    assert "links" in message and f"at most {MAX_LINKS:,}" in message


def test_switches_counted_out_count_their_ports(tmp_path: Path) -> None:
    message = refusal(spec("", "{kind: clos, leaves: 800, spines: 2, planes: 8}", "huge-8192"), tmp_path)
    assert "52,559,872 ports" in message and f"at most {MAX_SWITCH_PORTS:,}" in message


def test_a_design_within_every_bound_loads(tmp_path: Path) -> None:
    (tmp_path / "parts.yaml").write_text(PART)
    nodes = '  - {group: idle, type: linux-server, count: 100000, name: "i{index}"}'
    design = load_spec_text(spec(nodes, "{kind: clos, leaves: 40, spines: 2}", "huge-8192"), "big.yaml", tmp_path)
    assert sum(g.count for g in design.spec.nodes) == 100_004


MILLION = """
name: million
nodes:
  - {{group: gpu, type: dgx-h100, count: {count}, name: "dgx{{index:06d}}"}}
fabrics:
  compute:
    technology: infiniband
    topology: {{kind: fat-tree, rail_optimized: true, scalable_unit: 64, tiers: 3, planes: 2}}
    switches: {{leaf: qm9700, spine: qm9700, core: qm9700}}
    speed_gbps: 200
    attach:
      - {{group: gpu, ports: compute}}
"""


def test_a_million_gpus_on_three_tiers_is_within_the_link_bound(tmp_path: Path) -> None:
    """benchmarks/run.py's `1m`: 125,000 DGX H100 on 3 tiers lay out ~3,000,000 links (the bound was 2,000,000);
    twice as many nodes are refused by it (2,000,000 node ports, ~6,000,000 links)."""
    design = load_spec_text(MILLION.format(count=125_000), "million.yaml", tmp_path)
    assert design.spec.nodes[0].count == 125_000
    with pytest.raises(FabricError) as caught:
        load_spec_text(MILLION.format(count=250_000), "million.yaml", tmp_path)
    messages = [f.message for f in caught.value.findings if f.code == "too-large"]
    assert any("links" in m and f"at most {MAX_LINKS:,}" in m for m in messages)
