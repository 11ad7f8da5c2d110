"""Up-front sanity limits: refuse a design no catalog switch can build before expanding anything.

A 3-tier folded Clos of radix-k switches has at most k pods (a core has one port per pod), a pod at most
`spine down-ports` leaves, a leaf `leaf down-ports` nodes: k · (k·f_spine) · (k·f_leaf) endpoints per plane,
where f is the share of a switch's ports that face down (1/2 at 1:1, so k³/4; 2/3 at 2:1). k is the most
logical ports at the fabric's speed (as the generator lays the switches out) of the switch models the fabric
names; the catalog-wide bound takes every cage at its widest breakout. The check refuses
only past twice that figure, so a design near the limit still gets the topology stage's precise `radix`
finding; `count: 1000000000000` is answered here in milliseconds instead of after minutes of expansion.

Past these per-fabric bounds, the total work of a design is bounded whatever its catalog (a part file's
8,192-port switch lifts the Clos capacity, not these): nodes of every group (attached to a fabric or not),
their ports, the links a fabric's Clos would lay out, and the ports of switches counted out explicitly. The
links and ports are capped by what an allocations lock holds (`MAX_ENTRIES` entries a list: a cable, an address
each), so a design past them could not be rebuilt from its lock anyway; the largest benchmarked design (1M
GPUs, 3 tiers) holds ~3,000,000 cables.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabric.model.findings import Finding, error
from fabric.model.lock_format import MAX_ENTRIES
from fabric.spec.catalog import Catalog, SwitchModel, best_speed, switch_ports
from fabric.spec.schema import LAYERS, ClosTopology, NodeAttach, Spec


def max_radix(model: SwitchModel) -> int:
    return sum(group.cages * max(mode.ports for mode in group.modes) for group in model.ports)


def max_endpoints(radix: int, planes: int) -> int:
    return radix**3 // 4 * planes


def largest_fabric(catalog: Catalog) -> tuple[int, str]:
    """The most endpoints any fabric of the catalog can connect (8 planes of 3 tiers), and the model."""
    best = max(catalog.switches.items(), key=lambda item: max_radix(item[1]))
    return max_endpoints(max_radix(best[1]), 8), best[0]


def size_findings(spec: Spec, catalog: Catalog) -> Iterator[Finding]:
    """Designs larger than any fabric of their switches can be. Runs on a cross-checked spec."""
    limit_nodes, model = largest_fabric(catalog)
    total = sum(group.count for group in spec.nodes)
    if total > limit_nodes:
        yield error(
            "too-large",
            "nodes",
            f"the design has {total:,} nodes; the largest fabric the catalog can build ({model}, 3 tiers, "
            f"8 planes) connects {limit_nodes:,} ports",
            "no design of this size can be built; check the counts",
        )
        return
    groups = {g.group: g for g in spec.nodes}
    for key, fabric in spec.fabrics.items():
        topo = fabric.topology
        if not isinstance(topo, ClosTopology):
            continue  # explicit links are bounded by the size of the file that lists them
        models = [catalog.switches[m] for m in {fabric.switches.for_layer(x).model for x in LAYERS}]
        speeds = [
            catalog.nodes[groups[a.group].type].ports[a.ports].speed_gbps
            for a in fabric.attach
            if isinstance(a, NodeAttach) and a.group in groups
        ]
        if not speeds:
            continue
        wanted = fabric.speed_gbps or max(speeds)
        radix = max(len(switch_ports(m, best_speed(m, wanted))) for m in models)
        leaf = _down_share(fabric.oversubscription.leaf, topo.downlinks, topo.uplinks, radix)
        spine = _down_share(fabric.oversubscription.spine, topo.spine_downlinks, topo.spine_uplinks, radix)
        capacity = int(radix * (radix * spine) * (radix * leaf)) * topo.planes
        ports = 0
        for attach in fabric.attach:
            if isinstance(attach, NodeAttach) and attach.group in groups:
                node_type = catalog.nodes.get(groups[attach.group].type)
                group_ports = node_type.ports.get(attach.ports) if node_type else None
                if group_ports is not None:
                    ports += groups[attach.group].count * len(group_ports.port_list())
        if ports > 2 * capacity:
            planes = f"{topo.planes} plane{'s' if topo.planes > 1 else ''}"
            yield error(
                "too-large",
                f"fabrics.{key}.attach",
                f"fabric `{key}` attaches {ports:,} node ports; a 3-tier Clos of radix-{radix} switches at its "
                f"oversubscription connects at most {capacity:,} ({planes}), and designs past twice that are "
                "refused before building",
                "use more planes, a switch of higher radix, or fewer nodes",
            )


MAX_NODES = 1_000_000  # one a GPU at the planner's largest request (`plan --gpus` ≤ 1,000,000)
MAX_NODE_PORTS = 2_000_000  # every node port a cable and an address of the lock
MAX_LINKS = 4_000_000  # the lock's cables: a million GPUs on 3 tiers at 1:1 lay out ~3,000,000
MAX_SWITCH_PORTS = 2 * MAX_LINKS  # two ends a cable
assert MAX_LINKS <= MAX_ENTRIES and MAX_NODE_PORTS <= MAX_ENTRIES  # each fits a list of the lock


def work_findings(spec: Spec, catalog: Catalog) -> Iterator[Finding]:
    """The total work of the design, counted before expansion from every node group, part and fabric: nodes, node
    ports, links and switch ports past the limits above are `too-large`, each finding stating its limit."""
    nodes = sum(group.count for group in spec.nodes)
    if nodes > MAX_NODES:
        yield _too_much("nodes", f"the design has {nodes:,} nodes in all (attached to a fabric or not)", MAX_NODES)
        return
    per_type = {
        key: sum(len(g.ports) if g.ports is not None else (g.count or 0) for g in node.ports.values())
        for key, node in catalog.nodes.items()
    }
    ports = sum(group.count * per_type.get(group.type, 0) for group in spec.nodes)
    if ports > MAX_NODE_PORTS:
        yield _too_much("nodes", f"the design's nodes have {ports:,} ports in all", MAX_NODE_PORTS)
    groups = {g.group: g for g in spec.nodes}
    links = switch_ports = 0
    for fabric in spec.fabrics.values():
        topo = fabric.topology
        if not isinstance(topo, ClosTopology):
            continue  # explicit links are bounded by the size of the file that lists them
        attached = 0
        for attach in fabric.attach:
            if not isinstance(attach, NodeAttach):
                continue
            group = groups.get(attach.group)
            node = catalog.nodes.get(group.type) if group is not None else None
            port_group = node.ports.get(attach.ports) if node is not None else None
            if group is not None and port_group is not None:
                size = len(port_group.ports) if port_group.ports is not None else (port_group.count or 0)
                attached += group.count * size
        # node links, then each tier's uplinks at its down:up ratio (3 tiers unless the fabric says 2)
        leaf_up = attached / fabric.oversubscription.leaf
        two_tiers = topo.tiers == 2 or topo.kind == "spine-leaf"
        links += int(attached + leaf_up + (0 if two_tiers else leaf_up / fabric.oversubscription.spine))
        for layer, count in (("leaf", topo.leaves), ("spine", topo.spines), ("core", topo.cores)):
            model = catalog.switches.get(fabric.switches.for_layer(layer).model)
            if count is not None and model is not None:
                switch_ports += count * topo.planes * max_radix(model)
    if links > MAX_LINKS:
        yield _too_much("fabrics", f"the fabrics' Clos topologies would lay out about {links:,} links", MAX_LINKS)
    if switch_ports > MAX_SWITCH_PORTS:
        yield _too_much(
            "fabrics", f"the switches the fabrics count out have {switch_ports:,} ports in all", MAX_SWITCH_PORTS
        )


def _too_much(path: str, what: str, limit: int) -> Finding:
    return error(
        "too-large",
        path,
        f"{what}; a design may have at most {limit:,} (fabric's limit on total work, docs/safety.md)",
        "no design of this size is built; check the counts (a part file's larger switch does not lift this limit)",
    )


def _down_share(ratio: float, down: int | None, up: int | None, radix: int) -> float:
    """The share of a switch's ports that face down at a down:up ratio (or as given by down/up ports)."""
    share = ratio / (1 + ratio)
    if down is not None:
        share = max(share, min(down, radix) / radix)
    if up is not None:
        share = max(share, 1 - min(up, radix) / radix)
    return min(share, 1.0)
