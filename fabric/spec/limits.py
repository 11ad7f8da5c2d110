"""Up-front sanity limits: refuse a design no catalog switch can build before expanding anything.

A folded Clos of radix-k switches connects at most k³/4 endpoints in 3 tiers (k/2 down-ports per leaf,
k/2 pods of k/2 leaves, k²/4 spines per pod... the classic fat-tree bound), times the fabric's planes.
k is the most logical ports (every cage at its widest breakout) of any switch model the fabric names.
`count: 1000000000000` is answered here in milliseconds instead of after minutes of expansion.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabric.model.findings import Finding, error
from fabric.spec.catalog import Catalog, SwitchModel
from fabric.spec.schema import ClosTopology, NodeAttach, Spec


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
        if not isinstance(fabric.topology, ClosTopology):
            continue  # explicit links are bounded by the size of the file that lists them
        models = {fabric.switches.for_layer(layer).model for layer in ("leaf", "spine", "core")}
        radix = max(max_radix(catalog.switches[m]) for m in models if m in catalog.switches)
        planes = fabric.topology.planes
        limit = max_endpoints(radix, planes)
        ports = 0
        for attach in fabric.attach:
            if isinstance(attach, NodeAttach) and attach.group in groups:
                node_type = catalog.nodes.get(groups[attach.group].type)
                group_ports = node_type.ports.get(attach.ports) if node_type else None
                if group_ports is not None:
                    ports += groups[attach.group].count * len(group_ports.port_list())
        if ports > limit:
            yield error(
                "too-large",
                f"fabrics.{key}.attach",
                f"fabric `{key}` attaches {ports:,} node ports; a Clos of radix-{radix} switches connects at most "
                f"{limit:,} ({radix}³/4 in 3 tiers × {planes} plane{'s' if planes > 1 else ''})",
                "use more planes, a switch of higher radix, or fewer nodes",
            )
