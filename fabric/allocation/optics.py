"""What the allocation's cables need on the floor, counted as vendors ship it: the transceivers at each optical end
(chosen by the cage they plug into: connector, thermal top, ports per cage), the fibres of each optical link (two
for an 800G link between twin-port 2 x 4-lane modules), one twin-port copper cable per pair of cages, and the
optical ends no catalog transceiver fits (a finding: never a silent zero in the BOM).

The costing (fabric/costing.py) and the allocation check `check_optics` read it; it is computed once per
allocation's cables object.
"""

from __future__ import annotations

import math
import weakref
from collections import Counter, defaultdict
from collections.abc import Container, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from fabric.allocation.allocate import Allocation
from fabric.allocation.cages import CageKind, CageLookup, model_key, node_cages, switch_cages
from fabric.fast.columns import IndexRows
from fabric.fast.distinct import keys_twice, keys_under_two
from fabric.fast.frozen import maker
from fabric.fast.memo import registered
from fabric.model.cable import Cable
from fabric.model.topology import Device, Link, Topology
from fabric.spec.catalog import (
    Catalog,
    MediaEnd,
    NodeType,
    SwitchModel,
    SwitchPort,
    Transceiver,
    lanes_of,
    node_lane_gbps,
    port_candidates,
)

OPTICAL = ("mmf", "smf")

_switch_cages, _node_cages = switch_cages, node_cages
_Ends = tuple[dict[str, tuple[str, CageKind]], CageKind, bool, str, tuple[str, str | None]]
_EndKey = tuple[tuple[str, str | None], str, str, int, str]  # model, port, medium kind, speed, fabric
# cage, transceiver, its catalog key, cage kind, the fibres a link at the end's speed takes, and the cages the
# transceiver fills on the end's fabric and side (device → its cages: no tuple kept per end)
_End = tuple[str, "Transceiver | None", "str | None", CageKind, int, "dict[str, set[str]] | None"]
# a physical cable as the counts take it (a row of fabric/fast/columns.py's IndexRows): its links (indices into
# allocation.cables), its fibre number (0: not a fibre of a link) and the link's fibres, and both ends' transceivers
# (catalog keys; None: none)
_Shape = tuple[str, tuple[str, ...], tuple[int, ...], tuple[tuple[int, int], ...], str, str]
_Twice = dict[str, set[str]]  # device → its cages with two plugs


@dataclass(frozen=True)
class Unmatched:
    """Optical link ends no catalog transceiver fits, by the cage they are in."""

    fabric: str
    device_model: str
    cage: CageKind
    kind: str
    speed_gbps: int
    ends: int
    example: str  # "device port"

    @property
    def text(self) -> str:
        connector, top, ports = self.cage
        shape = " ".join(x for x in (connector, top or "", f"{ports}-port" if ports else "") if x)
        return f"{shape} {self.kind} {self.speed_gbps}G"


@dataclass(frozen=True)
class Optics:
    """What the allocation's cables need to order: the cages each transceiver type fills per fabric and side, the
    node-side optics' power per rack, the cables and fibres per medium and length, and the unmatched ends."""

    cages: Mapping[tuple[str, str, str], int]  # (fabric, side, transceiver) → how many cages it fills
    optics_w: Mapping[str, float]  # rack → node-side transceiver power
    cables: Mapping[tuple[str, str, str, float | None], int]  # (fabric, medium, part, length) → cables/fibres
    unmatched: tuple[Unmatched, ...]


def _ends(catalog: Catalog, device: Device, memo: dict[tuple[str, str | None], _Ends]) -> _Ends:
    """A device's port → (cage id, cage kind), the kind of a port it does not list, whether it is a node, and its
    rack. `memo` keys by model name: hashing a pydantic part per port cost seconds at 600,000 ports."""
    node = device.layer == "node"
    key = (device.model, None if node else device.platform)
    cages = memo.get(key)
    if cages is None:
        if node:
            cages = memo[key] = (_node_cages(catalog.nodes[device.model]), ("?", None, None), True, "", key)
        else:
            switch = _switch_cages(catalog.switches[device.model], device.platform)
            by_port = {p: (str(c) if c else p, k) for p, (c, k) in switch.items()}
            cages = memo[key] = (by_port, ("rj45", None, None), False, "", key)
    return cages[0], cages[1], node, device.rack or "", key


def transceiver_for(catalog: Catalog, cage: CageKind, kind: str, speed: int) -> tuple[str, Transceiver] | None:
    """The first catalog transceiver that fits the cage (connector, top, ports per cage) and carries the medium
    kind at the speed; None when none does."""
    connector, top, ports = cage
    for key, part in catalog.transceivers.items():
        if part.fits(connector, top, ports) and kind in part.media_kinds and speed in part.speeds_gbps:
            return key, part
    return None


# by the cables object (what the counts read of an allocation), with the catalog and topology they were made for
# (the topology by a weak reference: the memo keeps no topology alive): an allocation made from cables already laid
# (`allocate`'s `laid`) finds their optics
_MEMO: dict[int, tuple[tuple[Cable, ...], Catalog, weakref.ref[Topology], Optics, IndexRows, _Found]] = registered({})


@dataclass
class _Found:
    """What the optics' pass finds for the checks besides the counts, per class of end rather than per cable end:
    the cages two transceivers fill (None: it cannot tell, `_filled_twice`) and the transceivers in their cages'
    native lane rates at every optical end (`_signals`)."""

    twice: _Twice | None = None
    signals: tuple[_Signal, ...] = ()


def optics(catalog: Catalog, topology: Topology, allocation: Allocation) -> Optics:
    """The optics of an allocation (computed once per allocation object, with its physical sheet)."""
    return _counted(catalog, topology, allocation)[0]


def _sheet(catalog: Catalog, topology: Topology, allocation: Allocation) -> IndexRows:
    """The physical cables as the counts take them, in cabling order (by the first link, then the fibre)."""
    return _counted(catalog, topology, allocation)[1]


