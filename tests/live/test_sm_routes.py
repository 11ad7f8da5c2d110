"""The SM route model (analysis/traffic/sm.py) against the real OpenSM on the simulated planned fabric (ibsim).
Skips without the tools, fails under FABRIC_REQUIRE_REAL=1.

For each InfiniBand lab design (and the 1- and 4-SU SuperPODs with upstream OpenSM), OpenSM runs the generated
opensm.conf and GUID files (ftree first) and `dump_lfts` reads every switch's forwarding table back. The proof: for
every switch of the plan and every CA port, the output port the model gives equals the one OpenSM programmed,
entry for entry, and the traffic model's next-hop table made from OpenSM's tables equals the one made from the
model's. Negative cases: the model routing each leaf's compute ports in the wrong order (descending) differs from
the same tables, and OpenSM routing with updn instead of ftree differs from the model.

The same designs routed by OpenSM's updn (`routing_engine updn,no_fallback`, the generated root GUID file): the
updn model (analysis/traffic/updn.py) equals its tables entry for entry; negative: the model taking the last of
the least-loaded ports on a tie (OpenSM takes the first) differs.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fabric.analysis.traffic import sm, updn
from fabric.analysis.traffic.net import fabric_net
from fabric.analysis.traffic.updn import updn_routes
from fabric.intent.infiniband.routes import ib_graph, sm_routes, sm_table
from fabric.intent.infiniband.subnet import Subnet
from tests.live.test_ibsim import _build, _other_host, _sm_nodeid, _subnet, install
from tests.support.ibsim_lab import Lfts, parse_lfts, simulation

pytestmark = pytest.mark.real

# design → (switches, CA ports): every (switch, CA port) entry is compared. The SuperPODs' SM hosts are UFM
# appliances (ar_updn): they run here as upstream OpenSM with the generated ftree files (_build's `flavor`).
DESIGNS = {
    "lab-ib": (6, 12),
    "lab-ib-3tier": (68, 384),
    "superpod-h100-1su": (12, 252),
    "superpod-h100-4su": (48, 1020),
}


def _opensm_tables(subnet: Subnet, where: Path, engine: str | None = None) -> tuple[Lfts, str]:
    """OpenSM's forwarding tables of the planned fabric (with `engine` in place of the generated engine list)."""
    files = install(subnet, where)
    conf = files["opensm.conf"]
    if engine is not None:
        text = conf.read_text()
        line = next(x for x in text.splitlines() if x.startswith("routing_engine "))
        conf.write_text(text.replace(line, f"routing_engine {engine}"))
    with simulation(where, files["topology.net"], f"smr-{subnet.design}-{engine or 'gen'}") as sim:
        sim.start_opensm(conf, _sm_nodeid(subnet))
        lfts = parse_lfts(sim.run(_other_host(subnet), "dump_lfts"))
    return lfts, (where / "opensm.log").read_text()


def _differences(subnet: Subnet, routes: sm.Routes, lfts: Lfts) -> tuple[int, int]:
    """(entries compared, entries where the model's output port is not OpenSM's)."""
    compared = differ = 0
    for switch in subnet.switches:
        table = lfts.tables[switch.guid]
        for guid, lid in lfts.ca_lids.items():
            compared += 1
            differ += routes[switch.key].get(guid) != table.get(lid)
    return compared, differ


def _as_routes(subnet: Subnet, lfts: Lfts) -> sm.Routes:
    """OpenSM's tables as the model's type: switch → CA port GUID → output port."""
    return {
        s.key: {guid: lfts.tables[s.guid][lid] for guid, lid in lfts.ca_lids.items() if lid in lfts.tables[s.guid]}
        for s in subnet.switches
    }


