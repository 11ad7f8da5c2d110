"""The bill of materials, power per rack and the total cost of ownership, as data.

Counting follows the vendors: one switch per switch; transceivers per used cage at each optical (mmf, smf)
link end, the part chosen by the cage (a switch's finned twin-port OSFP, a DGX's flat twin-port one, a
ConnectX-7 card's flat single-port one), so a twin-port OSFP serving two 400G links is one transceiver, and
DAC, AOC and copper cables have none; fibres per optical link as its transceivers need them (two for an 800G
2 x SR4/DR4 link); one twin-port DAC/ACC per pair of cages, else one cable per link, by medium and orderable
length; node NIC ports by node type and port group (in the node's price); nodes; racks and rack PDUs. An
optical end no catalog transceiver fits is listed (`unmatched_optics`) and raises the finding `optics-missing`.

A rack-scale NVLink system (DGX GB200 NVL72) is a unit of its own: after its compute trays' `node` line, one
`system` line counting the racks that hold its trays (what a rack holds in its detail), and beneath it a
`system-part` line for each part of the system that is no device of the design (NVLink switch trays, power
shelves, in-rack management switches), counted per rack as the catalog's `rack_system` says; these are priced
at 0, in the trays' price (a tray's list price is its share of the rack).

Power: devices at their catalog power (switch figures include their own optics) plus node-side
transceivers. Every price and rate is a placeholder the user overrides (catalog part files, `costs:`).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from fabric.allocation.optics import optics
from fabric.fast.memo import per_object as per_build
from fabric.pipeline import Build
from fabric.spec.catalog import RackSystem
from fabric.spec.schema import NodeAttach

CATEGORIES = ("switch", "transceiver", "cable", "nic", "node", "rack", "pdu", "other", "system", "system-part")
HOURS_PER_YEAR = 8760
PLACEHOLDER_NOTE = "prices and rates are placeholders: override them (catalog part files, `costs:`)"


@dataclass(frozen=True, slots=True)
class BomLine:
    category: str
    model: str
    fabric: str  # "" for what belongs to no fabric (nodes, racks, PDUs)
    count: int
    unit_price_usd: float
    detail: str  # layer, side, length, …
    description: str

    @property
    def total_usd(self) -> float:
        return self.count * self.unit_price_usd


@dataclass(frozen=True, slots=True)
class RackPower:
    rack: str
    devices_w: int
    optics_w: float
    budget_w: float

    @property
    def total_w(self) -> float:
        return self.devices_w + self.optics_w


@dataclass(frozen=True)
class TcoYear:
    year: int
    capital_usd: float
    energy_usd: float
    space_usd: float
    support_usd: float
    cumulative_usd: float

    @property
    def total_usd(self) -> float:
        return self.capital_usd + self.energy_usd + self.space_usd + self.support_usd


@dataclass(frozen=True)
class Costing:
    lines: tuple[BomLine, ...]
    racks: tuple[RackPower, ...]
    years: tuple[TcoYear, ...]
    gpus: int
    unmatched_optics: tuple[str, ...]  # optical ends no catalog transceiver fits

    @property
    def capital_usd(self) -> float:
        return sum(line.total_usd for line in self.lines)

    def fabric_totals(self) -> dict[str, float]:
        totals: dict[str, float] = defaultdict(float)
        for line in self.lines:
            totals[line.fabric or "(shared)"] += line.total_usd
        return dict(totals)

    @property
    def power_w(self) -> float:
        return sum(r.total_w for r in self.racks)

    @property
    def tco_usd(self) -> float:
        return self.years[-1].cumulative_usd if self.years else self.capital_usd

    @property
    def per_gpu_usd(self) -> float | None:
        return self.capital_usd / self.gpus if self.gpus else None

    @property
    def tco_per_gpu_usd(self) -> float | None:
        return self.tco_usd / self.gpus if self.gpus else None

    @property
    def tco_per_gpu_hour_usd(self) -> float | None:
        if not self.gpus or not self.years:
            return None
        return self.tco_usd / (self.gpus * HOURS_PER_YEAR * len(self.years))


@per_build
def costing(build: Build) -> Costing:
    """The bill of materials, rack power and TCO of a build."""
    return _costing(build)


def _costing(build: Build) -> Costing:
    design, topo, catalog = build.design, build.topology, build.design.catalog
    costs = design.spec.costs
    devices = topo.devices
    lines: list[BomLine] = []

    # Switches by fabric, model and layer.
    switches = Counter((d.fabric or "", d.model, d.layer) for d in devices.values() if d.layer != "node")
    for fabric, model, layer in sorted(switches, key=lambda k: (list(topo.fabrics).index(k[0]), k[1], k[2])):
        part = catalog.switches[model]
        lines.append(
            BomLine(
                "switch", model, fabric, switches[(fabric, model, layer)], part.list_price_usd, layer, part.description
            )
        )

    # Transceivers: distinct cages per (fabric, side, type); cables and fibres by medium and length
    # (fabric/allocation/optics.py counts them as vendors ship them).
    physical = optics(catalog, topo, build.allocation)
    cages, optics_w, cables = physical.cages, physical.optics_w, physical.cables
    unmatched = {u.text for u in physical.unmatched}
    for (fabric, side, optic), filled in sorted(
        cages.items(), key=lambda kv: (list(topo.fabrics).index(kv[0][0]), kv[0][1], kv[0][2])
    ):
        tr = catalog.transceivers[optic]
        lines.append(BomLine("transceiver", optic, fabric, filled, tr.price_usd, side, tr.description))
    for (fabric, media, part_no, length), count in sorted(
        cables.items(), key=lambda kv: (list(topo.fabrics).index(kv[0][0]), kv[0][1], kv[0][3] or 0)
    ):
        medium = catalog.media.get(media)
        price = (medium.price_usd + medium.price_per_m_usd * (length or 0)) if medium else 0.0
        lines.append(
            BomLine(
                "cable",
                part_no or media,
                fabric,
                count,
                price,
                f"{media} {length:g} m" if length is not None else media,
                medium.description if medium else "no medium chosen",
            )
        )

    # Node NIC ports (priced in the node) and nodes.
    nodes = [d for d in devices.values() if d.layer == "node"]
    per_type = Counter(d.model for d in nodes)
    attached: dict[tuple[str, str], str] = {}
    groups_type = {g.group: g.type for g in design.spec.nodes}
    for fabric_key, fabric_spec in design.spec.fabrics.items():
        for entry in fabric_spec.attach:
            if isinstance(entry, NodeAttach) and entry.group in groups_type:
                attached.setdefault((groups_type[entry.group], entry.ports), fabric_key)
    for node_type, count in per_type.items():
        nt = catalog.nodes[node_type]
        for group_name, group in nt.ports.items():
            ports = len(group.port_list())
            lines.append(
                BomLine(
                    "nic",
                    f"{node_type}:{group_name}",
                    attached.get((node_type, group_name), ""),
                    count * ports,
                    0.0,
                    f"{ports} × {group.speed_gbps}G {group.connector} port(s) per node, in the node's price",
                    f"{group_name} ports of {nt.description}",
                )
            )
    for node_type, count in per_type.items():
        nt = catalog.nodes[node_type]
        lines.append(
            BomLine(
                "node", node_type, "", count, nt.list_price_usd, f"{nt.gpus} GPUs" if nt.gpus else "", nt.description
            )
        )
        if nt.rack_system is not None:
            racks_of = {d.rack for d in nodes if d.model == node_type and d.rack is not None}
            lines += _system_lines(node_type, nt.rack_system, len(racks_of))

    # Racks and PDUs.
    rack_part = catalog.racks[costs.rack]
    pdu_part = catalog.pdus[costs.pdu]
    budget_kw = design.spec.racks.power_kw
    per_rack = costs.pdus_per_rack if costs.pdus_per_rack is not None else 2 * math.ceil(budget_kw / pdu_part.kw)
    n_racks = len(topo.racks)
    lines.append(BomLine("rack", costs.rack, "", n_racks, rack_part.price_usd, "", rack_part.description))
    lines.append(
        BomLine(
            "pdu", costs.pdu, "", n_racks * per_rack, pdu_part.price_usd, f"{per_rack} per rack", pdu_part.description
        )
    )

    racks = tuple(_rack_power(build, optics_w))
    gpus = sum(catalog.nodes[d.model].gpus for d in nodes)
    costing_ = Costing(tuple(lines), racks, (), gpus, tuple(sorted(unmatched)))
    return Costing(costing_.lines, racks, _tco(build, costing_), gpus, costing_.unmatched_optics)


def _system_lines(node_type: str, system: RackSystem, racks: int) -> list[BomLine]:
    """A rack-scale system as one line per rack, its parts that are no devices of the design beneath."""
    mgmt = system.mgmt_switch_model or "management switch"

    def mark(field: str) -> str:
        return " [unverified]" if field in system.unverified else ""

    held = (
        f"per rack {system.trays} × {node_type} (the node line), {system.nvlink_switch_trays} NVLink switch trays, "
        f"{system.power_shelves}{mark('power_shelves')} power shelves, {system.mgmt_switches} × {mgmt}; "
        f"up to {system.power_kw:g} kW{mark('power_kw')}, {system.cooling}-cooled"
    )
    out = [
        BomLine(
            "system",
            system.name,
            "",
            racks,
            0.0,
            held,
            f"{system.name} rack: one NVLink domain of {system.gpus} GPUs; priced in its compute trays",
        )
    ]
    per_tray = system.nvlink_switch_chips // system.nvlink_switch_trays if system.nvlink_switch_trays else 0
    chips = f" ({per_tray} NVLink switch chips)" if per_tray else ""
    parts = (
        ("nvlink-switch-tray", system.nvlink_switch_trays, f"NVLink switch tray{chips}"),
        ("power-shelf", system.power_shelves, f"power shelf{mark('power_shelves')}"),
        (mgmt, system.mgmt_switches, "in-rack management (OOB) switch"),
    )
    for model, per_rack, what in parts:
        if per_rack:
            out.append(
                BomLine(
                    "system-part",
                    model,
                    "",
                    racks * per_rack,
                    0.0,
                    f"{per_rack} per {system.name} rack, in its trays' price",
                    f"{what} of the {system.name}",
                )
            )
    return out


def _rack_power(build: Build, optics_w: Mapping[str, float]) -> list[RackPower]:
    per_rack: dict[str, int] = defaultdict(int)
    for d in build.topology.devices.values():
        if d.rack:
            per_rack[d.rack] += d.power_w
    budget = build.design.spec.racks.power_kw * 1000
    return [RackPower(name, per_rack.get(name, 0), optics_w.get(name, 0.0), budget) for name in build.topology.racks]


def _tco(build: Build, c: Costing) -> tuple[TcoYear, ...]:
    costs = build.design.spec.costs
    kwh = c.power_w / 1000 * costs.load_pct / 100 * costs.pue * HOURS_PER_YEAR
    energy = kwh * costs.energy_usd_per_kwh
    space = len(c.racks) * costs.space_usd_per_rack_month * 12
    support = c.capital_usd * costs.support_pct_per_year / 100
    years = []
    cumulative = 0.0
    for year in range(1, costs.years + 1):
        capital = c.capital_usd if year == 1 else 0.0
        cumulative += capital + energy + space + support
        years.append(TcoYear(year, capital, energy, space, support, cumulative))
    return tuple(years)


def money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.0f}"
