"""The subnet manager's own routes under OpenSM's `updn` (up*/down*) routing engine: the forwarding tables it programs,
per switch and destination channel-adapter port, worked out from the planned fabric (plain data, no numpy).

A re-statement of upstream OpenSM 3.3.23 (github.com/linux-rdma/opensm; `opensm/osm_ucast_updn.c`, the unicast
manager's `ucast_mgr_build_lfts` in `opensm/osm_ucast_mgr.c` and `osm_switch_recommend_path` in
`opensm/osm_switch.c`), for the routes to channel-adapter ports with OpenSM's defaults (LMC 0, no
`connect_roots`, `port_shifting`, `scatter_ports`, `guid_routing_order_file`, `port_profile_switch_nodes` or
`ids_guid_file`):

- ranks (`updn_subn_rank`): breadth-first from the switches of `root_guid_file` (rank 0);
- min-hop tables (`updn_bfs_by_node`): per destination switch, a breadth-first search outward from it that never
  turns from a down step to an up one, a step being up towards a lower rank (between equal ranks: towards the
  larger node GUID; between two roots: up), setting the hop count of each port of the switch it reaches; a switch
  whose count improves is queued again unless it is queued already (its direction fixed when queued);
- forwarding tables (`ucast_mgr_build_lfts`): the CA ports in the unicast manager's order — the switches by
  their number of CA links, most first (glibc's qsort, a stable merge sort, keeps node-GUID order on ties), each
  switch's CA ports in port order — and at every switch the port, among those with the least hops to the CA's
  switch, that has routed the fewest CA ports so far (the first in port order on a tie); the CA's own switch
  delivers on the CA's port. Routes to switch LIDs are not counted by OpenSM's default (and not modelled here).

The LIDs OpenSM assigns do not enter: the order is the unicast manager's port list, not the LID order.
Refused (`NotModelled`): no root file (updn would find roots from a hop histogram), a switch the roots do not
reach, LMC > 0."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from fabric.analysis.traffic.sm import IbGraph, NotModelled, Routes, qmap_order

NO_HOPS = 0xFF  # OSM_NO_PATH: a port without a path to the LID
UP, DOWN = 0, 1


def _direction(rank: int, remote_rank: int, guid: int, remote_guid: int) -> int:
    """updn_get_dir: the step from a switch to its neighbour."""
    if rank == 0 and remote_rank == 0:
        return UP
    if rank < remote_rank:
        return DOWN
    if rank > remote_rank:
        return UP
    return UP if guid > remote_guid else DOWN


def updn_routes(graph: IbGraph) -> Routes:
    """The output port OpenSM's updn programs at every switch for every CA port GUID (NotModelled: where not)."""
    if not graph.roots:
        raise NotModelled("no root GUID file: updn would find the roots from its hop histogram")
    switches = graph.switches
    ports: dict[str, dict[int, tuple[str, int]]] = {k: {} for k in (*switches, *graph.cas)}
    for a, ap, b, bp in graph.cables:
        ports[a][ap] = (b, bp)
        ports[b][bp] = (a, ap)
    # the switch neighbours of each switch, in port order: (port, neighbour, its port)
    links = {s: [(p, r, rp) for p, (r, rp) in sorted(ports[s].items()) if r in switches and r != s] for s in switches}
    rank = _ranks(graph, links)
    hops = {d: _hops(d, links, rank, switches) for d in switches}  # destination switch → switch → port → hops
    order = _ca_order(graph, ports)
    routes: Routes = {}
    for s in switches:
        count: dict[int, int] = {}  # paths routed per port (osm_switch_count_path)
        table: dict[int, int] = {}
        for leaf, leaf_port, guid in order:
            if leaf == s:
                out = leaf_port
            else:
                at = hops[leaf][s]
                least = min(at.values(), default=NO_HOPS)
                if least == NO_HOPS:
                    continue
                out = min((p for p, _, _ in links[s] if at.get(p) == least), key=lambda p: (count.get(p, 0), p))
            table[guid] = out
            count[out] = count.get(out, 0) + 1
        routes[s] = table
    return routes


def _ranks(graph: IbGraph, links: dict[str, list[tuple[int, str, int]]]) -> dict[str, int]:
    """updn_subn_rank: hops from the nearest root."""
    rank: dict[str, int] = {}
    queue: deque[str] = deque()
    for key in sorted(dict.fromkeys(graph.roots), key=lambda k: qmap_order(graph.switches[k])):
        rank[key] = 0
        queue.append(key)
    while queue:
        s = queue.popleft()
        for _, r, _ in links[s]:
            if r not in rank or rank[r] > rank[s] + 1:
                rank[r] = rank[s] + 1
                queue.append(r)
    unreached = [s for s in graph.switches if s not in rank]
    if unreached:
        raise NotModelled(f"switch {unreached[0]} is not reachable from the roots")
    return rank


def _hops(
    dest: str, links: dict[str, list[tuple[int, str, int]]], rank: dict[str, int], guid: Mapping[str, int]
) -> dict[str, dict[int, int]]:
    """updn_bfs_by_node from `dest`: per switch, per port, the hops to `dest` over up*/down* paths (ports without
    a path left out); the least of a switch's ports is its least hops."""
    hops: dict[str, dict[int, int]] = {s: {} for s in links}
    least: dict[str, int] = {dest: 0}
    direction = {dest: UP}
    queued = {dest}
    queue: deque[str] = deque([dest])
    while queue:
        u = queue.popleft()
        queued.discard(u)
        here = direction[u]
        for _, r, rport in links[u]:
            step = _direction(rank[u], rank[r], guid[u], guid[r])
            if here == DOWN and step == UP:
                continue
            now = least.get(u, NO_HOPS) + 1
            if now < hops[r].get(rport, NO_HOPS):
                hops[r][rport] = now
                if now < least.get(r, NO_HOPS):
                    least[r] = now
                if r not in queued:
                    direction[r] = step
                    queued.add(r)
                    queue.append(r)
    return hops


def _ca_order(graph: IbGraph, ports: dict[str, dict[int, tuple[str, int]]]) -> list[tuple[str, int, int]]:
    """sort_ports_by_switch_load: (switch, its port, CA port GUID) in the order the unicast manager routes them."""
    switches = sorted(graph.switches, key=lambda k: qmap_order(graph.switches[k]))
    attached = {
        s: [(p, graph.ca_ports[(r, rp)]) for p, (r, rp) in sorted(ports[s].items()) if (r, rp) in graph.ca_ports]
        for s in switches
    }
    order: list[tuple[str, int, int]] = []
    seen: set[int] = set()
    for s in sorted(switches, key=lambda k: -len(attached[k])):  # stable: GUID order on ties
        for p, guid in attached[s]:
            if guid not in seen:
                seen.add(guid)
                order.append((s, p, guid))
    return order
