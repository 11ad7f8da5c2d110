"""The closed vocabularies every stage shares: layers, link tiers, fabric roles, technologies, media kinds.

Each is a Literal type (mypy rejects any other string) with its values as named constants (`Layer.LEAF`,
`Tier.NODE_LEAF`). The values are plain strings, so every output (CSV, JSON, YAML, templates) prints them
as before, and the spec's fields use the same Literals.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

LayerName = Literal["node", "leaf", "spine", "core"]
TierName = Literal["node-leaf", "leaf-spine", "spine-core", "leaf-leaf"]  # the layers a link joins, lower first
# (leaf-leaf: an MLAG peer link between the two leaves of a pair, `dual_homing: bond`; not a path up or down)
SwitchLayer = Literal["leaf", "spine", "core"]
Role = Literal["compute", "storage", "inband", "oob", "converged"]
# converged: storage and in-band on one Ethernet fabric (NVIDIA's "Storage and In-band Ethernet Fabric" of the
# GB200 SuperPOD RA, the "CPU Converged (North/South)" network of its enterprise RAs)
INBAND_ROLES: tuple[Role, ...] = ("inband", "converged")  # roles whose node ports are in-band addresses
Technology = Literal["infiniband", "ethernet"]
MediaKind = Literal["dac", "acc", "aoc", "mmf", "smf", "copper"]


class Layer:
    NODE: Final = "node"
    LEAF: Final = "leaf"
    SPINE: Final = "spine"
    CORE: Final = "core"


class Tier:
    NODE_LEAF: Final = "node-leaf"
    LEAF_SPINE: Final = "leaf-spine"
    SPINE_CORE: Final = "spine-core"
    PEER: Final = "leaf-leaf"


LAYERS: tuple[LayerName, ...] = get_args(LayerName)
TIERS: tuple[TierName, ...] = ("node-leaf", "leaf-spine", "spine-core")  # the tiers of the Clos (peer links aside)
SWITCH_LAYERS: tuple[SwitchLayer, ...] = get_args(SwitchLayer)
ROLES: tuple[Role, ...] = get_args(Role)
MEDIA_KINDS: tuple[MediaKind, ...] = get_args(MediaKind)
