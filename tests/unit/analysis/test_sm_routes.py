"""The SM route models (analysis/traffic/sm.py and updn.py, OpenSM's ftree and updn re-stated) without the
simulator: what ftree is documented to do (every CA reached up-then-down, destinations spread evenly over a 1:1
leaf's uplinks, a shift permutation congestion-free on a full fat tree), updn's least-loaded min-hop choice worked
by hand, and what the models refuse. Their equality with OpenSM's own tables is proven on ibsim in
tests/live/test_sm_routes.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from fabric.analysis.traffic import sm
from fabric.analysis.traffic.jobs import fabric_nodes, run
from fabric.analysis.traffic.sm import IbGraph, NotModelled, ftree_routes, qmap_order
from fabric.analysis.traffic.updn import updn_routes
from fabric.cli import app
from fabric.intent.infiniband.routes import sm_routes, sm_tables
from tests.conftest import DESIGNS, built
from tests.live.test_ibsim import uplink_spread, walk_routes
from tests.support.design_variants import spec_data, variant
from tests.support.ibsim_lab import Lfts


def _lfts(routes: sm.Routes, subnet: Any) -> Lfts:
    """The model's tables in the shape dump_lfts is read into (a made-up LID per CA port)."""
    lids = {guid: i + 1 for i, guid in enumerate(sorted({g for t in routes.values() for g in t}))}
    tables = {subnet.by_key[key].guid: {lids[g]: port for g, port in t.items()} for key, t in routes.items()}
    return Lfts(tables, lids)


@pytest.mark.parametrize("design", ["lab-ib", "lab-ib-3tier"])
def test_every_ca_is_reached_up_then_down(design: str) -> None:
    subnet = built(design).infiniband.subnet("compute")
    assert subnet is not None
    routes = sm_routes(subnet)
    problems, pairs = walk_routes(subnet, _lfts(routes, subnet))
    cas = len({g for t in routes.values() for g in t})
    assert pairs == cas * (cas - 1) and problems == []


def test_a_one_to_one_fabric_spreads_destinations_evenly_over_uplinks() -> None:
    subnet = built("lab-ib-3tier").infiniband.subnet("compute")
    assert subnet is not None
    spread = uplink_spread(subnet, _lfts(sm_routes(subnet), subnet))
    assert len(spread) == 60  # every non-root switch (68 less 8 cores), every uplink listed
    uneven = {k: dict(c) for k, c in spread.items() if max(c.values()) - min(c.values()) > 1}
    assert uneven == {}


def _tiny(cns_per_leaf: int = 2) -> IbGraph:
    """Two spines (ports 1, 2 to the leaves), two leaves (ports 1… to CAs, 10 and 11 up), one CA port per host."""
    cables = []
    ca_ports = {}
    for leaf in (1, 2):
        cables += [(f"leaf{leaf}", 10, "spine1", leaf), (f"leaf{leaf}", 11, "spine2", leaf)]
        for h in range(1, cns_per_leaf + 1):
            cables.append((f"h{leaf}{h}", 1, f"leaf{leaf}", h))
            ca_ports[(f"h{leaf}{h}", 1)] = 0x1000 + 16 * leaf + h
    return IbGraph(
        switches={"spine1": 0x101, "spine2": 0x102, "leaf1": 0x201, "leaf2": 0x202},
        cas={ca: guid - 1 for (ca, _), guid in ca_ports.items()},
        cables=cables,
        ca_ports=ca_ports,
        roots=["spine1", "spine2"],
        cns=frozenset(ca_ports.values()),
        ios=None,
    )


def test_ftree_alternates_a_leafs_compute_nodes_over_the_spines() -> None:
    """Per leaf, in port order, each compute node takes the least loaded uplink (ties: the lower index): the
    leaf's first CN comes down from the first spine, its second from the second; every other leaf goes up to
    that same spine for it."""
    routes = ftree_routes(_tiny())
    h11, h12, h21, h22 = 0x1011, 0x1012, 0x1021, 0x1022
    assert routes["leaf1"][h11] == 1 and routes["leaf1"][h12] == 2  # its own CAs: their ports
    spine_of = {
        g: ("spine1" if routes["leaf1" if g > 0x1020 else "leaf2"][g] == 10 else "spine2") for g in routes["spine1"]
    }
    assert sorted(spine_of.values()) == ["spine1", "spine1", "spine2", "spine2"]
    assert spine_of[h11] != spine_of[h12] and spine_of[h21] != spine_of[h22]
    assert routes["spine1"][h21] == routes["spine2"][h21] == 2  # both spines go down to leaf2 for its CA


def test_the_switch_order_is_opensms_qmap_order() -> None:
    assert qmap_order(0x0000000000000102) == 0x0201000000000000  # network byte order read little-endian
    assert qmap_order(0x0102030405060708) == 0x0807060504030201


def test_what_the_model_refuses() -> None:
    graph = _tiny()
    with pytest.raises(NotModelled, match="one rank"):
        ftree_routes(IbGraph(**{**_fields(graph), "cables": [*graph.cables, ("spine1", 5, "spine2", 5)]}))
    with pytest.raises(NotModelled, match="no compute nodes"):
        ftree_routes(IbGraph(**{**_fields(graph), "cns": frozenset({1})}))

    def minhop(data: dict[str, Any]) -> None:
        data["fabrics"]["compute"]["infiniband"]["routing_engine"] = ["minhop"]

    subnet = variant("lab-ib", minhop).infiniband.subnet("compute")
    assert subnet is not None
    with pytest.raises(NotModelled, match="minhop: the SM's routes are modelled for ftree and updn only"):
        sm_routes(subnet)
    with pytest.raises(NotModelled, match="no root GUID file"):
        updn_routes(IbGraph(**{**_fields(graph), "roots": []}))
    with pytest.raises(NotModelled, match="not reachable from the roots"):
        updn_routes(IbGraph(**{**_fields(graph), "switches": {**graph.switches, "lone": 0x999}}))
    ufm = built("superpod-h100-1su").infiniband.subnet("compute")
    assert ufm is not None and ufm.engines[0] == "ar_updn"
    with pytest.raises(NotModelled, match="`--routing adaptive` is its model"):
        sm_routes(ufm)
    ethernet = built("lab")
    with pytest.raises(NotModelled, match="not an InfiniBand fabric"):
        sm_tables([], ethernet.topology.fabrics["compute"])


