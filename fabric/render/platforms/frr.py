"""FRR on a Linux switch (switchdev): frr.conf for routing, an ifupdown2 `interfaces` file for the links.

FRR owns layer 3 (interface addresses and BGP, so the file boots a fabric by itself); the interfaces file
owns links, MTU, the server bridge and the RoCE profile, which Linux sets with iproute2's `dcb` (DSCP trust,
PFC) and `tc` (ETS scheduling with CNPs strict, RED/ECN on the RoCE band), as the mlxsw driver offloads it.
Linux has no PFC watchdog.
"""

from __future__ import annotations

from fabric.intent.ethernet.model import DeviceIntent, QosIntent
from fabric.render.engine.templating import render
from fabric.render.platforms.base import Platform
from fabric.render.platforms.frrview import frr_view

AVPKT = 1000  # bytes: RED's average packet size
QUANTUM_PER_PCT = 30  # ETS quantum bytes per percent of weight (50 % → 1500 bytes, one MTU-sized frame)


def qos_commands(qos: QosIntent, port: str) -> list[str]:
    """iproute2 commands that apply the RoCE profile to one port."""
    # ETS bands: 0 strict (CNP), 1 RoCE, 2 everything else; priomap maps the 8 priorities to bands
    priomap = " ".join("0" if p == qos.cnp_tc else "1" if p == qos.roce_tc else "2" for p in range(8))
    burst = (2 * qos.ecn_min_bytes + qos.ecn_max_bytes) // (3 * AVPKT)
    quanta = f"{qos.roce_weight * QUANTUM_PER_PCT} {qos.default_weight * QUANTUM_PER_PCT}"
    return [
        f"dcb app replace dev {port} dscp-prio {qos.roce_dscp}:{qos.roce_tc} {qos.cnp_dscp}:{qos.cnp_tc}",
        f"dcb pfc set dev {port} prio-pfc all:off {qos.roce_tc}:on",
        f"tc qdisc replace dev {port} root handle 1: ets bands 3 strict 1 quanta {quanta} priomap {priomap}",
        f"tc qdisc replace dev {port} parent 1:2 handle 12: red ecn limit {4 * qos.ecn_max_bytes} avpkt {AVPKT} "
        f"probability {qos.ecn_probability / 100:g} min {qos.ecn_min_bytes} max {qos.ecn_max_bytes} burst {burst}",
    ]


class Frr(Platform):
    name = "frr"
    files = ("frr.conf", "interfaces")

    def render(self, intent: DeviceIntent) -> dict[str, str]:
        return {
            "frr.conf": render("frr/frr.conf.j2", **frr_view(intent, addresses=True)),
            "interfaces": render("frr/interfaces.j2", **self.interfaces_view(intent)),
        }

    def interfaces_view(self, intent: DeviceIntent) -> dict[str, object]:
        lossless = set(intent.qos.ports) if intent.qos else set()
        ports = [
            {
                "name": p.name,
                "alias": p.description,
                "mtu": min(p.mtu, self.max_mtu),
                "post_up": qos_commands(intent.qos, p.name) if intent.qos and p.name in lossless else [],
            }
            for p in intent.used_ports
        ]
        return {
            "banner": self.banner(intent),
            "hostname": intent.hostname,
            "mgmt_port": intent.mgmt_port,
            "mgmt_address": intent.mgmt_address,
            "mgmt_gateway": intent.mgmt_gateway,
            "ports": ports,
            "servers": intent.servers,
            "mtu": min(intent.mtu, self.max_mtu),
            "breakouts": sorted({(p.cage, p.breakout) for p in intent.used_ports if p.breakout > 1}),
            "dns": intent.dns,
        }