def _counted(catalog: Catalog, topology: Topology, allocation: Allocation) -> tuple[Optics, IndexRows, _Found]:
    """The counts, the sheet and what the checks find of it per class of end (`_Found`) of one pass, kept
    per allocation object: the optics check, the cage check and the renderers read them (two passes were 2.9 s of
    a 100k-GPU validate). The sheet is kept as columns (fabric/fast/columns.py: a cable's rows made as they are
    read)."""
    cables = allocation.cables
    hit = _MEMO.get(id(cables))
    if hit is not None and hit[0] is cables and hit[1] is catalog and hit[2]() is topology:
        return hit[3], hit[4], hit[5]
    sheet = IndexRows()
    found = _Found()
    result = _optics(catalog, topology, allocation, sheet, found)
    if len(_MEMO) >= 4:
        _MEMO.clear()
    _MEMO[id(cables)] = (cables, catalog, weakref.ref(topology), result, sheet, found)
    return result, sheet, found


def _optics(
    catalog: Catalog,
    topology: Topology,
    allocation: Allocation,
    sheet: IndexRows | None = None,
    found: _Found | None = None,
) -> Optics:
    """The counts; with `sheet`, also the physical cables, given to it as the counts take them, cable by cable (so
    that the cabling sheet and the BOM cannot disagree); with `found`, what the checks read of it per class of end
    put in it."""
    devices = topology.devices
    # every cable is fibre with a transceiver at each end, and none is a splitter: the cage check's plugs are then
    # the transceivers the cages are filled with (`_filled_twice`)
    transceivers_only = True
    first_of: dict[tuple[str, str | None], Device] = {}  # a device of each model (as `memo` keys them)
    cages: dict[tuple[str, str, str], dict[str, set[str]]] = defaultdict(dict)
    optics_w: dict[str, float] = defaultdict(float)
    missing: Counter[tuple[str, str, CageKind, str, int]] = Counter()  # (fabric, model, cage, medium, speed) → ends
    example: dict[tuple[str, str, CageKind, str, int], str] = {}
    memo: dict[tuple[str, str | None], _Ends] = {}
    ends: dict[str, _Ends] = {}  # per device name: 600,000 link ends at 100k GPUs
    fits: dict[tuple[CageKind, str, int], tuple[str, Transceiver] | None] = {}
    resolved: dict[_EndKey, _End] = {}
    cables: Counter[tuple[str, str, str, float | None]] = Counter()
    pairs: dict[tuple[str, str, str, float | None, frozenset[tuple[str, str]]], list[int]] = defaultdict(list)
    # 1:2 splitter fibres (a medium with a split end): the links leaving one twin-port cage on one such medium,
    # `plugs` to a cable in link order (a cage's sub-ports in order: 1+2 on one MPO, 3+4 on the other), each cable
    # as long as its longest leg needs (its part and length)
    splits: dict[tuple[str, str, tuple[str, str]], list[tuple[int, str | None, str | None]]] = defaultdict(list)

    def end(name: str, port: str, kind: str, speed: int, fabric: str) -> tuple[_Ends, _End]:
        here = ends.get(name) or device_ends(name)
        key = (here[4], port, kind, speed, fabric)
        return here, resolved.get(key) or resolve(here, key)

    def device_ends(name: str) -> _Ends:
        device = devices[name]
        here = ends[name] = _ends(catalog, device, memo)
        first_of.setdefault(here[4], device)
        return here

    def resolve(here: _Ends, key: _EndKey) -> _End:
        _, port, kind, speed, fabric = key
        found = resolved.get(key)
        if found is None:
            cage, cage_kind = here[0].get(port) or (port, here[1])
            part = None
            if kind in OPTICAL:
                wanted = (cage_kind, kind, speed)
                if wanted not in fits:
                    fits[wanted] = transceiver_for(catalog, *wanted)
                part = fits[wanted]
            if part is None:
                found = (cage, None, None, cage_kind, 1, None)
            else:
                filled = cages[(fabric, "node side" if here[2] else "switch side", part[0])]
                found = (cage, part[1], part[0], cage_kind, part[1].fibres(speed), filled)
            resolved[key] = found
        return found

    for i, c in enumerate(allocation.cables):
        kind, link = c.media_kind, c.link
        medium = catalog.media.get(c.media) if c.media else None
        row = (link.fabric, c.media or "none", c.part, c.length_m)
        if kind not in OPTICAL:
            transceivers_only = False
            if medium is not None and medium.ends is not None and max(e.plugs for e in medium.ends) > 1:
                # splitter copper (MCP7Y00/MCA7J60): one cable per split-end cage, its legs to the far cages
                for name, port in ((link.a, link.a_port), (link.b, link.b_port)):
                    cage, _, _, cage_kind, _, _ = end(name, port, kind, link.speed_gbps, link.fabric)[1]
                    if _split_end(medium.ends, cage_kind):
                        splits[(link.fabric, c.media, (name, cage))].append((i, None, None))
                        if sheet is not None:
                            sheet.spanned()
                        break
                else:
                    cables[row] += 1
                    if sheet is not None:
                        sheet.plain()
                continue
            if medium is not None and medium.links > 1:  # twin-port copper: one cable per cage pair
                a = end(link.a, link.a_port, kind, link.speed_gbps, link.fabric)[1][0]
                b = end(link.b, link.b_port, kind, link.speed_gbps, link.fabric)[1][0]
                pairs[(*row, frozenset(((link.a, a), (link.b, b))))].append(i)
                if sheet is not None:
                    sheet.spanned()
            else:
                cables[row] += 1
                if sheet is not None:
                    sheet.plain()
            continue
        fibres = 1
        optics_at: list[str | None] = [None, None]
        split_at: tuple[str, str] | None = None
        split_ends = medium.ends if medium is not None else None
        speed, fabric = link.speed_gbps, link.fabric
        for side, name, port in ((0, link.a, link.a_port), (1, link.b, link.b_port)):
            # (the end's lookups inline: 6,000,000 ends at a million GPUs)
            here = ends.get(name) or device_ends(name)
            key = (here[4], port, kind, speed, fabric)
            cage, part, optic, cage_kind, takes, filled = resolved.get(key) or resolve(here, key)
            optics_at[side] = optic
            if split_ends is not None and _split_end(split_ends, cage_kind):
                split_at = (name, cage)
            if part is None or filled is None:
                transceivers_only = False
                what = (link.fabric, here[4][0], cage_kind, kind, link.speed_gbps)
                missing[what] += 1
                example.setdefault(what, f"{name} {port}")
                continue
            if takes > fibres:
                fibres = takes
            used = filled.get(name)
            if used is None:
                used = filled[name] = set()
            if cage not in used:
                used.add(cage)
                if here[2] and here[3]:  # a node's transceiver in a rack: its power
                    optics_w[here[3]] += part.power_w
        if split_at is not None and medium is not None:
            transceivers_only = False
            splits[(link.fabric, c.media, split_at)].append((i, optics_at[0], optics_at[1]))
            if sheet is not None:
                sheet.spanned()
            continue
        cables[row] += fibres
        if sheet is not None:
            sheet.numbered(fibres, optics_at[0], optics_at[1])
    for (fabric, media, _), legs in splits.items():
        per_cable = max(e.plugs for e in catalog.media[media].ends or ())
        for k in range(0, len(legs), per_cable):
            chunk = legs[k : k + per_cable]
            longest = longest_leg(allocation.cables[i] for i, _, _ in chunk)
            cables[(fabric, media, longest.part, longest.length_m)] += 1
            if sheet is not None:
                sheet.span((tuple(i for i, _, _ in chunk), 0, 1, chunk[0][1], chunk[0][2]))
    for (fabric, media, part_no, length, _), links in pairs.items():
        per_cable = catalog.media[media].links
        cables[(fabric, media, part_no, length)] += math.ceil(len(links) / per_cable)
        if sheet is not None:
            for k in range(0, len(links), per_cable):
                sheet.span((tuple(links[k : k + per_cable]), 0, 1, None, None))
    if found is not None:
        found.twice = _filled_twice(catalog, cages, memo, first_of) if transceivers_only else None
        found.signals = _signals(catalog, resolved, first_of)
    return Optics(
        {k: sum(len(filled) for filled in v.values()) for k, v in cages.items()},
        dict(optics_w),
        dict(cables),
        tuple(
            Unmatched(*what, count, example[what])
            for what, count in sorted(missing.items(), key=lambda kv: (*kv[0][:2], *kv[0][3:], str(kv[0][2])))
        ),
    )


