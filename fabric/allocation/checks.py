"""Allocation checks: what only the allocation shows (ASNs and addresses unique). Each takes an AllocationContext,
the analysis Context grown by the Allocation; ALLOCATION_CHECKS lists them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter

from fabric.allocation.allocate import Allocation, AsnRow
from fabric.allocation.optics import Unmatched, cage_plugs, misfits, mixed_cages, optics, unlinkable
from fabric.analysis.checks import Context
from fabric.fast.runs import runs_distinct
from fabric.model.findings import Finding, error, warning
from fabric.model.kinds import Layer


@dataclass(frozen=True)
class AllocationContext(Context):
    """The graph checks' context with the allocation."""

    allocation: Allocation


def _list(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def check_unique_asns(ctx: AllocationContext) -> Iterator[Finding]:
    """Within a fabric, only switches that share a tier (and pod) may share an ASN."""
    by_fabric: dict[str, dict[int, set[tuple[str, str]]]] = defaultdict(lambda: defaultdict(set))
    for row in ctx.allocation.asns:
        group = row.device if row.layer in (Layer.LEAF, Layer.NODE) else row.layer  # each leaf, each routed node
        by_fabric[row.fabric][row.asn].add((group, row.device))
    for fabric, asns in by_fabric.items():
        for asn, owners in sorted(asns.items()):
            groups = {g for g, _ in owners}
            if len(groups) > 1:
                devices = sorted(d for _, d in owners)
                yield error(
                    "duplicate-asn",
                    f"fabrics.{fabric}.asn" if ctx.design.spec.fabrics[fabric].asn else "asn",
                    f"ASN {asn} is given to switches of different tiers or leaves: {_list(devices)}",
                    "move leaf_start, spine or core so the ranges do not overlap",
                )
    # a node that routes on the host may peer with leaves of any fabric: its ASN must be its alone
    holders: dict[int, list[AsnRow]] = defaultdict(list)
    for row in ctx.allocation.asns:
        holders[row.asn].append(row)
    clashes = [
        f"{row.device} and {_list(sorted(r.device for r in holders[row.asn] if r is not row))} ({row.asn})"
        for row in ctx.allocation.asns
        if row.layer == Layer.NODE and len({r.fabric for r in holders[row.asn]}) > 1  # one fabric: reported above
    ]
    if clashes:
        yield error(
            "duplicate-asn",
            "asn.host_start",
            f"{len(clashes)} nodes that route on the host share their ASN with switches of another fabric: "
            f"{_list(clashes, 3)}",
            "move host_start (or that fabric's leaf_start) so the ranges do not overlap",
        )
    seen: dict[int, str] = {}
    for row in ctx.allocation.asns:
        if row.layer == Layer.LEAF:
            first = seen.setdefault(row.asn, row.fabric)
            if first != row.fabric:
                yield error(
                    "duplicate-asn",
                    "asn",
                    f"leaf ASN {row.asn} is used in fabrics `{first}` and `{row.fabric}`",
                    "give one of the fabrics its own asn.leaf_start",
                )


_ADDRESS = attrgetter("address")
_INTEGER = attrgetter("_ip")  # an ipaddress value's integer, as int() gives it, without a Python call each


def check_unique_addresses(ctx: AllocationContext) -> Iterator[Finding]:
    seen: dict[tuple[int, int], tuple[str, str]] = {}
    dupes: list[str] = []
    rows = ctx.allocation.addresses
    runs = ctx.allocation.address_runs
    # every address distinct (the usual case: 10,000,000 rows at a million GPUs on RoCE, whose runs are a few
    # thousand; without runs, every row's integer: an IPv6 address may share one with an IPv4 address, which only
    # sends them the long way): no row needs a closer look
    distinct = runs_distinct(runs) if runs is not None else len(set(map(_INTEGER, map(_ADDRESS, rows)))) == len(rows)
    for row in () if distinct else rows:
        address = row.address
        first = seen.setdefault((address.version, int(address)), (row.device, row.interface))  # no text per row
        if first != (row.device, row.interface):
            dupes.append(f"{address.ip} ({first[0]}:{first[1]} and {row.device}:{row.interface})")
    if dupes:
        yield error(
            "duplicate-address",
            "addressing",
            f"{len(dupes)} addresses are assigned twice: {_list(dupes, 3)}",
            "make the address pools disjoint",
        )
    pools = ctx.design.spec.addressing
    nets = {"loopback": pools.loopback, "p2p": pools.p2p, "servers": pools.servers, "mgmt": pools.mgmt}
    names = sorted(nets)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if nets[a].overlaps(nets[b]):
                yield error(
                    "duplicate-address",
                    f"addressing.{b}",
                    f"pool {b} ({nets[b]}) overlaps pool {a} ({nets[a]})",
                    "give every pool its own range",
                )


def check_optics(ctx: AllocationContext) -> Iterator[Finding]:
    """Every optical link end has a transceiver in the catalog: else the BOM would order none (a silent zero)."""
    for miss in optics(ctx.design.catalog, ctx.topology, ctx.allocation).unmatched:
        yield optics_missing(miss)


def optics_missing(miss: Unmatched) -> Finding:
    """The finding of optical link ends no catalog transceiver fits (also `fabric plan`'s, from a candidate's cost)."""
    return warning(
        "optics-missing",
        f"fabrics.{miss.fabric}",
        f"{miss.ends} optical link end(s) of {miss.device_model} (e.g. {miss.example}) need a transceiver for "
        f"{miss.text}: none in the catalog fits that cage, so the BOM orders none",
        "add a transceiver for that cage to a part file (`catalog:`), or allow a medium that needs none "
        "(`cabling.media`: dac, acc, aoc)",
    )


def check_cage_modes(ctx: AllocationContext) -> Iterator[Finding]:
    """The links in one cage share one signalling (lane rate): a twin-port or split cage runs one mode, and an HDR
    50G-PAM4 port cannot link to an NDR 100G-PAM4 one (fabric/allocation/optics.py, mixed_cages)."""
    for mixed in mixed_cages(ctx.design.catalog, ctx.topology):
        ports = ", ".join(f"{port} to {far} at {rate}G a lane" for port, rate, far in mixed.ports)
        yield warning(
            "cage-mixed-mode",
            f"fabrics.{mixed.fabric}",
            f"{mixed.device} cage {mixed.cage} carries links of different signalling ({ports}): a cage runs one "
            "mode, and a 50G-PAM4 (HDR, 200GbE) port cannot link to a 100G-PAM4 (NDR, 400GbE) one, which cannot "
            "downshift, so the slower link does not come up",
            "give the slower device a cage of its own, cabled with a twin-port OSFP to 2 x QSFP56 2 x 200G splitter "
            "(catalog medium `aoc-osfp-2x200g`, NVIDIA MFA7U10-H class; its other leg unused or a second such "
            "device): leave a cage free on a leaf (the planner then gives it one), or use a port of the cage's "
            "signalling on the device (as the DGX SuperPOD H100 RA cables its UFM appliances: a ConnectX-7 at NDR200 "
            "on a 1:2 splitter fibre, `mmf-200g-split`)",
        )


def check_cage_plugs(ctx: AllocationContext) -> Iterator[Finding]:
    """A cage takes one plug that fits it (fabric/allocation/optics.py, cage_plugs and misfits): the media choice
    keeps it so; a forced medium, a part file's media or a fabric's `cabling.media` may not."""
    catalog, topology, allocation = ctx.design.catalog, ctx.topology, ctx.allocation
    by_fabric: dict[str, list[str]] = defaultdict(list)
    for c in cage_plugs(catalog, topology, allocation):
        by_fabric[c.fabric].append(f"{c.device} cage {c.cage} ({' + '.join(c.plugs)})")
    for fabric, cages in sorted(by_fabric.items()):
        yield warning(
            "cage-plugs",
            f"fabrics.{fabric}",
            f"{len(cages)} cage(s) would take two plugs: {_list(cages, 3)}; a twin-port cage takes one transceiver "
            "or one twin-port cable, so one of its links has no place",
            "let the cage's links take one medium: allow fibre (`cabling.media`: mmf or smf, a twin-port "
            "transceiver serves both), or drop the forced medium of one of its links",
        )
    for miss in misfits(catalog, topology, allocation):
        connector, top, ports = miss.cage
        shape = " ".join(x for x in (connector, top or "", f"{ports}-port" if ports else "") if x)
        yield warning(
            "cage-plugs",
            f"fabrics.{miss.fabric}",
            f"{miss.ends} cable end(s) of medium {miss.media} (e.g. {miss.example}) are in a {shape} cage its plugs "
            "do not fit (catalog media `ends`)",
            "allow a medium whose plug fits that cage, or fibre with transceivers (`cabling.media`)",
        )


def check_optics_signalling(ctx: AllocationContext) -> Iterator[Finding]:
    """Both transceivers of an optical link share one optical signalling, each its cage's electrical one (catalog
    transceivers `lane_gbps`; fabric/allocation/optics.py, unlinkable)."""
    for bad in unlinkable(ctx.design.catalog, ctx.topology, ctx.allocation):
        a, b = bad.a, bad.b
        ends = " and ".join(
            f"{e.device} {e.port} (cage {e.cage} of {e.native}G lanes, {e.part or e.transceiver}: "
            f"{_rates(e.optical)}G optical lanes)"
            for e in (a, b)
        )
        more = f" ({bad.links} such links: {_list(list(bad.examples), 3)})" if bad.links > 1 else ""
        yield error(
            "optics-signalling",
            f"fabrics.{bad.fabric}",
            f"optical link {bad.examples[0]}{more} cannot come up: {ends}; {bad.why}",
            "give both ends ports of one signalling (for a 2 x 400G twin-port module, a 100G-PAM4 port: e.g. a 200G "
            "QSFP112 adapter at 2 x 100G), cable an HDR port to an NDR cage with the twin-port OSFP to 2 x QSFP56 "
            "splitter (`aoc-osfp-2x200g`), or add a part file's transceiver whose lane rates meet both",
        )


def _rates(rates: Iterable[int]) -> str:
    return "/".join(str(r) for r in sorted(rates)) or "?"


def check_nic_speeds(ctx: AllocationContext) -> Iterator[Finding]:
    """A node port's link runs at a speed its NIC runs on one port for the fabric's technology (catalog
    `ethernet_max_gbps`: ConnectX-8 runs 800G as XDR InfiniBand, Ethernet as 2 x 400GbE)."""
    catalog, devices = ctx.design.catalog, ctx.topology.devices
    limits: dict[str, dict[str, int]] = {}
    for fabric, ft in sorted(ctx.topology.fabrics.items()):
        if ft.technology != "ethernet":
            continue
        over: dict[tuple[str, int, int], list[str]] = defaultdict(list)  # (model, speed, its limit) → ports
        for link in ft.links:
            for name, port in ((link.a, link.a_port), (link.b, link.b_port)):
                device = devices[name]
                if device.layer != Layer.NODE:
                    continue
                model = device.model
                if model not in limits:
                    limits[model] = {
                        p.name: g.ethernet_max_gbps
                        for g in catalog.nodes[model].ports.values()
                        if g.ethernet_max_gbps is not None
                        for p in g.port_list()
                    }
                top = limits[model].get(port)
                if top is not None and link.speed_gbps > top:
                    over[(model, link.speed_gbps, top)].append(f"{name} {port}")
        for (model, speed, top), ports in sorted(over.items()):
            yield warning(
                "nic-port-speed",
                f"fabrics.{fabric}",
                f"{len(ports)} {model} port(s) (e.g. {ports[0]}) are planned at {speed}G Ethernet; their NIC runs "
                f"at most {top}G Ethernet on one port (catalog `ethernet_max_gbps`), so those links do not come up "
                "at that speed",
                f"plan the fabric's node links at {top}G (a NIC's two ports, as the DGX B300's 2 x 400G), or run the "
                "NICs as InfiniBand",
            )


AllocationCheck = Callable[[AllocationContext], Iterator[Finding]]

ALLOCATION_CHECKS: dict[str, AllocationCheck] = {
    "unique-asns": check_unique_asns,
    "unique-addresses": check_unique_addresses,
    "optics": check_optics,
    "cage-modes": check_cage_modes,
    "cage-plugs": check_cage_plugs,
    "optics-signalling": check_optics_signalling,
    "nic-speeds": check_nic_speeds,
}


def run_allocation_checks(ctx: AllocationContext) -> list[Finding]:
    findings: list[Finding] = []
    for check in ALLOCATION_CHECKS.values():
        findings.extend(check(ctx))
    return findings
