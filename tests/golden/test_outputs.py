"""Outputs: golden files of the lab design, the column/key contracts, and determinism."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from fabric import render_all
from fabric.render.outputs.tables import CABLING_COLUMNS, IP_PLAN_COLUMNS, PHYSICAL_COLUMNS
from tests.conftest import INTENT, REPO, built, has_name

GOLDEN = REPO / "tests" / "golden"
CABLING_CONTRACT = [
    "cable_id",
    "fabric",
    "plane",
    "rail",
    "tier",
    "a_rack",
    "a_u",
    "a_device",
    "a_port",
    "b_rack",
    "b_u",
    "b_device",
    "b_port",
    "speed_gbps",
    "media",
    "part",
    "length_m",
    "a_label",
    "b_label",
]
# cabling-physical.csv (issue 25): one row per physical cable; these columns, as written, are its contract
PHYSICAL_CONTRACT = [
    "physical_id",
    "fabric",
    "tier",
    "links",
    "fibre",
    "speed_gbps",
    "media",
    "media_name",
    "part",
    "length_m",
    "a_rack",
    "a_u",
    "a_device",
    "a_model",
    "a_cage",
    "a_cage_ports",
    "a_cage_lanes",
    "a_interfaces",
    "a_transceiver",
    "a_transceiver_part",
    "b_rack",
    "b_u",
    "b_device",
    "b_model",
    "b_cage",
    "b_cage_ports",
    "b_cage_lanes",
    "b_interfaces",
    "b_transceiver",
    "b_transceiver_part",
    "a_label",
    "b_label",
]
IP_CONTRACT = ["device", "interface", "address", "peer_device", "peer_interface", "purpose"]
# Laid-out pictures (and what embeds them) depend on the installed graphviz and are checked by content
# in tests/unit/render/test_pictures.py; their DOT sources and every text output are golden.
NOT_GOLDEN = (".svg", ".png", ".xlsx", "report.html")
# each design's per-file tests are listed from the golden files on disk (a cheap listing, no render at collection);
# test_every_golden_output_is_still_rendered holds that list equal to what the design renders
# (lab-dual: servers routing on the host; lab-mlag: bonds to MLAG pairs; lab-ib: summary.json names the spec by its
# file name, wherever the build ran)
DESIGNS = ("lab", "lab-dual", "lab-mlag", "lab-ib")


def _on_disk(design: str) -> list[str]:
    root = GOLDEN / design
    names = (p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    return sorted(name for name in names if not name.startswith(INTENT))  # the intent goldens have their own test


@cache
def _rendered(design: str) -> dict[str, bytes]:
    return render_all(built(design))


def _files(design: str) -> list[str]:
    return sorted(n for n in _rendered(design) if not n.endswith(NOT_GOLDEN))


@pytest.mark.parametrize("name", _on_disk("lab"))
def test_lab_outputs_golden(name: str, golden) -> None:  # type: ignore[no-untyped-def]
    golden(GOLDEN / "lab" / name, _rendered("lab")[name].decode())


@pytest.mark.parametrize("name", _on_disk("lab-dual"))
def test_lab_dual_outputs_golden(name: str, golden) -> None:  # type: ignore[no-untyped-def]
    golden(GOLDEN / "lab-dual" / name, _rendered("lab-dual")[name].decode())


@pytest.mark.parametrize("name", _on_disk("lab-mlag"))
def test_lab_mlag_outputs_golden(name: str, golden) -> None:  # type: ignore[no-untyped-def]
    golden(GOLDEN / "lab-mlag" / name, _rendered("lab-mlag")[name].decode())


@pytest.mark.parametrize("name", _on_disk("lab-ib"))
def test_lab_ib_outputs_golden(name: str, golden) -> None:  # type: ignore[no-untyped-def]
    golden(GOLDEN / "lab-ib" / name, _rendered("lab-ib")[name].decode())


# the rack-scale design: its scheduler and IMEX files (one domain's IMEX pair stands for all eight), BOM and power
NVL72_GOLDEN = (
    "slurm/topology.conf",
    "slurm/topology-block.conf",
    "slurm/topology.yaml",
    "slurm/nodes.conf",
    "imex/nvl-a01/nodes_config.cfg",
    "imex/nvl-a01/config.cfg",
    "k8s/kueue-topology.yaml",
    "k8s/compute-domain.yaml",
    "bom.csv",  # the NVL72 rack as one system line with its parts beneath
    "power.csv",
)


@pytest.mark.parametrize("name", NVL72_GOLDEN)
def test_gb200_nvl72_outputs_golden(name: str, golden) -> None:  # type: ignore[no-untyped-def]
    golden(GOLDEN / "gb200-nvl72-1su" / name, _rendered("gb200-nvl72-1su")[name].decode())


def test_every_golden_output_is_still_rendered(golden, golden_set) -> None:  # type: ignore[no-untyped-def]
    assert len(_files("lab")) >= 18 and len(_files("lab-ib")) >= 14  # what the lab designs render today, at least
    assert len([n for n in _files("lab-dual") if n.startswith("hosts/")]) == 8  # frr.conf and netplan.yaml per server
    assert len([n for n in _files("lab-mlag") if n.startswith("hosts/")]) == 4  # netplan.yaml per server, no frr.conf
    assert len([n for n in _files("lab") if n.startswith("hosts/")]) == 32  # RoCE: netplan, sysctl, QoS, NCCL x 8
    for design in DESIGNS:
        for name in _files(design):
            if not (GOLDEN / design / name).exists():  # a new output: missing (or written under --update-golden)
                golden(GOLDEN / design / name, _rendered(design)[name].decode())
        golden_set(GOLDEN / design, _files(design))


def test_lab_ib_writes_the_subnet_manager_files() -> None:
    assert [n for n in _files("lab-ib") if n.startswith("infiniband/")] == [
        f"infiniband/compute/{name}"
        for name in (
            "cn_guids.txt",
            "io_guids.txt",
            "node-name-map",
            "opensm-ufm002.conf",
            "opensm.conf",
            "partitions.conf",
            "root_guids.txt",
            "topology.net",
        )
    ]


def _rows(design: str, name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(render_all(built(design))[name].decode())))


def test_csv_leading_columns_are_the_contract() -> None:
    assert list(CABLING_COLUMNS[: len(CABLING_CONTRACT)]) == CABLING_CONTRACT
    assert list(IP_PLAN_COLUMNS[: len(IP_CONTRACT)]) == IP_CONTRACT
    assert list(PHYSICAL_COLUMNS[: len(PHYSICAL_CONTRACT)]) == PHYSICAL_CONTRACT
    files = render_all(built("superpod-h100-4su"))
    assert files["cabling-physical.csv"].decode().splitlines()[0].split(",")[:32] == PHYSICAL_CONTRACT
    assert files["cabling.csv"].decode().splitlines()[0].split(",")[:19] == CABLING_CONTRACT
    assert files["ip-plan.csv"].decode().splitlines()[0].split(",")[:6] == IP_CONTRACT


def test_cabling_csv_rows_are_complete() -> None:
    rows = _rows("superpod-h100-4su", "cabling.csv")
    assert len(rows) == len(built("superpod-h100-4su").allocation.cables)
    assert len({r["cable_id"] for r in rows}) == len(rows)
    assert {r["tier"] for r in rows} == {"node-leaf", "leaf-spine", "leaf-leaf"}  # leaf-leaf: in-band MLAG peer links
    for row in rows:
        assert row["a_rack"] and row["b_rack"] and row["a_u"] and row["b_u"]
        assert row["media"] and row["part"] and float(row["length_m"]) >= float(row["route_m"])
        assert row["a_label"].startswith(row["cable_id"] + " ") and row["b_label"].startswith(row["cable_id"] + " ")
        assert has_name(row["a_label"].split(" > ")[0], f"{row['a_device']} {row['a_port']}")
        assert has_name(row["b_label"].split(" > ")[0], f"{row['b_device']} {row['b_port']}")
    compute = [r for r in rows if r["fabric"] == "compute" and r["tier"] == "node-leaf" and r["a_device"][:3] == "dgx"]
    assert {r["rail"] for r in compute} == {str(i) for i in range(8)}


def test_ip_plan_addresses_are_cidr() -> None:
    import ipaddress

    for row in _rows("lab", "ip-plan.csv"):
        ipaddress.ip_interface(row["address"])
        assert "/" in row["address"]


SUMMARY_FABRIC_KEYS = {
    "technology",
    "tiers",
    "switches",
    "links",
    "oversubscription",
    "bisection_gbps",
    "bisection_pct",
    "min_ecmp_width",
    "worst_single_failure_bisection_pct",
}


def test_summary_json_keys() -> None:
    data = json.loads(render_all(built("superpod-h100-4su"))["summary.json"])
    assert {"design", "gpus", "fabrics", "cables_by_media", "findings"} <= set(data)
    assert data["design"] == "superpod-h100-4su" and data["gpus"] == 1016
    compute = data["fabrics"]["compute"]
    assert set(compute) >= SUMMARY_FABRIC_KEYS
    assert compute["switches"] == {"leaf": 32, "spine": 16, "core": 0}
    assert compute["links"] == {"node-leaf": 1020, "leaf-spine": 1024, "spine-core": 0}
    assert compute["oversubscription"] == {"leaf": 1.0}
    assert isinstance(compute["oversubscription"]["leaf"], float)
    assert compute["bisection_pct"] == 100.0 and compute["min_ecmp_width"] == 32
    assert 90 < compute["worst_single_failure_bisection_pct"] < 100
    assert sum(data["cables_by_media"].values()) == len(built("superpod-h100-4su").allocation.cables)


def test_docs_document_every_summary_key() -> None:
    readme = (REPO / "docs" / "outputs" / "documents.md").read_text()
    data = json.loads(render_all(built("superpod-h100-4su"))["summary.json"])
    keys = set(data) | set(data["fabrics"]["compute"]) | {"severity", "code", "path", "message", "hint"}
    missing = sorted(k for k in keys if f"`{k}`" not in readme)
    assert not missing, f"docs/outputs/documents.md does not document summary.json keys {missing}"


def _digest_in_child(design: str, seed: str) -> str:
    code = (
        "import hashlib, sys; from fabric import build_fabric, render_all; "
        f"files = render_all(build_fabric({str(REPO / 'designs' / design)!r})); "
        "print(hashlib.sha256(b''.join(k.encode() + v for k, v in sorted(files.items()))).hexdigest())"
    )
    env = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
@pytest.mark.parametrize("design", ["superpod-h100-4su.yaml", "roce-512.yaml"])
def test_outputs_are_byte_identical_across_runs(design: str) -> None:
    """Same spec, different processes and hash seeds: the same bytes."""
    first = _digest_in_child(design, "1")
    assert first == _digest_in_child(design, "4242")
    files = render_all(built(Path(design).stem))
    here = hashlib.sha256(b"".join(k.encode() + v for k, v in sorted(files.items()))).hexdigest()
    assert first.strip() == here


def test_port_names_match_whole() -> None:
    assert has_name("leaf1:swp1 and more", "leaf1:swp1") and has_name("(swp1)", "swp1")
    assert not has_name("leaf1:swp10", "leaf1:swp1") and not has_name("Ethernet1/10", "Ethernet1/1")
    assert not has_name("swp1s0", "swp1") and not has_name("xswp1", "swp1")
