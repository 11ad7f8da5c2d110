"""SONiC buffer tables against SONiC's own files for the HwSKU (tests/data/sonic_buffers, see its README).

The template is rendered with Jinja as sonic-cfggen renders it (its macro `generate_buffer_pool_and_profiles`);
pg_profile_lookup.ini is read as buffermgrd reads it (speed, cable, size, xon, xoff, threshold, xon_offset).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
import pytest

from fabric import render_all
from fabric.render.platforms import sonic_buffers
from tests.support.design_variants import on_platform

DATA = Path(__file__).parents[2] / "data" / "sonic_buffers"
SKU_FILES = {"Accton-AS9817-64O": "Dell-Z9864f-O64", "Dell-Z9864f-O64": "Dell-Z9864f-O64"}


def _template_tables(directory: str) -> dict[str, Any]:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(DATA / directory))
    module = env.get_template("buffers_defaults_t1.j2").module
    text = "{" + str(module.generate_buffer_pool_and_profiles()).strip().rstrip(",") + "}"  # type: ignore[attr-defined]
    tables = json.loads(text)
    for row in tables["BUFFER_PROFILE"].values():  # the old "[BUFFER_POOL|name]" reference form, as db_migrator
        row["pool"] = row["pool"].removeprefix("[BUFFER_POOL|").removesuffix("]")
    return tables


def _ini(directory: str) -> dict[tuple[int, int], tuple[str, ...]]:
    rows = {}
    for line in (DATA / directory / "pg_profile_lookup.ini").read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            rows[int(fields[0]), int(fields[1].removesuffix("m"))] = tuple(fields[2:])
    return rows


@pytest.mark.parametrize("hwsku", sorted(SKU_FILES))
@pytest.mark.parametrize("table", ["BUFFER_POOL", "BUFFER_PROFILE"])
def test_pools_and_profiles_are_the_templates(hwsku: str, table: str) -> None:
    expected = _template_tables(SKU_FILES[hwsku])[table]
    sku = sonic_buffers.SKUS[hwsku]
    ours = sku.pools if table == "BUFFER_POOL" else sku.profiles
    assert sku.model == "traditional"
    assert sorted(ours) == sorted(expected)
    for name, row in expected.items():
        assert ours[name] == row, (table, name)


@pytest.mark.parametrize("hwsku", sorted(SKU_FILES))
def test_lossless_profiles_are_the_lookup_rows(hwsku: str) -> None:
    rows = _ini(SKU_FILES[hwsku])
    sku = sonic_buffers.SKUS[hwsku]
    assert set(sku.pg_lookup) == set(rows)
    for (speed, cable), (size, xon, xoff, threshold, xon_offset) in rows.items():
        name, row = sonic_buffers.lossless_profile(sku, speed, cable)
        assert name == f"pg_lossless_{speed}_{cable}m_profile"
        assert row == {
            "pool": "ingress_lossless_pool",
            "size": size,
            "xon": xon,
            "xoff": xoff,
            "dynamic_th": threshold,
            "xon_offset": xon_offset,
        }


@pytest.mark.parametrize(
    ("speed", "cable_m", "bucket"),
    [(800000, 1, 5), (800000, 5, 5), (800000, 5.5, 40), (800000, 40, 40), (400000, 41, 300), (800000, 301, None)],
)
def test_cable_length_rounds_up_to_a_listed_length(speed: int, cable_m: float, bucket: int | None) -> None:
    assert sonic_buffers.cable_bucket(sonic_buffers.SKUS["Accton-AS9817-64O"], speed, cable_m) == bucket


@pytest.fixture(scope="module")
def th5_leaf() -> dict[str, Any]:
    files = render_all(on_platform("sonic-th5-512", "sonic"))
    return json.loads(files["configs/p1-su1-rail0-leaf/config_db.json"])


def test_rendered_th5_leaf_is_traditional_with_a_lossless_pg_per_pfc_port(th5_leaf: dict[str, Any]) -> None:
    db = th5_leaf
    assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "traditional"
    template = _template_tables("Dell-Z9864f-O64")
    assert db["BUFFER_POOL"] == template["BUFFER_POOL"]
    rows = _ini("Dell-Z9864f-O64")
    pfc = {port: row["pfc_enable"] for port, row in db["PORT_QOS_MAP"].items()}
    assert pfc
    speeds = {port: int(row["speed"]) for port, row in db["PORT"].items()}
    for port, priority in pfc.items():
        cable = db["CABLE_LENGTH"]["AZURE"][port]
        profile = db["BUFFER_PROFILE"][db["BUFFER_PG"][f"{port}|{priority}"]["profile"]]
        size, xon, xoff, threshold, xon_offset = rows[speeds[port], int(cable.removesuffix("m"))]
        assert (profile["size"], profile["xon"], profile["xoff"], profile["dynamic_th"], profile["xon_offset"]) == (
            size,
            xon,
            xoff,
            threshold,
            xon_offset,
        )
        assert db["BUFFER_PG"][f"{port}|0"] == {"profile": "ingress_lossy_profile"}
        assert db["BUFFER_QUEUE"][f"{port}|{priority}"] == {"profile": "egress_lossless_profile"}
    assert sonic_buffers.buffer_problems(db) == []


def test_spectrum_keeps_the_dynamic_model_with_its_tables() -> None:
    files = render_all(on_platform("roce-512", "sonic"))
    db = json.loads(files["configs/su1-rail0-leaf/config_db.json"])
    assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
    assert db["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] == {"AZURE": {"default_dynamic_th": "0"}}
    assert db["LOSSLESS_TRAFFIC_PATTERN"] == {"AZURE": {"mtu": "1024", "small_packet_percentage": "50"}}
    assert {"ingress_lossless_pool", "egress_lossless_pool"} <= set(db["BUFFER_POOL"])
    port, row = next(iter(db["PORT_QOS_MAP"].items()))
    assert db["BUFFER_PG"][f"{port}|{row['pfc_enable']}"] == {"profile": "NULL"}
    assert sonic_buffers.buffer_problems(db) == []


@pytest.mark.parametrize(
    ("break_it", "problem"),
    [
        (lambda db, port: db["BUFFER_PG"].pop(f"{port}|3"), "without a lossless BUFFER_PG"),
        (lambda db, port: db["BUFFER_QUEUE"].pop(f"{port}|3"), "without a BUFFER_QUEUE entry"),
        (
            lambda db, port: db["BUFFER_PG"].__setitem__(f"{port}|3", {"profile": "ingress_lossy_profile"}),
            "is not lossless",
        ),
        (lambda db, port: db["BUFFER_PG"].__setitem__(f"{port}|3", {"profile": "NULL"}), "outside the dynamic"),
        (lambda db, port: db["BUFFER_PROFILE"].clear(), "is not in BUFFER_PROFILE"),
    ],
    ids=["no-pg", "no-queue", "lossy-pg", "null-traditional", "no-profile"],
)
def test_a_pfc_port_without_lossless_buffers_is_a_problem(
    th5_leaf: dict[str, Any], break_it: Any, problem: str
) -> None:
    db = json.loads(json.dumps(th5_leaf))
    port = next(iter(db["PORT_QOS_MAP"]))
    assert db["PORT_QOS_MAP"][port]["pfc_enable"] == "3"
    break_it(db, port)
    problems = sonic_buffers.buffer_problems(db)
    assert any(problem in p and port in p for p in problems), problems


def test_ranges() -> None:
    assert sonic_buffers.ranges([0, 1, 2, 4, 5, 6, 7]) == ["0-2", "4-7"]
    assert sonic_buffers.ranges([1, 3]) == ["1", "3"]
    assert sonic_buffers.ranges([]) == []
