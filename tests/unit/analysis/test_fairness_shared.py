"""max_min_shared (flows sharing one set of sprayed paths per class) gives max_min's allocation on the expanded
entries: random instances and the bundled designs' sprayed collectives."""

from __future__ import annotations

import numpy as np
import pytest

from fabric.analysis.traffic.fairness import max_min, max_min_shared
from fabric.analysis.traffic.jobs import fabric_nodes
from fabric.analysis.traffic.model import traffic
from fabric.analysis.traffic.net import fabric_net
from fabric.analysis.traffic.patterns import connections
from fabric.analysis.traffic.routing import spray
from tests.conftest import built


@pytest.mark.parametrize("seed", range(20))
def test_the_shared_form_is_the_expanded_one(seed: int) -> None:
    rng = np.random.default_rng(seed)
    links, classes, flows = 12, 5, 40
    class_rows, class_cols, class_weights = [], [], []
    for k in range(classes):
        for link in rng.choice(links, size=int(rng.integers(1, 6)), replace=False):
            class_rows.append(k)
            class_cols.append(int(link))
            class_weights.append(float(rng.choice([0.25, 0.5, 1.0])))
    flow_class = rng.integers(-1, classes, size=flows)
    own_rows = np.repeat(np.arange(flows), 2)
    own_cols = links + rng.integers(0, 8, size=2 * flows)  # NIC links: 8 more, shared by some flows
    capacity = rng.choice([100.0, 200.0, 400.0], size=links + 8)
    demand = rng.choice([50.0, 100.0, 400.0, np.inf], size=flows)
    rows, cols, weights = list(own_rows), list(own_cols), [1.0] * len(own_rows)
    for f, k in enumerate(flow_class):
        for r, c, w in zip(class_rows, class_cols, class_weights, strict=True):
            if r == k:
                rows.append(f)
                cols.append(c)
                weights.append(w)
    expanded = max_min(np.asarray(rows), np.asarray(cols), np.asarray(weights), capacity, demand)
    shared = max_min_shared(
        flow_class,
        own_rows,
        own_cols,
        np.asarray(class_rows, dtype=np.int64),
        np.asarray(class_cols, dtype=np.int64),
        np.asarray(class_weights),
        capacity,
        demand,
    )
    assert np.allclose(shared, expanded, rtol=1e-9, atol=1e-9)
    assert expanded.min() > 0


@pytest.mark.parametrize("design", ["lab-ib-3tier", "superpod-h100-1su"])
def test_sprayed_collectives_as_before(design: str) -> None:
    """The adaptive figure through classes equals the one through every flow's own sprayed paths."""
    build = built(design)
    key, nodes = fabric_nodes(build.design, build.topology, None) or ("", [])
    net, ports = fabric_net(build.topology.fabrics[key], nodes)
    job = [ports[n] for n in nodes]
    for pattern in ("all-to-all", "shift"):
        src, dst, share = connections(job, pattern, max(1, len(job) // 2), True)
        flows, links, frac = spray(net, net.port_leaf[src], net.port_leaf[dst])
        ends = np.arange(len(src))
        rate = max_min(
            np.concatenate([flows, ends, ends]),
            np.concatenate([links, net.up(src), net.down(dst)]),
            np.concatenate([frac, np.ones(2 * len(src))]),
            net.capacity,
            net.port_speed[src] * share,
        )
        sent = np.bincount(src, weights=rate, minlength=net.ports)
        used = np.unique(src)
        pct = 100.0 * sent[used] / net.port_speed[used]
        figure = traffic(net, job, pattern, "adaptive", distance=max(1, len(job) // 2))
        assert figure.mean_pct == round(float(pct.mean()), 2) and figure.p5_pct == round(
            float(np.percentile(pct, 5)), 2
        )
