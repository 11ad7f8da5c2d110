"""How each network OS names a switch's ports (and its management port).

The catalog's templates give the Cumulus Linux / Linux switchdev names (`swp1`, `swp1s0`); SONiC counts
ports by their first electrical lane (`Ethernet0`, `Ethernet8`), EOS by cage and first lane
(`Ethernet1/1`, `Ethernet1/5`). The topology names ports as the switch's platform will, so the cabling
plan and the configs use one name for one port.
"""

from __future__ import annotations

MGMT_PORTS = {"sonic": "eth0", "cumulus": "eth0", "frr": "eth0", "eos": "Management1"}


def port_name(
    platform: str | None, template: str, *, cage: int, sub: int, n: int, lane: int, lanes: int, cage_lanes: int
) -> str:
    if platform == "sonic":
        return f"Ethernet{lane}"
    if platform == "eos":
        return f"Ethernet{cage}/{1 + (sub - 1) * lanes}" if cage_lanes > 1 else f"Ethernet{cage}"
    return template.format(cage=cage, sub=sub, sub0=sub - 1, n=n)


def mgmt_port(platform: str | None, default: str) -> str:
    return MGMT_PORTS.get(platform or "", default)
