"""The bill of materials, power per rack and the total cost of ownership, as data.

Counting follows the vendors: one switch per switch; transceivers per used cage at each optical (mmf, smf)
link end, so a twin-port OSFP serving two 400G links is one transceiver, and DAC, AOC and copper cables
have none; one cable per link (`cabling.csv` row) by medium and orderable length; node NIC ports by node
type and port group (in the node's price); nodes; racks and rack PDUs.

Power: devices at their catalog power (switch figures include their own optics) plus node-side
transceivers. Every price and rate is a placeholder the user overrides (catalog part files, `costs:`).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from fabric.fast.memo import per_object as per_build
from fabric.model.topology import Device
from fabric.pipeline import Build
from fabric.spec.catalog import Catalog, NodeType, SwitchModel, Transceiver, port_candidates
from fabric.spec.schema import NodeAttach

CATEGORIES = ("switch", "transceiver", "cable", "nic", "node", "rack", "pdu", "other")
OPTICAL = ("mmf", "smf")
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


@cache
def _switch_cages(model: SwitchModel, platform: str | None) -> dict[str, tuple[int, str]]:
    return {name: (ports[0].cage, ports[0].connector) for name, ports in port_candidates(model, platform).items()}


_Ends = tuple[dict[str, tuple[str, str]], str, bool, str, tuple[str, str | None]]  # cages, default, node, rack, model
_EndKey = tuple[tuple[str, str | None], str, str, int, str]  # model, port, medium kind, speed, fabric
_End = tuple[str, set[tuple[str, str]] | None, float]  # cage, the cages filled (None: no transceiver fits), watts


def _node_cages(node_type: NodeType) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for group in node_type.ports.values():
        for port in group.port_list():
            out[port.name] = (port.cage or port.name, group.connector)
    return out


def _ends(catalog: Catalog, device: Device, memo: dict[tuple[str, str | None], _Ends]) -> _Ends:
    """A device's port → (cage id, connector), with the connector of a port it does not list, whether it is a
    node, and its rack. `memo` keys by model name: hashing a pydantic part per port cost seconds at 600,000 ports."""
    node = device.layer == "node"
    key = (device.model, None if node else device.platform)
    cages = memo.get(key)
    if cages is None:
        if node:
            cages = memo[key] = (_node_cages(catalog.nodes[device.model]), "?", True, "", key)
        else:
            switch = _switch_cages(catalog.switches[device.model], device.platform)
            cages = memo[key] = ({p: (str(c) if c else p, k) for p, (c, k) in switch.items()}, "rj45", False, "", key)
    return cages[0], cages[1], node, device.rack or "", key


def _transceiver(catalog: Catalog, connector: str, kind: str, speed: int) -> tuple[str, Transceiver] | None:
    for key, part in catalog.transceivers.items():
        if part.connector == connector and kind in part.media_kinds and speed in part.speeds_gbps:
            return key, part
    return None


def _end(
    catalog: Catalog,
    here: _Ends,
    key: _EndKey,
    cages: dict[tuple[str, str, str], set[tuple[str, str]]],
    optics: dict[tuple[str, str, int], tuple[str, Transceiver] | None],
) -> _End:
    """A port's cage, the cages its transceiver type fills on its side of the fabric and what one draws; or the
    text naming what no transceiver fits, and None."""
    cages_of, default, node = here[0], here[1], here[2]
    _, port, kind, speed, fabric = key
    cage, connector = cages_of.get(port) or (port, default)
    wanted = (connector, kind, speed)
    if wanted not in optics:
        optics[wanted] = _transceiver(catalog, *wanted)
    found = optics[wanted]
    if found is None:
        return f"{connector} {kind} {speed}G", None, 0.0
    return cage, cages[(fabric, "node side" if node else "switch side", found[0])], found[1].power_w


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

    # Transceivers: distinct cages per (fabric, side, type); cables by medium and length.
    cages: dict[tuple[str, str, str], set[tuple[str, str]]] = defaultdict(set)
    unmatched: set[str] = set()
    optics_w: dict[str, float] = defaultdict(float)
    cables: Counter[tuple[str, str, str, float | None]] = Counter()
    memo: dict[tuple[str, str | None], _Ends] = {}
    ends: dict[str, _Ends] = {}  # per device name: 600,000 link ends at 100k GPUs
    optics: dict[tuple[str, str, int], tuple[str, Transceiver] | None] = {}
    cables.update([(c.link.fabric, c.media or "none", c.part, c.length_m) for c in build.allocation.cables])
    # per end (600,000 at 100k GPUs): its device's cages (by name), then what its model's port gives with this
    # medium, speed and fabric (by model and port): the cage, the set of cages its transceiver type fills on that
    # side and what one draws, or the text of an end no transceiver fits
    resolved: dict[_EndKey, _End] = {}
    for c in build.allocation.cables:
        kind = c.media_kind
        if kind not in OPTICAL:
            continue
        link = c.link
        for name, port in ((link.a, link.a_port), (link.b, link.b_port)):
            here = ends.get(name)
            if here is None:
                here = ends[name] = _ends(catalog, devices[name], memo)
            which, node, rack = here[4], here[2], here[3]
            key = (which, port, kind, link.speed_gbps, link.fabric)
            end = resolved.get(key)
            if end is None:
                end = resolved[key] = _end(catalog, here, key, cages, optics)
            cage, used, watts = end
            if used is None:  # (the cage holds what no transceiver fits)
                unmatched.add(cage)
            elif not node:
                used.add((name, cage))
            elif (name, cage) not in used:
                used.add((name, cage))
                if rack:
                    optics_w[rack] += watts
    for (fabric, side, optic), used in sorted(
        cages.items(), key=lambda kv: (list(topo.fabrics).index(kv[0][0]), kv[0][1], kv[0][2])
    ):
        tr = catalog.transceivers[optic]
        lines.append(BomLine("transceiver", optic, fabric, len(used), tr.price_usd, side, tr.description))
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
