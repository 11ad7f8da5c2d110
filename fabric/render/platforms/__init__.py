"""Switch platforms: one class per network OS, each declaring what it supports and rendering a switch's
intent into its files. PLATFORMS is the registry; the spec's platform names are its keys.
"""

from __future__ import annotations

from fabric.render.platforms.base import Platform
from fabric.render.platforms.cumulus import Cumulus
from fabric.render.platforms.eos import Eos
from fabric.render.platforms.frr import Frr
from fabric.render.platforms.sonic import Sonic

# feature → (severity when a platform lacks it, what the platform then cannot do)
FEATURES: dict[str, tuple[str, str]] = {
    "bgp-unnumbered": ("error", "run BGP unnumbered (RFC 5549)"),
    "roce-lossless": ("error", "apply the RoCE lossless profile (DSCP maps, PFC, ECN)"),
    "pfc-watchdog": ("warning", "run a PFC watchdog: the lossless class runs without one"),
    "breakout": ("error", "break cages out into several ports"),
}

PLATFORMS: dict[str, Platform] = {
    "sonic": Sonic(),
    "cumulus": Cumulus(),
    "eos": Eos(),
    "frr": Frr(),
}

__all__ = ["FEATURES", "PLATFORMS", "Platform"]
