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
from tests.support.design_variants import on_platform, variant

DATA = Path(__file__).parents[2] / "data" / "sonic_buffers"
SKU_FILES = {"Accton-AS9817-64O": "Dell-Z9864f-O64", "Dell-Z9864f-O64": "Dell-Z9864f-O64"}
# DEVICE_METADATA type -> the buffers_defaults_<postfix>.j2 buffers_config.j2 imports (its "Determine device
# topology" block); fabric's leaves are ToRRouter (T0), its spines LeafRouter (T1), its cores SpineRouter (T2)
POSTFIX = {"ToRRouter": "t0", "LeafRouter": "t1", "SpineRouter": "t2"}


def _postfix(db: dict[str, Any]) -> str:
    return POSTFIX[db["DEVICE_METADATA"]["localhost"]["type"]]


def _template_tables(directory: str, postfix: str) -> dict[str, Any]:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(DATA / directory))
    module = env.get_template(f"buffers_defaults_{postfix}.j2").module
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


@pytest.mark.parametrize("postfix", ["t0", "t1"])
@pytest.mark.parametrize("hwsku", sorted(SKU_FILES))
@pytest.mark.parametrize("table", ["BUFFER_POOL", "BUFFER_PROFILE"])
def test_pools_and_profiles_are_the_templates(hwsku: str, table: str, postfix: str) -> None:
    """Both role files (a leaf is a ToRRouter, t0; a spine a LeafRouter, t1): for this SKU they differ only in
    default_cable, which fabric replaces by the planned length in CABLE_LENGTH."""
    expected = _template_tables(SKU_FILES[hwsku], postfix)[table]
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
def th5_files() -> dict[str, str]:
    return render_all(on_platform("sonic-th5-512", "sonic"))


# a leaf (ToRRouter: buffers_defaults_t0.j2) and a spine (LeafRouter: buffers_defaults_t1.j2) of the TH5 design
@pytest.fixture(scope="module", params=[("p1-su1-rail0-leaf", "ToRRouter"), ("p1-spine01", "LeafRouter")])
def th5_switch(th5_files: dict[str, str], request: pytest.FixtureRequest) -> dict[str, Any]:
    switch, role = request.param
    db: dict[str, Any] = json.loads(th5_files[f"configs/{switch}/config_db.json"])
    assert db["DEVICE_METADATA"]["localhost"]["type"] == role
    return db


def test_rendered_th5_switch_is_traditional_with_a_lossless_pg_per_pfc_port(th5_switch: dict[str, Any]) -> None:
    db = th5_switch
    assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "traditional"
    template = _template_tables("Dell-Z9864f-O64", _postfix(db))
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


# Spectrum: (design, switch) rendered on SONiC with the RoCE profile, per HwSKU (the OOB fabric of a SuperPOD is
# the one place an SN2201 is a SONiC switch; it gets the RoCE profile here so that its buffers are written)
SPECTRUM = {
    "Mellanox-SN5600-V256": ("roce-512", "spine01"),  # a LeafRouter (t1); the other two ToRRouters (t0)
    "Mellanox-SN4600C-C64": ("lab", "leaf1"),
    "ACS-SN2201": ("superpod-h100-4su", "oob-leaf01"),
}
# what buffers_config.j2 writes in the dynamic model, every table compared
DYNAMIC = (
    "BUFFER_POOL",
    "BUFFER_PROFILE",
    "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PORT_EGRESS_PROFILE_LIST",
    "BUFFER_PG",
    "BUFFER_QUEUE",
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
    "LOSSLESS_TRAFFIC_PATTERN",
    "CABLE_LENGTH",
)


def _spectrum_db(hwsku: str) -> dict[str, Any]:
    design, switch = SPECTRUM[hwsku]
    if design == "superpod-h100-4su":

        def change(data: dict[str, Any]) -> None:
            data["fabrics"]["oob"]["platform"] = "sonic"
            data["fabrics"]["oob"]["qos"] = {"profile": "roce-lossless"}

        build = variant(design, change)
    else:
        build = on_platform(design, "sonic")
    db: dict[str, Any] = json.loads(render_all(build)[f"configs/{switch}/config_db.json"])
    assert db["DEVICE_METADATA"]["localhost"]["hwsku"] == hwsku
    return db


