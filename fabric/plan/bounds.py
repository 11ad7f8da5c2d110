"""The least a candidate's cables and optics can cost, from its topology's placement (the rack-distance bound).

`link_usd_at_least` prices one link as costing.py counts it (the cheapest medium that carries its speed and
reaches its length, shared by the links one cable carries; an optical medium with a fibre per link and a
transceiver share at each end). `cabling_usd_at_least` sums it over a built topology's links at the length each
needs from the racks and units the placement gave its two ends (topology/racks.py `route_m`, with the fabric's
slack and service loop, as the allocation lays cables): no cage, twin-port or optics rule of the allocation can
make a link cheaper than that, so a topology's switches, nodes and racks plus this is a lower bound of its
exact cost that skips laying the cables and counting the optics (most of an estimate's time).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter
from operator import attrgetter
from typing import Any

from fabric.allocation.cages import CageKind, CageLookup
from fabric.model.topology import Topology
from fabric.spec.catalog import Catalog
from fabric.spec.loader import Design
from fabric.topology.media import CablingRules
from fabric.topology.racks import route_m


def _cage_links(catalog: Catalog, model: str, speed: int) -> dict[CageKind, int]:
    """The cage kinds (connector, top, ports per cage, as allocation/cages.py gives them) of the model's port
    groups that run `speed`, each with the most links one such cage carries (a switch: its modes' ports per cage
    at that speed; a node: its ports that share a cage)."""
    out: dict[CageKind, int] = {}
    switch = catalog.switches.get(model)
    node = catalog.nodes.get(model)
    if switch is not None:
        for g in switch.ports:
            ports = [m.ports for m in g.modes if m.speed_gbps == speed]
            if ports:
                kind: CageKind = (g.connector, g.top, g.ports_per_cage)
                out[kind] = max(out.get(kind, 1), *ports)
    elif node is not None:
        for n in node.ports.values():
            if n.speed_gbps == speed:
                shared = Counter(p.cage or p.name for p in n.port_list())
                kind = (n.connector, n.top, n.ports_per_cage)
                out[kind] = max(out.get(kind, 1), *shared.values())
    return out


def module_share_usd(catalog: Catalog, model: str, speed: int, kind: str, cage: CageKind | None = None) -> float:
    """The least an optical link end on `model` (in a `cage` of that kind; None: any of its cages that runs the
    speed) pays for its transceiver as the optics count them (one module per used cage, the first that fits the
    cage and carries the medium kind at the speed): the cheapest fitting module over the most links such a cage
    carries. 0 where none fits (optics-missing: the BOM then orders none)."""
    shares = []
    for here, links in _cage_links(catalog, model, speed).items():
        if cage is not None and here != cage:
            continue
        fitting = [
            t.price_usd
            for t in catalog.transceivers.values()
            if t.fits(*here) and kind in t.media_kinds and speed in t.speeds_gbps
        ]
        shares.append(min(fitting, default=0.0) / links)
    return min(shares, default=0.0)


def link_usd_at_least(
    catalog: Catalog,
    technology: str,
    speed: int,
    needed_m: float,
    ends: tuple[str, str],
    cages: tuple[CageKind | None, CageKind | None] = (None, None),
) -> float:
    """The least a link at `speed` of at least `needed_m` between devices of models `ends` (in cages of kinds
    `cages`, where known) can cost as costing.py counts it: over every medium of the technology that carries the
    speed and reaches that far (any medium the cabling can choose), its shortest orderable length, shared by the
    links one cable carries (a twin-port cable's links, a splitter's legs); an optical medium pays a fibre per
    link and each end's `module_share_usd`. 0 when no medium serves: the build then fails (cable-reach), which
    the bound does not judge."""
    return LinkPrices(catalog, technology).least(speed, needed_m, ends, cages)


class LinkPrices:
    """`link_usd_at_least` for many links of one technology: the media per speed and the module shares per end
    found once."""

    def __init__(self, catalog: Catalog, technology: str) -> None:
        self._catalog = catalog
        self._technology = technology
        self._media: dict[int, list[tuple[float, tuple[float, ...], float, float, str | None]]] = {}
        self._shares: dict[tuple[str, int, str, CageKind | None], float] = {}

    def _usable(self, speed: int) -> list[tuple[float, tuple[float, ...], float, float, str | None]]:
        """(reach, lengths, price, price per m, optical kind or None) of each medium that carries the speed; a
        cable's price and price per m shared by the links it carries."""
        found = self._media.get(speed)
        if found is None:
            found = self._media[speed] = []
            for m in self._catalog.media.values():
                if self._technology not in m.technologies or speed not in m.speeds_gbps:
                    continue
                optical = m.kind in ("mmf", "smf")
                # a twin-port cable serves `links` links of a cage pair; a 1:2 splitter (copper or fibre) one cable
                # per split-end cage, its legs to `plugs` far cages (allocation/optics.py counts them so)
                plugs = max((e.plugs for e in m.ends or ()), default=1)
                share = max(1 if optical else m.links, plugs, 1)
                lengths = tuple(m.lengths_m)
                found.append(
                    (m.reach_m, lengths, m.price_usd / share, m.price_per_m_usd / share, m.kind if optical else None)
                )
        return found

    def _share(self, model: str, speed: int, kind: str, cage: CageKind | None) -> float:
        key = (model, speed, kind, cage)
        found = self._shares.get(key)
        if found is None:
            found = self._shares[key] = module_share_usd(self._catalog, model, speed, kind, cage)
        return found

    def least(
        self, speed: int, needed_m: float, ends: tuple[str, str], cages: tuple[CageKind | None, CageKind | None]
    ) -> float:
        best = math.inf
        for reach, lengths, price, per_m, optical in self._usable(speed):
            if reach < needed_m:
                continue
            i = bisect_left(lengths, needed_m - 1e-9)
            if i == len(lengths):
                continue
            usd = price + per_m * lengths[i]
            if optical is not None:
                usd += self._share(ends[0], speed, optical, cages[0]) + self._share(ends[1], speed, optical, cages[1])
            best = min(best, usd)
        return 0.0 if best == math.inf else best


