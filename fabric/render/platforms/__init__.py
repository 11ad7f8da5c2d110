"""Switch platforms: one renderer module per network OS (a `Platform` subclass), turning a switch's
vendor-neutral intent into its files. Each platform describes itself (port names, management port, MTU,
capabilities) in templates/<name>/platform.yaml (fabric/spec/platforms.py reads it). RENDERERS lists them; a
platform without a renderer (or the reverse) is a bug the registry refuses.
"""

from __future__ import annotations

from fabric.render.platforms.base import Platform
from fabric.render.platforms.cumulus import Cumulus
from fabric.render.platforms.eos import Eos
from fabric.render.platforms.frr import Frr
from fabric.render.platforms.sonic import Sonic
from fabric.spec.platforms import platforms

RENDERERS: tuple[type[Platform], ...] = (Cumulus, Eos, Frr, Sonic)


def _by_name() -> dict[str, Platform]:
    found = {renderer.name: renderer() for renderer in RENDERERS}
    described = set(platforms())
    assert set(found) == described, f"renderers {sorted(found)} differ from platform.yaml files {sorted(described)}"
    return dict(sorted(found.items()))


PLATFORMS: dict[str, Platform] = _by_name()

__all__ = ["PLATFORMS", "RENDERERS", "Platform"]
