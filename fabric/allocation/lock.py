"""Keep what an earlier build assigned (the design's lock): growth adds, it does not renumber.

The allocator is index-based, so a grown spec (one more SU, more nodes, a new fabric) shifts what comes after
the growth: the switches' management addresses after the nodes' BMCs, a later fabric's loopbacks and leaf
ASNs, cable numbers. With a lock, every cable (by its two ends), address (by device, interface and family) and
ASN (by device) that is still there keeps its locked value; what is new keeps its fresh value when that is
free, else takes the next free one of its pool (a new leaf's subnet moves as a whole). Rack positions are kept
by the topology stage (racks.py places locked devices where they were).

What cannot be kept — a cable whose ends changed (the generator re-spread the uplinks over more spines), an
address outside a changed pool, a device gone — is reported grouped by cause: a `lock-move` finding per fabric
(or pool) and kind of item with its count, the spec facts that changed, the setting that avoids it and the items
(an error; a warning with --allow-moves). The topology stage keeps what the spec left to fabric (spine counts,
where node ports are cabled: topology/held.py), so that a grown count moves nothing while the locked structure
has the ports.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from ipaddress import IPv6Interface, IPv6Network, ip_interface, ip_network
from itertools import compress, groupby, repeat
from operator import attrgetter, contains, itemgetter, not_
from typing import TYPE_CHECKING, Any, cast

from fabric.allocation.allocate import AddressRow, Allocation, AsnRow, Interface, Network, interface_at
from fabric.fast.addresses import LazyIPv4Interface, LazyIPv6Interface, address_integer, interface_text
from fabric.model.cable import Cable
from fabric.model.findings import Finding, Severity
from fabric.model.kinds import Layer
from fabric.model.topology import Topology
from fabric.spec.loader import Design

if TYPE_CHECKING:  # the lock's modules load when a lock is read, not for every build
    from fabric.model.lock_format import LockedAddress, LockedCable
    from fabric.spec.lock import Lock

Key = tuple[str, str, bool]  # device, interface, IPv6
_NUMBER = re.compile(r"(.*)-(\d+)\Z")


def spec_facts(design: Design, topo: Topology) -> dict[str, Any]:
    """What a move is explained by: node counts per group, switches per layer and the ASN plan per fabric,
    the address pools (the lock's `spec`)."""
    spec = design.spec
    fabrics: dict[str, Any] = {}
    for key, ft in topo.fabrics.items():
        layers = Counter(topo.devices[s].layer for s in ft.switches if topo.devices[s].fabric == key)
        plan = spec.fabrics[key].asn or spec.asn
        asn = f"{plan.scheme} core {plan.core} spine {plan.spine} leaf {plan.leaf_start}"
        fabrics[key] = {
            "technology": ft.technology,
            "leaf": layers[Layer.LEAF],
            "spine": layers[Layer.SPINE],
            "core": layers[Layer.CORE],
            "asn": asn if ft.technology == "ethernet" else "",
        }
    pools = spec.addressing
    addressing = {
        name: str(getattr(pools, name))
        for name in ("loopback", "p2p", "servers", "server_prefix", "mgmt", "ipv6")
        if getattr(pools, name) is not None
    }
    return {"nodes": {g.group: g.count for g in spec.nodes}, "fabrics": fabrics, "addressing": addressing}


def spec_changes(lock: Lock, now: dict[str, Any]) -> list[tuple[str, str]]:
    """(scope, change) for every spec fact that differs from the lock's: scope is a fabric key, `nodes` or
    `addressing`."""
    was = lock.spec
    out: list[tuple[str, str]] = []
    for group in sorted(set(was.nodes) | set(now["nodes"])):
        a, b = was.nodes.get(group), now["nodes"].get(group)
        if a != b:
            out.append(("nodes", f"node group {group}: {a if a is not None else 'none'} → {b or 'none'} nodes"))
    for key in [*was.fabrics, *(k for k in now["fabrics"] if k not in was.fabrics)]:
        old, new = was.fabrics.get(key), now["fabrics"].get(key)
        if old is None:
            out.append((key, f"fabric {key} added"))
        elif new is None:
            out.append((key, f"fabric {key} removed"))
        else:
            for layer in ("leaf", "spine", "core"):
                if getattr(old, layer) != new[layer]:
                    out.append((key, f"fabric {key}: {getattr(old, layer)} → {new[layer]} {layer} switches"))
            if old.asn != new["asn"]:
                out.append((key, f"fabric {key}: ASN plan {old.asn} → {new['asn']}"))
    for pool in sorted(set(was.addressing) | set(now["addressing"])):
        before, after = was.addressing.get(pool), now["addressing"].get(pool)
        if before != after:
            out.append(("addressing", f"addressing.{pool}: {before or 'unset'} → {after or 'unset'}"))
    return out


_NOUNS = {"cable": "cables", "address": "addresses", "ASN": "ASNs", "device": "devices"}
_ITEMS_SHOWN = 1  # items a grouped finding quotes (the rest are in its item list: validate --json)


class _Moves:
    """Collects what a build would move, and reports it grouped by cause: one lock-move finding per fabric (or pool)
    and kind of item (cable, address, ASN, device), with its count, the spec changes that explain it, the setting
    that avoids it and the items themselves (in the finding's `items`: `fabric validate --lock FILE --json`)."""

    def __init__(self, design: Design, changes: list[tuple[str, str]], now: dict[str, Any]) -> None:
        assert design.lock is not None
        self.lock = design.lock
        self.design = design
        self.changes = changes
        self.now = now
        self.severity = Severity.WARNING if design.lock.allow_moves else Severity.ERROR
        self.errors: list[Finding] = []  # lock-invalid
        self.items: dict[tuple[str, str, str], list[str]] = {}  # (path, kind, scope) → items

    @property
    def findings(self) -> list[Finding]:
        return [*self.errors, *(self._grouped(*key, items) for key, items in self.items.items())]

    def cause(self, *scopes: str) -> str:
        relevant = [c for s, c in self.changes if s in scopes] or [c for _, c in self.changes]
        return "; ".join(relevant) if relevant else "no counted spec fact changed (a generator or placement rule)"

    def invalid(self, what: str) -> None:
        """A locked value no build writes: refused (the row takes the plan's value), whatever --allow-moves says."""
        assert self.lock is not None
        self.errors.append(
            Finding(
                Severity.ERROR,
                "lock-invalid",
                "lock.addresses",
                f"not a valid lock: {what}; not kept",
                "give the allocations.lock.json a build wrote (--lock FILE), or build without one (--no-lock)",
                self.lock.file,
            )
        )

    def add(self, path: str, what: str, *scopes: str) -> None:
        """An item that would move (`what` starts with its kind), explained by the changes of `scopes`."""
        kind = what.split(" ", 1)[0]
        scope = next((s for s in scopes if s in self.now["fabrics"] or s in self.lock.lock.spec.fabrics), scopes[0])
        self.items.setdefault((path, kind, scope), []).append(what)

    def _grouped(self, path: str, kind: str, scope: str, items: list[str]) -> Finding:
        n = len(items)
        noun = kind if n == 1 else _NOUNS.get(kind, kind + "s")
        where = f"of fabric {scope}" if scope in self.now["fabrics"] or scope in self.lock.lock.spec.fabrics else ""
        shown = "; ".join(items[:_ITEMS_SHOWN]) + (f"; and {n - _ITEMS_SHOWN:,} more" if n > _ITEMS_SHOWN else "")
        return Finding(
            self.severity,
            "lock-move",
            path,
            f"{n:,} locked {noun} {where + ' ' if where else ''}would move (spec changes: {self.cause(scope)}): "
            f"{shown}",
            f"{self._avoid(scope)}; or accept the moves with --allow-moves. Every item: `fabric validate SPEC --lock "
            "FILE --json`; the floor work: `fabric diff`",
            items=tuple(items),
        )

    def _avoid(self, scope: str) -> str:
        """The spec setting that makes the change only add, from what changed in the scope's fabric."""
        was, now = self.lock.lock.spec.fabrics.get(scope), self.now["fabrics"].get(scope)
        if was is not None and now is not None:
            if was.spine != now["spine"] and was.spine:
                fabric = self.design.spec.fabrics.get(scope)
                planes = getattr(getattr(fabric, "topology", None), "planes", 1) or 1
                return (
                    f"size the spines for the final build: pin `spines: {now['spine'] // planes}` in "
                    f"fabrics.{scope}.topology of the first build ({was.spine} → {now['spine']} spines re-spreads "
                    "every leaf's uplinks); growth then only adds"
                )
            if was.core != now["core"] and was.core:
                return f"size the cores for the final build (`fabrics.{scope}.topology.cores`) in the first build"
            if was.leaf != now["leaf"]:
                return (
                    f"keep the first build's leaf layout of fabric {scope} (scalable_unit, leaves, downlinks, "
                    "uplinks): new nodes then take the locked leaves' free ports and new leaves"
                )
        if any(s == "addressing" for s, _ in self.changes):
            return "keep the locked address pools (the lock's `spec.addressing`), or make them only larger"
        return "grow so that the change only adds (the spine, leaf and pool sizes of the first build kept)"


# --------------------------------------------------------------------------------------------- cables


_LOCKED_ENDS = itemgetter(2, 3, 4, 5)  # a LockedCable's a_device, a_port, b_device, b_port
_LOCKED_ID = itemgetter(0)
_ENDS = attrgetter("link.a", "link.a_port", "link.b", "link.b_port")
_CABLE_ID = attrgetter("cable_id")
_LOCKED_DEVICE, _LOCKED_INTERFACE, _LOCKED_ADDRESS = itemgetter(0), itemgetter(1), itemgetter(2)  # LockedAddress
_ROW_ADDRESS = attrgetter("address")
_LINK = attrgetter("link")


def _same(rows: Sequence[Any], fields: Sequence[str], columns: Sequence[Sequence[Any]]) -> bool:
    """Whether each field of the rows, in order, is the lock's column (made and compared whole, in C: a loop over
    a million rows in Python is many times slower)."""
    return all(tuple(map(attrgetter(f), rows)) == tuple(c) for f, c in zip(fields, columns, strict=True))


def _unique(*columns: Iterable[Any]) -> bool:
    values = list(zip(*columns, strict=True))
    return len(set(values)) == len(values)


def _numbers(lock: Lock) -> tuple[dict[str, int], dict[str, int], set[str]]:
    """Per fabric, the lock's last cable number and its width; and every locked id (for new cables only)."""
    top: dict[str, int] = {}
    width: dict[str, int] = {}
    for c in lock.cables:
        match = _NUMBER.match(c.id)
        if match and match.group(1) == c.fabric:
            top[c.fabric] = max(top.get(c.fabric, 0), int(match.group(2)))
            width[c.fabric] = max(width.get(c.fabric, 0), len(match.group(2)))
    return top, width, {c.id for c in lock.cables}


def _cables(plan: Allocation, lock: Lock, topo: Topology, moves: _Moves) -> list[Cable]:
    cable_id, _, a_device, a_port, b_device, b_port = lock.columns["cables"]
    links = list(map(_LINK, plan.cables))
    if (
        _same(plan.cables, ("cable_id",), (cable_id,))
        and _same(links, ("a", "a_port", "b", "b_port"), (a_device, a_port, b_device, b_port))
        and _unique(a_device, a_port)
    ):
        return list(plan.cables)  # a rebuild: each cable is the lock's of its index, and no two share an end
    locked = dict(zip(map(_LOCKED_ENDS, lock.cables), lock.cables, strict=True))
    numbers: tuple[dict[str, int], dict[str, int], set[str]] | None = None  # made at the first new cable
    hits = list(map(locked.get, map(_ENDS, plan.cables)))
    every = cast("list[LockedCable]", hits)
    if None not in hits and list(map(_LOCKED_ID, every)) == list(map(_CABLE_ID, plan.cables)):
        out, kept = list(plan.cables), set(map(_LOCKED_ID, every))  # a rebuild: every cable is the locked one
        return out if kept.issuperset(map(_LOCKED_ID, lock.cables)) else _gone(out, kept, lock, topo, moves)
    out = []
    kept = set()
    for cable, hit in zip(plan.cables, hits, strict=True):
        link = cable.link
        if hit is not None:
            out.append(cable if cable.cable_id == hit.id else replace(cable, cable_id=hit.id))
            kept.add(hit.id)
            continue
        top, width, used = numbers = numbers or _numbers(lock)
        if link.fabric in top:  # new cables number on after the lock's last in their fabric
            top[link.fabric] += 1
            number = top[link.fabric]
            cable_id = f"{link.fabric}-{number:0{max(width[link.fabric], len(str(number)))}d}"
            while cable_id in used:
                top[link.fabric] += 1
                cable_id = f"{link.fabric}-{top[link.fabric]:0{width[link.fabric]}d}"
            out.append(replace(cable, cable_id=cable_id))
        else:
            out.append(cable)
    return _gone(out, kept, lock, topo, moves)


def _gone(out: list[Cable], kept: set[str], lock: Lock, topo: Topology, moves: _Moves) -> list[Cable]:
    """`out`, after a move for each locked cable not kept whose devices are still there."""
    gone = [c for c in lock.cables if c.id not in kept]
    if not gone:
        return out
    by_end = {}
    for cable in out:
        by_end[(cable.link.a, cable.link.a_port)] = cable
        by_end[(cable.link.b, cable.link.b_port)] = cable
    for c in gone:
        if c.a_device not in topo.devices or c.b_device not in topo.devices:
            continue  # a device that is gone is one finding of its own
        now = by_end.get((c.a_device, c.a_port)) or by_end.get((c.b_device, c.b_port))
        where = (
            f"would become {now.link.a}:{now.link.a_port} — {now.link.b}:{now.link.b_port}"
            if now is not None
            else "would be removed"
        )
        moves.add(
            f"fabrics.{c.fabric}",
            f"cable {c.id} {c.a_device}:{c.a_port} — {c.b_device}:{c.b_port} {where}",
            c.fabric,
            "nodes",
        )
    return out


# --------------------------------------------------------------------------------------------- addresses


_ROUTED = {"host-loopback": "loopback", "host-p2p": "p2p"}  # a routing host's rows: from the switches' pools
_PAIRED = ("p2p", "host-p2p")  # the two ends of a link: one /31 (/127)


def _pools(design: Design) -> dict[tuple[str, int], tuple[Network, int, int]]:
    """(purpose, version) → (network, prefix length of one unit, first unit): where a new row takes the next
    free unit, as allocate.py lays the pools out."""
    pools = design.spec.addressing
    out: dict[tuple[str, int], tuple[Network, int, int]] = {
        ("loopback", 4): (pools.loopback, 32, 1),
        ("p2p", 4): (pools.p2p, 31, 0),
        ("server-gateway", 4): (pools.servers, 0, 0),
        ("mgmt-gateway", 4): (pools.mgmt, 0, 0),
        ("mgmt", 4): (pools.mgmt, 32, 2),
    }
    if pools.ipv6 is not None:
        base = int(pools.ipv6.network_address)
        out[("loopback", 6)] = (IPv6Network((base, 64)), 128, 1)
        out[("p2p", 6)] = (IPv6Network((base + 2**64, 64)), 127, 0)
        out[("server-gateway", 6)] = (pools.ipv6, 64, 2)
    for host, switch in _ROUTED.items():  # after the switches' in the same pools (allocate.py)
        for version in (4, 6):
            if (switch, version) in out:
                out[(host, version)] = out[(switch, version)]
    return out


class _Space:
    """Taken addresses (points) and reserved subnets (blocks, a leaf's) per IP version; finds free units."""

    def __init__(self) -> None:
        self.points: dict[int, list[int]] = {4: [], 6: []}  # sorted
        self.seen: dict[int, set[int]] = {4: set(), 6: set()}
        self.blocks: list[tuple[int, int, int]] = []  # version, first, last
        self.cursor: dict[tuple[str, int, int], int] = {}

    def take(self, version: int, address: int) -> None:
        if address not in self.seen[version]:
            self.seen[version].add(address)
            bisect.insort(self.points[version], address)

    def take_all(self, version: int, addresses: list[int]) -> None:
        """take() of each, sorted once (a rebuild of 100k GPUs on RoCE keeps a million)."""
        self.seen[version].update(addresses)
        self.points[version] = sorted(self.seen[version])

    def taken(self, version: int, address: int) -> bool:
        return address in self.seen[version]

    def reserve(self, version: int, first: int, size: int) -> None:
        self.blocks.append((version, first, first + size - 1))

    def free(self, version: int, first: int, size: int) -> bool:
        """No taken address and no reserved subnet in [first, first + size)."""
        points = self.points[version]
        i = bisect.bisect_left(points, first)
        if i < len(points) and points[i] < first + size:
            return False
        last = first + size - 1
        return not any(v == version and lo <= last and first <= hi for v, lo, hi in self.blocks)

    def next_free(self, network: Network, prefixlen: int, start: int, inside: bool = False) -> int | None:
        """The first address of the next free /prefixlen unit of `network` (from unit `start`); `inside` a
        reserved subnet, only taken addresses count."""
        size = 2 ** (network.max_prefixlen - prefixlen)
        base, count = int(network.network_address), network.num_addresses // size
        key = (str(network), prefixlen, start)
        i = self.cursor.get(key, start)
        while i < count - (1 if inside else 0):  # inside a subnet the last address is its broadcast
            first = base + i * size
            if not self.taken(network.version, first) if inside else self.free(network.version, first, size):
                self.cursor[key] = i + 1
                return first
            i += 1
        return None


def _home(design: Design, purpose: str, version: int) -> Network | None:
    """The pool an address of this purpose comes from (None: no such pool)."""
    pools = design.spec.addressing
    if version == 6:
        if pools.ipv6 is None:
            return None
        base = int(pools.ipv6.network_address)
        blocks = {"loopback": IPv6Network((base, 64)), "p2p": IPv6Network((base + 2**64, 64))}
        return blocks.get(_ROUTED.get(purpose, purpose), pools.ipv6)
    return {"loopback": pools.loopback, "p2p": pools.p2p, "server": pools.servers, "server-gateway": pools.servers}.get(
        _ROUTED.get(purpose, purpose), pools.mgmt
    )


def _mask(design: Design, hit: LockedAddress, version: int) -> tuple[Network | None, int, int]:
    """The pool of a locked address's purpose, its netmask and first address as integers."""
    pool = _home(design, hit.purpose, version)
    return (pool, int(pool.netmask), int(pool.network_address)) if pool is not None else (None, 0, 0)


def _text(address: Interface) -> str:
    kind = type(address)
    return interface_text(address) if kind is LazyIPv4Interface or kind is LazyIPv6Interface else str(address)  # type: ignore[arg-type]


def _edge(address: Interface) -> bool:
    """A host address that is its subnet's network address, or its IPv4 broadcast (a /31, /127 or single address
    has neither)."""
    net = address.network
    if net.num_addresses <= 2:
        return False
    return address.ip == net.network_address or (address.version == 4 and address.ip == net.broadcast_address)


def _inside(address: str, pool: Network | None) -> bool:
    return pool is not None and ip_interface(address).ip in pool


_ADDRESS_COLUMNS = ("device", "interface", "purpose", "peer_device", "peer_interface")


def _as_locked(design: Design, rows: Sequence[AddressRow], lock: Lock) -> tuple[str, ...] | None:
    """The rows' addresses as text, when the lock holds every row as it is (a rebuild of an unchanged spec), so
    that keeping changes none: each row's entry is the lock's of its index (the same device, interface, purpose,
    peer and address text; no two rows of one device, interface and family), and each address lies in its
    purpose's pool. Else None."""
    device, interface, address, purpose, _, peer_device, peer_interface = lock.columns["addresses"]
    if len(device) != len(rows) or not _same(
        rows, _ADDRESS_COLUMNS, (device, interface, purpose, peer_device, peer_interface)
    ):
        return None
    values = list(map(_ROW_ADDRESS, rows))
    lazy = {LazyIPv4Interface, LazyIPv6Interface}.issuperset(map(type, values))
    texts = tuple(map(interface_text if lazy else _text, values))  # type: ignore[arg-type]
    if texts != tuple(address):
        return None
    six = list(map(contains, texts, repeat(":")))  # an IPv6 address holds a colon, IPv4 never
    numbers = list(map(address_integer if lazy else int, values))
    return texts if _unique(device, interface, six) and _in_pools(design, purpose, six, numbers) else None


def _in_pools(design: Design, purposes: Sequence[str], six: list[bool], values: list[int]) -> bool:
    """Whether each address (as an integer) lies in the pool of its purpose and family: run by run of one
    purpose (the allocator writes a purpose's rows together), its least and greatest of each family."""
    spans: dict[tuple[str, int], tuple[int, int] | None] = {}  # (purpose, version) → its pool's first and last

    def span(purpose: str, version: int) -> tuple[int, int] | None:
        if (purpose, version) not in spans:
            pool = _home(design, purpose, version)
            first = int(pool.network_address) if pool is not None else 0
            spans[(purpose, version)] = (first, first + pool.num_addresses - 1) if pool is not None else None
        return spans[(purpose, version)]

    start = 0
    for purpose, run in groupby(purposes):
        end = start + len(list(run))
        here, family = values[start:end], six[start:end]
        for version, members in ((6, list(compress(here, family))), (4, list(compress(here, map(not_, family))))):
            if not members:
                continue
            pool = span(purpose, version)
            if pool is None or min(members) < pool[0] or max(members) > pool[1]:
                return False
        start = end
    return True


def _addresses(
    design: Design, plan: Allocation, lock: Lock, topo: Topology, moves: _Moves
) -> tuple[list[AddressRow], tuple[str, ...] | None]:
    """The rows with the lock's addresses kept; and their addresses as text when the lock held every row as it is."""
    texts = _as_locked(design, plan.addresses, lock)
    if texts is not None:
        return list(plan.addresses), texts
    pools = _pools(design)
    entries = lock.addresses
    six = map(contains, map(_LOCKED_ADDRESS, entries), repeat(":"))  # an IPv6 address holds a colon, IPv4 never
    locked: dict[Key, LockedAddress] = dict(
        zip(zip(map(_LOCKED_DEVICE, entries), map(_LOCKED_INTERFACE, entries), six, strict=True), entries, strict=True)
    )
    rows = list(plan.addresses)
    final: dict[int, Interface] = {}  # row index → address
    space = _Space()
    moved: list[tuple[int, LockedAddress]] = []
    homes: dict[tuple[str, int], tuple[Network | None, int, int]] = {}  # (purpose, version) → pool, mask, first
    kept: dict[int, list[int]] = {4: [], 6: []}
    # 1. what the lock holds and the pools still hold is kept
    for i, row in enumerate(rows):
        address = row.address
        hit = locked.get((row.device, row.interface, isinstance(address, IPv6Interface)))
        version = address.version
        if hit is None:
            continue
        home = homes.get((hit.purpose, version)) or homes.setdefault(
            (hit.purpose, version), _mask(design, hit, version)
        )
        pool, mask, first = home
        same_link = row.purpose not in _PAIRED or (hit.peer_device, hit.peer_interface) == (
            row.peer_device,
            row.peer_interface,
        )
        if hit.purpose != row.purpose or not same_link:
            moved.append((i, hit))
        elif hit.address == _text(address):  # the lock holds what the allocator gave again (a rebuild): no parse
            if pool is not None and int(address) & mask == first:
                final[i] = address
                kept[version].append(int(address))
            else:
                moved.append((i, hit))
        elif _inside(hit.address, pool):
            held = ip_interface(hit.address)
            if held.network.prefixlen != address.network.prefixlen:  # the plan's subnets changed size: a move
                moved.append((i, hit))
            elif _edge(held):  # never a plan's: the lock was edited
                moves.invalid(f"the address of {row.device} {row.interface} is its subnet's network or broadcast")
            else:
                final[i] = held
                kept[version].append(int(held))
        else:
            moved.append((i, hit))
    if len(final) < len(rows):  # else (a rebuild) every row is kept: nothing to place
        for family, values in kept.items():
            space.take_all(family, values)
        gateways = {
            (rows[i].device, rows[i].address.version): final[i].network
            for i in final
            if rows[i].purpose.endswith("gateway")
        }
        for (_, version), net in gateways.items():
            space.reserve(version, int(net.network_address), net.num_addresses)
        # 2. new subnets (a new leaf's) where they are free, else the next free block; the leaf's rows move along
        shift: dict[tuple[str, int], int] = {}
        for i, row in enumerate(rows):
            if i in final or not row.purpose.endswith("gateway"):
                continue
            version, net = row.address.version, row.address.network
            size = net.num_addresses
            start = int(net.network_address)
            if not space.free(version, start, size):
                pool, _, first = pools[(row.purpose, version)]
                found = space.next_free(pool, net.prefixlen, first)
                if found is None:
                    continue  # no room: the row keeps its fresh value; the plan checks see the clash
                shift[(row.device, version)] = found - start
                start = found
            final[i] = interface_at(int(row.address.ip) + shift.get((row.device, version), 0), net.prefixlen, version)
            gateways[(row.device, version)] = ip_network((start, net.prefixlen))
            space.reserve(version, start, size)
            space.take(version, int(final[i].ip))
        # 3. the rest: in its leaf's subnet when it has one, else the next free unit of its pool
        for i, row in enumerate(rows):
            if i in final:
                continue
            version = row.address.version
            subnet = gateways.get((row.peer_device, version)) if row.purpose in ("server", "mgmt") else None
            fresh = int(row.address.ip) + shift.get((row.peer_device, version), 0)
            if subnet is not None:
                if ip_interface((fresh, subnet.prefixlen)).ip not in subnet or space.taken(version, fresh):
                    spot = space.next_free(subnet, subnet.max_prefixlen, 2, inside=True)
                    fresh = spot if spot is not None else fresh
                final[i] = interface_at(fresh, subnet.prefixlen, version)
                space.take(version, fresh)
                continue
            pool, unit, first = pools.get((row.purpose, version), (None, 0, 0))
            if row.purpose in _PAIRED:
                continue  # pairs, below
            if space.free(version, fresh, 1) or pool is None:
                final[i] = row.address
            else:
                spot = space.next_free(pool, unit, first)
                final[i] = (
                    interface_at(spot, row.address.network.prefixlen, version) if spot is not None else row.address
                )
            space.take(version, int(final[i].ip))
        # 4. new point-to-point links: both ends in one free /31 (/127)
        pairs: dict[tuple[str, str, str, str, int], list[int]] = {}
        for i, row in enumerate(rows):
            if i not in final and row.purpose in _PAIRED:
                ends = sorted([(row.device, row.interface), (row.peer_device, row.peer_interface)])
                pairs.setdefault((*ends[0], *ends[1], row.address.version), []).append(i)
        for members in pairs.values():
            version = rows[members[0]].address.version
            low = min(int(rows[m].address.network.network_address) for m in members)
            if not space.free(version, low, 2):
                pool, unit, first = pools[(rows[members[0]].purpose, version)]
                spot = space.next_free(pool, unit, first)
                if spot is not None:
                    for m in members:
                        offset = int(rows[m].address.ip) - int(rows[m].address.network.network_address)
                        final[m] = interface_at(spot + offset, unit, version)
            for m in members:
                final.setdefault(m, rows[m].address)
                space.take(version, int(final[m].ip))
    for i, hit in moved:
        now = final.get(i, rows[i].address)
        if str(now) != hit.address:
            moves.add(
                "addressing",
                f"address {hit.address} of {rows[i].device} {rows[i].interface} would become {now}",
                "addressing",
                rows[i].fabric,
            )
    rows = [
        row if (new := final.get(i)) is None or new is row.address else replace(row, address=new)
        for i, row in enumerate(rows)
    ]
    return rows, None


# --------------------------------------------------------------------------------------------- ASNs, devices


def _asns(
    design: Design, plan: Allocation, lock: Lock, now: dict[str, Any], loopbacks: dict[str, str], moves: _Moves
) -> list[AsnRow]:
    """Locked ASNs are kept while their fabric's ASN plan is the lock's; a new switch whose own ASN (a leaf's,
    or any under `unique`) is taken by a locked one gets the next ASN above all of them."""
    locked = {a.device: a for a in lock.asns}
    same_plan = {k for k, f in lock.spec.fabrics.items() if k in now["fabrics"] and f.asn == now["fabrics"][k]["asn"]}
    present = {r.device for r in plan.asns}
    taken = {a.asn for a in lock.asns if a.device in present}
    top = max([*taken, *(r.asn for r in plan.asns)], default=0)
    out: list[AsnRow] = []
    for row in plan.asns:
        hit = locked.get(row.device)
        asn = row.asn
        plan_scheme = (design.spec.fabrics[row.fabric].asn or design.spec.asn).scheme
        own = row.layer in (Layer.LEAF, Layer.NODE) or plan_scheme == "unique"  # (a routing host's: its own)
        if hit is not None and hit.fabric == row.fabric and hit.fabric in same_plan:
            asn = hit.asn
        elif hit is not None and hit.asn != row.asn:
            moves.add(f"fabrics.{row.fabric}.asn", f"ASN {hit.asn} of {row.device} would become {row.asn}", row.fabric)
        elif hit is None and own and asn in taken:
            top += 1
            asn = top
        out.append(AsnRow(row.device, row.fabric, row.layer, asn, loopbacks.get(row.device, row.router_id)))
    return out


def _devices(lock: Lock, topo: Topology, moves: _Moves) -> None:
    for d in lock.devices:
        dev = topo.devices.get(d.name)
        scope = d.fabric or "nodes"
        path = "nodes" if d.layer == Layer.NODE else f"fabrics.{d.fabric}"
        if dev is None:
            moves.add(path, f"device {d.name} would be removed", scope)
        elif dev.model != d.model or dev.layer != d.layer:
            moves.add(path, f"device {d.name} would change from {d.layer} {d.model} to {dev.layer} {dev.model}", scope)
        elif d.rack and ((dev.rack or ""), (dev.u or 0)) != (d.rack, d.u):
            moves.add("racks", f"device {d.name} would move from {d.rack} U{d.u} to {dev.rack or '?'} U{dev.u}", scope)


def keep_locked(design: Design, topo: Topology, plan: Allocation) -> Allocation:
    """The plan with the lock's assignments kept for what is still there; `lock-move` findings for the rest."""
    if design.lock is None:
        return plan
    lock = design.lock.lock
    now = spec_facts(design, topo)
    moves = _Moves(design, spec_changes(lock, now), now)
    _devices(lock, topo, moves)
    cables = _cables(plan, lock, topo, moves)
    addresses, texts = _addresses(design, plan, lock, topo, moves)
    loopbacks = {r.device: str(r.address.ip) for r in addresses if r.purpose == "loopback" and r.address.version == 4}
    asns = _asns(design, plan, lock, now, loopbacks, moves)
    return Allocation(tuple(cables), tuple(addresses), tuple(asns), (*plan.findings, *moves.findings), texts)
