"""The closed vocabularies every stage shares: layers, link tiers, fabric roles, technologies, media kinds.

Layers and tiers are StrEnums (their values are what the outputs print, so they serialize as before); the
spec's own fields use the Literal types, whose values are the same.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args


class Layer(StrEnum):
    NODE = "node"
    LEAF = "leaf"
    SPINE = "spine"
    CORE = "core"


class Tier(StrEnum):
    """A link's tier: the layers it joins, lower first."""

    NODE_LEAF = "node-leaf"
    LEAF_SPINE = "leaf-spine"
    SPINE_CORE = "spine-core"


SwitchLayer = Literal["leaf", "spine", "core"]
Role = Literal["compute", "storage", "inband", "oob"]
Technology = Literal["infiniband", "ethernet"]
MediaKind = Literal["dac", "acc", "aoc", "mmf", "smf", "copper"]

SWITCH_LAYERS: tuple[str, ...] = get_args(SwitchLayer)
ROLES: tuple[str, ...] = get_args(Role)
MEDIA_KINDS: tuple[str, ...] = get_args(MediaKind)
