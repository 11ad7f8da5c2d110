"""The `fabric plan` sweep on a Dask distributed cluster (`--scheduler`) gives the local result, in order.

A local cluster of two in-process workers: no ports beyond the process, stopped also on failure."""

from __future__ import annotations

import pytest

from fabric.plan.candidates import Request, enumerate_candidates
from fabric.plan.rank import as_data, rank
from fabric.plan.sweep import sweep
from fabric.spec.catalog import builtin_catalog
from tests.conftest import require_module

pytestmark = pytest.mark.real


def test_a_dask_sweep_equals_the_local_one() -> None:
    distributed = require_module("distributed", "pip install 'fabric-netcompiler[dask]'")
    request = Request(512, nodes=("dgx-h100", "dgx-a100"), technologies=("infiniband",), tiers=(2,))
    candidates = enumerate_candidates(builtin_catalog(), request)
    assert len(candidates) >= 4
    local = sweep(candidates, 512, grow_to=1024, workers=1)
    with distributed.LocalCluster(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        remote = sweep(candidates, 512, grow_to=1024, scheduler=cluster.scheduler_address)
    assert [o.candidate for o in remote] == candidates
    assert remote == local
    assert as_data(rank(remote, grow_to=1024), 512, 1024, None) == as_data(rank(local, grow_to=1024), 512, 1024, None)


def test_an_unreachable_scheduler_is_an_error_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    require_module("distributed", "pip install 'fabric-netcompiler[dask]'")
    from fabric.plan import sweep as module

    monkeypatch.setattr(module, "CONNECT_TIMEOUT_S", 2)

    request = Request(64, nodes=("dgx-h100",), technologies=("infiniband",), tiers=(2,), rail_optimized=(True,))
    with pytest.raises(module.SchedulerError, match="cannot reach the Dask scheduler"):
        sweep(enumerate_candidates(builtin_catalog(), request), 64, scheduler="tcp://127.0.0.1:9")
