"""Ethernet switch intent: the vendor-neutral model every platform renders (model.py) and its builder
(build.py, with ports.py, bgp.py, mlag.py and qos.py by topic; index.py reads the plan once).

Platform renderers import the model only; the pipeline calls `build_intents`.
"""

from fabric.intent.ethernet.build import build_intents
from fabric.intent.ethernet.model import (
    DEFAULT_MTU,
    PEER_CHANNEL,
    PEER_GROUP,
    PEER_NET,
    PEER_VLAN,
    SERVER_VLAN,
    BgpIntent,
    Bond,
    DeviceIntent,
    Intents,
    MlagIntent,
    Neighbor,
    PortIntent,
    PrefixRule,
    QosIntent,
    ServerSubnet,
)

__all__ = [
    "DEFAULT_MTU",
    "PEER_CHANNEL",
    "PEER_GROUP",
    "PEER_NET",
    "PEER_VLAN",
    "SERVER_VLAN",
    "BgpIntent",
    "Bond",
    "DeviceIntent",
    "Intents",
    "MlagIntent",
    "Neighbor",
    "PortIntent",
    "PrefixRule",
    "QosIntent",
    "ServerSubnet",
    "build_intents",
]
