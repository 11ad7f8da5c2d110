"""The subnet manager's own routes: the forwarding tables OpenSM's `ftree` routing engine programs, per switch and
destination channel-adapter port, worked out from the planned fabric (no numpy: plain data in, plain data out).

A re-statement of upstream OpenSM's `opensm/osm_ucast_ftree.c` (3.3.23; the file is unchanged since 2019, commit
393f6651 of github.com/linux-rdma/opensm), step for step, for the routes to channel-adapter ports:

- ranks: breadth-first from the roots of `root_guid_file` (rank 0); leaves are the switches with compute nodes;
- indexing: a breadth-first walk from the first leaf in node-GUID order gives every switch a tuple
  (`fabric_make_indexing`); switch tables are walked in the order of the node GUID as OpenSM keys its maps (the
  GUID's bytes in network order read as a little-endian number);
- port groups: the ports of a switch to one neighbour, in port order; down and up groups sorted by the neighbour's
  tuple, then by load during routing (the bubble sorts, whose ties fall to the tuple);
- `fabric_route_to_cns`: per leaf in tuple order, per compute port in port order, the route up the least loaded
  uplink (`fabric_route_downgoing_by_going_up`) and down from every switch it reaches
  (`fabric_route_upgoing_by_going_down`), the counters of every port and group as OpenSM keeps them; a leaf with
  fewer compute ports than the fullest routes dummies to keep the balance;
- `fabric_route_to_non_cns`: the other CA ports (I/O nodes, UFM hosts), in node-GUID order.

What it leaves out, and refuses (`NotModelled`): links between switches of one rank (ftree's sibling groups), CAs on
a switch above the leaf rank, `max_reverse_hops` > 0 with I/O ports, LMC > 0. Routes to switch LIDs (management
traffic, `fabric_route_to_switches`) are not modelled: the table holds CA destinations only."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

TUPLE_LEN = 8  # FTREE_TUPLE_LEN
UNSET = 0xFF  # tuple_init


class NotModelled(ValueError):
    """A fabric or setting the ftree model does not reproduce (the message says which)."""


@dataclass(frozen=True, slots=True)
class IbGraph:
    """An InfiniBand subnet as the routing engine sees it: switches and CAs by key with their node GUIDs, cables
    between (node, IB port) ends, CA port GUIDs, and the roles of the GUID files."""

    switches: Mapping[str, int]  # key → node GUID
    cas: Mapping[str, int]  # key → node GUID
    cables: Sequence[tuple[str, int, str, int]]  # (node, port, node, port)
    ca_ports: Mapping[tuple[str, int], int]  # (CA, port) → port GUID
    roots: Sequence[str]  # root_guid_file, in file order
    cns: frozenset[int] | None  # cn_guid_file port GUIDs; None: no file (every CA port is a compute node)
    ios: frozenset[int] | None  # io_guid_file port GUIDs; None: no file
    max_reverse_hops: int = 0


Routes = dict[str, dict[int, int]]  # switch key → destination CA port GUID → output port


def qmap_order(guid: int) -> int:
    """The order OpenSM's cl_qmap keeps a node GUID in: its network-order bytes read on a little-endian host."""
    return int.from_bytes(guid.to_bytes(8, "big"), "little")


@dataclass(eq=False)
class _Port:
    """A switch port in a port group, with OpenSM's route counters (ftree_port_t)."""

    num: int
    remote_num: int
    counter_up: int = 0
    counter_down: int = 0


@dataclass(eq=False)
class _Group:
    """A switch's ports to one neighbour (ftree_port_group_t): one CA port, or one switch over parallel cables."""

    remote: str  # switch key, or CA key
    to_switch: bool
    ports: list[_Port] = field(default_factory=list)
    target: int | None = None  # the CA port GUID behind a CA group
    counter_up: int = 0
    counter_down: int = 0


@dataclass(eq=False)
class _Switch:
    """A switch as ftree keeps it (ftree_sw_t): rank, index tuple, up and down port groups."""

    key: str
    guid: int
    rank: int = -1
    tuple: tuple[int, ...] = (UNSET,) * TUPLE_LEN
    is_leaf: bool = False
    up: list[_Group] = field(default_factory=list)
    down: list[_Group] = field(default_factory=list)
    down_idx: int = 0


