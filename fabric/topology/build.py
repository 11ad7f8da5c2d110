"""Expand a validated design into devices, racks and one topology per fabric: its switches and links (and,
on first use, its networkx graph: see FabricTopology.graph)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fabric.model.draft import FabricDraft
from fabric.model.findings import Finding, error
from fabric.model.kinds import Layer
from fabric.model.topology import Device, FabricTopology, Link, Topology, new_device
from fabric.spec.loader import Design, suggest
from fabric.spec.paths import locate
from fabric.spec.schema import MAX_NAME, NAME_RULE, ClosTopology, CsvTopology, ExplicitTopology, is_name
from fabric.topology.attach import NodeEntry, attachments, expand_nodes, mgmt_dependencies
from fabric.topology.clos import generate_clos
from fabric.topology.held import held_choices
from fabric.topology.racks import Placeable, new_placeable, parse_rack, place
from fabric.topology.superpod import compute_fabric, superpod_order, unit_order

if TYPE_CHECKING:  # explicit.py loads for an explicit or CSV fabric
    from fabric.topology.explicit import Pin


def _fabric_order(design: Design) -> tuple[list[str], list[Finding]]:
    """Fabrics in spec order, except that a fabric comes after those whose management ports it attaches."""
    spec = design.spec
    deps = {key: mgmt_dependencies(spec, key) for key in spec.fabrics}
    order: list[str] = []
    findings: list[Finding] = []
    visiting: set[str] = set()

    def visit(key: str) -> None:
        if key in order:
            return
        if key in visiting:
            findings.append(
                error(
                    "mgmt-cycle",
                    f"fabrics.{key}.attach",
                    f"fabric `{key}` attaches switch management ports in a cycle",
                    "only one fabric (the out-of-band one) should attach switch_mgmt",
                )
            )
            return
        visiting.add(key)
        for dep in deps[key]:
            visit(dep)
        visiting.discard(key)
        order.append(key)

    for key in spec.fabrics:
        visit(key)
    return order, findings


def build_topology(design: Design) -> Topology:
    spec, catalog = design.spec, design.catalog
    nodes, findings = expand_nodes(spec)
    order, order_findings = _fabric_order(design)
    findings.extend(order_findings)
    drafts: dict[str, FabricDraft] = {}
    pins: dict[str, Pin] = {}
    switch_lists: dict[str, list[tuple[str, str, str | None]]] = {}
    owners = {n.name: n.group for n in nodes}
    held = held_choices(design.lock.lock) if design.lock is not None else {}
    findings.extend(_node_names(nodes))
    for key in order:
        fabric = spec.fabrics[key]
        attached = attachments(spec, key, catalog, nodes, switch_lists)
        if spec.racks.layout == "superpod" and drafts:
            attached = unit_order(attached, drafts, compute_fabric(spec))
        if isinstance(fabric.topology, ClosTopology):
            draft = generate_clos(key, fabric, catalog, attached, held.get(key))
        elif isinstance(fabric.topology, ExplicitTopology):
            from fabric.topology.explicit import build_explicit  # (a Clos design need not load explicit.py)

            result = build_explicit(key, fabric, catalog, nodes, attached)
            draft, fabric_pins = result.draft, result.pins
            pins.update(fabric_pins)
        else:
            assert isinstance(fabric.topology, CsvTopology)
            from fabric.topology.explicit import build_from_csv

            result = build_from_csv(key, fabric, catalog, nodes, attached, design.inputs.csv[key])
            draft, fabric_pins = result.draft, result.pins
            pins.update(fabric_pins)
        clashes = _draft_names(key, draft, owners)
        if clashes:  # a graph cannot hold two devices of one name: this fabric is left empty
            findings.extend(clashes)
            draft = FabricDraft(tiers=draft.tiers, findings=draft.findings)
        drafts[key] = draft
        findings.extend(draft.findings)
        switch_lists[key] = [(s.name, s.model, s.platform) for s in draft.switches]

    findings.extend(_unique_names(nodes, drafts))
    findings.extend(_sm_hosts(design, nodes))
    placement = place(_locked_positions(design, _placeables(design, nodes, drafts, pins)), spec.racks)
    findings.extend(placement.findings)

    devices: dict[str, Device] = {}
    for node in nodes:
        node_type = catalog.nodes[node.type]
        rack, u = placement.positions.get(node.name, (None, None))
        devices[node.name] = new_device(
            node.name,
            Layer.NODE,
            node.type,
            group=node.group,
            index=node.index,
            rack=rack,
            u=u,
            height_u=node_type.u,
            power_w=node_type.power_w,
        )
    for key in spec.fabrics:
        for sw in drafts[key].switches:
            model = catalog.switches[sw.model]
            rack, u = placement.positions.get(sw.name, (None, None))
            devices.setdefault(
                sw.name,
                new_device(
                    sw.name,
                    sw.layer,
                    sw.model,
                    fabric=key,
                    plane=sw.plane,
                    su=sw.su,
                    rail=sw.rail,
                    pod=sw.pod,
                    index=sw.index,
                    platform=sw.platform,
                    rack=rack,
                    u=u,
                    height_u=model.u,
                    power_w=model.power_w,
                ),
            )

    fabrics = {key: _fabric_topology(design, key, drafts[key], devices) for key in spec.fabrics}
    csv_files = {f"fabrics.{key}.topology.file": table.file for key, table in design.inputs.csv.items()}
    if csv_files:
        from fabric.topology.explicit import locate_csv_rows

        findings = locate_csv_rows(findings, csv_files)
    located = tuple(locate(design.doc, f) for f in findings)
    return Topology(spec.name, devices, fabrics, placement.racks, located)


def _shown(names: Sequence[str]) -> str:
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def _node_names(nodes: Sequence[NodeEntry]) -> list[Finding]:
    """Expanded node names are names too (a long group name plus a wide index can pass 64 characters)."""
    bad: dict[str, list[str]] = {}
    for node in nodes:
        if not is_name(node.name):
            bad.setdefault(node.group, []).append(node.name)
    return [
        error(
            "invalid-name",
            f"nodes[group={group}].name",
            f"{len(names)} node name(s) of group `{group}` are not valid names: {_shown(names)}",
            NAME_RULE + f", at most {MAX_NAME} characters",
        )
        for group, names in bad.items()
    ]


def _draft_names(key: str, draft: FabricDraft, owners: dict[str, str]) -> list[Finding]:
    """A fabric's expanded switch names: valid names, each given once, none a node's."""
    names = [s.name for s in draft.switches]
    findings = []
    invalid = [n for n in names if not is_name(n)]
    if invalid:
        findings.append(
            error(
                "invalid-name",
                f"fabrics.{key}.naming",
                f"{len(invalid)} switch name(s) of fabric `{key}` are not valid names: {_shown(invalid)}",
                NAME_RULE + f", at most {MAX_NAME} characters (prefix included)",
            )
        )
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if repeated:
        findings.append(
            error(
                "duplicate-name",
                f"fabrics.{key}.naming",
                f"{len(repeated)} switch name(s) of fabric `{key}` are given to more than one switch: "
                f"{_shown(repeated)}",
                "put {index} (or {su}, {rail}, {pod}, {plane}) in the naming templates so that every switch gets "
                "its own name",
            )
        )
    taken = sorted({n for n in names if n in owners})
    groups = sorted({owners[n] for n in taken})
    for group in groups:
        mine = [n for n in taken if owners[n] == group]
        findings.append(
            error(
                "duplicate-name",
                f"fabrics.{key}.naming",
                f"{len(mine)} switch name(s) of fabric `{key}` are already used by node group `{group}`: "
                f"{_shown(mine)}",
                "set fabrics.<name>.naming.prefix so that the fabrics' switch names differ",
            )
        )
    return findings


def _unique_names(nodes: Sequence[NodeEntry], drafts: dict[str, FabricDraft]) -> list[Finding]:
    owner: dict[str, str] = {n.name: f"node group `{n.group}`" for n in nodes}
    clashes: dict[tuple[str, str], list[str]] = {}
    for key, draft in drafts.items():
        for sw in draft.switches:
            first = owner.setdefault(sw.name, f"fabric `{key}`")
            if first != f"fabric `{key}`":
                clashes.setdefault((key, first), []).append(sw.name)
    findings = []
    for (key, first), names in clashes.items():
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        findings.append(
            error(
                "duplicate-name",
                f"fabrics.{key}.naming",
                f"{len(names)} switch name(s) of fabric `{key}` are already used by {first}: {shown}",
                "set fabrics.<name>.naming.prefix so that the fabrics' switch names differ",
            )
        )
    return findings


def _sm_hosts(design: Design, nodes: Sequence[NodeEntry]) -> list[Finding]:
    """Subnet managers run on nodes of the design."""
    names = {n.name for n in nodes}
    findings = []
    for key, fabric in design.spec.fabrics.items():
        if fabric.infiniband is None:
            continue
        for i, host in enumerate(fabric.infiniband.sm.hosts):
            if host not in names:
                findings.append(
                    error(
                        "unknown-device",
                        f"fabrics.{key}.infiniband.sm.hosts[{i}]",
                        f"no node `{host}`",
                        suggest(host, sorted(names)),
                    )
                )
    return findings


def _placeables(
    design: Design, nodes: Sequence[NodeEntry], drafts: dict[str, FabricDraft], pins: dict[str, Pin]
) -> list[Placeable]:
    spec, catalog = design.spec, design.catalog
    per_rack = {g.group: g.per_rack for g in spec.nodes}
    node_types = catalog.nodes
    items = [
        new_placeable(n.name, node_types[n.type].u, node_types[n.type].power_w, f"group:{n.group}", per_rack[n.group])
        for n in nodes
    ]
    seen: set[str] = set()
    for key in spec.fabrics:
        for sw in drafts[key].switches:
            if sw.name in seen:
                continue
            seen.add(sw.name)
            model = catalog.switches[sw.model]
            pin = pins.get(sw.name)
            items.append(
                new_placeable(
                    sw.name,
                    model.u,
                    model.power_w,
                    f"fabric:{key}",
                    rack=pin.rack if pin else None,
                    u=pin.u if pin else None,
                    path=pin.path if pin else "",
                )
            )
    if spec.racks.layout == "superpod":
        return superpod_order(items, drafts, compute_fabric(spec))
    return items


def _locked_positions(design: Design, items: list[Placeable]) -> list[Placeable]:
    """A device of an earlier build (the design's lock) stays in its rack and U, unless the spec pins it or its
    rack's row is gone; new devices go to racks of their own (place() fills no pinned rack)."""
    if design.lock is None:
        return items
    where = {d.name: (d.rack, d.u) for d in design.lock.lock.devices if d.rack and d.u}
    layout = design.spec.racks
    # each rack of the lock parsed once (a lock names a few hundred racks for 100,000 devices)
    kept = {rack for rack in {rack for rack, _ in where.values()} if parse_rack(layout, rack) is not None}
    out = []
    for item in items:
        at = where.get(item.name) if item.rack is None else None
        if at is not None and at[0] in kept:
            i = item
            item = new_placeable(i.name, i.height_u, i.power_w, i.block, i.per_rack, at[0], at[1], i.path, i.row_group)
        out.append(item)
    return out


def _fabric_topology(design: Design, key: str, draft: FabricDraft, devices: dict[str, Device]) -> FabricTopology:
    spec = design.spec
    fabric = spec.fabrics[key]
    switches = tuple(s.name for s in draft.switches)
    links: tuple[Link, ...] = tuple(draft.links)
    topo = fabric.topology
    return FabricTopology(
        name=key,
        role=spec.fabric_role(key),
        technology=fabric.technology,
        generated=isinstance(topo, ClosTopology),
        tiers=draft.tiers,
        planes=topo.planes
        if isinstance(topo, ClosTopology)
        else max([d.plane or 1 for d in (devices[s] for s in switches)] or [1]),
        switches=switches,
        links=links,
        target_leaf=fabric.oversubscription.leaf,
        target_spine=fabric.oversubscription.spine,
        params=draft.params,
        provisioned_down=dict(draft.provisioned_down),
        rail_optimized=topo.rail_optimized,
        devices=devices,
    )
