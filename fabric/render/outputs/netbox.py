"""NetBox bulk-import files: CSVs in dependency order and device-type YAML per catalog model used.

Import order (NetBox 4.6; each step needs the ones before it): sites, locations (rack rows), racks,
manufacturers, device roles, device types (YAML, Device Types → Import), devices, interfaces (those the
device types do not already create: breakout ports, loopbacks, SVIs), cables, IP addresses.
Device types hold each model's ports in their default mode, named as the plan names them, so that cables
and addresses find them once the devices exist.
"""

from __future__ import annotations

import csv
import io
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, filterfalse, product, repeat
from operator import add, attrgetter, itemgetter
from typing import Any

import yaml

from fabric.allocation.allocate import BOND_INTERFACE
from fabric.allocation.optics import physical_cables
from fabric.fast import csvtext
from fabric.pipeline import Build
from fabric.render.engine import iptext
from fabric.render.engine.registry import Output
from fabric.render.outputs.tables import formula_safe
from fabric.spec.catalog import NodeType, SwitchModel, node_lane_gbps, switch_ports
from fabric.spec.schema import NodeAttach

SITE_COLUMNS = ("name", "slug", "status", "description")
LOCATION_COLUMNS = ("site", "name", "slug", "status", "description")
RACK_COLUMNS = ("site", "location", "name", "status", "form_factor", "u_height", "description")
MANUFACTURER_COLUMNS = ("name", "slug")
ROLE_COLUMNS = ("name", "slug", "color", "description")
DEVICE_COLUMNS = (
    "name",
    "role",
    "manufacturer",
    "device_type",
    "status",
    "site",
    "location",
    "rack",
    "position",
    "face",
    "description",
)
INTERFACE_COLUMNS = ("device", "name", "type", "speed", "mgmt_only", "description")
CABLE_COLUMNS = (
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_device",
    "side_b_type",
    "side_b_name",
    "type",
    "status",
    "label",
    "length",
    "length_unit",
    "description",
)
IP_COLUMNS = ("address", "status", "role", "device", "interface", "description")

# fabric's media kinds → NetBox cable types (the catalog's fibre is OM4 multimode and OS2 single-mode)
CABLE_TYPES: Mapping[str, str] = {
    "dac": "dac-passive",
    "acc": "dac-active",
    "aoc": "aoc",
    "mmf": "mmf-om4",
    "smf": "smf-os2",
    "copper": "cat6",
}
# NetBox's InfiniBand types name the signalling, per lane ("InfiniBand 1X": `infiniband-ndr` is "NDR (100 Gbps)",
# `infiniband-hdr` "HDR (50 Gbps)"; netbox/dcim/choices.py InterfaceTypeChoices, NetBox 4.6.8, the version the
# tests check against): so a port's type is its lane rate's generation, whatever its width. An NDR200 port (a
# ConnectX-7 at 2 x 100G-PAM4, a QM9700 split port) is NDR, not HDR (HDR's 200G is 4 x 50G-PAM4, and the two do not
# link: LinkX 100G-PAM4 overview). NetBox's later 2X/4X types (`infiniband-ndr-2x`, `-4x`: netbox-community/netbox
# pull requests 23016, 23163) would name the width too; the 4.6.8 choice sets do not have them.
IB_TYPES: Mapping[int, str] = {
    25: "infiniband-edr",
    50: "infiniband-hdr",
    100: "infiniband-ndr",
    200: "infiniband-xdr",
}
# (speed Gb/s, connector) → NetBox Ethernet interface type
ETHERNET_TYPES: Mapping[tuple[int, str], str] = {
    (1, "rj45"): "1000base-t",
    (10, "rj45"): "10gbase-t",
    (25, "sfp28"): "25gbase-x-sfp28",
    (100, "qsfp28"): "100gbase-x-qsfp28",
    (100, "qsfp56"): "100gbase-x-qsfp28",
    (200, "qsfp56"): "200gbase-x-qsfp56",
    (400, "osfp"): "400gbase-x-osfp",
    (400, "qsfp112"): "400gbase-x-qsfp112",
    (800, "osfp"): "800gbase-x-osfp",
}
ROLE_COLORS = ("2196f3", "4caf50", "ff9800", "9c27b0", "607d8b", "795548", "009688", "e91e63", "3f51b5", "cddc39")
SITE_STATUS = {"planned": "planned", "staged": "staging", "active": "active"}
RACK_STATUS = {"planned": "planned", "staged": "planned", "active": "active"}
CABLE_STATUS = {"planned": "planned", "staged": "planned", "active": "connected"}


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-") or "x"