def _signals(
    catalog: Catalog, resolved: Mapping[_EndKey, _End], first_of: Mapping[tuple[str, str | None], Device]
) -> tuple[_Signal, ...]:
    """The distinct transceivers, with their cages' native lane rates, of the optical ends the pass resolved (per
    model, port, medium kind, speed and fabric), as the signalling check takes them (`unlinkable`'s `shape`: none
    where the part declares no lane rates or the port no native one)."""
    rates: dict[tuple[str, str | None], dict[str, tuple[str, int]]] = {}
    out: dict[tuple[str, int], _Signal] = {}
    for (model, port, kind, _, _), (_, part, optic, _, _, _) in resolved.items():
        if kind not in OPTICAL or part is None or optic is None or not part.lane_gbps:
            continue
        if model not in rates:
            rates[model] = port_lane_rates(catalog, first_of[model])
        native = rates[model].get(port)
        if native is not None and native[1]:
            out.setdefault((optic, native[1]), (optic, part, native[1]))
    return tuple(out.values())


def _filled_twice(
    catalog: Catalog,
    cages: Mapping[tuple[str, str, str], Mapping[str, set[str]]],
    memo: Mapping[tuple[str, str | None], _Ends],
    first_of: Mapping[tuple[str, str | None], Device],
) -> _Twice | None:
    """Per device, the cages that two transceivers fill, from the optics' cages filled per (fabric, side,
    transceiver): the cages with two plugs when every cable is fibre with a transceiver at each end (the cage
    check's plugs are then the ends' transceivers) and the optics name each port's cage as the sheet's ends do
    (`_port_cages`; else None: the check walks the ends). A pass over devices, not over the 6,000,000 cable ends of
    a million GPUs."""
    for key, (by_port, *_) in memo.items():
        if {port: cage for port, (cage, _) in by_port.items()} != _port_cages(catalog, first_of[key]):
            return None
    return keys_under_two((optic, per_device) for (_, _, optic), per_device in cages.items())


def longest_leg(links: Iterable[Cable]) -> Cable:
    """The link whose part and length a physical cable carrying `links` takes: the longest (a splitter's legs are
    one length; a twin-port cable's links already share one)."""
    return max(links, key=lambda c: (c.length_m or 0.0, c.part))


def _split_end(ends: tuple[MediaEnd, MediaEnd], cage: CageKind) -> bool:
    """Whether `cage` takes the split end of a 1:2 splitter (the end opposite the one with several plugs)."""
    one, many = (ends[0], ends[1]) if ends[1].plugs > 1 else (ends[1], ends[0])
    return many.plugs > 1 and one.fits(*cage) and not many.fits(*cage)


# --------------------------------------------------------------------------------------------- the physical sheet


@dataclass(frozen=True, slots=True)
class CableEnd:
    """One end of a physical cable at one cage: the faceplate cage, the ports of the cage it carries and their
    electrical lanes, and the transceiver in the cage (none for DAC, ACC, AOC and copper)."""

    device: str
    rack: str
    u: int | None
    cage: str  # a switch's faceplate cage number ("12"); a node's cage ("OSFP4"); else the port's own name
    ports: tuple[str, ...]  # the logical ports (interface names) it carries
    subs: tuple[int, ...]  # their places in the cage, 1-based (() where the catalog gives no cage)
    lanes: tuple[tuple[int, int], ...]  # their electrical lanes in the cage, first and last, 1-based (() unknown)
    transceiver: str  # catalog key ("" for none)
    transceiver_part: str


