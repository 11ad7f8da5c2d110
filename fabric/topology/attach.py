"""Nodes and what attaches to a fabric's leaves.

Node groups expand into named nodes; a fabric's `attach` list turns into attachments: one per
node (or per switch management port), each with its ports in rail order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fabric.fast.frozen import maker
from fabric.model.findings import Finding, error
from fabric.spec.catalog import Catalog, node_lane_gbps
from fabric.spec.platforms import mgmt_port
from fabric.spec.schema import NodeAttach, Spec, SwitchMgmtAttach

MGMT_SPEED_GBPS = 1


@dataclass(frozen=True, slots=True)
class NodeEntry:
    """A node of a node group: its name, group, node type and index in the group."""

    name: str
    group: str
    type: str
    index: int


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A node port that a fabric cables: its device, port, speed and rail."""

    device: str
    port: str
    speed_gbps: int
    rail: int | None
    lane_gbps: int = 0  # its signalling, Gb/s a lane (node_lane_gbps; 0: not a node port)


@dataclass(frozen=True, slots=True)
class Attachment:
    """A device's ports on one fabric, from one attach entry of the spec."""

    device: str
    group: str  # node group, or "mgmt" for a switch's management port
    ports: tuple[Endpoint, ...]  # rail ports first, by rail, then the rest in catalog order
    path: str  # spec path of the attach entry

    @property
    def railed(self) -> bool:
        return all(p.rail is not None for p in self.ports)


# as cheaply as plain dataclasses: a node entry and an attachment per node, an endpoint per port (100,000 at 100k)
_node_entry, _endpoint, new_attachment = maker(NodeEntry), maker(Endpoint), maker(Attachment)


def expand_nodes(spec: Spec) -> tuple[list[NodeEntry], list[Finding]]:
    nodes: list[NodeEntry] = []
    findings: list[Finding] = []
    seen: dict[str, str] = {}
    for group in spec.nodes:
        clashes: list[str] = []
        name_of, group_name, node_type = group.name.format, group.group, group.type  # (looked up once a group)
        for index in range(group.start, group.start + group.count):
            name = name_of(group=group_name, index=index)
            if name in seen:
                clashes.append(name)
                continue
            seen[name] = group_name
            nodes.append(_node_entry(name, group_name, node_type, index))
        if clashes:
            shown = ", ".join(clashes[:4]) + (f" and {len(clashes) - 4} more" if len(clashes) > 4 else "")
            findings.append(
                error(
                    "duplicate-name",
                    f"nodes[group={group.group}].name",
                    f"{len(clashes)} node name(s) of group `{group.group}` are taken already: {shown}",
                    "give the groups different name templates or start indexes",
                )
            )
    return nodes, findings


def attachments(
    spec: Spec,
    key: str,
    catalog: Catalog,
    nodes: Sequence[NodeEntry],
    switch_mgmt: Mapping[str, Sequence[tuple[str, str, str | None]]],
) -> list[Attachment]:
    """What `attach` of fabric `key` connects, in spec order. `switch_mgmt`: fabric → [(switch, model, platform)]."""
    fabric = spec.fabrics[key]
    by_group: dict[str, list[NodeEntry]] = {}
    for node in nodes:
        by_group.setdefault(node.group, []).append(node)
    out: list[Attachment] = []
    for i, entry in enumerate(fabric.attach):
        path = f"fabrics.{key}.attach[{i}]"
        if isinstance(entry, NodeAttach):
            group = next(g for g in spec.nodes if g.group == entry.group)
            port_group = catalog.nodes[group.type].ports[entry.ports]
            ports = port_group.port_list()
            ordered = sorted(range(len(ports)), key=lambda j: (ports[j].rail is None, ports[j].rail or 0, j))
            speed, named = port_group.speed_gbps, [(ports[j].name, ports[j].rail) for j in ordered]
            lane = node_lane_gbps(port_group)
            members, group_name, append = by_group.get(entry.group, []), entry.group, out.append
            if len(named) == 1:  # one port a node (no comprehension a node: 12,288 at 4 x 256 EOS)
                ((port, rail),) = named
                for node in members:
                    name = node.name
                    append(new_attachment(name, group_name, (_endpoint(name, port, speed, rail, lane),), path))
            else:
                for node in members:
                    name = node.name
                    ends = tuple([_endpoint(name, port, speed, rail, lane) for port, rail in named])
                    append(new_attachment(name, group_name, ends, path))
        elif isinstance(entry, SwitchMgmtAttach):
            others = [f for f in spec.fabrics if f != key] if entry.switch_mgmt == "all" else entry.switch_mgmt
            for other in others:
                for name, model, platform in switch_mgmt.get(other, ()):
                    port = mgmt_port(platform, catalog.switches[model].mgmt_port)
                    out.append(new_attachment(name, "mgmt", (_endpoint(name, port, MGMT_SPEED_GBPS, None),), path))
    return out


def mgmt_dependencies(spec: Spec, key: str) -> list[str]:
    """Fabrics whose switches must exist before fabric `key` (it attaches their management ports)."""
    deps: list[str] = []
    for entry in spec.fabrics[key].attach:
        if isinstance(entry, SwitchMgmtAttach):
            deps.extend(f for f in spec.fabrics if f != key) if entry.switch_mgmt == "all" else deps.extend(
                entry.switch_mgmt
            )
    return [d for d in dict.fromkeys(deps) if d in spec.fabrics and d != key]
