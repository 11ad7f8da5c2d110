"""Generate a folded Clos (2 or 3 tiers, rail-optimized or not, one or more planes).

Sizing rules (each is the smallest design that meets them):
- Leaf ports split into downlinks and uplinks by the leaf oversubscription target
  (uplinks = ⌈radix / (1 + ratio)⌉); switches with a slow and a fast port group (SN2201) use the
  slow group down and the fast group up.
- Rail-optimized: one leaf per rail per scalable unit; node slot s of an SU uses down port s of
  each of its rail leaves. Other attachments fill the free down ports, most-free leaf first.
- Not rail-optimized: leaves in groups as wide as the most ports a node brings, so a
  dual-homed node lands on two leaves; nodes are spread evenly over the leaves.
- `dual_homing: bond`: the groups are MLAG pairs (leaf 2k-1 and 2k); the last PEER_LINKS down ports of each
  leaf are the pair's peer link (leaf-leaf cables, port i to port i), so nodes get the others. With a lock, a
  locked node keeps its ports on its pair and new nodes fill the pairs' free ports, then new pairs (as any
  group of leaves).
- 2 tiers: the fewest spines m with m × spine radix ≥ all uplinks and uplinks divisible by m
  (every leaf has uplinks/m links to every spine).
- 3 tiers: pods of leaves with one link to each of the pod's spines (uplinks spines per pod);
  spine j of every pod joins core group j; the fewest cores per group that fit, spread evenly.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

from fabric.model.draft import FabricDraft, SwitchDraft
from fabric.model.findings import error
from fabric.model.kinds import Layer, Tier, TierName
from fabric.model.topology import ClosParams, Link, new_link
from fabric.spec.catalog import Catalog, SwitchPort, best_speed, switch_ports
from fabric.spec.schema import ClosTopology, Fabric
from fabric.topology.attach import Attachment, Endpoint, new_attachment
from fabric.topology.held import Held
from fabric.topology.leaves import Leaf, smallest_divisor_at_least, split_leaf_ports

PEER_LINKS = 2  # cables of an MLAG peer link (`dual_homing: bond`): one may fail


class ClosGenerator:
    """One fabric's generator. `generate()` returns a draft: switches, links, design figures, findings."""

    def __init__(
        self,
        key: str,
        fabric: Fabric,
        catalog: Catalog,
        attachments: Sequence[Attachment],
        held: Held | None = None,
    ) -> None:
        assert isinstance(fabric.topology, ClosTopology)
        self.key = key
        self.fabric = fabric
        self.topo: ClosTopology = fabric.topology
        self.catalog = catalog
        self.attachments = attachments
        self.path = f"fabrics.{key}"
        self.draft = FabricDraft()
        self.bond = fabric.dual_homing == "bond"
        self.peer_ports: list[SwitchPort] = []  # the down ports an MLAG pair's peer link takes
        self.held = held  # what an earlier build chose (the lock; topology/held.py): kept while it fits
        self.reserved: range = range(0)  # the first SU's down ports of `reserved_slots`, for the non-rail ports

    # ----------------------------------------------------------------------------------------- helpers

    def _fail(self, code: str, path: str, message: str, hint: str = "") -> None:
        """Record why this fabric cannot be generated; it then has no switches or links."""
        self.draft.findings.append(error(code, path, message, hint))
        self.draft.switches.clear()
        self.draft.links.clear()
        self.draft.params = None
        self.draft.provisioned_down.clear()

    def _model(self, layer: str) -> tuple[str, str | None]:
        choice = self.fabric.switches.for_layer(layer)
        return choice.model, self.fabric.platform_of(layer, self.catalog.switches[choice.model].platform)

    def _prefix(self) -> str:
        if self.fabric.naming.prefix is not None:
            return self.fabric.naming.prefix
        return "" if self.key == "compute" else f"{self.key}-"

    def _name(self, template: str, plane: int, **fields: int | None) -> str:
        values = {"plane": plane, "su": 0, "rail": 0, "pod": 0, "index": 0}
        values.update({k: v for k, v in fields.items() if v is not None})
        name = template.format(**values)
        if self.topo.planes > 1 and "{plane" not in template:
            name = f"p{plane}-{name}"
        return self._prefix() + name

    # ----------------------------------------------------------------------------------------- main

    def generate(self) -> FabricDraft:
        topo, fabric = self.topo, self.fabric
        if topo.rail_optimized and topo.leaves is not None:
            self._fail(
                "spec-invalid",
                f"{self.path}.topology.leaves",
                "`leaves` cannot be set on a rail-optimized fabric",
                "the leaf count follows from scalable units × rails",
            )
            return self.draft
        if not self.attachments:
            self._fail(
                "empty-fabric",
                f"{self.path}.attach",
                f"nothing attaches to fabric `{self.key}`",
                "list node groups under attach, e.g. {group: gpu, ports: compute}",
            )
            return self.draft
        leaf_model_name, _ = self._model("leaf")
        leaf_model = self.catalog.switches[leaf_model_name]
        wanted = fabric.speed_gbps or max(p.speed_gbps for a in self.attachments for p in a.ports)
        layout = switch_ports(leaf_model, best_speed(leaf_model, wanted), self._model("leaf")[1])
        down_ports, up_ports, problem = split_leaf_ports(
            layout, fabric.oversubscription.leaf, topo.downlinks, topo.uplinks
        )
        if problem:
            self._fail(
                "port-budget",
                f"{self.path}.topology",
                f"leaf `{leaf_model_name}` {problem}",
                "lower downlinks/uplinks or pick a larger switch",
            )
            return self.draft
        if self.bond:
            width = max(len(a.ports) for a in self.attachments)
            if width != 2 or len(down_ports) <= PEER_LINKS:
                self._fail(
                    "port-budget",
                    f"{self.path}.dual_homing",
                    f"`dual_homing: bond` puts a node's 2 ports on a leaf pair and {PEER_LINKS} down ports per leaf "
                    f"into its peer link; the attached nodes bring up to {width} ports, a leaf has "
                    f"{len(down_ports)} down ports",
                    "attach a port group of 2 ports per node, or a larger leaf",
                )
                return self.draft
            down_ports, self.peer_ports = down_ports[:-PEER_LINKS], down_ports[-PEER_LINKS:]
        planes: list[list[Leaf]] = []
        for plane in range(1, topo.planes + 1):
            attached = (
                list(self.attachments)  # one plane: each attachment as it is (no copy)
                if topo.planes == 1
                else [
                    new_attachment(a.device, a.group, a.ports[plane - 1 :: topo.planes], a.path)
                    for a in self.attachments
                ]
            )
            attached = [a for a in attached if a.ports]
            if not attached:
                self._fail(
                    "empty-fabric",
                    f"{self.path}.topology.planes",
                    f"plane {plane} of {topo.planes} gets no ports: no attached node brings {plane} or more ports",
                    "use as many planes as the nodes have ports for this fabric, or fewer",
                )
                return self.draft
            leaves = self._leaves(plane, attached, down_ports)
            if leaves is None:
                return self.draft
            planes.append(leaves)
        for plane, leaves in enumerate(planes, start=1):
            if not self._upper_tiers(plane, leaves, up_ports):
                return self.draft
        return self.draft

    # ----------------------------------------------------------------------------------------- leaves

    def _leaves(self, plane: int, attached: Sequence[Attachment], down: list[SwitchPort]) -> list[Leaf] | None:
        if self.topo.rail_optimized:
            leaves = self._rail_leaves(plane, [a for a in attached if a.railed], down)
            if leaves is None:
                return None
            others = [a for a in attached if not a.railed]
            return leaves if self._fill_free(leaves, others) else None
        return self._group_leaves(plane, attached, down)

    def _rail_leaves(self, plane: int, railed: Sequence[Attachment], down: list[SwitchPort]) -> list[Leaf] | None:
        su_size = self.topo.scalable_unit or 1
        if not railed:
            self._fail(
                "rail-alignment",
                f"{self.path}.topology.rail_optimized",
                "rail_optimized, but no attached port group has rail (GPU) ports",
                "attach the GPU nodes' compute ports, or set rail_optimized: false",
            )
            return None
        rails = sorted({p.rail for a in railed for p in a.ports if p.rail is not None})
        per_rail = max(sum(1 for p in a.ports if p.rail == r) for a in railed for r in rails)
        if su_size * per_rail > len(down):
            self._fail(
                "port-budget",
                f"{self.path}.topology.scalable_unit",
                f"a scalable unit of {su_size} nodes needs {su_size * per_rail} down ports per rail leaf; "
                f"the leaf has {len(down)}",
                f"use scalable_unit: {len(down) // per_rail} or fewer, or a larger leaf",
            )
            return None
        # the last `reserved_slots` slots of the first SU are skipped (left to the non-rail ports, e.g. UFMs)
        first = su_size - self.topo.reserved_slots
        self.reserved = range(first * per_rail, su_size * per_rail)
        sus = math.ceil((len(railed) + self.topo.reserved_slots) / su_size)
        leaves: dict[tuple[int, int], Leaf] = {}
        for su in range(1, sus + 1):
            for rail in rails:
                leaves[(su, rail)] = Leaf(plane, su, rail, down)
        for index, att in enumerate(railed):
            su, slot = divmod(index if index < first else index + self.topo.reserved_slots, su_size)
            seen: dict[int, int] = {}
            for ep in att.ports:
                assert ep.rail is not None
                k = seen.get(ep.rail, 0)
                seen[ep.rail] = k + 1
                leaves[(su + 1, ep.rail)].used[slot * per_rail + k] = ep
        return list(leaves.values())

    def _fill_free(self, leaves: list[Leaf], others: Sequence[Attachment]) -> bool:
        """Attach non-rail endpoints to the leaves with the most free ports, one leaf per port of a node (a port the
        lock holds on its locked leaf port)."""
        if others and self._holding():
            names = {self._leaf_name(leaf.plane, leaf.su, leaf.rail, i): leaf for i, leaf in enumerate(leaves, 1)}
            others = self._place_held(names, others)
        for att in others:
            chosen: set[int] = set()
            for ep in att.ports:
                candidates = [i for i in range(len(leaves)) if leaves[i].free() > 0 and i not in chosen]
                if not candidates:
                    candidates = [i for i in range(len(leaves)) if leaves[i].free() > 0]
                if not candidates:
                    missing = sum(len(a.ports) for a in others[others.index(att) :])
                    self._fail(
                        "port-budget",
                        att.path,
                        f"no free leaf port for {att.device}:{ep.port}; {missing} more leaf ports are needed",
                        "leave node slots free (fewer nodes) or add a scalable unit",
                    )
                    return False
                # a port in a cage of its own signalling where one is free (an HDR UFM port in no NDR DGX cage);
                # else the mixed cage is placed as before and reported (cage-mixed-mode)
                # first the slots `reserved_slots` keeps in the first SU (a SuperPOD's UFM appliances), which no
                # rail node of a grown count takes
                kept = {i: port for i in candidates if (port := self._reserved_port(leaves[i])) is not None}
                fits = {i: port for i in candidates if (port := leaves[i].free_of_signalling(ep.lane_gbps)) is not None}
                ports = kept or fits
                best = max(ports or candidates, key=lambda i: (leaves[i].free(), -i))
                chosen.add(best)
                leaf = leaves[best]
                leaf.used[ports[best] if ports else leaf.next_free()] = ep
        return True

    def _reserved_port(self, leaf: Leaf) -> int | None:
        """The first SU leaf's lowest free port among the slots `reserved_slots` keeps; None elsewhere."""
        if leaf.su != 1:
            return None
        return next((i for i in self.reserved if i not in leaf.used), None)

    def _group_leaves(self, plane: int, attached: Sequence[Attachment], down: list[SwitchPort]) -> list[Leaf] | None:
        width = max(len(a.ports) for a in attached)
        total = sum(len(a.ports) for a in attached)
        if width > len(down):
            self._fail(
                "port-budget", f"{self.path}.attach", f"a node brings {width} ports; a leaf has {len(down)} down ports"
            )
            return None
        if self._holding():
            return self._held_group_leaves(plane, attached, down, width)
        groups = max(math.ceil(total / (len(down) * width)), math.ceil((self.topo.leaves or 1) / width))
        limit = math.ceil(total / (groups * width))  # ports per leaf when spread evenly
        leaves = [Leaf(plane, None, None, down) for _ in range(groups * width)]
        base = 0
        group = leaves[:width]
        for att in attached:
            need = len(att.ports)
            while True:
                room = sorted([(len(leaf.used), i) for i, leaf in enumerate(group) if len(leaf.used) < limit])
                if len(room) >= need:
                    break
                base += width
                if base >= len(leaves):  # uneven port counts can need one more group
                    leaves.extend(Leaf(plane, None, None, down) for _ in range(width))
                group = leaves[base : base + width]
            for ep, (_, i) in zip(att.ports, room, strict=False):  # (the `need` least used)
                leaf = group[i]
                leaf.used[leaf.next_free()] = ep
        return leaves

    # ----------------------------------------------------------------------------------------- what the lock holds

    def _holding(self) -> bool:
        """Whether the lock holds node ports of this fabric whose leaves can be named before they are generated (a
        leaf template without the pod, which only a 3-tier sizing decides)."""
        return self.held is not None and bool(self.held.ports) and "{pod" not in (self.fabric.naming.leaf or "")

    def _leaf_name(self, plane: int, su: int | None, rail: int | None, index: int) -> str:
        """The name _name_leaves gives the leaf at `index` (from 1) of a plane."""
        return self._name(self._leaf_template(), plane, su=su, rail=rail, index=index)

    def _leaf_template(self) -> str:
        return self.fabric.naming.leaf or ("su{su}-rail{rail}-leaf" if self.topo.rail_optimized else "leaf{index:02d}")

    def _place_held(self, leaves: dict[str, Leaf], attached: Sequence[Attachment]) -> list[Attachment]:
        """Each port the lock holds on a leaf port of these leaves that is free goes there; the attachments with
        the ports left, in order."""
        assert self.held is not None
        held = self.held.ports
        index: dict[int, dict[str, int]] = {}  # id of a down-port list (the leaves share one) → port name → index
        rest: list[Attachment] = []
        for att in attached:
            left: list[Endpoint] = []
            for ep in att.ports:
                spot = held.get((att.device, ep.port))
                leaf = leaves.get(spot[0]) if spot is not None else None
                if spot is None or leaf is None:
                    left.append(ep)
                    continue
                ports = index.get(id(leaf.down))
                if ports is None:
                    ports = index[id(leaf.down)] = {p.name: i for i, p in enumerate(leaf.down)}
                at = ports.get(spot[1])
                if at is None or at in leaf.used:
                    left.append(ep)
                else:
                    leaf.used[at] = ep
            if len(left) == len(att.ports):
                rest.append(att)
            elif left:
                rest.append(new_attachment(att.device, att.group, tuple(left), att.path))
        return rest

    def _held_group_leaves(
        self, plane: int, attached: Sequence[Attachment], down: list[SwitchPort], width: int
    ) -> list[Leaf]:
        """Leaves in groups as wide as the widest node, as many as the lock's (or `leaves`, if more): each port the
        lock holds on its leaf port; each new node on the least used leaves of the least used group with free
        ports for it (a leaf added to the spec takes the new nodes first); a new group after the others when all
        are full."""
        assert self.held is not None
        locked = self.held.leaves // self.topo.planes
        count = max(math.ceil(locked / width), math.ceil((self.topo.leaves or 1) / width)) * width
        leaves = [Leaf(plane, None, None, down) for _ in range(count)]
        named = {self._leaf_name(plane, None, None, i): leaf for i, leaf in enumerate(leaves, 1)}
        rest = self._place_held(named, attached)
        groups = [leaves[b : b + width] for b in range(0, len(leaves), width)]
        heap = [(sum(len(leaf.used) for leaf in group), g) for g, group in enumerate(groups)]
        heapq.heapify(heap)
        for att in rest:
            need = len(att.ports)
            aside: list[tuple[int, int]] = []  # groups with free ports, but fewer free leaves than this node needs
            while True:
                if not heap:  # every group full: a new one after the others
                    groups.append([Leaf(plane, None, None, down) for _ in range(width)])
                    leaves.extend(groups[-1])
                    heap.append((0, len(groups) - 1))
                load, g = heapq.heappop(heap)
                group = groups[g]
                room = sorted((len(leaf.used), i) for i, leaf in enumerate(group) if leaf.free() > 0)
                if len(room) >= need:
                    break
                if room:
                    aside.append((load, g))
            for ep, (_, i) in zip(att.ports, room, strict=False):
                leaf = group[i]
                leaf.used[leaf.next_free()] = ep
            if any(leaf.free() > 0 for leaf in group):  # a full group never takes a port again
                heapq.heappush(heap, (load + need, g))
            for entry in aside:
                heapq.heappush(heap, entry)
        return leaves

    # ----------------------------------------------------------------------------------------- spines, cores

    def _upper_tiers(self, plane: int, leaves: list[Leaf], up_ports: list[SwitchPort]) -> bool:
        topo = self.topo
        u = len(up_ports)
        up_speed = up_ports[0].speed_gbps
        spine_name, spine_platform = self._model("spine")
        spine_model = self.catalog.switches[spine_name]
        speed = best_speed(spine_model, up_speed)
        spine_layout = [p for p in switch_ports(spine_model, speed, spine_platform) if p.speed_gbps == speed]
        k_s = len(spine_layout)
        n = len(leaves)
        for leaf in leaves:
            leaf.uplinks = u
        fewest = smallest_divisor_at_least(u, math.ceil(n * u / k_s))  # None: 2 tiers cannot join n leaves
        tiers = topo.tiers if topo.tiers != "auto" else (2 if fewest is not None else 3)
        self.draft.tiers = tiers
        if tiers == 3:
            return self._build_three_tier(plane, leaves, up_ports, spine_name, spine_platform, spine_layout)
        d = len(leaves[0].down)
        m = topo.spines or self._held_spines(n, u, k_s) or fewest
        if m is None:
            self._fail(
                "radix",
                f"{self.path}.topology.tiers",
                f"2 tiers of {spine_name} ({k_s} ports at {speed}G) join at most {k_s} leaves "
                f"({k_s * d:,} leaf down ports); this fabric needs {n} leaves per plane",
                "set tiers: 3 (or auto), add planes, or use a switch with more ports",
            )
            return False
        if u % m:
            self._fail(
                "uneven-spread",
                f"{self.path}.topology.spines",
                f"{u} uplinks per leaf do not spread evenly over {m} spines",
                f"use a number of spines that divides {u}",
            )
            return False
        if n * (u // m) > k_s:
            self._fail(
                "port-budget",
                f"{self.path}.topology.spines",
                f"{m} spines of {k_s} ports cannot take {n} leaves × {u} uplinks ({n * u} links)",
                f"use at least {math.ceil(n * u / k_s)} spines (a divisor of {u})",
            )
            return False
        self._partial_su(leaves, up_speed, m)
        return self._build_two_tier(plane, leaves, up_ports, m, spine_name, spine_platform, spine_layout)

    def _held_spines(self, leaves: int, uplinks: int, radix: int) -> int | None:
        """The lock's spines per plane, when they still take every leaf's uplinks evenly (else None: the fewest
        that do, and the uplinks re-spread)."""
        if self.held is None or not self.held.spines:
            return None
        m = self.held.spines // self.topo.planes
        return m if m and uplinks % m == 0 and leaves * (uplinks // m) <= radix else None

    def _partial_su(self, leaves: list[Leaf], up_speed: int, step: int) -> None:
        """`partial_su: populated`: the last SU's leaves keep only the uplinks their ports need."""
        if not (self.topo.rail_optimized and self.topo.partial_su == "populated"):
            return
        last = max(leaf.su or 0 for leaf in leaves)
        for leaf in leaves:
            if leaf.su == last:
                needed = math.ceil(leaf.used_bw() / (up_speed * self.fabric.oversubscription.leaf))
                leaf.uplinks = min(leaf.uplinks, max(step, math.ceil(needed / step) * step))

    def _name_leaves(self, plane: int, leaves: list[Leaf], pods: int | None = None, per_pod: int = 0) -> None:
        template = self._leaf_template()
        leaf_model, platform = self._model("leaf")
        append, key, in_plane = self.draft.links.append, self.key, self._plane(plane)
        provisioned: dict[int, int] = {}  # id of a down-port list (the leaves share one) → its Gb/s
        for i, leaf in enumerate(leaves, start=1):
            leaf.index = i
            leaf.pod = (i - 1) // per_pod + 1 if pods else None
            leaf.name = self._name(template, plane, su=leaf.su, rail=leaf.rail, pod=leaf.pod, index=i)
            down = leaf.down
            if id(down) not in provisioned:
                provisioned[id(down)] = sum(p.speed_gbps for p in down)
            self.draft.provisioned_down[leaf.name] = provisioned[id(down)]
            self.draft.switches.append(
                SwitchDraft(
                    leaf.name,
                    Layer.LEAF,
                    leaf_model,
                    platform,
                    plane if self.topo.planes > 1 else None,
                    leaf.su,
                    leaf.rail,
                    leaf.pod,
                    i,
                )
            )
            used, name = leaf.used, leaf.name
            for port_index in sorted(used):
                ep = used[port_index]
                port = down[port_index]
                speed = ep.speed_gbps if ep.speed_gbps <= port.speed_gbps else port.speed_gbps
                append(new_link(key, Tier.NODE_LEAF, ep.device, ep.port, name, port.name, speed, in_plane, ep.rail))
        if self.peer_ports:
            for lower, upper in zip(leaves[::2], leaves[1::2], strict=True):
                for port in self.peer_ports:
                    self.draft.links.append(
                        Link(
                            self.key,
                            Tier.PEER,
                            lower.name,
                            port.name,
                            upper.name,
                            port.name,
                            port.speed_gbps,
                            self._plane(plane),
                        )
                    )

    def _connect(
        self,
        plane: int,
        tier: TierName,
        lower: str,
        up_ports: Sequence[SwitchPort],
        uppers: Sequence[str],
        upper_ports: Sequence[SwitchPort],
        next_port: list[int],
        per: int,
        rail: int | None,
    ) -> None:
        """`per` links from `lower` to each of `uppers` in turn: its up ports in order, each upper's next free port
        (`next_port[j]` counts the ports of `uppers[j]` already taken; all uppers share the port layout)."""
        append, key, in_plane = self.draft.links.append, self.key, self._plane(plane)
        for j, upper in enumerate(uppers):
            for t in range(per):
                up = up_ports[j * per + t]
                down = upper_ports[next_port[j]]
                next_port[j] += 1
                speed = up.speed_gbps if up.speed_gbps <= down.speed_gbps else down.speed_gbps
                append(new_link(key, tier, lower, up.name, upper, down.name, speed, in_plane, rail))

    def _plane(self, plane: int) -> int | None:
        return plane if self.topo.planes > 1 else None

    def _build_two_tier(
        self,
        plane: int,
        leaves: list[Leaf],
        up_ports: list[SwitchPort],
        m: int,
        spine_name: str,
        spine_platform: str | None,
        spine_layout: list[SwitchPort],
    ) -> bool:
        self._name_leaves(plane, leaves)
        template = self.fabric.naming.spine or "spine{index:02d}"
        spines = []
        for j in range(1, m + 1):
            name = self._name(template, plane, index=j, pod=1)
            spines.append(name)
            self.draft.switches.append(
                SwitchDraft(name, Layer.SPINE, spine_name, spine_platform, self._plane(plane), index=j)
            )
        next_port = [0] * m
        for leaf in leaves:
            self._connect(
                plane,
                Tier.LEAF_SPINE,
                leaf.name,
                up_ports,
                spines,
                spine_layout,
                next_port,
                leaf.uplinks // m,
                leaf.rail,
            )
        self.draft.params = ClosParams(
            tiers=2,
            leaves=len(leaves),
            downlinks=len(leaves[0].down),
            uplinks=len(up_ports),
            spines=m,
            spines_per_pod=m,
            pods=1,
            leaves_per_pod=len(leaves),
            spine_uplinks=0,
            cores=0,
            leaf_speed=up_ports[0].speed_gbps,
            spine_speed=0,
        )
        return True

    def _build_three_tier(
        self,
        plane: int,
        leaves: list[Leaf],
        up_ports: list[SwitchPort],
        spine_name: str,
        spine_platform: str | None,
        spine_layout: list[SwitchPort],
    ) -> bool:
        topo = self.topo
        u = len(up_ports)
        up_speed = up_ports[0].speed_gbps
        s_down, s_up, problem = split_leaf_ports(
            spine_layout, self.fabric.oversubscription.spine, topo.spine_downlinks, topo.spine_uplinks
        )
        if problem:
            self._fail("port-budget", f"{self.path}.topology", f"spine `{spine_name}` {problem}")
            return False
        spines_per_pod = topo.spines or u
        if u % spines_per_pod:
            self._fail(
                "uneven-spread",
                f"{self.path}.topology.spines",
                f"{u} uplinks per leaf do not spread evenly over {spines_per_pod} spines per pod",
                f"use a divisor of {u}",
            )
            return False
        lam = u // spines_per_pod
        per_pod = len(s_down) // lam
        if topo.rail_optimized:
            rails = len({leaf.rail for leaf in leaves})
            per_pod = per_pod // rails * rails
        if per_pod < 1:
            self._fail(
                "radix",
                f"{self.path}.topology",
                "a pod cannot hold one scalable unit's leaves",
                "use fewer rails per plane or a larger spine",
            )
            return False
        pods = math.ceil(len(leaves) / per_pod)
        core_name, core_platform = self._model("core")
        core_model = self.catalog.switches[core_name]
        u_s = len(s_up)
        s_speed = s_up[0].speed_gbps
        core_speed = best_speed(core_model, s_speed)
        core_layout = [p for p in switch_ports(core_model, core_speed, core_platform) if p.speed_gbps == core_speed]
        k_c = len(core_layout)
        if topo.cores is not None:
            per_group: int | None = topo.cores if u_s % topo.cores == 0 and pods * (u_s // topo.cores) <= k_c else None
        else:
            per_group = smallest_divisor_at_least(u_s, math.ceil(pods * u_s / k_c))
        if per_group is None:
            endpoints = per_pod * len(leaves[0].down) * k_c
            self._fail(
                "radix",
                f"{self.path}.topology",
                f"{pods} pods exceed what 3 tiers of {core_name} can join ({k_c} pods of {per_pod} leaves, "
                f"{endpoints:,} leaf down ports per plane); this fabric needs {len(leaves)} leaves per plane",
                "add planes, raise the oversubscription, or use switches with more ports",
            )
            return False
        mu = u_s // per_group
        self._name_leaves(plane, leaves, pods, per_pod)
        spine_template = self.fabric.naming.spine or "pod{pod}-spine{index:02d}"
        core_template = self.fabric.naming.core
        spines: list[list[str]] = []
        for pod in range(1, pods + 1):
            names = []
            for j in range(1, spines_per_pod + 1):
                name = self._name(spine_template, plane, pod=pod, index=j)
                self.draft.provisioned_down[name] = sum(p.speed_gbps for p in s_down)
                names.append(name)
                self.draft.switches.append(
                    SwitchDraft(
                        name,
                        Layer.SPINE,
                        spine_name,
                        spine_platform,
                        self._plane(plane),
                        pod=pod,
                        index=(pod - 1) * spines_per_pod + j,
                    )
                )
            spines.append(names)
        cores: list[list[str]] = []
        for g in range(spines_per_pod):
            names = []
            for c in range(1, per_group + 1):
                index = g * per_group + c
                name = self._name(core_template, plane, index=index)
                names.append(name)
                self.draft.switches.append(
                    SwitchDraft(name, Layer.CORE, core_name, core_platform, self._plane(plane), index=index)
                )
            cores.append(names)
        spine_next = [[0] * spines_per_pod for _ in range(pods)]
        for leaf in leaves:
            pod = (leaf.pod or 1) - 1
            self._connect(
                plane, Tier.LEAF_SPINE, leaf.name, up_ports, spines[pod], s_down, spine_next[pod], lam, leaf.rail
            )
        core_next = [[0] * per_group for _ in range(spines_per_pod)]
        for pod in range(pods):
            for j in range(spines_per_pod):
                self._connect(
                    plane, Tier.SPINE_CORE, spines[pod][j], s_up, cores[j], core_layout, core_next[j], mu, None
                )
        self.draft.params = ClosParams(
            tiers=3,
            leaves=len(leaves),
            downlinks=len(leaves[0].down),
            uplinks=u,
            spines=pods * spines_per_pod,
            spines_per_pod=spines_per_pod,
            pods=pods,
            leaves_per_pod=per_pod,
            spine_uplinks=u_s,
            cores=spines_per_pod * per_group,
            leaf_speed=up_speed,
            spine_speed=s_speed,
        )
        return True


def generate_clos(
    key: str, fabric: Fabric, catalog: Catalog, attached: Sequence[Attachment], held: Held | None = None
) -> FabricDraft:
    return ClosGenerator(key, fabric, catalog, attached, held).generate()
