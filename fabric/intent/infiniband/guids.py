"""GUIDs: read from the user's inventory file, or placeholders derived from names.

A switch has one GUID (node = port = system image GUID). A channel adapter (CA, one RDMA device
such as `mlx5_3`) has a node GUID G, and its port p has the port GUID G + p unless the inventory
gives another: ibsim derives port GUIDs that way, and fabric writes them that way in every file.

Placeholders are `0xfab0` followed by 40 bits of a SHA-256 of the device (and HCA) name and a zero
low byte that leaves room for the port numbers: the same name always gets the same GUID, whatever
else the design holds (collisions, which are improbable, are resolved in name order).

Inventory CSV (header required; extra columns ignored):

    device,port,node_guid,port_guid
    su1-rail0-leaf,,0xb83fd2030042a1c0,
    dgx001,mlx5_0,0x946dae0300aa1b20,0x946dae0300aa1b21

`port` is empty for a switch; for a server it names the HCA (`mlx5_0`) or one of its cabled ports
(`OSFP4P2`). GUIDs are written `0x` + up to 16 hex digits, 16 bare hex digits, or as `ibv_devinfo`
prints them (`946d:ae03:00aa:1b20`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from operator import itemgetter

from fabric.fast.frozen import maker
from fabric.spec.inventory import INVENTORY_COLUMNS, Inventory, InventoryRow, format_guid, parse_guid, parse_inventory

PLACEHOLDER_PREFIX = 0xFAB0
PORT_BITS = 8  # low bits left for port numbers under a placeholder node GUID


def is_placeholder(guid: int) -> bool:
    return guid >> 48 == PLACEHOLDER_PREFIX


def placeholder_guid(name: str, attempt: int = 0) -> int:
    salted = name if attempt == 0 else f"{name}#{attempt}"
    body = int.from_bytes(hashlib.sha256(salted.encode()).digest()[:5], "big")
    return (PLACEHOLDER_PREFIX << 48) | (body << PORT_BITS)


@dataclass(frozen=True, slots=True)
class GuidNeed:
    """A node that needs a GUID: a switch (hca None) or one HCA of a server with its ports in order."""

    device: str
    hca: str | None
    ports: tuple[str, ...]  # cabling port names of a CA, port 1 first; () for a switch

    @property
    def key(self) -> str:
        return self.device if self.hca is None else f"{self.device} {self.hca}"


@dataclass(frozen=True, slots=True)
class Guids:
    """A switch's or HCA's node GUID and port GUIDs, from the inventory or placeholders."""

    node: int
    ports: tuple[int, ...]  # port GUIDs of a CA, port 1 first; () for a switch
    placeholder: bool
    source_line: int = 0  # inventory line, 0 for a placeholder


_guids = maker(Guids)  # one per switch and HCA: 108,000 at 100k GPUs


def assign_guids(needs: Iterable[GuidNeed], inventory: Inventory | None) -> tuple[dict[str, Guids], list[InventoryRow]]:
    """GUIDs for every node (by key); the inventory rows that matched nothing."""
    return _assign(sorted(((n.key, n) for n in needs), key=itemgetter(0)), inventory)  # each key formatted once


def assign_keyed_guids(
    needs: Mapping[str, GuidNeed], inventory: Inventory | None
) -> tuple[dict[str, Guids], list[InventoryRow]]:
    """`assign_guids` of needs by their keys, which the caller made (a million HCAs at 1M GPUs)."""
    return _assign(sorted(needs.items(), key=itemgetter(0)), inventory)


def _assign(
    keyed: list[tuple[str, GuidNeed]], inventory: Inventory | None
) -> tuple[dict[str, Guids], list[InventoryRow]]:
    """`assign_guids` of the needs with their keys, in key order."""
    by_key = dict(keyed)
    given = inventory.rows if inventory else ()
    by_port = {(n.device, p): n for _, n in keyed if n.hca is not None for p in n.ports} if given else {}
    found: dict[str, list[InventoryRow]] = {}
    unused: list[InventoryRow] = []
    for row in given:
        need = by_key.get(f"{row.device} {row.port}" if row.port else row.device) or by_port.get((row.device, row.port))
        if need is None or (need.hca is None) != (row.port == ""):
            unused.append(row)
        else:
            found.setdefault(need.key, []).append(row)
    out: dict[str, Guids] = {}
    taken: set[int] = set()
    for key, rows in found.items():
        need = by_key[key]
        node = rows[0].node_guid
        ports = [node + p for p in range(1, len(need.ports) + 1)]
        for row in rows:
            if row.port_guid is not None:
                number = need.ports.index(row.port) + 1 if row.port in need.ports else 1
                ports[number - 1] = row.port_guid
        out[key] = Guids(node, tuple(ports), False, rows[0].line)
        taken.update((node, *ports))
    if not taken and all(len(need.ports) < 1 << PORT_BITS for _, need in keyed):
        _placeholders_by_block(keyed, out)  # (no GUID given: the usual case, a million HCAs at 1M GPUs)
        return out, unused
    for key, need in keyed:
        if key in out:
            continue
        attempt = 0
        while True:
            guid = placeholder_guid(key, attempt)
            span = range(guid, guid + len(need.ports) + 1)  # the node GUID and its port GUIDs
            if taken.isdisjoint(span):
                break
            attempt += 1
        taken.update(span)
        out[key] = _guids(guid, tuple(span[1:]), True)
    return out, unused


def _placeholders_by_block(keyed: list[tuple[str, GuidNeed]], out: dict[str, Guids]) -> None:
    """Placeholders when no GUID is given, as `assign_guids` makes them: a placeholder's span (its node GUID, then
    one a port) stays inside its block of 2**PORT_BITS GUIDs (its low byte is zero, its ports fewer), so two spans
    meet only where their blocks are one; a set of blocks, not of every GUID (docs/dev/performance.md)."""
    blocks: set[int] = set()
    for key, need in keyed:
        attempt = 0
        guid = placeholder_guid(key)
        while guid >> PORT_BITS in blocks:
            attempt += 1
            guid = placeholder_guid(key, attempt)
        blocks.add(guid >> PORT_BITS)
        out[key] = _guids(guid, tuple(range(guid + 1, guid + len(need.ports) + 1)), True)


__all__ = [
    "INVENTORY_COLUMNS",
    "GuidNeed",
    "Guids",
    "Inventory",
    "InventoryRow",
    "assign_guids",
    "assign_keyed_guids",
    "format_guid",
    "is_placeholder",
    "parse_guid",
    "parse_inventory",
    "placeholder_guid",
]
