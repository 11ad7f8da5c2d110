"""A switch's logical ports: which mode each cage runs in, and each port's name, speed and lanes."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from functools import cache

from fabric.spec.catalog import SwitchModel, SwitchPort, port_candidates, switch_ports

# a layout row: name, cage, sub, breakout, speed, electrical lanes
PortRow = tuple[str, int, int, int, int, tuple[int, ...]]


def port_layout(model: SwitchModel, platform: str, used: Mapping[str, int]) -> list[PortRow]:
    """Every logical port of the switch: cages run in the mode their cabled ports use, the others at the most
    common cabled speed (else their default)."""
    candidates = port_candidates(model, platform)
    cage_mode: dict[int, tuple[int, int]] = {}
    for name, speed in used.items():
        options = candidates.get(name, ())
        port = next((p for p in options if p.speed_gbps == speed), options[0] if options else None)
        if port is not None:
            cage_mode.setdefault(port.cage, (port.breakout, port.speed_gbps))
    speeds = Counter(speed for _, speed in cage_mode.values())
    common = speeds.most_common(1)[0][0] if speeds else None
    rows: list[PortRow] = []
    default = switch_ports(model, common, platform)
    by_cage: dict[int, list[SwitchPort]] = defaultdict(list)
    for port in default:
        by_cage[port.cage].append(port)
    for cage, ports in by_cage.items():
        mode = cage_mode.get(cage)
        if mode is not None and (ports[0].breakout, ports[0].speed_gbps) != mode:
            ports = [
                p
                for options in candidates.values()
                for p in options
                if p.cage == cage and (p.breakout, p.speed_gbps) == mode
            ]
            ports.sort(key=lambda p: p.sub)
        rows.extend(
            (
                p.name,
                p.cage,
                p.sub,
                p.breakout,
                p.speed_gbps,
                lane_range(p.lane if p.asic_lane is None else p.asic_lane, p.lanes),
            )
            for p in ports
        )
    return rows


@cache
def lane_range(first: int, count: int) -> tuple[int, ...]:
    """A port's electrical lanes; one tuple per distinct value, shared by every switch that has it."""
    return tuple(range(first, first + count))
