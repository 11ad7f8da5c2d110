"""What the allocation's cables need on the floor, counted as vendors ship it: the transceivers at each optical end
(chosen by the cage they plug into: connector, thermal top, ports per cage), the fibres of each optical link (two
for an 800G link between twin-port 2 x 4-lane modules), one twin-port copper cable per pair of cages, and the
optical ends no catalog transceiver fits (a finding: never a silent zero in the BOM).

The costing (fabric/costing.py) and the allocation check `check_optics` read it; it is computed once per
allocation object.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from fabric.allocation.allocate import Allocation
from fabric.allocation.cages import CageKind, CageLookup, node_cages, switch_cages
from fabric.model.cable import Cable
from fabric.model.topology import Device, Topology
from fabric.spec.catalog import (
    Catalog,
    NodeType,
    SwitchModel,
    SwitchPort,
    Transceiver,
    node_lane_gbps,
    port_candidates,
)

OPTICAL = ("mmf", "smf")

_switch_cages, _node_cages = switch_cages, node_cages
_Ends = tuple[dict[str, tuple[str, CageKind]], CageKind, bool, str, tuple[str, str | None]]
_EndKey = tuple[tuple[str, str | None], str, str, int, str]  # model, port, medium kind, speed, fabric
_End = tuple[str, "Transceiver | None", "str | None", CageKind]  # cage, transceiver, its catalog key, cage kind
# a physical cable as the counts take it: its links (indices into allocation.cables), its fibre number (0: not one
# of several fibres of a link) and the link's fibres, and both ends' transceivers (catalog keys; None: none)
_Physical = tuple[tuple[int, ...], int, int, "str | None", "str | None"]
_Shape = tuple[str, tuple[str, ...], tuple[int, ...], tuple[tuple[int, int], ...], str, str]


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

    cages: Mapping[tuple[str, str, str], frozenset[tuple[str, str]]]  # (fabric, side, transceiver) → cages filled
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


_MEMO: dict[int, tuple[Allocation, Optics, list[_Physical]]] = {}


def optics(catalog: Catalog, topology: Topology, allocation: Allocation) -> Optics:
    """The optics of an allocation (computed once per allocation object)."""
    return _counted(catalog, topology, allocation)[0]


def _counted(catalog: Catalog, topology: Topology, allocation: Allocation) -> tuple[Optics, list[_Physical]]:
    """The counts and the raw physical sheet of an allocation, from one pass, once per allocation object (the
    BOM's counts and the cabling sheet were two passes of 3 s each at 100k GPUs; docs/dev/performance.md)."""
    hit = _MEMO.get(id(allocation))
    if hit is not None and hit[0] is allocation:
        return hit[1], hit[2]
    sheet: list[_Physical] = []
    result = _optics(catalog, topology, allocation, sheet)
    if len(_MEMO) >= 4:
        _MEMO.clear()
    _MEMO[id(allocation)] = (allocation, result, sheet)
    return result, sheet


def _optics(
    catalog: Catalog, topology: Topology, allocation: Allocation, sheet: list[_Physical] | None = None
) -> Optics:
    """The counts; with `sheet`, also the physical cables, appended to it as the counts take them (so that the
    cabling sheet and the BOM cannot disagree)."""
    devices = topology.devices
    cages: dict[tuple[str, str, str], set[tuple[str, str]]] = defaultdict(set)
    optics_w: dict[str, float] = defaultdict(float)
    missing: Counter[tuple[str, str, CageKind, str, int]] = Counter()  # (fabric, model, cage, medium, speed) → ends
    example: dict[tuple[str, str, CageKind, str, int], str] = {}
    memo: dict[tuple[str, str | None], _Ends] = {}
    ends: dict[str, _Ends] = {}  # per device name: 600,000 link ends at 100k GPUs
    fits: dict[tuple[CageKind, str, int], tuple[str, Transceiver] | None] = {}
    resolved: dict[_EndKey, _End] = {}
    cables: Counter[tuple[str, str, str, float | None]] = Counter()
    pairs: dict[tuple[str, str, str, float | None, frozenset[tuple[str, str]]], list[int]] = defaultdict(list)

    def end(name: str, port: str, kind: str, speed: int, fabric: str) -> tuple[_Ends, _End]:
        here = ends.get(name)
        if here is None:
            here = ends[name] = _ends(catalog, devices[name], memo)
        key = (here[4], port, kind, speed, fabric)
        found = resolved.get(key)
        if found is None:
            cage, cage_kind = here[0].get(port) or (port, here[1])
            part = None
            if kind in OPTICAL:
                wanted = (cage_kind, kind, speed)
                if wanted not in fits:
                    fits[wanted] = transceiver_for(catalog, *wanted)
                part = fits[wanted]
            found = resolved[key] = (cage, part[1] if part else None, part[0] if part else None, cage_kind)
        return here, found

    for i, c in enumerate(allocation.cables):
        kind, link = c.media_kind, c.link
        medium = catalog.media.get(c.media) if c.media else None
        row = (link.fabric, c.media or "none", c.part, c.length_m)
        if kind not in OPTICAL:
            if medium is not None and medium.links > 1:  # twin-port copper: one cable per cage pair
                a = end(link.a, link.a_port, kind, link.speed_gbps, link.fabric)[1][0]
                b = end(link.b, link.b_port, kind, link.speed_gbps, link.fabric)[1][0]
                pairs[(*row, frozenset(((link.a, a), (link.b, b))))].append(i)
            else:
                cables[row] += 1
                if sheet is not None:
                    sheet.append(((i,), 0, 1, None, None))
            continue
        fibres = 1
        optics_at: list[str | None] = [None, None]
        for side, (name, port) in enumerate(((link.a, link.a_port), (link.b, link.b_port))):
            here, (cage, part, optic, cage_kind) = end(name, port, kind, link.speed_gbps, link.fabric)
            optics_at[side] = optic
            node, rack = here[2], here[3]
            if part is None or optic is None:
                what = (link.fabric, here[4][0], cage_kind, kind, link.speed_gbps)
                missing[what] += 1
                example.setdefault(what, f"{name} {port}")
                continue
            fibres = max(fibres, part.fibres(link.speed_gbps))
            used = cages[(link.fabric, "node side" if node else "switch side", optic)]
            if node and rack and (name, cage) not in used:
                optics_w[rack] += part.power_w
            used.add((name, cage))
        cables[row] += fibres
        if sheet is not None:
            sheet.extend(((i,), fibre, fibres, optics_at[0], optics_at[1]) for fibre in range(1, fibres + 1))
    for (fabric, media, part_no, length, _), links in pairs.items():
        per_cable = catalog.media[media].links
        cables[(fabric, media, part_no, length)] += math.ceil(len(links) / per_cable)
        if sheet is not None:
            sheet.extend((tuple(links[k : k + per_cable]), 0, 1, None, None) for k in range(0, len(links), per_cable))
    return Optics(
        {k: frozenset(v) for k, v in cages.items()},
        dict(optics_w),
        dict(cables),
        tuple(
            Unmatched(*what, count, example[what])
            for what, count in sorted(missing.items(), key=lambda kv: (*kv[0][:2], *kv[0][3:], str(kv[0][2])))
        ),
    )


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


def _node_subs(node_type: NodeType) -> dict[str, int]:
    """A node's port → its place in its cage: ports sharing a cage in name order (OSFP4P1 before OSFP4P2)."""
    by_cage: dict[str, list[str]] = defaultdict(list)
    for group in node_type.ports.values():
        for port in group.port_list():
            if port.cage:
                by_cage[port.cage].append(port.name)
    return {name: k for names in by_cage.values() for k, name in enumerate(sorted(names), 1)}


def _switch_port(model: SwitchModel, platform: str | None, port: str, speed: int) -> SwitchPort | None:
    found = port_candidates(model, platform).get(port)
    if not found:
        return None
    return next((p for p in found if p.speed_gbps == speed), found[0])


_SHEETS: dict[int, tuple[Allocation, tuple[PhysicalCable, ...]]] = {}


def physical_cables(catalog: Catalog, topology: Topology, allocation: Allocation) -> tuple[PhysicalCable, ...]:
    """Every physical cable of the allocation, in cabling order (by the first link it carries), one per fibre of
    a link on several fibres and one per twin-port cable carrying several links: the rows of
    cabling-physical.csv, which the BOM's cable lines count (the same pass makes both)."""
    hit = _SHEETS.get(id(allocation))
    if hit is not None and hit[0] is allocation:
        return hit[1]
    sheet = _counted(catalog, topology, allocation)[1]
    cables, devices = allocation.cables, topology.devices
    subs: dict[str, dict[str, int]] = {}
    node_cages: dict[str, dict[str, tuple[str, CageKind]]] = {}
    # (model, platform, ports with speeds, transceiver) → the end's cage, places, lanes, transceiver and part: a few
    # hundred distinct at 100k GPUs
    shapes: dict[tuple[str, str | None, tuple[tuple[str, int], ...], str | None], _Shape] = {}

    def shape(
        model: str, platform: str | None, node: bool, ports: tuple[tuple[str, int], ...], optic: str | None
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
            for port, _ in ports:
                cage = node_cages[model].get(port, (port, None))[0]
                places.append(subs[model].get(port, 1))  # a port with no cage of its own is its cage's only one
        else:
            for port, speed in ports:
                p = _switch_port(catalog.switches[model], platform, port, speed)
                if p is None:  # the management port
                    cage = port
                    continue
                cage = str(p.cage)
                places.append(p.sub)
                lanes.append(((p.sub - 1) * p.lanes + 1, p.sub * p.lanes))
        part = catalog.transceivers[optic].part if optic else ""
        found = shapes[key] = (cage, tuple(p for p, _ in ports), tuple(places), tuple(lanes), optic or "", part)
        return found

    kinds: dict[str, tuple[str, str | None, bool]] = {}  # device → (model, platform or None for a node, node)

    def kind(name: str) -> tuple[str, str | None, bool]:
        found = kinds.get(name)
        if found is None:
            d = devices[name]
            node = d.layer == "node"
            found = kinds[name] = (d.model, None if node else d.platform, node)
        return found

    def side(links: tuple[Cable, ...], b: bool, optic: str | None) -> tuple[CableEnd, ...]:
        if len(links) == 1:  # most cables: one link, so one end (the same CableEnd as the general case below)
            c = links[0]
            link = c.link
            name, port, rack, u = (
                (link.b, link.b_port, c.b_rack, c.b_u) if b else (link.a, link.a_port, c.a_rack, c.a_u)
            )
            return (CableEnd(name, rack, u, *shape(*kind(name), ((port, link.speed_gbps),), optic)),)
        per_device: dict[str, tuple[str, int | None, list[tuple[str, int]]]] = {}
        for c in links:
            link = c.link
            name, port = (link.b, link.b_port) if b else (link.a, link.a_port)
            here = per_device.get(name)
            if here is None:
                here = per_device[name] = (c.b_rack, c.b_u, []) if b else (c.a_rack, c.a_u, [])
            here[2].append((port, link.speed_gbps))
        ends = []
        for name, (rack, u, ports) in per_device.items():
            ends.append(CableEnd(name, rack, u, *shape(*kind(name), tuple(ports), optic)))
        return tuple(ends)

    out: list[PhysicalCable] = []
    for indices, fibre, fibres, a_optic, b_optic in sorted(sheet, key=lambda r: (r[0][0], r[1])):
        links = tuple(cables[i] for i in indices)
        pid = links[0].cable_id + (f"-F{fibre}" if fibres > 1 else "")
        out.append(PhysicalCable(pid, links, fibre, fibres, side(links, False, a_optic), side(links, True, b_optic)))
    result = tuple(out)
    if len(_SHEETS) >= 4:
        _SHEETS.clear()
    _SHEETS[id(allocation)] = (allocation, result)
    return result


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
        key = (device.model, None if device.layer == "node" else device.platform)
        rates = memo.get(key)
        if rates is None:
            rates = memo[key] = port_lane_rates(catalog, device)
        by_device[name] = rates
        return rates

    found: list[MixedCage] = []
    for fabric, ft in topology.fabrics.items():
        cages: dict[tuple[str, str], dict[str, tuple[int, str]]] = defaultdict(dict)
        for link in ft.links:
            a = (by_device.get(link.a) or rates_of(link.a)).get(link.a_port)
            b = (by_device.get(link.b) or rates_of(link.b)).get(link.b_port)
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
    """The cages holding more than one plug on the physical sheet, in sheet order."""
    plugs: dict[tuple[str, str], dict[str, None]] = defaultdict(dict)
    fabric: dict[tuple[str, str], str] = {}
    for p in physical_cables(catalog, topology, allocation):
        link = p.links[0]
        if not link.media:
            continue  # no medium carries it: cable-reach reports it
        for side in (p.a, p.b):
            for e in side:
                key = (e.device, e.cage)
                if e.transceiver:
                    plug = e.transceiver
                elif link.media_kind in OPTICAL:
                    plug = f"{link.media} (no transceiver)"  # optics-missing reports it; its fibres share the cage
                else:
                    plug = f"{link.media or 'none'} {link.cable_id}"
                plugs[key][plug] = None
                fabric.setdefault(key, link.link.fabric)
    return tuple(CagePlugs(fabric[k], *k, tuple(v)) for k, v in plugs.items() if len(v) > 1)


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