# LinkPrices per catalog and technology, kept across calls (the candidates of a sweep share them): (catalog,
# technology) by identity → the prices, with the links priced so far by (length, speed, ends' models and cages)
_PRICES: dict[tuple[int, str], tuple[Catalog, LinkPrices, dict[tuple[Any, ...], float]]] = {}


def _prices(catalog: Catalog, technology: str) -> tuple[LinkPrices, dict[tuple[Any, ...], float]]:
    hit = _PRICES.get((id(catalog), technology))
    if hit is None or hit[0] is not catalog:
        if len(_PRICES) >= 8:
            _PRICES.clear()
        hit = _PRICES[(id(catalog), technology)] = (catalog, LinkPrices(catalog, technology), {})
    return hit[1], hit[2]


_A, _A_PORT, _B, _B_PORT = attrgetter("a"), attrgetter("a_port"), attrgetter("b"), attrgetter("b_port")
_SPEED, _LENGTH = attrgetter("speed_gbps"), attrgetter("length_m")


class _Kinds(dict[str, int]):
    """A model's port → its cage kind's number; a port the model does not list: the default's."""

    def __init__(self, numbered: dict[str, int], default: int) -> None:
        super().__init__(numbered)
        self.default = default

    def __missing__(self, port: str) -> int:
        return self.default


class _PerDevice(dict[str, Any]):
    """A device's value, made on first ask by `make`."""

    def __init__(self, make: Any) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, name: str) -> Any:
        found = self[name] = self.make(name)
        return found


def cabling_usd_at_least(design: Design, topology: Topology) -> float:
    """Every link of the topology at `link_usd_at_least` for the length its placed ends need (an unplaced end: 0,
    as the allocation then lays no cable). Links are counted by class first (the two ends' racks, units, models
    and cage kinds, the speed), and each class is priced once: a device's place and model are one number, a cage
    kind another, so that a class is a short tuple of numbers, made for all links at once column by column (a
    link's part of the work is a few lookups in C)."""
    catalog, layout, racks, devices = design.catalog, design.spec.racks, topology.racks, topology.devices
    cage_of = CageLookup(catalog, devices)
    places: list[tuple[str | None, int | None, int, str]] = []  # (rack, u, height, model) by number
    place_ids: dict[tuple[str | None, int | None, int, str], int] = {}
    kinds: list[CageKind] = []  # by number
    kind_ids: dict[CageKind, int] = {}
    by_model: dict[int, _Kinds] = {}  # id of a model's port map → its ports' kind numbers

    def kind_id(kind: CageKind) -> int:
        found = kind_ids.get(kind)
        if found is None:
            found = kind_ids[kind] = len(kinds)
            kinds.append(kind)
        return found

    def place_of(name: str) -> int:
        d = devices[name]
        place = (d.rack, d.u, d.height_u, d.model)
        number = place_ids.get(place)
        if number is None:
            number = place_ids[place] = len(places)
            places.append(place)
        return number

    def kinds_of(name: str) -> _Kinds:
        port_map, default = cage_of.ports(name)
        numbered = by_model.get(id(port_map))
        if numbered is None:
            numbered = by_model[id(port_map)] = _Kinds(
                {p: kind_id(k) for p, (_, k) in port_map.items()}, kind_id(default)
            )
        return numbered

    place, kinds_by_device = _PerDevice(place_of), _PerDevice(kinds_of)
    look_up = dict.__getitem__
    total = 0.0
    for key, ft in topology.fabrics.items():
        rules = CablingRules.resolve(design.spec.fabrics[key].cabling, design.spec.cabling)
        prices, priced = _prices(catalog, ft.technology)
        links = ft.links
        a_names, b_names = list(map(_A, links)), list(map(_B, links))
        classes: Counter[tuple[int, int, int, int, int, float | None]] = Counter(
            zip(
                map(place.__getitem__, a_names),
                map(look_up, map(kinds_by_device.__getitem__, a_names), map(_A_PORT, links)),
                map(place.__getitem__, b_names),
                map(look_up, map(kinds_by_device.__getitem__, b_names), map(_B_PORT, links)),
                map(_SPEED, links),
                map(_LENGTH, links),
                strict=True,
            )
        )
        for (pa, ka, pb, kb, speed, length), count in classes.items():
            ra, au, ah, am = places[pa]
            rb, bu, bh, bm = places[pb]
            ak, bk = kinds[ka], kinds[kb]
            if length is not None:
                needed = length
            else:
                a_rack, b_rack = racks.get(ra or ""), racks.get(rb or "")
                if a_rack is None or b_rack is None or not au or not bu:
                    continue
                needed = rules.length_for(route_m(layout, a_rack, au, ah, b_rack, bu, bh, rules.tray_height_m))
            slot = (round(needed, 9), speed, am, ak, bm, bk)
            usd = priced.get(slot)
            if usd is None:
                usd = priced[slot] = prices.least(speed, needed, (am, bm), (ak, bk))
            total += usd * count
    return total
