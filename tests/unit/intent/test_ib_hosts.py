"""NCCL's settings for the GPU nodes of an InfiniBand compute fabric (hosts/<node>/nccl.env): the HCAs in rail
order as the catalog names them, the partitions the design puts the node in, the in-band bootstrap interface."""

from __future__ import annotations

from typing import Any

from fabric import render_all
from tests.conftest import built
from tests.support.design_variants import variant


def _env(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_superpod_dgx_gets_its_compute_hcas_in_rail_order_and_the_bond() -> None:
    build = built("superpod-h100-4su")
    files = render_all(build)
    env = _env(files["hosts/dgx001/nccl.env"].decode())
    # the DGX H100's compute ports serve GPUs 0-7 from these RDMA devices (catalog `hca:`, DGX H100 user guide)
    node = build.design.catalog.nodes["dgx-h100"]
    by_rail = sorted((p.rail, p.hca) for p in node.ports["compute"].ports or ())
    assert env["NCCL_IB_HCA"] == "=" + ",".join(hca for _, hca in by_rail if hca)
    assert env["NCCL_IB_HCA"] == "=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11"
    assert env["NCCL_SOCKET_IFNAME"] == "=bond0"  # the bonded in-band: its members share the bond's address
    assert "NCCL_IB_GID_INDEX" not in env and "NCCL_IB_TC" not in env  # RoCE's, not InfiniBand's
    assert sum(1 for p in files if p.endswith("/nccl.env")) == 127  # every DGX; no UFM, head or storage node
    assert "hosts/ufm001/nccl.env" not in files


def test_unbonded_inband_lists_the_ports() -> None:
    build = variant("superpod-h100-4su", lambda data: data["fabrics"]["inband"].pop("dual_homing"))
    env = _env(render_all(build)["hosts/dgx001/nccl.env"].decode())
    assert env["NCCL_SOCKET_IFNAME"] == "=SLOT1P2,SLOT2P2"


def _partitioned(members: list[str], limited: list[str] = []) -> Any:  # noqa: B006
    def change(data: dict[str, Any]) -> None:
        data["fabrics"]["compute"]["infiniband"] = {
            "partitions": [
                {"name": "Default", "pkey": 0x7FFF},
                {"name": "training", "pkey": 0x0010, "members": members, "limited": limited},
            ]
        }

    return variant("tutorial-256", change)


def test_a_partition_of_the_gpu_nodes_is_named_with_its_pkey() -> None:
    text = render_all(_partitioned(["gpu"]))["hosts/dgx001/nccl.env"].decode()
    assert "# partition training (P_Key 0x0010)" in text and "NCCL_IB_PKEY=<index of 0x0010>" in text
    assert "NCCL_SOCKET_IFNAME" not in _env(text)  # no in-band fabric in the tutorial
    # negative: a partition the nodes are limited members of, and the default one, say nothing
    other = render_all(_partitioned([], ["gpu"]))["hosts/dgx001/nccl.env"].decode()
    assert "P_Key" not in other and "NCCL_IB_PKEY" not in other


def test_unnamed_hcas_are_flagged() -> None:
    def change(data: dict[str, Any]) -> None:
        data["nodes"][0]["type"] = "hgx-8gpu"
        data["fabrics"]["compute"]["switches"] = {"leaf": "qm9700", "spine": "qm9700"}

    text = render_all(variant("tutorial-256", change))["hosts/dgx001/nccl.env"].decode()
    assert "names no RDMA devices" in text and _env(text)["NCCL_IB_HCA"].startswith("=nic0,")