def _fields(graph: IbGraph) -> dict[str, Any]:
    return {f: getattr(graph, f) for f in IbGraph.__slots__}


def test_ftree_routes_a_shift_without_congestion_on_a_full_fat_tree() -> None:
    """lab-ib-3tier is 1:1 at every tier: ftree's routes carry the half-job shift and all-to-all at full rate,
    where static ECMP loses more than half of the shift."""
    build = built("lab-ib-3tier")
    key, nodes = fabric_nodes(build.design, build.topology, None) or ("", [])
    subnets = [s for s in build.infiniband.subnets if s.fabric == key]
    figures = run(
        build.design,
        build.topology,
        nodes,
        key,
        patterns=["shift", "all-to-all"],
        routings=["sm", "ecmp"],
        qps=1,
        seeds=2,
        distance=None,
        pxn=True,
        sm=sm_tables(subnets, build.topology.fabrics[key]),
    )
    got = {(f.pattern, f.routing): f for f in figures}
    assert got["shift", "sm"].mean_pct == got["shift", "sm"].p5_pct == 100
    assert got["all-to-all", "sm"].mean_pct == 100
    assert (got["shift", "sm"].qps, got["shift", "sm"].seeds) == (None, 1)
    assert got["shift", "ecmp"].mean_pct < 50


def test_fabric_traffic_routing_sm() -> None:
    lab_ib = str(DESIGNS / "lab-ib.yaml")
    result = CliRunner().invoke(app, ["traffic", lab_ib, "--routing", "sm", "--routing", "adaptive", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["traffic"]
    assert [(r["routing"], r["qps"], r["seeds"]) for r in rows[:2]] == [("sm", None, 1), ("adaptive", None, 1)]
    shift = {r["routing"]: r["mean_pct"] for r in rows if r["pattern"] == "shift"}
    assert shift == {"sm": 85.0, "adaptive": 90.0}  # the fixed routes lose 5 points of the shift to spraying
    superpod = CliRunner().invoke(app, ["traffic", str(DESIGNS / "superpod-h100-1su.yaml"), "--routing", "sm"])
    assert superpod.exit_code == 2 and "ar_updn" in superpod.output  # UFM's engine: not modelled


def test_summary_rows_carry_the_sm_figure_on_ftree_fabrics() -> None:
    ib = built("lab-ib").traffic
    assert ib and all(sum(f.routing == "sm" for f in figs) == 3 for figs in ib.values() if figs)
    ufm = built("superpod-h100-1su").traffic
    assert not any(f.routing == "sm" for figs in ufm.values() for f in figs)


def test_the_build_leaves_out_tables_over_its_bound() -> None:
    build = built("lab-ib-3tier")
    subnets = list(build.infiniband.subnets)
    ft = build.topology.fabrics["compute"]
    assert sm_tables(subnets, ft, 68 * 384) is not None  # 68 switches × 384 HCAs: at the bound
    with pytest.raises(NotModelled, match="26,112 entries, over 26,111"):
        sm_tables(subnets, ft, 68 * 384 - 1)


def _updn(data: dict[str, Any]) -> None:
    data["fabrics"]["compute"]["infiniband"]["routing_engine"] = ["updn"]


def test_updn_by_hand() -> None:
    """The CA ports in the unicast manager's order (leaf1's, then leaf2's: equal CA links, GUID order); each leaf's
    two routes to the other leaf's CAs over its two min-hop uplinks, least loaded first, ties to the lower port."""
    routes = updn_routes(_tiny())
    assert routes["leaf1"] == {0x1011: 1, 0x1012: 2, 0x1021: 10, 0x1022: 11}
    assert routes["leaf2"] == {0x1011: 10, 0x1012: 11, 0x1021: 1, 0x1022: 2}
    assert routes["spine1"] == routes["spine2"] == {0x1011: 1, 0x1012: 1, 0x1021: 2, 0x1022: 2}


@pytest.mark.parametrize("design", ["lab-ib", "lab-ib-3tier"])
def test_updn_reaches_every_ca_up_then_down(design: str) -> None:
    subnet = variant(design, _updn).infiniband.subnet("compute")
    assert subnet is not None and subnet.engines[0] == "updn"
    routes = sm_routes(subnet)
    problems, pairs = walk_routes(subnet, _lfts(routes, subnet))
    cas = len({g for t in routes.values() for g in t})
    assert pairs == cas * (cas - 1) and problems == []


def test_fabric_traffic_routing_sm_on_a_updn_fabric(tmp_path: Path) -> None:
    build = variant("lab-ib", _updn)
    assert sum(f.routing == "sm" for figs in build.traffic.values() for f in figs) > 0  # summary.json's rows
    data = spec_data("lab-ib")
    _updn(data)
    spec = tmp_path / "lab-ib.yaml"
    spec.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(app, ["traffic", str(spec), "--routing", "sm", "--pattern", "shift", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)["traffic"]
    assert (row["routing"], row["qps"], row["seeds"]) == ("sm", None, 1) and 0 < row["mean_pct"] <= 100