@dataclass(frozen=True, slots=True)
class PhysicalCable:
    """One cable to pull (or one fibre of a link that needs several): the logical links it carries and its ends,
    each end one per cage (a splitter would have several far ends). The BOM counts exactly these."""

    physical_id: str  # the first link's cable_id, with `-F<n>` for fibre n of a link on several fibres
    links: tuple[Cable, ...]
    fibre: int  # 0: the link's only cable; else which of `fibres`
    fibres: int
    a: tuple[CableEnd, ...]
    b: tuple[CableEnd, ...]


# the sheet makes one of each per cable end and per cable (9,000,000 at a million GPUs): fast/frozen.py
_make_end = maker(CableEnd)
_make_physical = maker(PhysicalCable)


def _node_subs(node_type: NodeType) -> dict[str, int]:
    """A node's port → its place in its cage: ports sharing a cage in name order (OSFP4P1 before OSFP4P2)."""
    by_cage: dict[str, list[str]] = defaultdict(list)
    for group in node_type.ports.values():
        for port in group.port_list():
            if port.cage:
                by_cage[port.cage].append(port.name)
    return {name: k for names in by_cage.values() for k, name in enumerate(sorted(names), 1)}


def _node_port_lanes(node_type: NodeType) -> dict[str, int]:
    """A node's port → the electrical lanes of its place in its cage: the connector's lanes shared by the ports of
    a cage, four for a single-port OSFP adapter cage (as `node_lane_gbps` takes them); none for a single-lane
    cage (RJ45, SFP), whose lane the sheet does not show."""
    out: dict[str, int] = {}
    for group in node_type.ports.values():
        lanes = lanes_of(group.connector)
        if lanes <= 1:
            continue
        per_cage = group.ports_per_cage or 1
        per_port = 4 if group.connector.lower().startswith("osfp") and per_cage == 1 else max(1, lanes // per_cage)
        for port in group.port_list():
            out[port.name] = per_port
    return out


def _switch_port(model: SwitchModel, platform: str | None, port: str, speed: int) -> SwitchPort | None:
    found = port_candidates(model, platform).get(port)
    if not found:
        return None
    return next((p for p in found if p.speed_gbps == speed), found[0])


# kept by a render worker short of memory (fast/memo.py): four outputs read the sheet, 17 s of CPU at a million GPUs
_SHEETS: dict[int, tuple[Allocation, tuple[PhysicalCable, ...]]] = registered({}, keep=True)
# an end of a physical cable before it is an object: device, rack, U and its shape (cage, ports, places, lanes,
# transceiver key, part)
_EndRow = tuple[str, str, "int | None", _Shape]


def physical_cables(catalog: Catalog, topology: Topology, allocation: Allocation) -> tuple[PhysicalCable, ...]:
    """Every physical cable of the allocation, in cabling order (by the first link it carries), one per fibre of
    a link on several fibres and one per twin-port cable carrying several links: the rows of
    cabling-physical.csv, which the BOM's cable lines count (the same pass makes both)."""
    hit = _SHEETS.get(id(allocation))
    if hit is not None and hit[0] is allocation:
        return hit[1]
    cables = allocation.cables
    out: list[PhysicalCable] = []
    for indices, fibre, fibres, a, b in _sheet_rows(catalog, topology, allocation):
        links = tuple(cables[i] for i in indices)
        pid = links[0].cable_id + (f"-F{fibre}" if fibres > 1 else "")
        out.append(
            _make_physical(
                pid,
                links,
                fibre,
                fibres,
                tuple([_make_end(name, rack, u, *shape) for name, rack, u, shape in a]),
                tuple([_make_end(name, rack, u, *shape) for name, rack, u, shape in b]),
            )
        )
    result = tuple(out)
    if len(_SHEETS) >= 4:
        _SHEETS.clear()
    _SHEETS[id(allocation)] = (allocation, result)
    return result


def _sheet_rows(
    catalog: Catalog, topology: Topology, allocation: Allocation
) -> Iterator[tuple[tuple[int, ...], int, int, tuple[_EndRow, ...], tuple[_EndRow, ...]]]:
    """The physical sheet in cabling order, its ends as tuples (`physical_cables` makes them objects; the cage
    check reads them as they are: 1.2 million objects at 100k GPUs it does not need)."""
    cables, devices = allocation.cables, topology.devices
    subs: dict[str, dict[str, int]] = {}
    node_cages: dict[str, dict[str, tuple[str, CageKind]]] = {}
    # (model, platform, ports with speeds and lanes in use, transceiver) → the end's cage, places, lanes,
    # transceiver and part: a few hundred distinct at 100k GPUs
    shapes: dict[tuple[str, str | None, tuple[tuple[str, int, int], ...], str | None], _Shape] = {}
    kinds: dict[str, tuple[str, str | None, bool]] = {}  # device → model, platform, whether a node
    rates: dict[tuple[str, str | None], dict[str, tuple[str, int]]] = {}  # model → port → (cage, lane rate)
    rates_of: dict[str, dict[str, tuple[str, int]]] = {}  # per device name

    def shape(
        model: str, platform: str | None, node: bool, ports: tuple[tuple[str, int, int], ...], optic: str | None
    ) -> _Shape:
        key = (model, platform, ports, optic)
        found = shapes.get(key)
        if found is not None:
            return found
        cage = ""
        places: list[int] = []
        lanes: list[tuple[int, int]] = []
        if node:
            if model not in subs:
                subs[model] = _node_subs(catalog.nodes[model])
                node_cages[model] = _node_cages(catalog.nodes[model])
                node_lanes[model] = _node_port_lanes(catalog.nodes[model])
            for port, _, used in ports:
                cage = node_cages[model].get(port, (port, None))[0]
                place = subs[model].get(port, 1)  # a port with no cage of its own is its cage's only one
                places.append(place)
                per_port = node_lanes[model].get(port, 0)
                if per_port:
                    first = (place - 1) * per_port + 1
                    lanes.append((first, first + min(per_port, used or per_port) - 1))
        else:
            for port, speed, used in ports:
                p = _switch_port(catalog.switches[model], platform, port, speed)
                if p is None:  # the management port
                    cage = port
                    continue
                cage = str(p.cage)
                places.append(p.sub)
                first = (p.sub - 1) * p.lanes + 1
                lanes.append((first, first + min(p.lanes, used or p.lanes) - 1))
        part = catalog.transceivers[optic].part if optic else ""
        found = shapes[key] = (cage, tuple(p[0] for p in ports), tuple(places), tuple(lanes), optic or "", part)
        return found

    node_lanes: dict[str, dict[str, int]] = {}

    def kind(name: str) -> tuple[str, str | None, bool]:
        found = kinds.get(name)
        if found is None:
            d = devices[name]
            node = d.layer == "node"
            found = kinds[name] = (d.model, None if node else d.platform, node)
        return found

    def rate(name: str, port: str) -> int:
        """The native lane rate of a device's port (0: the catalog does not list the port)."""
        by_port = rates_of.get(name)
        if by_port is None:
            d = devices[name]
            key = model_key(d)
            by_port = rates.get(key)
            if by_port is None:
                by_port = rates[key] = port_lane_rates(catalog, d)
            rates_of[name] = by_port
        found = by_port.get(port)
        return found[1] if found else 0

    def used(link: Link) -> int:
        """The electrical lanes a link runs on at each end: its speed over its lane rate, the slower of its ends'
        (a ConnectX-7 at NDR200 runs 2 of its cage's 4 lanes; a twin-port module's 400G port on a 1:2 splitter
        fibre runs its first two lanes to one leg: 'activating only 2-channels', MMS4X00-NS overview); 0 where a
        port's rate is unknown (then the port's own lanes)."""
        a, b = rate(link.a, link.a_port), rate(link.b, link.b_port)
        slower = a if a < b else b
        return link.speed_gbps // slower if slower else 0

    def side(links: tuple[Cable, ...], b: bool, optic: str | None) -> tuple[_EndRow, ...]:
        if len(links) == 1:  # most cables: one end a side
            c = links[0]
            link = c.link
            if b:
                name, port, rack, u = link.b, link.b_port, c.b_rack, c.b_u
            else:
                name, port, rack, u = link.a, link.a_port, c.a_rack, c.a_u
            return ((name, rack, u, shape(*kind(name), ((port, link.speed_gbps, used(link)),), optic)),)
        per_device: dict[str, tuple[str, int | None, list[tuple[str, int, int]]]] = {}
        for c in links:
            link = c.link
            name, port = (link.b, link.b_port) if b else (link.a, link.a_port)
            here = per_device.get(name)
            if here is None:
                here = per_device[name] = (c.b_rack, c.b_u, []) if b else (c.a_rack, c.a_u, [])
            here[2].append((port, link.speed_gbps, used(link)))
        return tuple(
            (name, rack, u, shape(*kind(name), tuple(ports), optic)) for name, (rack, u, ports) in per_device.items()
        )

    for indices, fibre, fibres, a_optic, b_optic in _sheet(catalog, topology, allocation):
        links = tuple(cables[i] for i in indices)
        yield indices, fibre, fibres, side(links, False, a_optic), side(links, True, b_optic)


# --------------------------------------------------------------------------------------------- mixed-mode cages
#
# A cage runs one signalling: its electrical lanes all at one rate. NVIDIA LinkX: "HDR transceivers based on
# 50G-PAM4 cannot be directly linked to 100G-PAM4 NDR transceivers as the modulation speeds are different and the
# 400GbE/NDR transceivers cannot downshift"; the only NDR/400GbE-to-HDR/200GbE media are the twin-port OSFP to
# 2 x QSFP56 2 x 200G splitter AOCs, whose OSFP end runs the whole cage at 50G-PAM4
# (https://docs.nvidia.com/networking/display/400g100gpam4ovpub/linkx-100g-pam4-product-line-overview ;
# MFA7U10-H00X "400Gb/s OSFP to 2x200Gb/s QSFP56 HDR Active Optical Splitter Cable",
# https://docs.nvidia.com/networking/display/MFA7U10H00X10/Pin+Description). A port's signalling is its lane rate:
# its native speed over its electrical lanes (a node port: its group's speed over the connector's lanes shared by
# the ports of a cage; a switch port: its mode's speed over its lanes, the fastest mode its name has). A link runs
# at the slower of its ends' rates (the faster end's cage goes down to it on a splitter cable, never the reverse),
# and the links in one cage must share one rate.


@dataclass(frozen=True)
class MixedCage:
    """A cage whose links need different lane rates (`ports`: port, its link's lane rate in Gb/s, far end)."""

    fabric: str
    device: str
    cage: str
    ports: tuple[tuple[str, int, str], ...]


def port_lane_rates(catalog: Catalog, device: Device) -> dict[str, tuple[str, int]]:
    """A device's port → (its cage, its native lane rate in Gb/s)."""
    if device.layer == "node":
        out: dict[str, tuple[str, int]] = {}
        for group in catalog.nodes[device.model].ports.values():
            rate = node_lane_gbps(group)
            for port in group.port_list():
                out[port.name] = (port.cage or port.name, rate)
        return out
    model = catalog.switches[device.model]
    return {
        name: (str(ports[0].cage), max(p.speed_gbps // max(1, p.lanes) for p in ports))
        for name, ports in port_candidates(model, device.platform).items()
    }


def mixed_cages(catalog: Catalog, topology: Topology) -> tuple[MixedCage, ...]:
    """The cages (of switches and nodes) whose links need different lane rates: a mixed-mode cage."""
    memo: dict[tuple[str, str | None], dict[str, tuple[str, int]]] = {}
    by_device: dict[str, dict[str, tuple[str, int]]] = {}
    devices = topology.devices

    def rates_of(name: str) -> dict[str, tuple[str, int]]:
        device = devices[name]
        key = model_key(device)
        rates = memo.get(key)
        if rates is None:
            rates = memo[key] = port_lane_rates(catalog, device)
        by_device[name] = rates
        return rates

    found: list[MixedCage] = []
    for fabric, ft in topology.fabrics.items():
        rates: set[int] = set()
        for link in ft.links:
            a = (by_device.get(link.a) or rates_of(link.a)).get(link.a_port)
            b = (by_device.get(link.b) or rates_of(link.b)).get(link.b_port)
            if a is not None and b is not None:
                rates.add(a[1] if a[1] < b[1] else b[1])
        if len(rates) <= 1:
            continue  # every link at one lane rate: no cage can mix them (most fabrics; 6,000,000 ends at 1M GPUs)
        cages: dict[tuple[str, str], dict[str, tuple[int, str]]] = defaultdict(dict)
        for link in ft.links:
            a = by_device[link.a].get(link.a_port)
            b = by_device[link.b].get(link.b_port)
            if a is None or b is None:
                continue  # a port the catalog does not list: the topology's checks report it
            rate = min(a[1], b[1])
            cages[(link.a, a[0])][link.a_port] = (rate, link.b)
            cages[(link.b, b[0])][link.b_port] = (rate, link.a)
        mixed = [key for key, ports in cages.items() if len(ports) > 1 and len({r for r, _ in ports.values()}) > 1]
        for name, cage in sorted(mixed):
            shown = tuple((port, rate, far) for port, (rate, far) in sorted(cages[(name, cage)].items()))
            found.append(MixedCage(fabric, name, cage, shown))
    return tuple(found)


# --------------------------------------------------------------------------------------------- one plug per cage
#
# A cage takes one plug: one transceiver (a twin-port module serves both ports of its cage, a fibre each) or one
# cable's plug (a twin-port DAC/ACC carries both ports of its cage to one far cage). NVIDIA LinkX: the switches'
# twin-port OSFP cages take "Twin port, 2x400G OSFP plugs for transceivers, copper DACs and ACCs"
# (https://docs.nvidia.com/networking/display/800GMMA4Z00NS/Overview). And a cable's plugs fit their cages: the
# catalog's media `ends` (connector, top, ports per cage), e.g. the OSFP-to-OSFP twin-port DAC has "both ends being
# finned-top connectors" (https://docs.nvidia.com/networking/display/mcp4y10nxxx2x400pub/overview), so it does not
# go into a ConnectX-7 single-port flat-top cage.


@dataclass(frozen=True)
class CagePlugs:
    """A cage the sheet gives more than one plug: what is plugged (transceiver keys, or `medium cable-id`)."""

    fabric: str
    device: str
    cage: str
    plugs: tuple[str, ...]


@dataclass(frozen=True)
class Misfit:
    """Cable ends whose plug does not fit their cage, per fabric, medium and cage kind."""

    fabric: str
    media: str
    cage: CageKind
    ends: int
    example: str  # "device port"


def cage_plugs(catalog: Catalog, topology: Topology, allocation: Allocation) -> tuple[CagePlugs, ...]:
    """The cages holding more than one plug on the physical sheet, in sheet order, with their plugs in the order
    the sheet plugs them. Which cages have two plugs: from the optics' cages filled per transceiver where every
    cable is fibre with transceivers (`_filled_twice`), else a walk of the sheet's ends (`keys_twice`, no key kept
    per end); then a walk that gathers those cages' plugs (a few at most in a sound design)."""
    known = _counted(catalog, topology, allocation)[2].twice  # from the optics' pass, where it tells
    twice: Mapping[str, Container[Hashable]] = (
        known if known is not None else keys_twice(_end_plugs(catalog, topology, allocation))
    )
    if not twice:
        return ()
    plugs: dict[tuple[str, str], dict[str, None]] = {}
    fabric: dict[tuple[str, str], str] = {}
    for name, cage, plug, fabric_key in _end_plugs(catalog, topology, allocation, twice):
        cages = twice.get(name)
        if cages is None or cage not in cages:
            continue
        key = (name, cage)
        plugs.setdefault(key, {})[plug] = None
        fabric.setdefault(key, fabric_key)
    return tuple(CagePlugs(fabric[k], *k, tuple(v)) for k, v in plugs.items() if len(v) > 1)


def _port_cages(catalog: Catalog, device: Device) -> dict[str, str | None]:
    """A device's port → the cage the sheet's end of it names (`_sheet_rows`'s shapes; a port it does not list is
    its own cage; None: the cage depends on the link's speed, the port's mode)."""
    if device.layer == "node":
        return {port: cage for port, (cage, _) in _node_cages(catalog.nodes[device.model]).items()}
    out: dict[str, str | None] = {}
    for name, found in port_candidates(catalog.switches[device.model], device.platform).items():
        if found:
            cages = {str(p.cage) for p in found}
            out[name] = cages.pop() if len(cages) == 1 else None
    return out


def _end_plugs(
    catalog: Catalog, topology: Topology, allocation: Allocation, only: Container[str] | None = None
) -> Iterator[tuple[str, str, str, str]]:
    """(device, cage, plug, fabric) of every end of the physical sheet, in sheet order, its cage as the sheet's
    end names it (`_sheet_rows`: the cage of its device's last port in the cable), each cable once (a link's
    further fibres plug into the same cages with the same transceivers); no end of a cable no medium carries
    (cable-reach reports it). The plug is the end's transceiver, else the medium without one, else the cable.
    With `only`, a one-link cable whose ends are both on other devices is passed over."""
    cables, devices = allocation.cables, topology.devices
    by_model: dict[tuple[str, str | None], dict[str, str | None]] = {}
    by_name: dict[str, dict[str, str | None]] = {}  # device → port → cage (None: `cage` says)

    def ports_of(name: str) -> dict[str, str | None]:
        d = devices[name]
        key = model_key(d)
        ports = by_model.get(key)
        if ports is None:
            ports = by_model[key] = _port_cages(catalog, d)
        by_name[name] = ports
        return ports

    def cage(name: str, port: str, speed: int) -> str:
        found = (by_name.get(name) or ports_of(name)).get(port, port)
        if found is None:  # the port's modes sit in different cages: the one of this speed
            d = devices[name]
            mode = _switch_port(catalog.switches[d.model], d.platform, port, speed)
            return str(mode.cage) if mode is not None else port
        return found

    for indices, fibre, _, a_optic, b_optic in _sheet(catalog, topology, allocation):
        if fibre > 1:
            continue
        first = cables[indices[0]]
        if not first.media:
            continue
        if only is not None and len(indices) == 1 and first.link.a not in only and first.link.b not in only:
            continue
        bare = ""  # the plug of an end without a transceiver
        if a_optic is None or b_optic is None:
            bare = (
                f"{first.media} (no transceiver)" if first.media_kind in OPTICAL else f"{first.media} {first.cable_id}"
            )
        if len(indices) == 1:  # most cables (the cage looked up here, not called for: 6,000,000 ends at 1M GPUs)
            link = first.link
            a, b = link.a, link.b
            a_cage = (by_name.get(a) or ports_of(a)).get(link.a_port, link.a_port)
            b_cage = (by_name.get(b) or ports_of(b)).get(link.b_port, link.b_port)
            if a_cage is None:
                a_cage = cage(a, link.a_port, link.speed_gbps)
            if b_cage is None:
                b_cage = cage(b, link.b_port, link.speed_gbps)
            yield a, a_cage, a_optic or bare, link.fabric
            yield b, b_cage, b_optic or bare, link.fabric
            continue
        for b_side, optic in ((False, a_optic), (True, b_optic)):
            last: dict[str, tuple[str, int]] = {}  # device → its last port in the cable (the shape's cage)
            for i in indices:
                link = cables[i].link
                name, port = (link.b, link.b_port) if b_side else (link.a, link.a_port)
                last[name] = (port, link.speed_gbps)
            for name, (port, speed) in last.items():
                yield name, cage(name, port, speed), optic or bare, first.link.fabric


def misfits(catalog: Catalog, topology: Topology, allocation: Allocation) -> tuple[Misfit, ...]:
    """The cable ends (DAC, ACC, AOC, copper) whose medium's plug does not fit the cage the port sits in."""
    cage_of = CageLookup(catalog, topology.devices)
    found: Counter[tuple[str, str, CageKind]] = Counter()
    example: dict[tuple[str, str, CageKind], str] = {}
    for c in allocation.cables:
        medium = catalog.media.get(c.media) if c.media else None
        if medium is None or medium.ends is None:
            continue
        link = c.link
        a, b = cage_of(link.a, link.a_port)[1], cage_of(link.b, link.b_port)[1]
        if medium.fits(a, b):
            continue
        # the end that fits neither plug, else (each fits, but not both together) the b end
        bad = [
            (n, p, k) for n, p, k in ((link.a, link.a_port, a), (link.b, link.b_port, b)) if not medium.fits(k, None)
        ]
        for name, port, kind in bad or [(link.b, link.b_port, b)]:
            key = (link.fabric, c.media, kind)
            found[key] += 1
            example.setdefault(key, f"{name} {port}")
    return tuple(Misfit(*k, n, example[k]) for k, n in sorted(found.items(), key=lambda kv: str(kv[0])))


# --------------------------------------------------------------------------------------------- optical signalling
#
# An optical link comes up only where both transceivers run one lane rate on the fibre (catalog transceivers
# `lane_gbps`). A transceiver without a gearbox runs that rate on its cage's lanes too, so the rate must not exceed
# the cage's native one (`port_lane_rates`: a node port's `node_lane_gbps`, a switch port's fastest mode's speed over
# its lanes): a faster cage goes down to it (an XDR Q3400 cage with an NDR module; the slower end's rate where the
# modules run both), a slower one cannot go up. A gearbox module (a 100G DR1 QSFP28: 4 x 25G NRZ to the cage,
# `host_lane_gbps`, one 100G-PAM4 lambda on the fibre, `lane_gbps`) needs its cage's native rate on the host side and
# runs its optical rate whatever its cage's: `lane_gbps` is the optical side, the one two modules share. The link
# runs the fastest rate that holds. NVIDIA LinkX: "HDR transceivers based on 50G-PAM4 cannot be directly linked to
# 100G-PAM4 NDR transceivers as the modulation speeds are different and the 400GbE/NDR transceivers cannot
# downshift" (https://docs.nvidia.com/networking/display/400g100gpam4ovpub/linkx-100g-pam4-product-line-overview);
# a QSFP28 100G SR4 (4 x 25G NRZ) no more links to a 2 x 400G SR4 twin-port module (100G-PAM4 only, MMA4Z00-NS
# overview). Transceivers that declare no `lane_gbps` (a user's part file) are not checked.


def _runs(optic: Transceiver, native: int, rates: set[int]) -> set[int]:
    """Of `rates`, the optical lane rates a transceiver runs in a cage of native lane rate `native`."""
    if optic.host_lane_gbps:
        return rates if native in optic.host_lane_gbps else set()
    return {r for r in rates if r <= native}


def link_rate(a: Transceiver, a_native: int, b: Transceiver, b_native: int) -> int:
    """The lane rate (Gb/s) two transceivers, in cages of native lane rates `a_native` and `b_native`, run on the
    fibre between them: the fastest both run that neither cage exceeds; 0 where none (the link does not come up)."""
    rates = _runs(b, b_native, _runs(a, a_native, set(a.lane_gbps) & set(b.lane_gbps)))
    return max(rates, default=0)


def signalling_meets(a: Transceiver, a_native: int, b: Transceiver, b_native: int) -> bool:
    """Whether two transceivers in cages of these native lane rates link (`link_rate`)."""
    return link_rate(a, a_native, b, b_native) > 0


# a transceiver in a cage: its catalog key, the part, the cage's native lane rate
_Signal = tuple[str, Transceiver, int]


@dataclass(frozen=True)
class SignallingEnd:
    """One end of an optical link as the signalling check sees it."""

    device: str
    port: str
    cage: str
    transceiver: str  # catalog key
    part: str
    native: int  # the cage's native lane rate, Gb/s a lane
    host: tuple[int, ...]  # the transceiver's electrical lane rates
    optical: tuple[int, ...]  # its optical lane rates


@dataclass(frozen=True)
class Unlinkable:
    """Optical links whose two transceivers run no common lane rate, per fabric and pair of ends' shapes: how many,
    the first such link's two ends, and the first few links."""

    fabric: str
    links: int
    a: SignallingEnd
    b: SignallingEnd
    examples: tuple[str, ...]  # "device port - device port", the first few

    @property
    def why(self) -> str:
        ends = (self.a, self.b)
        why = [
            f"{e.part or e.transceiver} runs {_rates(e.host)}G electrical lanes, its cage {e.native}G"
            for e in ends
            if e.host != e.optical and e.native not in e.host
        ]
        common = set(self.a.optical) & set(self.b.optical)
        if not why and not common:
            why.append(
                f"{self.a.part or self.a.transceiver} runs {_rates(self.a.optical)}G lanes on the fibre, "
                f"{self.b.part or self.b.transceiver} {_rates(self.b.optical)}G"
            )
        elif not why:
            why = [
                f"{e.part or e.transceiver} would run {_rates(common)}G lanes, above its cage's {e.native}G"
                for e in ends
                if e.host == e.optical and e.native < min(common)
            ]
        return "; ".join(why)


def _rates(rates: Iterable[int]) -> str:
    return "/".join(str(r) for r in sorted(rates)) or "?"


def unlinkable(catalog: Catalog, topology: Topology, allocation: Allocation) -> tuple[Unlinkable, ...]:
    """The optical links whose transceivers (the ones the optics count chooses, per cage) cannot run one lane
    rate (`signalling_meets`). None when every two of the transceivers at the optical ends, in their cages, link
    (`_signals`: a few kinds of end, where the walk asks of every cable)."""
    signals = _counted(catalog, topology, allocation)[2].signals
    if all(signalling_meets(a[1], a[2], b[1], b[2]) for a in signals for b in signals):
        return ()
    return _unlinkable_links(catalog, topology, allocation)


def _unlinkable_links(catalog: Catalog, topology: Topology, allocation: Allocation) -> tuple[Unlinkable, ...]:
    """`unlinkable`, asked of every optical cable."""
    devices = topology.devices
    cage_of = CageLookup(catalog, devices)
    fits: dict[tuple[CageKind, str, int], tuple[str, Transceiver] | None] = {}
    rates: dict[tuple[str, str | None], dict[str, tuple[str, int]]] = {}
    # per model, port, medium kind and speed (a few hundred at 100k GPUs): the transceiver and the cage's native
    # lane rate; None where unchecked (no part, no declared rates, a port the catalog does not list)
    shapes: dict[tuple[str, str | None, str, str, int], _Signal | None] = {}

    def shape(name: str, port: str, kind: str, speed: int) -> _Signal | None:
        device = devices[name]
        key = (device.model, device.platform, port, kind, speed)
        if key in shapes:
            return shapes[key]
        wanted = (cage_of(name, port)[1], kind, speed)
        if wanted not in fits:
            fits[wanted] = transceiver_for(catalog, *wanted)
        chosen = fits[wanted]
        found: _Signal | None = None
        if chosen is not None and chosen[1].lane_gbps:
            model = model_key(device)
            if model not in rates:
                rates[model] = port_lane_rates(catalog, device)
            native = rates[model].get(port)
            if native is not None and native[1]:
                found = (chosen[0], chosen[1], native[1])
        shapes[key] = found
        return found

    def end(name: str, port: str, signal: _Signal) -> SignallingEnd:
        optic_key, optic, native = signal
        host = tuple(optic.host_lane_gbps or optic.lane_gbps)
        cage = cage_of(name, port)[0]
        return SignallingEnd(name, port, cage, optic_key, optic.part, native, host, tuple(optic.lane_gbps))

    groups: dict[tuple[str, tuple[object, ...]], list[tuple[SignallingEnd, SignallingEnd]]] = defaultdict(list)
    # whether two ends' shapes link, by the shapes' identities (each is made once in `shapes`, which keeps it):
    # a few pairs at 100k GPUs, asked 300,000 times
    meets: dict[tuple[int, int], bool] = {}
    for c in allocation.cables:
        if c.media_kind not in OPTICAL:
            continue
        link = c.link
        a = shape(link.a, link.a_port, c.media_kind, link.speed_gbps)
        b = shape(link.b, link.b_port, c.media_kind, link.speed_gbps)
        if a is None or b is None:
            continue
        pair = (id(a), id(b))
        met = meets.get(pair)
        if met is None:
            met = meets[pair] = signalling_meets(a[1], a[2], b[1], b[2])
        if met:
            continue
        models = (devices[link.a].model, devices[link.b].model)
        key = (link.fabric, (models, a[0], a[2], b[0], b[2]))
        groups[key].append((end(link.a, link.a_port, a), end(link.b, link.b_port, b)))
    return tuple(
        Unlinkable(
            fabric,
            len(pairs),
            pairs[0][0],
            pairs[0][1],
            tuple(f"{a.device} {a.port} - {b.device} {b.port}" for a, b in pairs[:3]),
        )
        for (fabric, _), pairs in groups.items()
    )