def interface_type(speed: int, connector: str, technology: str, lanes: int = 4) -> str:
    """NetBox's type for a port on `lanes` electrical lanes; an InfiniBand port's is its lane rate's generation
    (IB_TYPES), an Ethernet breakout lane takes its cage's type (NetBox has none per lane)."""
    if technology == "infiniband":
        return IB_TYPES.get(speed // max(1, lanes), "other")
    if (speed, connector) in ETHERNET_TYPES:
        return ETHERNET_TYPES[(speed, connector)]
    cage = [t for (s, c), t in ETHERNET_TYPES.items() if c == connector and s >= speed]
    return cage[0] if cage else "other"


def _csv(columns: Sequence[str], rows: Iterable[Mapping[str, object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    # what DictWriter writes (a missing key or None is an empty field), without its per-row key-set check:
    # 1.9 million rows at 100k GPUs; the golden files catch a key that is not a column
    writer.writerows([row.get(k) for k in columns] for row in rows)
    return out.getvalue()


def _manufacturer(vendor: str) -> str:
    return vendor or "Generic"


class _Models:
    """The device types of a design: per catalog model, its manufacturer, interfaces and YAML."""

    def __init__(self, build: Build) -> None:
        self.build = build
        catalog = build.design.catalog
        spec = build.design.spec
        used = dict.fromkeys(d.model for d in build.topology.devices.values())
        self.switches = {m: catalog.switches[m] for m in used if m in catalog.switches}
        self.nodes = {m: catalog.nodes[m] for m in used if m in catalog.nodes and m not in self.switches}
        # a node port group's technology as the design attaches it ("any" ports take the fabric's)
        self.attached: dict[tuple[str, str], str] = {}
        types = {g.group: g.type for g in spec.nodes}
        for fabric in spec.fabrics.values():
            for attach in fabric.attach:
                if isinstance(attach, NodeAttach) and attach.group in types:
                    self.attached[(types[attach.group], attach.ports)] = fabric.technology

    def manufacturer(self, model: str) -> str:
        if model in self.switches:
            return _manufacturer(self.switches[model].vendor)
        return _manufacturer(self.nodes[model].vendor)

    def interfaces(self, model: str) -> list[dict[str, Any]]:
        if model in self.switches:
            return self._switch_interfaces(self.switches[model])
        return self._node_interfaces(model, self.nodes[model])

    def _switch_interfaces(self, switch: SwitchModel) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{"name": switch.mgmt_port, "type": "1000base-t", "mgmt_only": True}]
        for port in switch_ports(switch, None):
            kind = interface_type(port.speed_gbps, port.connector, switch.technology, port.lanes)
            out.append({"name": port.name, "type": kind})
        return out

    def _node_interfaces(self, model: str, node: NodeType) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for group_name, group in node.ports.items():
            technology: str = group.technology
            if technology == "any":
                technology = self.attached.get((model, group_name), "ethernet")
            lanes = max(1, group.speed_gbps // node_lane_gbps(group))  # NDR200 on a ConnectX-7: 2
            for port in group.port_list():
                row: dict[str, Any] = {
                    "name": port.name,
                    "type": interface_type(group.speed_gbps, group.connector, technology, lanes),
                }
                if group_name == "bmc":
                    row["mgmt_only"] = True
                out.append(row)
        return out

    def device_type(self, model: str) -> dict[str, Any]:
        part: SwitchModel | NodeType = self.switches[model] if model in self.switches else self.nodes[model]
        return {
            "manufacturer": self.manufacturer(model),
            "model": model,
            "slug": slug(f"{self.manufacturer(model)}-{model}"),
            "u_height": part.u,
            "is_full_depth": True,
            "comments": f"{part.description} (from fabric's catalog)",
            "interfaces": self.interfaces(model),
        }


def _status(build: Build) -> str:
    return build.design.spec.exports.netbox.status


def _site(build: Build) -> str:
    return build.design.spec.exports.netbox.site or build.name


def _location(row: str) -> str:
    return f"Row {row}"


def netbox_files(build: Build) -> dict[str, str]:
    status = _status(build)
    site = _site(build)
    topo = build.topology
    models = _Models(build)
    files: dict[str, str] = {}
    files["netbox/01-sites.csv"] = _csv(
        SITE_COLUMNS, [{"name": site, "slug": slug(site), "status": SITE_STATUS[status], "description": build.name}]
    )
    rows = list(dict.fromkeys(r.row for r in topo.racks.values()))
    files["netbox/02-locations.csv"] = _csv(
        LOCATION_COLUMNS,
        [{"site": site, "name": _location(r), "slug": slug(f"row-{r}"), "status": SITE_STATUS[status]} for r in rows],
    )
    layout = build.design.spec.racks
    files["netbox/03-racks.csv"] = _csv(
        RACK_COLUMNS,
        [
            {
                "site": site,
                "location": _location(rack.row),
                "name": rack.name,
                "status": RACK_STATUS[status],
                "form_factor": "4-post-cabinet",
                "u_height": layout.rack_units,
            }
            for rack in topo.racks.values()
        ],
    )
    manufacturers = sorted({models.manufacturer(m) for m in [*models.switches, *models.nodes]})
    files["netbox/04-manufacturers.csv"] = _csv(
        MANUFACTURER_COLUMNS, [{"name": m, "slug": slug(m)} for m in manufacturers]
    )
    roles = _roles(build)
    files["netbox/05-device-roles.csv"] = _csv(
        ROLE_COLUMNS,
        [
            {"name": name, "slug": slug(name), "color": ROLE_COLORS[i % len(ROLE_COLORS)], "description": text}
            for i, (name, text) in enumerate(roles.items())
        ],
    )
    for model in [*models.switches, *models.nodes]:
        files[f"netbox/06-device-types/{models.manufacturer(model)}/{model}.yaml"] = yaml.safe_dump(
            models.device_type(model), sort_keys=False, default_flow_style=False
        )
    files["netbox/07-devices.csv"] = _csv(DEVICE_COLUMNS, _devices(build, models, site, status))
    files["netbox/08-interfaces.csv"] = csvtext.rows(INTERFACE_COLUMNS, _extra_interfaces(build, models))
    files["netbox/09-cables.csv"] = csvtext.rows(CABLE_COLUMNS, _cables(build))
    files["netbox/10-ip-addresses.csv"] = _addresses(build)
    # a file with no rows is left out (NetBox's import refuses a header alone); every CSV formula-safe, as the
    # other tables (a cell starting with = + - @ gets a leading apostrophe, which NetBox keeps: docs/outputs/exports.md)
    return {
        path: formula_safe(text) if path.endswith(".csv") else text
        for path, text in files.items()
        if text.count("\n") > 1
    }


def _role_of(build: Build, name: str) -> str:
    device = build.topology.devices[name]
    return f"{device.layer}-switch" if device.layer != "node" else str(device.group)


def _roles(build: Build) -> dict[str, str]:
    roles: dict[str, str] = {}
    for device in build.topology.devices.values():
        role = _role_of(build, device.name)
        if role not in roles:
            roles[role] = f"{device.layer} switches" if device.layer != "node" else f"node group {device.group}"
    return roles


def _devices(build: Build, models: _Models, site: str, status: str) -> Iterable[dict[str, object]]:
    racks = build.topology.racks
    for device in build.topology.devices.values():
        rack = racks.get(device.rack or "")
        yield {
            "name": device.name,
            "role": _role_of(build, device.name),
            "manufacturer": models.manufacturer(device.model),
            "device_type": device.model,
            "status": status,
            "site": site,
            "location": _location(rack.row) if rack else "",
            "rack": device.rack or "",
            "position": device.u if rack and device.u else "",
            "face": "front" if rack and device.u else "",
            "description": f"fabric {device.fabric}" if device.fabric else f"node group {device.group}",
        }


def _extra_interfaces(build: Build, models: _Models) -> list[tuple[str, ...]]:
    """The interfaces the plan names that the device types do not create (in order of first mention: link ends
    by fabric, then address rows): breakout ports, and virtual ones (loopback, server-gateway, …). Walked by
    C loops (map over setdefault, a filter over the set of known ones): 1.6 million mentions at 100k GPUs."""
    known = {m: {i["name"] for i in models.interfaces(m)} for m in [*models.switches, *models.nodes]}
    devices = build.topology.devices
    known_ends: set[tuple[str, str]] = set()
    for name, d in devices.items():
        known_ends.update(product((name,), known[d.model]))
    # (device, interface) → (speed, technology) of its first mention, or (0, address purpose) for virtual ones
    first: dict[tuple[str, str], tuple[int, str]] = {}
    for fabric in build.topology.fabrics.values():
        links = fabric.links
        ends = chain.from_iterable(zip(map(_A_END, links), map(_B_END, links), strict=True))
        values = list(zip(map(_SPEED, links), repeat(str(fabric.technology))))
        deque(map(first.setdefault, ends, chain.from_iterable(zip(values, values, strict=True))), maxlen=0)
    c = iptext.plan_columns(build)
    deque(map(first.setdefault, zip(c.device, c.interface, strict=True), zip(repeat(0), c.purpose)), maxlen=0)
    unknown = list(filterfalse(known_ends.__contains__, first))
    values = list(map(first.__getitem__, unknown))
    model_of = {name: d.model for name, d in devices.items()}
    names = list(map(itemgetter(1), unknown))
    rows = _InterfaceRows(build)
    found = list(
        map(rows.__getitem__, zip(map(model_of.__getitem__, map(itemgetter(0), unknown)), values, names, strict=True))
    )
    return list(
        zip(
            map(itemgetter(0), unknown),
            names,
            map(itemgetter(0), found),
            map(itemgetter(1), found),
            repeat(""),
            map(itemgetter(2), found),
            strict=False,  # (repeat)
        )
    )


class _InterfaceRows(dict[tuple[str, tuple[int, str], str], tuple[str, str, str]]):
    """(model, (speed, technology) or (0, address purpose), interface) → its row's type, speed and description:
    made on first use (a few hundred distinct at 100k GPUs), looked up by C loops for the half million rows."""

    def __init__(self, build: Build) -> None:
        super().__init__()
        self.catalog = build.design.catalog

    def __missing__(self, key: tuple[str, tuple[int, str], str]) -> tuple[str, str, str]:
        model, (speed, technology), name = key
        if not speed:  # a virtual one: technology is the address purpose (loopback, server-gateway, …)
            kind = "lag" if name == BOND_INTERFACE and technology == "server" else "virtual"  # `dual_homing: bond`
            self[key] = (kind, "", technology)
            return self[key]
        switch = self.catalog.switches.get(model)
        ports = switch_ports(switch, speed) if switch else ()
        port = next((p for p in ports if p.name == name), None)  # the first of the name
        connector, lanes = (port.connector, port.lanes) if port else ("", 4)
        self[key] = (interface_type(speed, connector, technology, lanes), str(speed * 1_000_000), "breakout port")
        return self[key]


def _cables(build: Build) -> list[tuple[str, ...]]:
    """One row per interface pair: NetBox's CSV cable import takes one termination per side (CableImportForm's
    `_clean_side` sets `[termination_object]`; a multi-position cable profile can be given only through the API or
    the UI, by object id), and an interface holds one cable. So a twin-port cable carrying a cage pair's two links
    is two rows with the physical cable's label (the one printed on it) and "link 1 of 2" in the description, and
    a link on two fibres one row naming its fibres (cabling-physical.csv has one row per physical cable)."""
    status = CABLE_STATUS[_status(build)]
    interface = "dcim.interface"
    physical: dict[str, tuple[str, str]] = {}  # cable_id → (label, note), where not the cable's own id alone
    media = build.design.catalog.media
    for p in physical_cables(build.design.catalog, build.topology, build.allocation):
        medium = media.get(p.links[0].media or "")
        legs = max((e.plugs for e in medium.ends), default=1) if medium and medium.ends else 1
        if legs > 1:  # a splitter (the UFM's 1:2 fibre uses one leg): one physical cable, a leg per link
            for k, c in enumerate(p.links, 1):
                physical[c.cable_id] = (p.physical_id, f", one 1:{legs} splitter cable: leg {k}")
        elif len(p.links) > 1:
            for k, c in enumerate(p.links, 1):
                physical[c.cable_id] = (p.physical_id, f", one cable with {len(p.links)} links: link {k}")
        elif p.fibre == 1 and p.fibres > 1:
            first = p.links[0].cable_id
            fibres = ", ".join(f"{first}-F{n}" for n in range(1, p.fibres + 1))
            physical[first] = (first, f", {p.fibres} fibres {fibres}")
    rows: list[tuple[str, ...]] = []
    for cable in build.allocation.cables:
        link = cable.link
        length = cable.length_m
        label, note = physical.get(cable.cable_id, (cable.cable_id, ""))
        rows.append(
            (
                link.a,
                interface,
                link.a_port,
                link.b,
                interface,
                link.b_port,
                CABLE_TYPES.get(cable.media_kind, ""),
                status,
                label,
                "" if length is None else f"{length:g}",
                "" if length is None else "m",
                f"{cable.part} {link.speed_gbps}G {link.fabric} {link.tier}{note}".strip(),
            )
        )
    return rows


_A_END, _B_END, _SPEED = attrgetter("a", "a_port"), attrgetter("b", "b_port"), attrgetter("speed_gbps")
_LOOPBACKS = {"loopback": "loopback", "host-loopback": "loopback"}  # address purpose → NetBox role


def _addresses(build: Build) -> str:
    status = "reserved" if _status(build) == "planned" else "active"
    c = iptext.plan_columns(build)
    return csvtext.table(
        IP_COLUMNS,
        (
            c.address,
            [status] * len(c.address),
            list(map(_LOOPBACKS.get, c.purpose, repeat(""))),
            c.device,
            c.interface,
            list(map(add, map(add, c.fabric, repeat(" ")), c.purpose)),
        ),
    )


OUTPUTS: tuple[Output, ...] = (Output("netbox", netbox_files, together=iptext.PLAN_ADDRESSES, weight=3.5),)
