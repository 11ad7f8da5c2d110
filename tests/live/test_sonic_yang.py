"""The SONiC config_db.json files fabric renders, checked against SONiC's own YANG models with the real libyang.

Needs `yanglint` (Debian's libyang2-tools; skips without it, or fails under FABRIC_REQUIRE_REAL=1) and the models
in shared/sonic-yang beside the repository or at $FABRIC_SONIC_YANG (always skips without them).
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from fabric import render_all
from tests.conftest import require_tool
from tests.support.design_variants import ETHERNET_DESIGNS, on_platform
from tests.support.sonic_yang_model import YANG_DIR_ENV, load_schema, translate, validate, yang_dir

pytestmark = [pytest.mark.real, pytest.mark.independent]  # yanglint on files of its own


@pytest.fixture(scope="module")
def models() -> tuple[Path, str]:
    """(the YANG directory, the yanglint path)."""
    directory = yang_dir()
    if not directory.is_dir():
        pytest.skip(f"no SONiC YANG models at {directory} (set {YANG_DIR_ENV} to their directory)")
    return directory, require_tool("yanglint", "apt-get install libyang2-tools")


def _config_dbs(design: str, unnumbered: bool) -> dict[str, dict[str, Any]]:
    files = render_all(on_platform(design, "sonic", unnumbered))
    return {
        path.split("/")[1]: json.loads(data)
        for path, data in files.items()
        if path.startswith("configs/") and path.endswith("/config_db.json")
    }


# The dynamic buffer model's tables: SONiC has no YANG model for them (buffermgrd alone reads them; their values
# are buffers_config.j2's, checked in tests/unit/render/test_sonic_buffers.py). Any other unmodelled table fails.
UNMODELLED_UPSTREAM = frozenset({"DEFAULT_LOSSLESS_BUFFER_PARAMETER", "LOSSLESS_TRAFFIC_PATTERN"})


# and the Tomahawk 5 design, on its own platform (SONiC), with its HwSKU and lane map; and servers routing on the host
@pytest.mark.parametrize("unnumbered", [False, True], ids=["numbered", "unnumbered"])
@pytest.mark.parametrize("design", (*ETHERNET_DESIGNS, "sonic-th5-512", "lab-dual"))
def test_every_rendered_config_db_validates(models: tuple[Path, str], design: str, unnumbered: bool) -> None:
    directory, yanglint = models
    dbs = _config_dbs(design, unnumbered)
    assert dbs, f"{design}: no SONiC config_db.json rendered"
    roles: set[str] = set()
    problems: dict[str, list[str]] = defaultdict(list)  # problem -> switches
    for switch, db in sorted(dbs.items()):
        roles.add(db["DEVICE_METADATA"]["localhost"]["type"])
        report = validate(db, directory, yanglint)
        for table in set(report.not_modelled) - UNMODELLED_UPSTREAM:
            problems[f"table {table} is not modelled, so not checked"].append(switch)
        for error in report.errors:
            problems[str(error)].append(switch)
    # Every switch is checked; make sure that covered both roles, leaves (ToRRouter) and spines (LeafRouter).
    assert {"ToRRouter", "LeafRouter"} <= roles, roles
    assert not problems, f"{design} ({'un' if unnumbered else ''}numbered): SONiC's YANG models reject:\n" + "\n".join(
        f"- {problem}  (on {len(switches)}: {', '.join(switches[:3])}{' ...' if len(switches) > 3 else ''})"
        for problem, switches in problems.items()
    )


def test_a_broken_config_db_is_rejected_naming_table_and_field(models: tuple[Path, str]) -> None:
    directory, yanglint = models
    db = _config_dbs("lab", False)["leaf1"]
    assert validate(db, directory, yanglint).errors == []
    broken = copy.deepcopy(db)
    qos_port = sorted(broken["PORT_QOS_MAP"])[0]
    broken["PORT_QOS_MAP"][qos_port]["dscp_to_tc_map"] = "NO_SUCH_MAP"
    fast_port = sorted(set(broken["PORT"]) - {qos_port})[0]
    broken["PORT"][fast_port]["speed"] = "fast"

    errors = validate(broken, directory, yanglint).errors

    assert {(e.table, e.key, e.field) for e in errors} == {
        ("PORT_QOS_MAP", qos_port, "dscp_to_tc_map"),
        ("PORT", fast_port, "speed"),
    }, [str(e) for e in errors]
    by_table = {e.table: e for e in errors}
    assert 'Invalid leafref value "NO_SUCH_MAP"' in by_table["PORT_QOS_MAP"].message
    assert "DSCP_TO_TC_MAP" in by_table["PORT_QOS_MAP"].message  # the map it should point at
    assert 'uint32 value "fast"' in by_table["PORT"].message
    assert by_table["PORT"].path.endswith(f"/PORT/PORT_LIST[name='{fast_port}']/speed")


def test_unmodelled_tables_and_unknown_fields_are_reported(models: tuple[Path, str]) -> None:
    directory, yanglint = models
    db = copy.deepcopy(_config_dbs("lab", False)["leaf1"])
    db["FABRIC_NO_SUCH_TABLE"] = {"x": {"y": "z"}}
    port = sorted(db["PORT"])[0]
    db["PORT"][port]["no_such_field"] = "1"

    report = validate(db, directory, yanglint)

    assert sorted(set(report.not_modelled) - UNMODELLED_UPSTREAM) == ["FABRIC_NO_SUCH_TABLE"]
    assert [(e.table, e.key, e.field) for e in report.errors] == [("PORT", port, "no_such_field")]


def test_translation_of_a_port_and_an_interface(models: tuple[Path, str]) -> None:
    directory, yanglint = models
    db = {
        "PORT": {"Ethernet0": {"lanes": "0,1,2,3", "speed": "100000", "mtu": "9100", "admin_status": "up"}},
        "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.0/31": {}},
    }
    translation = translate(db, load_schema(directory, yanglint))
    assert translation.instance == {
        "sonic-port:sonic-port": {
            "sonic-port:PORT": {
                "PORT_LIST": [
                    # lanes is a string leaf (not a leaf-list); speed and mtu are uint32/uint16: JSON numbers
                    {"name": "Ethernet0", "lanes": "0,1,2,3", "speed": 100000, "mtu": 9100, "admin_status": "up"}
                ]
            }
        },
        "sonic-interface:sonic-interface": {
            "sonic-interface:INTERFACE": {
                # the key's part count picks the list
                "INTERFACE_LIST": [{"name": "Ethernet0"}],
                "INTERFACE_IPPREFIX_LIST": [{"name": "Ethernet0", "ip-prefix": "10.0.0.0/31"}],
            }
        },
    }
    assert translation.not_modelled == [] and translation.errors == []
    assert validate(db, directory, yanglint).errors == []


def test_translation_of_maps_containers_and_non_string_types(models: tuple[Path, str]) -> None:
    directory, yanglint = models
    db = {
        "DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "bgp_asn": "65001"}},
        "DSCP_TO_TC_MAP": {"ROCE": {"26": "3"}},
        "WRED_PROFILE": {"LOSSLESS": {"wred_green_enable": "true", "green_min_threshold": "1000"}},
    }
    translation = translate(db, load_schema(directory, yanglint))
    assert translation.instance == {
        "sonic-device_metadata:sonic-device_metadata": {
            # a container, not a list; bgp_asn is inet:as-number (uint32)
            "sonic-device_metadata:DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "bgp_asn": 65001}}
        },
        "sonic-dscp-tc-map:sonic-dscp-tc-map": {
            # a "type 1" map: the entry's fields become the inner list; dscp is a string, tc a uint8
            "sonic-dscp-tc-map:DSCP_TO_TC_MAP": {
                "DSCP_TO_TC_MAP_LIST": [{"name": "ROCE", "DSCP_TO_TC_MAP": [{"dscp": "26", "tc": 3}]}]
            }
        },
        "sonic-wred-profile:sonic-wred-profile": {
            # boolean -> JSON true; uint64 -> a JSON string (RFC 7951)
            "sonic-wred-profile:WRED_PROFILE": {
                "WRED_PROFILE_LIST": [{"name": "LOSSLESS", "wred_green_enable": True, "green_min_threshold": "1000"}]
            }
        },
    }
    assert validate(db, directory, yanglint).errors == []