@pytest.mark.parametrize("design", list(DESIGNS))
def test_the_ftree_model_equals_opensms_tables(design: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    switches, ca_ports = DESIGNS[design]
    subnet = _subnet(design)
    assert subnet.engines[0] == "ftree"
    started = time.process_time()
    routes = sm_routes(subnet)
    model_s = time.process_time() - started
    lfts, log = _opensm_tables(subnet, tmp_path)
    assert "ftree tables configured on all switches" in log and "minhop tables configured" not in log
    assert len(subnet.switches) == switches and len(lfts.ca_lids) == ca_ports
    assert set(lfts.ca_lids) == {g for table in routes.values() for g in table}  # every CA port, nothing else
    compared, differ = _differences(subnet, routes, lfts)
    assert compared == switches * ca_ports
    assert differ == 0

    # the traffic model's next hops: the same from OpenSM's tables as from the model's
    build = _build(design)
    ft = build.topology.fabrics[subnet.fabric]
    nodes = list(dict.fromkeys(lk.a.device for lk in subnet.links if not subnet.by_key[lk.a.node].switch))
    net, _ = fabric_net(ft, nodes)
    ours, theirs = sm_table([subnet], ft, net, routes), sm_table([subnet], ft, net, _as_routes(subnet, lfts))
    assert ours.shape == (switches, net.ports) and net.ports == ca_ports
    assert (ours >= 0).sum() > 0 and np.array_equal(ours, theirs)

    # negative: the model routing each leaf's compute ports in descending port order (ftree: ascending) differs
    ports = sm._Ftree._ports

    def descending(self: Any, switch: Any, roles: Any) -> None:
        ports(self, switch, roles)
        if switch.down and not any(g.to_switch for g in switch.down):
            switch.down.reverse()

    monkeypatch.setattr(sm._Ftree, "_ports", descending)
    _, wrong_differ = _differences(subnet, sm_routes(subnet), lfts)
    assert wrong_differ > 0
    print(
        f"{design}: {compared} entries equal ({switches} switches x {ca_ports} CA ports), model {model_s:.3f} s CPU; "
        f"compute ports in descending order: {wrong_differ} differ"
    )


def test_opensm_with_updn_differs_from_the_ftree_model(tmp_path: Path) -> None:
    """The same fabric routed by updn: the ftree model does not match it (the equality above is ftree's)."""
    subnet = _subnet("lab-ib-3tier")
    routes = sm_routes(subnet)
    lfts, log = _opensm_tables(subnet, tmp_path, "updn,no_fallback")
    assert "updn tables configured on all switches" in log and "ftree tables configured" not in log
    compared, differ = _differences(subnet, routes, lfts)
    assert compared == 68 * 384
    assert differ > compared // 2
    print(f"lab-ib-3tier under updn: {differ} of {compared} entries differ from the ftree model")


@pytest.mark.parametrize("design", list(DESIGNS))
def test_the_updn_model_equals_opensms_tables(design: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenSM routing the planned fabric with updn (the generated root file): the updn model's tables, entry for
    entry. Negative: the model picking the last least-loaded port on a tie (OpenSM: the first) differs."""
    switches, ca_ports = DESIGNS[design]
    subnet = _subnet(design)
    graph = ib_graph(subnet)
    started = time.process_time()
    routes = updn_routes(graph)
    model_s = time.process_time() - started
    assert sm_routes(replace(subnet, engines=("updn",))) == routes  # what `--routing sm` takes on a updn fabric
    lfts, log = _opensm_tables(subnet, tmp_path, "updn,no_fallback")
    assert "updn tables configured on all switches" in log and "ftree tables configured" not in log
    assert len(lfts.ca_lids) == ca_ports
    assert set(lfts.ca_lids) == {g for table in routes.values() for g in table}
    compared, differ = _differences(subnet, routes, lfts)
    assert compared == switches * ca_ports
    assert differ == 0

    # negative: ties to the highest port instead of the lowest
    original = min

    def last_on_tie(*args: Any, **kwargs: Any) -> Any:
        if "key" in kwargs and len(args) == 1:
            items = list(args[0])
            best = original(kwargs["key"](x)[0] for x in items)
            return max(x for x in items if kwargs["key"](x)[0] == best)
        return original(*args, **kwargs)

    monkeypatch.setattr(updn, "min", last_on_tie, raising=False)
    _, wrong_differ = _differences(subnet, updn_routes(graph), lfts)
    assert wrong_differ > 0
    print(
        f"{design} under updn: {compared} entries equal ({switches} switches x {ca_ports} CA ports), model "
        f"{model_s:.3f} s CPU; the last port on a tie: {wrong_differ} differ"
    )
