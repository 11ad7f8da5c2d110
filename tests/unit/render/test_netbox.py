"""NetBox import files: every CSV header against NetBox 4.6.8's bulk-import forms and every choice value
against its choice sets (parsed from tests/data/netbox/netbox-import.json, extracted from NetBox's source),
device types against the device-type library's rules, and the references between the files."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter, defaultdict
from functools import cache
from typing import Any

import pytest
import yaml

from fabric import render_all
from fabric.allocation.optics import physical_cables
from fabric.render.outputs.netbox import interface_type
from tests.conftest import REPO, built

NETBOX = json.loads((REPO / "tests" / "data" / "netbox" / "netbox-import.json").read_text(encoding="utf-8"))
DESIGNS = ["superpod-h100-4su", "roce-512", "lab", "lab-ib", "lab-ib-3tier"]
FORMS = {
    "01-sites.csv": "SiteImportForm",
    "02-locations.csv": "LocationImportForm",
    "03-racks.csv": "RackImportForm",
    "04-manufacturers.csv": "ManufacturerImportForm",
    "05-device-roles.csv": "DeviceRoleImportForm",
    "07-devices.csv": "DeviceImportForm",
    "08-interfaces.csv": "InterfaceImportForm",
    "09-cables.csv": "CableImportForm",
    "10-ip-addresses.csv": "IPAddressImportForm",
}
CHOICES = {
    ("01-sites.csv", "status"): "SiteStatusChoices",
    ("02-locations.csv", "status"): "LocationStatusChoices",
    ("03-racks.csv", "status"): "RackStatusChoices",
    ("03-racks.csv", "form_factor"): "RackFormFactorChoices",
    ("07-devices.csv", "status"): "DeviceStatusChoices",
    ("07-devices.csv", "face"): "DeviceFaceChoices",
    ("08-interfaces.csv", "type"): "InterfaceTypeChoices",
    ("09-cables.csv", "type"): "CableTypeChoices",
    ("09-cables.csv", "status"): "LinkStatusChoices",
    ("09-cables.csv", "length_unit"): "CableLengthUnitChoices",
    ("10-ip-addresses.csv", "status"): "IPAddressStatusChoices",
    ("10-ip-addresses.csv", "role"): "IPAddressRoleChoices",
}
DEVICE_TYPE_KEYS = {
    "manufacturer",
    "model",
    "slug",
    "part_number",
    "u_height",
    "is_full_depth",
    "airflow",
    "weight",
    "weight_unit",
    "front_image",
    "rear_image",
    "subdevice_role",
    "is_powered",
    "description",
    "comments",
    "console-ports",
    "console-server-ports",
    "power-ports",
    "power-outlets",
    "interfaces",
    "front-ports",
    "rear-ports",
    "module-bays",
    "device-bays",
    "inventory-items",
    "port-mappings",
}


def _form_fields(name: str) -> tuple[set[str], set[str]]:
    """Accepted headers (Meta.fields and declared fields, bases included) and the required declared ones."""
    accepted: set[str] = set()
    required: set[str] = set()
    stack = [name]
    while stack:
        form = NETBOX["forms"].get(stack.pop())
        if form is None:  # NetBox's generic bases (NetBoxModelImportForm …) are not extracted
            continue
        accepted.update(form["meta_fields"])
        for field, req in form["declared_fields"].items():
            accepted.add(field)
            if req is None or req is True:  # Django's default is required=True
                required.add(field)
        stack.extend(form["bases"])
    return accepted, required


@cache
def _files(design: str) -> dict[str, str]:
    return {
        k.removeprefix("netbox/"): v.decode() for k, v in render_all(built(design)).items() if k.startswith("netbox/")
    }


def _rows(design: str, name: str) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(_files(design)[name]))
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def _device_types(design: str) -> dict[str, dict[str, Any]]:
    return {
        name: yaml.safe_load(text)
        for name, text in _files(design).items()
        if name.startswith("06-device-types/") and name.endswith(".yaml")
    }


@pytest.mark.parametrize("design", DESIGNS)
def test_every_file_is_there_in_import_order(design: str) -> None:
    names = sorted(_files(design))
    csvs = [n for n in names if n.endswith(".csv")]
    # interfaces and addresses only where the design has any beyond what the device types create
    assert set(FORMS) - set(csvs) <= {"08-interfaces.csv", "10-ip-addresses.csv"}
    assert set(csvs) <= set(FORMS)
    assert ("10-ip-addresses.csv" in csvs) == bool(built(design).allocation.addresses)
    assert len(_device_types(design)) >= 2


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("file", sorted(FORMS))
def test_csv_headers_are_the_bulk_import_forms_fields(design: str, file: str) -> None:
    accepted, required = _form_fields(FORMS[file])
    if file not in _files(design):
        assert file in ("08-interfaces.csv", "10-ip-addresses.csv")
        return
    header, rows = _rows(design, file)
    assert rows, file
    assert set(header) <= accepted, sorted(set(header) - accepted)
    assert required <= set(header), sorted(required - set(header))
    assert len(header) == len(set(header))
    for row in rows:
        for field in required:
            assert row[field], (file, field, row)


@pytest.mark.parametrize("design", DESIGNS)
def test_choice_values_are_netbox_choices(design: str) -> None:
    checked = 0
    for (file, column), choice in CHOICES.items():
        allowed = set(NETBOX["choices"][choice])
        assert allowed, choice
        _, rows = _rows(design, file) if file in _files(design) else ([], [])
        for row in rows:
            if row[column]:  # empty: the field's default
                assert row[column] in allowed, (file, column, row[column])
                checked += 1
    interface_types = set(NETBOX["choices"]["InterfaceTypeChoices"])
    for name, dtype in _device_types(design).items():
        for interface in dtype["interfaces"]:
            assert interface["type"] in interface_types, (name, interface)
            checked += 1
    assert checked > 50


@pytest.mark.parametrize("design", DESIGNS)
def test_device_types_follow_the_librarys_rules(design: str) -> None:
    manufacturers = {r["name"] for r in _rows(design, "04-manufacturers.csv")[1]}
    for path, dtype in _device_types(design).items():
        assert set(dtype) <= DEVICE_TYPE_KEYS, path
        for key in ("manufacturer", "model", "slug", "u_height", "is_full_depth"):
            assert key in dtype, (path, key)
        assert re.fullmatch(r"[-a-z0-9_]+", dtype["slug"])
        assert float(dtype["u_height"]) * 2 == int(float(dtype["u_height"]) * 2)
        assert isinstance(dtype["is_full_depth"], bool)
        assert ("weight" in dtype) == ("weight_unit" in dtype)
        assert path == f"06-device-types/{dtype['manufacturer']}/{dtype['model']}.yaml"
        assert dtype["manufacturer"] in manufacturers
        names = [i["name"] for i in dtype["interfaces"]]
        assert len(names) == len(set(names)), path
        for interface in dtype["interfaces"]:
            assert set(interface) <= {"name", "type", "mgmt_only", "label", "description", "poe_mode", "poe_type"}
            assert isinstance(interface.get("mgmt_only", False), bool)


def test_qm9700_has_all_64_ports_as_infiniband() -> None:
    qm9700 = _device_types("superpod-h100-4su")["06-device-types/NVIDIA/qm9700.yaml"]
    ports = [i for i in qm9700["interfaces"] if not i.get("mgmt_only")]
    assert len(ports) == 64
    assert {p["type"] for p in ports} == {"infiniband-ndr"}
    assert [i["name"] for i in qm9700["interfaces"] if i.get("mgmt_only")] == ["mgmt0"]
    dgx = _device_types("superpod-h100-4su")["06-device-types/NVIDIA/dgx-h100.yaml"]
    types = Counter(i["type"] for i in dgx["interfaces"])
    assert types["infiniband-ndr"] == 10  # 8 compute rails on the IB compute fabric + 2 storage ports on IB storage
    assert types["1000base-t"] == 1


@pytest.mark.parametrize(
    ("speed", "connector", "lanes", "expected"),
    [
        (400, "osfp", 4, "infiniband-ndr"),  # NDR: 4 x 100G-PAM4 (QM9700 port, ConnectX-7)
        (200, "osfp", 2, "infiniband-ndr"),  # NDR200: 2 x 100G-PAM4 (the UFM's ConnectX-7, a QM9700 split port)
        (200, "qsfp56", 4, "infiniband-hdr"),  # HDR: 4 x 50G-PAM4 (QM8700 port); does not link to NDR200
        (100, "qsfp56", 2, "infiniband-hdr"),  # HDR100: 2 x 50G-PAM4 (a QM8700 split port)
        (100, "qsfp28", 4, "infiniband-edr"),  # EDR: 4 x 25G
        (800, "osfp", 4, "infiniband-xdr"),  # XDR: 4 x 200G-PAM4 (Q3400)
        (300, "osfp", 4, "other"),  # no generation signals at 75G a lane
    ],
)
def test_an_infiniband_port_is_typed_by_its_lane_rate(speed: int, connector: str, lanes: int, expected: str) -> None:
    """NetBox's InfiniBand types are per-lane generations ("NDR (100 Gbps)", "HDR (50 Gbps)"; InterfaceTypeChoices,
    NetBox 4.6.8): a port's type is its lane rate's, so an NDR200 port is NDR, never HDR."""
    assert expected in NETBOX["choices"]["InterfaceTypeChoices"] or expected == "other"
    assert interface_type(speed, connector, "infiniband", lanes) == expected


def test_the_ufm_ndr200_port_is_ndr_and_its_splitter_one_cable() -> None:
    """The SuperPOD's UFM appliance runs NDR200 (2 x 100G-PAM4 on a 1:2 splitter fibre, RA-11333-001 table 8): its
    device type's ib0 is `infiniband-ndr` (was `infiniband-hdr`, typed by its 200G speed), and its cable row is
    the splitter's, labelled with the physical cable's id."""
    ufm = _device_types("superpod-h100-4su")["06-device-types/NVIDIA/ufm-appliance.yaml"]
    assert {i["name"]: i["type"] for i in ufm["interfaces"]}["ib0"] == "infiniband-ndr"
    _, cables = _rows("superpod-h100-4su", "09-cables.csv")
    ufm_cables = [c for c in cables if c["side_a_device"].startswith("ufm") and c["side_a_name"] == "ib0"]
    assert len(ufm_cables) == 4
    assert all(c["description"].endswith(", one 1:2 splitter cable: leg 1") for c in ufm_cables)
    assert all(c["type"] == "mmf-om4" and c["description"].startswith("MFP7E20-") for c in ufm_cables)


@pytest.mark.parametrize("design", DESIGNS)
def test_references_between_the_files_resolve(design: str) -> None:
    roles = {r["name"] for r in _rows(design, "05-device-roles.csv")[1]}
    racks = {r["name"]: r for r in _rows(design, "03-racks.csv")[1]}
    locations = {r["name"] for r in _rows(design, "02-locations.csv")[1]}
    sites = {r["name"] for r in _rows(design, "01-sites.csv")[1]}
    types = {(t["manufacturer"], t["model"]): t for t in _device_types(design).values()}
    devices = _rows(design, "07-devices.csv")[1]
    assert len({d["name"] for d in devices}) == len(devices)
    interfaces: dict[str, set[str]] = {}
    occupied: dict[str, set[int]] = defaultdict(set)
    for d in devices:
        assert d["role"] in roles and d["site"] in sites
        dtype = types[(d["manufacturer"], d["device_type"])]
        interfaces[d["name"]] = {i["name"] for i in dtype["interfaces"]}
        if d["rack"]:
            rack = racks[d["rack"]]
            assert rack["location"] == d["location"] and d["location"] in locations
            assert d["face"] == "front"
            units = set(range(int(d["position"]), int(d["position"]) + int(dtype["u_height"])))
            assert max(units) <= int(rack["u_height"])
            assert not units & occupied[d["rack"]], (d["name"], "overlaps in", d["rack"])  # NetBox refuses that
            occupied[d["rack"]] |= units
    for row in _rows(design, "08-interfaces.csv")[1] if "08-interfaces.csv" in _files(design) else []:
        assert row["name"] not in interfaces[row["device"]], row  # the device type already made it
        interfaces[row["device"]].add(row["name"])
    ends: Counter[tuple[str, str]] = Counter()
    cables = _rows(design, "09-cables.csv")[1]
    for cable in cables:
        for side in ("a", "b"):
            end = (cable[f"side_{side}_device"], cable[f"side_{side}_name"])
            assert end[1] in interfaces[end[0]], end
            assert cable[f"side_{side}_type"] == "dcim.interface"
            ends[end] += 1
        assert float(cable["length"]) > 0 and cable["length_unit"] == "m"
    assert max(ends.values()) == 1  # one cable per interface
    # a label per physical cable (NetBox's Cable.label is not unique: CharField(max_length=100, blank=True)): the
    # two rows of a twin-port cable carrying a cage pair's links share it, a link on two fibres is one row
    build = built(design)
    physical = physical_cables(build.design.catalog, build.topology, build.allocation)
    assert len({c["label"] for c in cables}) == len({p.links[0].cable_id for p in physical})
    shared = Counter(c["label"] for c in cables)
    assert sum(n for n in shared.values() if n > 1) == sum(len(p.links) for p in physical if len(p.links) > 1)
    addresses = _rows(design, "10-ip-addresses.csv")[1] if "10-ip-addresses.csv" in _files(design) else []
    for row in addresses:
        assert row["interface"] in interfaces[row["device"]], row
    assert len(cables) == len(built(design).allocation.cables)
    assert len(addresses) == len(built(design).allocation.addresses)


def test_role_colours_are_hex() -> None:
    for row in _rows("superpod-h100-4su", "05-device-roles.csv")[1]:
        assert re.fullmatch(r"[0-9a-f]{6}", row["color"])


def test_every_csv_is_formula_safe() -> None:
    """A site name from the spec starting with `=` is text in every NetBox CSV, never a formula (the tables'
    guard: a leading apostrophe); the other cells are as they were."""
    from fabric import build_fabric
    from fabric.render.outputs.netbox import netbox_files
    from fabric.spec.loader import load_spec_text
    from tests.conftest import DESIGNS as DESIGN_DIR

    text = (DESIGN_DIR / "lab.yaml").read_text(encoding="utf-8")
    hostile = text + '\nexports:\n  netbox: {site: \'=HYPERLINK("http://x","y")\'}\n'
    assert "\nexports:" not in text
    files = netbox_files(build_fabric(load_spec_text(hostile, "lab.yaml", DESIGN_DIR)))
    plain = netbox_files(built("lab"))
    assert files.keys() == plain.keys()
    cells = 0
    for name, csv_text in files.items():
        if name.endswith(".csv"):
            for row in csv.reader(io.StringIO(csv_text)):
                assert not any(cell.startswith(("=", "+", "-", "@")) for cell in row), name
                cells += sum(cell.startswith("'=HYPERLINK") for cell in row)
    assert cells >= 3
    for name in files:  # the same rows, the site's cells apart
        assert files[name].count("\n") == plain[name].count("\n"), name
