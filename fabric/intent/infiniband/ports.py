"""How plan ports become InfiniBand ports, and link rates become width × lane speed.

Switches. A switch numbers its IB ports cage by cage: port = (cage − 1) × B + sub, where B is the
number of logical ports per cage of the breakout the switch runs (the widest one used on it, as a
Quantum switch's split profile renumbers the whole switch). On a QM9700 at NDR 400G, B = 2: cage n
holds ports 2n − 1 and 2n (`sw5p2` is IB port 10). Cage groups after the first continue the count.

Servers. Every RDMA device (`hca` in the catalog, e.g. `mlx5_3`; by default the port's own name) is
one channel adapter (CA); its ports are numbered 1, 2, … in catalog order. A DGX H100 has eight
single-port CAs on its compute cages, one per GPU rail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from fabric.spec.catalog import NodeType, SwitchModel, SwitchPort, port_candidates

# Lane speeds as ibnetdiscover names them, Gb/s per lane (data rate as vendors quote it).
LANES: Mapping[str, float] = {
    "SDR": 2.5,
    "DDR": 5,
    "QDR": 10,
    "FDR10": 10,
    "FDR": 14,
    "EDR": 25,
    "HDR": 50,
    "NDR": 100,
    "XDR": 200,
}
WIDTHS = (1, 2, 4, 8, 12)
_PLAN_LANES = ("XDR", "NDR", "HDR", "EDR", "FDR", "QDR", "DDR", "SDR")

# IBTA rate codes (ib_types.h) for multicast groups, Gb/s → code.
RATE_CODES: Mapping[int, int] = {
    10: 3,
    14: 11,
    20: 6,
    25: 15,
    28: 19,
    30: 4,
    40: 7,
    50: 20,
    56: 12,
    60: 8,
    80: 9,
    100: 16,
    112: 13,
    120: 10,
    168: 14,
    200: 17,
    300: 18,
    400: 21,
    600: 22,
    800: 23,
    1200: 24,
}
MTU_CODES: Mapping[int, int] = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}


@dataclass(frozen=True, slots=True)
class Rate:
    """An InfiniBand link rate: lane count and lane speed."""

    width: int  # lanes
    lane: str  # SDR … XDR

    @property
    def gbps(self) -> float:
        return self.width * LANES[self.lane]

    def __str__(self) -> str:
        return f"{self.width}x{self.lane}"


@cache
@cache
def plan_rate(speed_gbps: int) -> Rate | None:
    """The rate a planned link of `speed_gbps` comes up at: 4 lanes of the fastest lane speed that gives it
    (400G → 4xNDR, 200G → 4xHDR); else 2 or 1 lanes; None if no IB rate gives it."""
    for width in (4, 2, 1, 8, 12):
        for lane in _PLAN_LANES:
            if abs(width * LANES[lane] - speed_gbps) < 1e-9:
                return Rate(width, lane)
    return None


def parse_rate(text: str) -> Rate | None:
    """`4xNDR` → Rate(4, 'NDR'); None if not a known width and lane speed."""
    head, sep, lane = text.partition("x")
    if not sep or not head.isdigit() or int(head) not in WIDTHS or lane not in LANES:
        return None
    return Rate(int(head), lane)


# --------------------------------------------------------------------------------------------- switches


@dataclass(frozen=True)
class SwitchNumbering:
    """IB port numbers of one switch: B logical ports per cage, cage groups one after another."""

    model: SwitchModel
    per_cage: int
    numbers: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)  # plan port name → IB port

    def __post_init__(self) -> None:
        if not self.numbers:
            object.__setattr__(self, "numbers", _numbers(self.model, self.per_cage))

    @property
    def nports(self) -> int:
        return sum(group.cages for group in self.model.ports) * self.per_cage

    def number(self, port: str) -> int | None:
        """The IB port of a plan port name, or None if the name is not a port of the model."""
        return self.numbers.get(port)

    def name(self, number: int) -> str:
        """The plan name of IB port `number` (in the breakout this switch runs), or `port N` if there is none."""
        offset = 0
        for group in self.model.ports:
            span = group.cages * self.per_cage
            if offset < number <= offset + span:
                cage_index, sub = divmod(number - offset - 1, self.per_cage)
                mode = next((m for m in group.modes if m.ports == self.per_cage), None)
                if mode is None:
                    break
                cage = group.first_cage + cage_index
                return mode.name.format(cage=cage, sub=sub + 1, sub0=sub, n=cage_index * mode.ports + sub + 1)
            offset += span
        return f"port {number}"


def _numbers(model: SwitchModel, per_cage: int) -> dict[str, int]:
    offsets: dict[str, int] = {}
    offset = 0
    for group in model.ports:
        offsets[group.group] = offset
        offset += group.cages * per_cage
    first = {group.group: group.first_cage for group in model.ports}
    out: dict[str, int] = {}
    for name, candidates in port_candidates(model).items():
        found = next((c for c in candidates if c.breakout == per_cage), candidates[0])
        out[name] = offsets[found.group] + (found.cage - first[found.group]) * per_cage + found.sub
    return out


class Numberings:
    """Switch numberings for one build, shared between switches of the same model and breakout."""

    def __init__(self) -> None:
        self._names: dict[str, Mapping[str, tuple[SwitchPort, ...]]] = {}
        self._made: dict[tuple[str, int], SwitchNumbering] = {}
        self._breakouts: dict[tuple[str, str, int], int] = {}  # (model, port, speed) → its breakout (0: no port)
        self._widest: dict[tuple[str, tuple[tuple[str, int], ...]], SwitchNumbering] = {}  # (model, used) → made

    def of(self, key: str, model: SwitchModel, used: Iterable[tuple[str, int]]) -> SwitchNumbering:
        """The numbering of a switch of model `key` from the ports its links use: (port name, link speed)."""
        used = tuple(used)
        known = self._widest.get((key, used))  # switches of one model and role use the same ports
        if known is not None:
            return known
        names = self._names.get(key)
        if names is None:
            names = self._names[key] = port_candidates(model)
        widest = 0
        for port, speed in used:
            breakout = self._breakouts.get((key, port, speed))
            if breakout is None:
                candidates = names.get(port, ())
                chosen = next((c for c in candidates if c.speed_gbps == speed), candidates[0]) if candidates else None
                breakout = self._breakouts[(key, port, speed)] = chosen.breakout if chosen else 0
            widest = max(widest, breakout)
        per_cage = widest or max(group.modes[0].ports for group in model.ports)
        made = self._made.get((key, per_cage))
        if made is None:
            made = self._made[(key, per_cage)] = SwitchNumbering(model, per_cage)
        self._widest[(key, used)] = made
        return made


# --------------------------------------------------------------------------------------------- servers


@dataclass(frozen=True, slots=True)
class CaPortRef:
    """A node port's channel adapter and its port number on it."""

    hca: str
    number: int  # 1-based port of the CA
    ports: tuple[str, ...]  # every port name of that CA, port 1 first


def node_cas(node_type: NodeType) -> Mapping[str, CaPortRef]:
    """Plan port name → its CA and port number, for every port of a node type."""
    order: dict[str, list[str]] = {}
    for group in node_type.ports.values():
        for port in group.port_list():
            order.setdefault(port.hca or port.name, []).append(port.name)
    out: dict[str, CaPortRef] = {}
    for hca, names in order.items():
        for i, name in enumerate(names, start=1):
            out[name] = CaPortRef(hca, i, tuple(names))
    return out
