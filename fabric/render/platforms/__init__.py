"""Switch platforms: one renderer module per network OS (a `Platform` subclass), turning a switch's
vendor-neutral intent into its files. Each platform describes itself (port names, management port, MTU,
capabilities) in templates/<name>/platform.yaml (fabric/spec/platforms.py reads it); PLATFORMS is discovered
from the modules here, and a platform without a renderer (or the reverse) is a bug the registry refuses.
"""

from __future__ import annotations

import importlib
import pkgutil

from fabric.render.platforms.base import Platform
from fabric.spec.platforms import platforms


def _discover() -> dict[str, Platform]:
    found: dict[str, Platform] = {}
    for info in sorted(pkgutil.iter_modules(__path__, __name__ + "."), key=lambda m: m.name):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Platform) and value.__module__ == module.__name__:
                if getattr(value, "name", None) is None:
                    continue
                assert value.name not in found, f"platform {value.name} is rendered twice"
                found[value.name] = value()
    described = set(platforms())
    assert set(found) == described, f"renderers {sorted(found)} differ from platform.yaml files {sorted(described)}"
    return dict(sorted(found.items()))


PLATFORMS: dict[str, Platform] = _discover()

__all__ = ["PLATFORMS", "Platform"]