class _Ftree:
    def __init__(self, graph: IbGraph) -> None:
        self.g = graph
        self.sw = {k: _Switch(k, guid) for k, guid in graph.switches.items()}
        self.order = sorted(self.sw.values(), key=lambda s: qmap_order(s.guid))
        self.adj: dict[str, dict[int, tuple[str, int]]] = {k: {} for k in (*graph.switches, *graph.cas)}
        for a, ap, b, bp in graph.cables:
            self.adj[a][ap] = (b, bp)
            self.adj[b][bp] = (a, ap)
        self.lft: dict[str, int] = {}  # the current target's table and hops, per switch
        self.hops: dict[str, int] = {}

    # ----------------------------------------------------------------------------------------- construction

    def build(self) -> None:
        self._rank()
        ca_role = self._roles()
        for s in self.order:
            self._ports(s, ca_role)
        leaf_rank = self._leaf_rank(ca_role)
        self.leaf_rank = leaf_rank
        for s in self.sw.values():
            if s.rank < 0:
                raise NotModelled(f"switch {s.key} is not reachable from the roots")
            if any(not g.to_switch for g in s.down) and s.rank != leaf_rank:
                raise NotModelled(f"CAs on {s.key}, above the leaf rank")
            if any(g.target in self.cn for g in s.down if not g.to_switch):
                s.is_leaf = True
        self._index()
        self.leaves = self._leaf_array()
        self.max_cn = max(sum(1 for g in s.down if not g.to_switch and g.target in self.cn) for s in self.leaves)

    def _rank(self) -> None:
        queue: deque[_Switch] = deque()
        for key in self.g.roots:
            self.sw[key].rank = 0
            queue.append(self.sw[key])
        while queue:
            s = queue.popleft()
            for port in sorted(self.adj[s.key]):
                remote = self.sw.get(self.adj[s.key][port][0])
                if remote is not None and (remote.rank < 0 or remote.rank > s.rank + 1):
                    remote.rank = s.rank + 1
                    queue.append(remote)

    def _roles(self) -> dict[int, str]:
        """CA port GUID → cn | io | other (fabric_populate_ports)."""
        roles: dict[int, str] = {}
        for guid in self.g.ca_ports.values():
            role = "cn"
            listed = False
            if self.g.cns is not None:
                listed = guid in self.g.cns
                role = "cn" if listed else "other"
            if not listed and self.g.ios is not None and guid in self.g.ios:
                role = "io"
            roles[guid] = role
        self.cn = {g for g, r in roles.items() if r == "cn"}
        if not self.cn:
            raise NotModelled("no compute nodes: ftree refuses the fabric")
        if self.g.max_reverse_hops and any(r == "io" for r in roles.values()):
            raise NotModelled("max_reverse_hops > 0 (reverse hops of I/O nodes)")
        return roles

    def _ports(self, s: _Switch, roles: Mapping[int, str]) -> None:
        """fabric_construct_sw_ports: a group per neighbour (per CA port), ports in port order."""
        groups: dict[tuple[str, int], _Group] = {}
        for port in sorted(self.adj[s.key]):
            rkey, rport = self.adj[s.key][port]
            if rkey == s.key:
                continue
            remote = self.sw.get(rkey)
            if remote is None:  # a CA port: a group of its own (keyed by its LID)
                gkey = (rkey, rport)
                direction = "down"
            else:
                gkey = (rkey, 0)
                if s.rank == remote.rank:
                    raise NotModelled(f"a link between {s.key} and {rkey}, switches of one rank")
                direction = "up" if s.rank > remote.rank else "down"
            group = groups.get(gkey)
            if group is None:
                group = _Group(rkey, remote is not None)
                if remote is None:
                    group.target = self.g.ca_ports[(rkey, rport)]
                groups[gkey] = group
                (s.up if direction == "up" else s.down).append(group)
            group.ports.append(_Port(port, rport))

    def _leaf_rank(self, roles: Mapping[int, str]) -> int:
        ranks = set()
        for (ca, port), guid in self.g.ca_ports.items():
            if roles[guid] == "cn" and port in self.adj[ca]:
                ranks.add(self.sw[self.adj[ca][port][0]].rank)
        if len(ranks) != 1:
            raise NotModelled("compute nodes at more than one rank")
        return ranks.pop()

    def _index(self) -> None:
        """fabric_make_indexing with quasi_ftree_indexing off: BFS from the first leaf in GUID order."""
        taken: set[tuple[int, ...]] = set()

        def new_tuple(base: tuple[int, ...], down: bool) -> tuple[int, ...]:
            t = list(base)
            if down:
                t[0] += 1
                var = base[0] + 1
            else:
                t[0] -= 1
                var = base[0]
            for i in range(UNSET):
                t[var] = i
                if tuple(t) not in taken:
                    return tuple(t)
            raise NotModelled("more than 255 switches in one direction")

        first = next(s for s in self.order if s.is_leaf)
        start = [UNSET] * TUPLE_LEN
        start[0] = first.rank
        for i in range(1, self.leaf_rank + 1):
            start[i] = 0
        first.tuple = tuple(start)
        taken.add(first.tuple)
        queue: deque[_Switch] = deque([first])
        while queue:
            s = queue.popleft()
            if s.rank < self.leaf_rank:
                for g in s.down:
                    remote = self.sw[g.remote]
                    if remote.tuple[0] != UNSET:
                        continue
                    remote.tuple = new_tuple(s.tuple, True)
                    taken.add(remote.tuple)
                    queue.append(remote)
                s.down.sort(key=lambda g: self.sw[g.remote].tuple)
            if s.rank != 0:
                for g in s.up:
                    remote = self.sw[g.remote]
                    if remote.tuple[0] != UNSET:
                        continue
                    remote.tuple = new_tuple(s.tuple, False)
                    taken.add(remote.tuple)
                    queue.append(remote)
                s.up.sort(key=lambda g: self.sw[g.remote].tuple)

    def _leaf_array(self) -> list[_Switch]:
        at_rank = sorted((s for s in self.order if s.rank == self.leaf_rank), key=lambda s: s.tuple)
        real = [i for i, s in enumerate(at_rank) if s.is_leaf]
        if len(real) < 2:
            raise NotModelled("fewer than two leaves with compute nodes: ftree refuses the fabric")
        return at_rank[real[0] : real[-1] + 1]

    # ----------------------------------------------------------------------------------------- routing

    def _down(self, s: _Switch, prev: _Switch | None, hops: int) -> bool:
        """fabric_route_upgoing_by_going_down (no sibling groups)."""
        if not s.down:
            return False
        if all(g.to_switch for g in s.down):  # bubble_sort_up; a leaf's CA groups stay in port order
            s.down.sort(key=lambda g: (g.counter_up, self.sw[g.remote].tuple))
        created = False
        for g in list(s.down):
            if not g.to_switch:
                created = True
                continue
            if prev is not None and g.remote == prev.key:
                continue
            if not g.ports:
                continue
            port = min(g.ports, key=lambda p: p.counter_up)  # the first of the least loaded
            remote = self.sw[g.remote]
            least = self.hops.get(remote.key)
            if least is not None and hops + 1 >= least:
                continue
            self.lft[remote.key] = port.remote_num
            self.hops[remote.key] = hops + 1
            routed = self._down(remote, None, hops + 1)
            created |= routed
            if routed:
                port.counter_up += 1
                g.counter_up += 1
        if created:
            s.down_idx = (s.down_idx + 1) % len(s.down)
        return created

    def _up(self, s: _Switch, prev: _Switch | None, main: bool, hops: int) -> bool:
        """fabric_route_downgoing_by_going_up (no reverse hops, no sibling groups)."""
        created = self._down(s, prev, hops)
        if s.rank == 0:
            return created
        s.up.sort(key=lambda g: (g.counter_down, self.sw[g.remote].tuple))
        group = s.up[0]
        port = min(group.ports, key=lambda p: p.counter_down)
        remote = self.sw[group.remote]
        if main:
            group.counter_down += 1
            port.counter_down += 1
            if remote.key not in self.lft or hops + 1 < self.hops[remote.key]:
                self.lft[remote.key] = port.remote_num
                self.hops[remote.key] = hops + 1
            created |= self._up(remote, s, main, hops + 1)
        for group in s.up[1 if main else 0 :]:
            remote = self.sw[group.remote]
            if remote.key in self.lft and hops + 1 >= self.hops[remote.key]:
                continue
            if not group.ports:
                continue
            port = min(group.ports, key=lambda p: p.counter_down)
            self.lft[remote.key] = port.remote_num
            self.hops[remote.key] = hops + 1
            created |= self._up(remote, s, False, hops + 1)
        return created

    def _target(self, leaf: _Switch, port: int | None) -> dict[str, int]:
        """Route one destination (a dummy when `port` is None) from its leaf: that target's table."""
        self.lft, self.hops = {}, {leaf.key: 1}
        if port is not None:
            self.lft[leaf.key] = port
        self._up(leaf, None, True, 1)
        return self.lft

    def route(self) -> Routes:
        tables: Routes = {k: {} for k in self.sw}

        def keep(target: int, lft: Mapping[str, int]) -> None:
            for key, out in lft.items():
                tables[key][target] = out

        for leaf in self.leaves:
            routed = 0
            for g in leaf.down:
                if g.to_switch or g.target not in self.cn:
                    continue
                assert g.target is not None
                keep(g.target, self._target(leaf, g.ports[0].num))
                routed += 1
            for _ in range(self.max_cn - routed):
                self._target(leaf, None)
        for ca in sorted(self.g.cas, key=lambda k: qmap_order(self.g.cas[k])):
            for port in sorted(p for c, p in self.g.ca_ports if c == ca):
                guid = self.g.ca_ports[(ca, port)]
                if guid in self.cn or port not in self.adj[ca]:
                    continue
                skey, sport = self.adj[ca][port]
                keep(guid, self._target(self.sw[skey], sport))
        return tables


def ftree_routes(graph: IbGraph) -> Routes:
    """The output port OpenSM's ftree programs at every switch for every CA port GUID (NotModelled: where not)."""
    engine = _Ftree(graph)
    engine.build()
    return engine.route()
