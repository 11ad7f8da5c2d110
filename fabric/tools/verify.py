"""`fabric verify`: is what was built what was planned?

A discovered fabric (InfiniBand: ibnetdiscover output; Ethernet: LLDP neighbours, see `lldp.py`) is turned
into cables between plan devices and ports, and compared with the cabling plan:

- a planned cable found as planned is fine (InfiniBand: unless it runs at another width or speed);
- a discovered cable that shares one end with a planned cable that was not found is that cable plugged
  into the wrong port: the report says where its other end is and where it should go;
- planned cables left over are missing; discovered cables left over are unexpected.

Discovered InfiniBand nodes are matched to plan devices by GUID (inventory, or the planned placeholders in a
simulation), else by node description (`<host> <hca>` as rdma-ndd sets it; a switch by its name anywhere in
its description). Every problem names the cable id and label of the plan and both ends as rack, U, device
and port.

No evidence is not a match: a comparison that checked fewer planned cables than `min_checked` (default 1,
so empty or header-only discovered data fails; None: every planned cable) fails, with the count.
Discovered text (names, ports, descriptions) is escaped before it is printed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabric.intent.infiniband.ports import Rate, parse_rate
from fabric.intent.infiniband.subnet import IbNode, Subnet
from fabric.model.cable import Cable
from fabric.model.text import printable
from fabric.pipeline import Build
from fabric.tools.ibnetdiscover import Discovered, DiscoveredNode
from fabric.tools.lldp import LldpData

KINDS = ("missing", "wrong-port", "unexpected", "rate")
KIND_TITLES = {"missing": "MISSING", "wrong-port": "WRONG PORT", "unexpected": "UNEXPECTED", "rate": "WRONG RATE"}


@dataclass(frozen=True, slots=True)
class End:
    """One end of a cable in plan terms."""

    device: str
    port: str  # plan port name (cabling.csv)
    rack: str = ""
    u: int | None = None
    detail: str = ""  # e.g. `IB port 33`, `mlx5_0 port 1`
    known: bool = True  # the device is in the plan

    @property
    def key(self) -> tuple[str, str]:
        return (self.device, self.port)

    def __str__(self) -> str:
        where = f"{self.rack} U{self.u:02d}" if self.rack and self.u else (self.rack or "?")
        device = self.device if self.known else f"{self.device} (not in the plan)"
        return f"{where} {device} {self.port}" + (f" ({self.detail})" if self.detail else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "rack": self.rack,
            "u": self.u,
            "device": self.device,
            "port": self.port,
            "detail": self.detail,
            "in_plan": self.known,
        }


@dataclass(frozen=True, slots=True)
class PlannedCable:
    cable: Cable
    a: End
    b: End
    rate: Rate | None = None

    @property
    def label(self) -> str:
        return self.cable.labels()[0]


@dataclass(frozen=True, slots=True)
class ObservedCable:
    a: End
    b: End
    rate: str | None = None  # as discovered, e.g. 4xNDR
    line: int = 0  # where it is in the discovered data (0: unknown)


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str  # missing | wrong-port | unexpected | rate
    message: str
    cable_id: str = ""
    label: str = ""
    planned: tuple[End, End] | None = None
    found: tuple[End, End] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "cable_id": self.cable_id,
            "label": self.label,
            "message": self.message,
            "planned": [e.as_dict() for e in self.planned] if self.planned else None,
            "found": [e.as_dict() for e in self.found] if self.found else None,
        }


@dataclass(frozen=True)
class Report:
    design: str
    scope: str  # e.g. InfiniBand fabric `compute`
    source: str
    planned: int  # planned cables checked
    as_planned: int
    problems: tuple[Problem, ...]
    notes: tuple[str, ...] = ()
    unchecked: int = 0  # planned cables no discovered data could tell about (LLDP from only some devices)
    discovered: Mapping[str, int] = field(default_factory=dict)
    min_checked: int = 1  # fewer checked cables is no evidence, a failure (never "everything matches")

    @property
    def enough_evidence(self) -> bool:
        return self.planned >= self.min_checked

    @property
    def ok(self) -> bool:
        return not self.problems and self.enough_evidence

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def counts(self) -> dict[str, int]:
        return {kind: sum(1 for p in self.problems if p.kind == kind) for kind in KINDS}

    def as_dict(self) -> dict[str, Any]:
        return {
            "design": self.design,
            "scope": self.scope,
            "source": self.source,
            "ok": self.ok,
            "planned_cables": self.planned,
            "as_planned": self.as_planned,
            "unchecked": self.unchecked,
            "min_checked": self.min_checked,
            "enough_evidence": self.enough_evidence,
            "counts": self.counts(),
            "discovered": dict(self.discovered),
            "problems": [p.as_dict() for p in self.problems],
            "notes": list(self.notes),
        }

    def text(self) -> str:
        seen = ", ".join(f"{n} {k}" for k, n in self.discovered.items())
        lines = [f"{self.design}: {self.scope} against {self.source}" + (f" ({seen})" if seen else "")]
        indent = " " * 27
        for p in self.problems:
            ends = p.planned if p.planned is not None else p.found
            assert ends is not None
            lines.append(f"{KIND_TITLES[p.kind]:<11} {p.cable_id or '-':<14} {_pair(*ends)}")
            lines.append(f"{indent}{p.message}")
            if p.label:
                lines.append(f"{indent}label: {p.label}")
        for note in self.notes:
            lines.append(f"note: {note}")
        c = self.counts()
        summary = (
            f"{self.planned} planned cable(s): {self.as_planned} as planned, {c['missing']} missing, "
            f"{c['wrong-port']} in a wrong port, {c['rate']} at a wrong width or speed; "
            f"{c['unexpected']} unexpected cable(s)"
        )
        if self.unchecked:
            summary += f"; {self.unchecked} not checked (no discovered data from either end)"
        lines.append(summary)
        if not self.enough_evidence:
            lines.append(
                f"NOT VERIFIED: {self.planned} of {self.planned + self.unchecked} planned cable(s) checked, at least "
                f"{self.min_checked} must be: give discovered data from the devices at their ends"
            )
        if self.ok:
            lines.append("everything matches the plan")
        else:
            lines.append("the fabric does not match the plan" if self.problems else "nothing was verified")
        return "".join(printable(line) + "\n" for line in lines)  # discovered text is never printed raw


# --------------------------------------------------------------------------------------------- comparison


def _pair(a: End, b: End) -> str:
    return f"{a}  <->  {b}"


def _rate_problem(planned: Rate, found: Rate, ignore_speed: bool) -> str | None:
    if planned.width != found.width:
        return f"width {found.width}x, planned {planned.width}x"
    if not ignore_speed and abs(planned.gbps - found.gbps) > 1e-9:
        return f"speed {found.lane}, planned {planned.lane}"
    return None


def compare(
    design: str,
    scope: str,
    source: str,
    planned: Sequence[PlannedCable],
    observed: Iterable[ObservedCable],
    *,
    checkable: Callable[[PlannedCable], bool] = lambda _: True,
    ignore_speed: bool = False,
    notes: Sequence[str] = (),
    discovered: Mapping[str, int] | None = None,
    min_checked: int | None = 1,
) -> Report:
    plan_by_pair = {frozenset((p.a.key, p.b.key)): p for p in planned}
    plan_by_end: dict[tuple[str, str], PlannedCable] = {}
    for p in planned:
        plan_by_end[p.a.key] = p
        plan_by_end[p.b.key] = p
    order = {p.cable.cable_id: i for i, p in enumerate(planned)}
    found: set[str] = set()
    problems: list[Problem] = []
    leftovers: list[ObservedCable] = []
    for obs in observed:
        match = plan_by_pair.get(frozenset((obs.a.key, obs.b.key)))
        if match is None or match.cable.cable_id in found:
            leftovers.append(obs)
            continue
        found.add(match.cable.cable_id)
        rate = parse_rate(obs.rate) if obs.rate else None
        if match.rate is not None and rate is not None:
            why = _rate_problem(match.rate, rate, ignore_speed)
            if why:
                problems.append(
                    Problem(
                        "rate",
                        f"runs at {rate} ({rate.gbps:g} Gb/s), planned {match.rate} ({match.rate.gbps:g} Gb/s): {why}",
                        match.cable.cable_id,
                        match.label,
                        (match.a, match.b),
                        (match.a, match.b),
                    )
                )
    paired: set[str] = set()
    for obs in leftovers:
        best: tuple[tuple[int, int, int], PlannedCable, End, End, End] | None = None
        for shared, other in ((obs.a, obs.b), (obs.b, obs.a)):
            cand = plan_by_end.get(shared.key)
            if cand is None or cand.cable.cable_id in found or cand.cable.cable_id in paired or not checkable(cand):
                continue
            planned_other = cand.b if cand.a.key == shared.key else cand.a
            score = (
                0 if planned_other.device == other.device else 1,
                0 if cand.a.key == shared.key else 1,
                order[cand.cable.cable_id],
            )
            if best is None or score < best[0]:
                best = (score, cand, shared, other, planned_other)
        if best is None:
            problems.append(Problem("unexpected", "not in the plan: unplug it", found=(obs.a, obs.b)))
            continue
        _, cand, shared, other, planned_other = best
        paired.add(cand.cable.cable_id)
        problems.append(
            Problem(
                "wrong-port",
                f"the {shared.device} {shared.port} end is right; the other end is in {other}: move it to "
                f"{planned_other}",
                cand.cable.cable_id,
                cand.label,
                (cand.a, cand.b),
                (shared, other),
            )
        )
    unchecked = 0
    for p in planned:
        cid = p.cable.cable_id
        if cid in found or cid in paired:
            continue
        if not checkable(p):
            unchecked += 1
            continue
        problems.append(Problem("missing", "not found: cable it as labelled", cid, p.label, (p.a, p.b)))
    problems.sort(key=lambda p: (KINDS.index(p.kind), order.get(p.cable_id, len(order)), p.message))
    checked = len(planned) - unchecked
    as_planned = len(found) - sum(1 for p in problems if p.kind == "rate")
    return Report(
        design,
        scope,
        source,
        checked,
        as_planned,
        tuple(problems),
        tuple(notes),
        unchecked,
        dict(discovered or {}),
        _required(min_checked, len(planned)),
    )


def _required(min_checked: int | None, planned: int) -> int:
    """Checked cables needed: `min_checked` (None: every planned cable), at most the plan's, and a plan of no
    cables is no evidence either unless 0 is asked for."""
    whole = max(planned, 1)
    return whole if min_checked is None else min(min_checked, whole)


# --------------------------------------------------------------------------------------------- InfiniBand


def _end_of(cable: Cable, side: str, port: int, hca: str | None) -> End:
    link = cable.link
    device, name = (link.a, link.a_port) if side == "a" else (link.b, link.b_port)
    rack, u = (cable.a_rack, cable.a_u) if side == "a" else (cable.b_rack, cable.b_u)
    return End(device, name, rack, u, f"{hca} port {port}" if hca else f"IB port {port}")


def planned_ib(subnet: Subnet) -> list[PlannedCable]:
    out = []
    for link in subnet.links:
        a_node = subnet.by_key[link.a.node]
        out.append(
            PlannedCable(
                link.cable,
                _end_of(link.cable, "a", link.a.port, None if a_node.switch else a_node.hca),
                _end_of(link.cable, "b", link.b.port, None),
                link.rate,
            )
        )
    return out


_SPLIT = re.compile(r"[\s;:/,]+")


def match_nodes(subnet: Subnet, discovered: Discovered) -> tuple[dict[int, IbNode], list[str], int]:
    """Discovered GUID → plan node, notes, and how many matched by description rather than GUID."""
    by_guid = {n.guid: n for n in subnet.nodes}
    switches = {n.key: n for n in subnet.nodes if n.switch}
    cas = {n.key: n for n in subnet.nodes if not n.switch}
    out: dict[int, IbNode] = {}
    taken: dict[str, int] = {}
    notes: list[str] = []
    by_description = 0
    for guid in sorted(discovered.nodes):
        node = discovered.nodes[guid]
        found = by_guid.get(guid)
        if found is not None and found.switch == (node.kind == "switch"):
            if node.description and node.description != found.key:
                notes.append(f"{found.key}: node description is {node.description!r}")
        else:
            found = _by_description(node, switches, cas)
            if found is None:
                continue
            by_description += 1
            if not found.placeholder:
                notes.append(f"{found.key}: GUID 0x{guid:016x}, the inventory says 0x{found.guid:016x}")
        if found.key in taken:
            notes.append(f"{found.key}: both 0x{taken[found.key]:016x} and 0x{guid:016x} claim it")
            continue
        taken[found.key] = guid
        out[guid] = found
    return out, notes, by_description


def _by_description(node: DiscoveredNode, switches: Mapping[str, IbNode], cas: Mapping[str, IbNode]) -> IbNode | None:
    desc = node.description.strip()
    if node.kind == "switch":
        if desc in switches:
            return switches[desc]
        return next((switches[t] for t in _SPLIT.split(desc) if t in switches), None)
    if desc in cas:
        return cas[desc]
    parts = desc.split()
    if len(parts) >= 2:
        host, hca = parts[0], parts[-1]
        for candidate in (f"{host} {hca}", f"{host.split('.')[0]} {hca}"):
            if candidate in cas:
                return cas[candidate]
    return None


def observed_ib(subnet: Subnet, discovered: Discovered, matched: Mapping[int, IbNode]) -> list[ObservedCable]:
    positions: dict[str, tuple[str, int | None]] = {}
    ca_ports: dict[tuple[str, int], str] = {}
    for link in subnet.links:
        positions[link.a.device] = (link.cable.a_rack, link.cable.a_u)
        positions[link.b.device] = (link.cable.b_rack, link.cable.b_u)
        if not subnet.by_key[link.a.node].switch:
            ca_ports[(link.a.node, link.a.port)] = link.a.port_name

    def end(guid: int, port: int) -> End:
        node = matched.get(guid)
        if node is None:
            known = discovered.nodes.get(guid)
            name = (known.description if known and known.description else "") or f"0x{guid:016x}"
            return End(name, f"port {port}", known=False, detail=f"GUID 0x{guid:016x}")
        rack, u = positions.get(node.device, ("", None))
        if node.switch:
            return End(node.device, subnet.numbering[node.key].name(port), rack, u, f"IB port {port}")
        return End(
            node.device, ca_ports.get((node.key, port), f"{node.hca} port {port}"), rack, u, f"{node.hca} port {port}"
        )

    return [ObservedCable(end(d.a_guid, d.a_port), end(d.b_guid, d.b_port), d.rate, d.line) for d in discovered.links]


def choose_subnet(build: Build, discovered: Discovered, fabric: str | None) -> tuple[Subnet | None, str]:
    """The IB subnet the discovered fabric is (the one most of its nodes match), or why none is."""
    subnets = list(build.infiniband.subnets)
    if fabric is not None:
        subnets = [s for s in subnets if s.fabric == fabric or f"{s.fabric}/plane{s.plane}" == fabric]
        if not subnets:
            names = ", ".join(f"{s.fabric}" + (f"/plane{s.plane}" if s.plane else "") for s in build.infiniband.subnets)
            return None, f"no InfiniBand fabric `{fabric}` in {build.name} (there are: {names or 'none'})"
    if not subnets:
        return None, f"{build.name} has no InfiniBand fabric"
    scored = sorted(((len(match_nodes(s, discovered)[0]), i) for i, s in enumerate(subnets)), reverse=True)
    best, index = scored[0]
    if best == 0:
        return None, "no discovered node matches a switch or HCA of the plan by GUID or node description"
    if len(scored) > 1 and scored[1][0] == best:
        return None, "the discovered nodes match several fabrics equally; name one with --fabric"
    return subnets[index], ""


def verify_ib(
    build: Build, subnet: Subnet, discovered: Discovered, *, ignore_speed: bool = False, min_checked: int | None = 1
) -> Report:
    matched, notes, by_description = match_nodes(subnet, discovered)
    unmatched = [n for g, n in sorted(discovered.nodes.items()) if g not in matched]
    if unmatched:
        shown = ", ".join(n.description or f"0x{n.guid:016x}" for n in unmatched[:4])
        notes.append(f"{len(unmatched)} discovered node(s) are not in the plan: {shown}")
    if by_description:
        notes.append(f"{by_description} node(s) matched by node description, not by GUID")
    missing_nodes = len(subnet.nodes) - len(matched)
    if missing_nodes:
        notes.append(f"{missing_nodes} planned switch(es)/HCA(s) were not discovered")
    return compare(
        build.name,
        f"InfiniBand fabric {subnet.label}",
        discovered.source,
        planned_ib(subnet),
        observed_ib(subnet, discovered, matched),
        ignore_speed=ignore_speed,
        notes=notes,
        discovered={"nodes": len(discovered.nodes), "cables": len(discovered.links)},
        min_checked=min_checked,
    )


# --------------------------------------------------------------------------------------------- Ethernet (LLDP)


def planned_cables(build: Build, technology: str, fabric: str | None = None) -> list[PlannedCable]:
    fabrics = build.topology.fabrics
    return [
        PlannedCable(
            c,
            End(c.link.a, c.link.a_port, c.a_rack, c.a_u),
            End(c.link.b, c.link.b_port, c.b_rack, c.b_u),
        )
        for c in build.allocation.cables
        if fabrics[c.link.fabric].technology == technology and (fabric is None or c.link.fabric == fabric)
    ]


def verify_lldp(build: Build, data: LldpData, fabric: str | None = None, *, min_checked: int | None = 1) -> Report:
    devices = build.topology.devices
    planned = planned_cables(build, "ethernet", fabric)

    def resolve(name: str) -> str | None:
        if name in devices:
            return name
        short = name.split(".")[0]
        return short if short in devices else None

    def end(name: str, port: str) -> End:
        device = resolve(name)
        if device is None:
            return End(name, port, known=False)
        dev = devices[device]
        return End(device, port, dev.rack or "", dev.u)

    in_scope: set[tuple[str, str]] = {e.key for p in planned for e in (p.a, p.b)}
    scoped_switches = {
        s for key, ft in build.topology.fabrics.items() if fabric is None or key == fabric for s in ft.switches
    }
    seen: dict[frozenset[tuple[str, str]], ObservedCable] = {}
    for n in data.neighbours:
        a, b = end(n.local_device, n.local_port), end(n.remote_device, n.remote_port)
        if fabric is not None and not (
            a.key in in_scope or b.key in in_scope or a.device in scoped_switches or b.device in scoped_switches
        ):
            continue
        seen.setdefault(frozenset((a.key, b.key)), ObservedCable(a, b, None, n.line))
    collected = {d for d in (resolve(x) for x in data.devices) if d is not None}
    unknown = sorted({x for x in data.devices if resolve(x) is None})
    notes = [f"neighbour tables of devices not in the plan: {', '.join(unknown[:6])}"] if unknown else []
    scope = f"Ethernet fabric `{fabric}`" if fabric else "the Ethernet fabrics"
    sources = ", ".join(data.sources[:3]) + (f" and {len(data.sources) - 3} more" if len(data.sources) > 3 else "")
    return compare(
        build.name,
        scope,
        sources,
        planned,
        list(seen.values()),
        checkable=lambda p: p.a.device in collected or p.b.device in collected,
        notes=notes,
        discovered={"devices": len(data.devices), "neighbours": len(data.neighbours)},
        min_checked=min_checked,
    )