def _dynamic_template(hwsku: str, db: dict[str, Any]) -> dict[str, Any]:
    """The SKU's buffers_dynamic.json.j2 rendered as sonic-cfggen renders it (`sonic-cfggen -d -t
    buffers_dynamic.json.j2`: the config_db as the context, the SKU's directory and files/build_templates on the
    path), with the switch's own type (so its role's buffers_defaults_t0/t1.j2)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader([DATA / hwsku, DATA / "build_templates"]))
    tables: dict[str, Any] = json.loads(env.get_template("buffers_dynamic.json.j2").render(db))
    return tables


def _per_index(table: dict[str, Any]) -> dict[str, dict[int, str]]:
    out: dict[str, dict[int, str]] = {}
    for key, row in table.items():
        port, _, index = key.partition("|")
        low, _, high = index.partition("-")
        for i in range(int(low), int(high or low) + 1):
            assert i not in out.get(port, {}), key  # no index in two entries
            out.setdefault(port, {})[i] = row["profile"]
    return out


@pytest.fixture(scope="module", params=sorted(SPECTRUM))
def spectrum(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any], dict[str, Any]]:
    db = _spectrum_db(request.param)
    return request.param, db, _dynamic_template(request.param, db)


def test_spectrum_runs_the_dynamic_model_with_the_templates_tables(
    spectrum: tuple[str, dict[str, Any], dict[str, Any]],
) -> None:
    hwsku, db, upstream = spectrum
    assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
    assert sorted(upstream) == sorted(DYNAMIC)
    for table in ("BUFFER_POOL", "BUFFER_PROFILE", "DEFAULT_LOSSLESS_BUFFER_PARAMETER", "LOSSLESS_TRAFFIC_PATTERN"):
        assert sorted(db[table]) == sorted(upstream[table]), table
        for name, row in upstream[table].items():
            assert db[table][name] == row, (table, name)
    sku = sonic_buffers.SKUS[hwsku]
    assert (sku.pools, sku.profiles) == (upstream["BUFFER_POOL"], upstream["BUFFER_PROFILE"])
    assert sonic_buffers.buffer_problems(db) == []


def test_spectrum_ports_are_the_templates_but_one_lossless_priority(
    spectrum: tuple[str, dict[str, Any], dict[str, Any]],
) -> None:
    """Per port fabric buffers (every port it uses; the template: every port of PORT), entry by entry: the profile
    lists and PG 0 as the template; the lossless PG (NULL) and queue on the port's PFC priorities only, where the
    template makes 3 and 4 lossless (its qos.json.j2 enables PFC on both; fabric's RoCE profile on one); every
    other queue the template buffers lossy, with its lossy queue profile; CABLE_LENGTH the planned length (the
    template's is a default per role) on the lossless ports."""
    _, db, upstream = spectrum
    pfc = {port: {int(p) for p in row["pfc_enable"].split(",")} for port, row in db["PORT_QOS_MAP"].items()}
    ours_pg, theirs_pg = _per_index(db["BUFFER_PG"]), _per_index(upstream["BUFFER_PG"])
    ours_q, theirs_q = _per_index(db["BUFFER_QUEUE"]), _per_index(upstream["BUFFER_QUEUE"])
    ports = set(db["BUFFER_PORT_INGRESS_PROFILE_LIST"])
    assert ports and ports == set(ours_pg) == set(ours_q) == set(db["BUFFER_PORT_EGRESS_PROFILE_LIST"])
    assert ports <= set(db["PORT"]) == set(upstream["CABLE_LENGTH"]["AZURE"])
    assert set(pfc) <= ports and set(db["CABLE_LENGTH"]["AZURE"]) == set(pfc)
    lossy = {profile for profile in theirs_q[next(iter(ports))].values() if profile != "egress_lossless_profile"}
    assert len(lossy) == 1
    for port in sorted(ports):
        for table in ("BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST"):
            assert db[table][port] == upstream[table][port], (table, port)
        lossless = pfc.get(port, set())
        assert lossless <= {i for i, p in theirs_pg[port].items() if p == "NULL"}, port
        assert ours_pg[port] == {0: theirs_pg[port][0]} | {i: "NULL" for i in lossless}, port
        assert set(ours_q[port]) == set(theirs_q[port]), port
        for i, profile in theirs_q[port].items():
            expected = "egress_lossless_profile" if i in lossless else next(iter(lossy))
            assert ours_q[port][i] == expected, (port, i, profile)


def _first_port(db: dict[str, Any]) -> str:
    return sorted(db["PORT_QOS_MAP"])[0]


@pytest.mark.parametrize(
    "break_it",
    [
        lambda db: db["BUFFER_POOL"].__setitem__("ingress_zero_pool", {"type": "ingress", "mode": "static"}),
        lambda db: db["BUFFER_PROFILE"]["ingress_lossy_profile"].__setitem__("dynamic_th", "7"),
        lambda db: db["BUFFER_PORT_INGRESS_PROFILE_LIST"].pop(_first_port(db)),
        lambda db: db["BUFFER_QUEUE"].__setitem__(f"{_first_port(db)}|4-6", {"profile": "egress_lossy_profile"}),
        lambda db: db["BUFFER_QUEUE"].__setitem__(f"{_first_port(db)}|7", {"profile": "q_lossy_profile"}),
        lambda db: db["BUFFER_PG"].__setitem__(f"{_first_port(db)}|5", {"profile": "NULL"}),
    ],
    ids=["extra-pool", "profile-value", "no-profile-list", "queue-profile", "queue-7", "pg-not-upstream"],
)
def test_a_difference_from_the_spectrum_template_fails(
    spectrum: tuple[str, dict[str, Any], dict[str, Any]], break_it: Any
) -> None:
    hwsku, db, upstream = spectrum
    broken = json.loads(json.dumps(db))
    break_it(broken)
    with pytest.raises(AssertionError):
        test_spectrum_runs_the_dynamic_model_with_the_templates_tables((hwsku, broken, upstream))
        test_spectrum_ports_are_the_templates_but_one_lossless_priority((hwsku, broken, upstream))


def test_spectrum_sku_data_names_its_upstream_directory() -> None:
    for hwsku in SPECTRUM:
        sku = sonic_buffers.SKUS[hwsku]
        assert sku.source.endswith(f"/{hwsku}") and not sku.derived, hwsku


def test_rendered_th5_switch_ports_are_the_templates_but_one_lossless_priority(th5_switch: dict[str, Any]) -> None:
    """The SKU's whole buffers.json.j2 rendered as sonic-cfggen does (traditional model): on every port it buffers
    (those with a DEVICE_NEIGHBOR; fabric buffers every used port, the host-facing ones too) PG 0 and the queues
    are the template's, but queue 4 lossy (PFC on 3 only in fabric's RoCE profile, on 3 and 4 in the SKU's
    qos.json.j2). The lossless PGs are not in the template: buffermgrd makes them from pg_profile_lookup.ini, as
    fabric does above."""
    db = th5_switch
    env = jinja2.Environment(loader=jinja2.FileSystemLoader([DATA / "Dell-Z9864f-O64", DATA / "build_templates"]))
    upstream = json.loads(env.get_template("buffers.json.j2").render(db))
    theirs_pg, theirs_q = _per_index(upstream["BUFFER_PG"]), _per_index(upstream["BUFFER_QUEUE"])
    ours_pg, ours_q = _per_index(db["BUFFER_PG"]), _per_index(db["BUFFER_QUEUE"])
    assert theirs_pg and set(theirs_pg) == set(theirs_q) <= set(ours_pg) == set(ours_q)
    for port in sorted(theirs_pg):
        lossless = {int(p) for p in db["PORT_QOS_MAP"][port]["pfc_enable"].split(",")}
        assert theirs_pg[port] == {0: "ingress_lossy_profile"} and ours_pg[port][0] == "ingress_lossy_profile"
        assert set(ours_q[port]) == set(theirs_q[port]), port
        for i, profile in theirs_q[port].items():
            expected = "egress_lossless_profile" if i in lossless else "egress_lossy_profile"
            assert ours_q[port][i] == expected, (port, i, profile)


@pytest.mark.parametrize("queues", ["4-7", "4"], ids=["queue-7-buffered", "queues-5-6-unbuffered"])
def test_a_th5_queue_the_template_does_not_buffer_fails(th5_switch: dict[str, Any], queues: str) -> None:
    db = json.loads(json.dumps(th5_switch))
    port = next(key.partition("|")[0] for key in db["BUFFER_PG"] if key.startswith("Ethernet256|"))
    del db["BUFFER_QUEUE"][f"{port}|4-6"]
    db["BUFFER_QUEUE"][f"{port}|{queues}"] = {"profile": "egress_lossy_profile"}
    with pytest.raises(AssertionError):
        test_rendered_th5_switch_ports_are_the_templates_but_one_lossless_priority(db)


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
    th5_switch: dict[str, Any], break_it: Any, problem: str
) -> None:
    db = json.loads(json.dumps(th5_switch))
    port = next(iter(db["PORT_QOS_MAP"]))
    assert db["PORT_QOS_MAP"][port]["pfc_enable"] == "3"
    break_it(db, port)
    problems = sonic_buffers.buffer_problems(db)
    assert any(problem in p and port in p for p in problems), problems


def test_ranges() -> None:
    assert sonic_buffers.ranges([0, 1, 2, 4, 5, 6, 7]) == ["0-2", "4-7"]
    assert sonic_buffers.ranges([1, 3]) == ["1", "3"]
    assert sonic_buffers.ranges([]) == []


@pytest.mark.parametrize(
    ("directory", "template"),
    [("Dell-Z9864f-O64", "buffers.json.j2"), *((hwsku, "buffers_dynamic.json.j2") for hwsku in sorted(SPECTRUM))],
)
def test_no_sku_has_upstream_buffers_for_a_spine_router(
    th5_files: dict[str, str], directory: str, template: str
) -> None:
    """Why a 3-tier core (SpineRouter, T2) is the one switch whose buffers `config qos reload` cannot re-render:
    none of the SKUs has a buffers_defaults_t2.j2 upstream, so buffers_config.j2's import fails; as a ToRRouter
    or LeafRouter the same config_db renders (fabric writes the tables itself, docs/outputs/configs.md)."""
    db: dict[str, Any] = json.loads(th5_files["configs/p1-spine01/config_db.json"])
    env = jinja2.Environment(loader=jinja2.FileSystemLoader([DATA / directory, DATA / "build_templates"]))
    assert not (DATA / directory / "buffers_defaults_t2.j2").exists()
    rendered = []
    for role in ("ToRRouter", "LeafRouter"):
        metadata = {"localhost": db["DEVICE_METADATA"]["localhost"] | {"type": role}}
        rendered.append(json.loads(env.get_template(template).render(db | {"DEVICE_METADATA": metadata})))
    # the pools and profiles fabric writes fit both tiers: the t0 and t1 files give the same ones
    for table in ("BUFFER_POOL", "BUFFER_PROFILE"):
        assert rendered[0][table] and rendered[0][table] == rendered[1][table], table
    metadata = {"localhost": db["DEVICE_METADATA"]["localhost"] | {"type": "SpineRouter"}}
    with pytest.raises(jinja2.TemplateNotFound, match=r"buffers_defaults_t2\.j2"):
        env.get_template(template).render(db | {"DEVICE_METADATA": metadata})


def test_each_tier_has_its_sonic_type() -> None:
    """DEVICE_METADATA type by tier (a 3-tier variant of roce-512 on SONiC): leaves ToRRouter (T0), spines
    LeafRouter (T1), cores SpineRouter (T2)."""

    def three_tiers(data: dict[str, Any]) -> None:
        fabric = data["fabrics"]["compute"]
        fabric["topology"]["tiers"] = 3
        fabric["switches"]["core"] = fabric["switches"]["spine"]
        fabric["platform"] = "sonic"

    files = render_all(variant("roce-512", three_tiers))
    types: dict[str, set[str]] = {}
    for path, text in files.items():
        if path.endswith("/config_db.json"):
            switch = path.split("/")[1]
            tier = "core" if switch.startswith("core") else "spine" if "spine" in switch else "leaf"
            types.setdefault(tier, set()).add(json.loads(text)["DEVICE_METADATA"]["localhost"]["type"])
    assert types == {"leaf": {"ToRRouter"}, "spine": {"LeafRouter"}, "core": {"SpineRouter"}}
