"""Checks on each InfiniBand subnet's intent: can the chosen engine route it, do the SM files make sense.
Each runs on the IntentContext over every subnet; SUBNET_CHECKS lists them (fabric/intent/checks.py collects them).

ftree admissibility follows OpenSM's `doc/current-routing.txt` for a fabric with a root GUID file:
a tree of 2 to 8 switch ranks, the ranks OpenSM computes from the roots (breadth first) equal to the
planned tiers, every compute node at the lowest rank (they attach to leaves), LMC 0, at least one
compute node. A fabric that fails any of these is refused by ftree, and OpenSM would fall back to
the next engine (or, without `no_fallback`, silently to minhop).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator

from fabric.intent.context import IntentCheck, IntentContext
from fabric.intent.infiniband.guids import format_guid
from fabric.intent.infiniband.ports import RATE_CODES
from fabric.intent.infiniband.subnet import AR_ENGINES, Subnet, ftree_role, settings_path
from fabric.model.findings import Finding, error, warning
from fabric.model.topology import LAYER_RANK
from fabric.spec.loader import Design

FTREE_ENGINES = ("ftree", "ar_ftree")
MAX_RANKS = 8


def _list(names: list[str], limit: int = 4) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _ftree(design: Design, subnet: Subnet) -> Iterator[Finding]:
    engines = [e for e in subnet.engines if e != "no_fallback"]
    if not engines or engines[0] not in FTREE_ENGINES:
        return
    path = settings_path(design, subnet.fabric, "routing_engine")
    nxt = engines[1] if len(engines) > 1 else None
    fallback = f"OpenSM would fall back to {nxt}" if nxt else "OpenSM would fall back to minhop or not route at all"
    hint = "fix the topology, or put an engine that routes any topology first (routing_engine: [updn])"
    where = f"fabric {subnet.label}"
    if subnet.settings.lmc:
        yield error(
            "ftree-admissible",
            settings_path(design, subnet.fabric, "lmc"),
            f"ftree does not support LMC > 0 (lmc is {subnet.settings.lmc}); {fallback}",
            "set lmc: 0, or use updn",
        )
    if subnet.tiers < 2:
        yield error(
            "ftree-admissible",
            path,
            f"{where} has one switch tier; ftree needs a tree of 2 to {MAX_RANKS} switch ranks; {fallback}",
            hint,
        )
        return
    yield from _ranks(subnet, path, fallback, hint)
    if not any(ftree_role(subnet.settings, group) == "compute" for group in subnet.cabled_groups):
        yield error(
            "ftree-admissible",
            settings_path(design, subnet.fabric, "compute_groups"),
            f"{where} has no compute nodes for ftree (every attached group is an I/O group or not a compute group); "
            f"{fallback}",
            "list the GPU node groups in compute_groups, or leave compute_groups out",
        )


def _ranks(subnet: Subnet, path: str, fallback: str, hint: str) -> Iterator[Finding]:
    """OpenSM ranks switches breadth first from the roots (the switches of the top tier); each must land on its
    planned tier."""
    neighbours: dict[str, set[str]] = {s: set() for s in subnet.layers}
    for c in subnet.cables:  # (a switch's key is its name; a CA's, `<device> <hca>`, is no switch's)
        a, b = c.link.a, c.link.b
        if a in neighbours and b in neighbours:
            neighbours[a].add(b)
            neighbours[b].add(a)
    roots = [s for s, layer in subnet.layers.items() if LAYER_RANK[layer] == subnet.tiers]
    rank = dict.fromkeys(roots, 0)
    queue = deque(rank)
    while queue:
        here = queue.popleft()
        for there in neighbours[here]:  # (any order: a rank is a distance)
            if there not in rank:
                rank[there] = rank[here] + 1
                queue.append(there)
    wrong: list[str] = []
    unreached: list[str] = []
    for switch, layer in subnet.layers.items():
        expected = subnet.tiers - LAYER_RANK[layer]
        got = rank.get(switch)
        if got is None:
            unreached.append(switch)
        elif got != expected:
            wrong.append(f"{switch} ({layer}) at rank {got}, planned {expected}")
    if unreached:
        yield error(
            "ftree-admissible",
            path,
            f"{len(unreached)} switch(es) of fabric {subnet.label} have no path to a root "
            f"({', '.join(roots[:2])}…): {_list(unreached)}; {fallback}",
            hint,
        )
    if wrong:
        yield error(
            "ftree-admissible",
            path,
            f"fabric {subnet.label} is not a fat tree: ranked from the roots, {len(wrong)} switch(es) sit on another "
            f"tier than planned: {_list(wrong, 3)}; {fallback}",
            hint,
        )


def _sm_hosts(ctx: IntentContext) -> Iterator[Finding]:
    """Each SM host a node of the design (else the topology stage reports it) with a cabled port in the subnet."""
    devices = ctx.topology.devices
    for subnet in ctx.subnets:
        for i, host in enumerate(subnet.settings.sm.hosts):
            if host in devices and host not in subnet.cabled_devices:
                yield error(
                    "sm-host",
                    settings_path(ctx.design, subnet.fabric, f"sm.hosts[{i}]"),
                    f"SM host `{host}` has no port in fabric {subnet.label}",
                    "run the subnet manager on a node attached to this fabric",
                )


def _flavor(design: Design, subnet: Subnet) -> Iterator[Finding]:
    """Adaptive-routing engines on upstream OpenSM. Run under ibsim (tests/live/test_ibsim.py), upstream OpenSM
    3.3 logs "cannot find or setup routing engine 'ar_updn'" and goes on with the next engine of the list; with
    none left (and `no_fallback`) it routes nothing and the subnet never comes up."""
    if subnet.flavor != "upstream":
        return
    engines = [e for e in subnet.engines if e != "no_fallback"]
    ar = [e for e in engines if e in AR_ENGINES]
    if not ar:
        return
    rest = [e for e in engines if e not in AR_ENGINES]
    if rest:  # (without `no_fallback` the list has minhop, so there is always a rest then)
        then = f"it skips {'it' if len(ar) == 1 else 'them'} and goes on with {rest[0]}"
        make = warning
    else:
        then = "no engine is left, so the fabric stays unrouted"
        make = error
    yield make(
        "sm-flavor",
        settings_path(design, subnet.fabric, "routing_engine"),
        f"{_list(ar)} {'is' if len(ar) == 1 else 'are'} NVIDIA's OpenSM's (UFM) adaptive routing, and fabric "
        f"{subnet.label}'s SM hosts run upstream OpenSM, which cannot set {'it' if len(ar) == 1 else 'them'} up: "
        f"{then}",
        "set `sm.flavor: ufm` if the SM hosts run UFM, or list upstream engines only (e.g. [ftree, updn])",
    )


SM_APPLIANCES = ("ufm-appliance",)  # node types built to run the subnet manager (the catalog's UFM appliance)


def _no_sm(ctx: IntentContext) -> Iterator[Finding]:
    """An InfiniBand fabric with no `sm.hosts`: nothing plans where the subnet manager runs. Without a running SM
    the ports stay in INIT (physically up, no LID, no route) and the fabric carries no traffic (ibstat's port
    states, advancedclustering.com/act_kb/infiniband-port-states: "Initializing … make sure you have a managed
    switch, or … opensm running on a node"). fabric writes an opensm.conf bound to no host then. One finding per
    fabric (its planes share the setting); the hint names attached UFM appliances first, else attached nodes."""
    seen: set[str] = set()
    for subnet in ctx.subnets:
        if subnet.fabric in seen or subnet.settings.sm.hosts:
            continue
        seen.add(subnet.fabric)
        devices = list(dict.fromkeys(d for s in ctx.subnets if s.fabric == subnet.fabric for d in s.attached))
        models = ctx.topology.devices
        appliances = [d for d in devices if d in models and models[d].model in SM_APPLIANCES]
        pick = (appliances or devices)[:2]
        where = settings_path(ctx.design, subnet.fabric)
        example = f" (e.g. `infiniband: {{sm: {{hosts: [{', '.join(pick)}]}}}}`)" if pick else ""
        yield warning(
            "no-subnet-manager",
            where,
            f"fabric `{subnet.fabric}` plans no subnet manager (no `infiniband.sm.hosts`): until one runs, every "
            "port stays in INIT and the fabric carries no traffic; the opensm.conf written is bound to no host",
            "name the hosts that run it, master first: UFM appliances attached to the fabric, as DGX SuperPOD has "
            f"them, or two attached nodes running OpenSM{example}",
        )


def _guids(design: Design, subnet: Subnet) -> Iterator[Finding]:
    """Node and port GUIDs are unique in a subnet (an inventory can break that: port GUID = node GUID + port)."""
    if subnet.placeholder_only:
        # placeholders only: each node's span (its node GUID and port GUIDs) was chosen apart from every other's
        # (guids.py), so none is used twice; not asked of 1,500,000 GUIDs a subnet at a million GPUs
        return
    owners: dict[int, set[str]] = {}
    for node in subnet.nodes:
        owners.setdefault(node.guid, set()).add(node.key)
    for port in subnet.cabled:  # the CA ends of the cables, in cable order
        owners.setdefault(port.guid, set()).add(port.node)
    clashes = [f"{format_guid(g)} ({' and '.join(sorted(keys))})" for g, keys in owners.items() if len(keys) > 1]
    if clashes:
        yield error(
            "duplicate-guid",
            settings_path(design, subnet.fabric, "inventory"),
            f"{len(clashes)} GUID(s) are used twice in fabric {subnet.label}: {_list(clashes, 2)}",
            "give each HCA's port_guid in the inventory (on ConnectX-4 and later the port GUID often equals the "
            "node GUID, so node GUID + port can hit the next adapter)",
        )


def _partitions(design: Design, subnet: Subnet) -> Iterator[Finding]:
    spec_parts = subnet.settings.partitions
    for part in subnet.partitions:
        if part.added:
            continue
        i = next(j for j, p in enumerate(spec_parts) if p.pkey == part.pkey)
        path = settings_path(design, subnet.fabric, f"partitions[{i}]")
        if part.keyword is None and not part.members:
            yield warning(
                "empty-partition",
                path,
                f"partition `{part.name}` has no member port in fabric {subnet.label}",
                "its member groups are not attached to this fabric",
            )
        if part.ipoib and part.rate_gbps is not None and part.rate_code is None:
            yield error(
                "partition-rate",
                path + ".rate_gbps",
                f"{part.rate_gbps} Gb/s is not an InfiniBand rate",
                "use one of " + ", ".join(str(r) for r in sorted(RATE_CODES)),
            )


def _each_subnet(check: Callable[[Design, Subnet], Iterator[Finding]]) -> IntentCheck:
    def run(ctx: IntentContext) -> Iterator[Finding]:
        for subnet in ctx.subnets:
            yield from check(ctx.design, subnet)

    run.__name__ = check.__name__.lstrip("_")
    return run


SUBNET_CHECKS: dict[str, IntentCheck] = {
    "ftree-admissible": _each_subnet(_ftree),
    "sm-hosts": _sm_hosts,
    "sm-flavor": _each_subnet(_flavor),
    "no-subnet-manager": _no_sm,
    "guids": _each_subnet(_guids),
    "partitions": _each_subnet(_partitions),
}
