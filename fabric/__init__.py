"""fabric: compile a GPU-cluster fabric spec into a checked, addressed and cabled plan.

>>> from fabric import load_spec, build_fabric, render_all
>>> build = build_fabric(load_spec("designs/superpod-h100-1su.yaml"))
>>> build.figures["compute"].switches
{'leaf': 8, 'spine': 4, 'core': 0}
>>> sorted(render_all(build))[:2]
['allocations.lock.json', 'asn-plan.csv']

The names are imported when first used (PEP 562), so that `fabric --help` does not load the pipeline; with the
cyclic garbage collector paused, as the build pauses it: importing the pipeline makes some 30,000 objects the
collector tracks, nearly all living on (classes, functions, pydantic's schemas), which automatic collections
would walk again and again (docs/dev/performance.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `X as X`: the names are exported (the list is _HOME below)
    from fabric.model.findings import FabricError as FabricError
    from fabric.model.findings import Finding as Finding
    from fabric.model.findings import Severity as Severity
    from fabric.model.rendered import Rendered as Rendered
    from fabric.pipeline import Build as Build
    from fabric.pipeline import build_fabric as build_fabric
    from fabric.render import render_all as render_all
    from fabric.spec.loader import Design as Design
    from fabric.spec.loader import load_spec as load_spec
    from fabric.spec.loader import load_spec_text as load_spec_text
    from fabric.write.atomic import write_outputs as write_outputs

_HOME = {
    "Build": "fabric.pipeline",
    "Design": "fabric.spec.loader",
    "FabricError": "fabric.model.findings",
    "Finding": "fabric.model.findings",
    "Rendered": "fabric.model.rendered",
    "Severity": "fabric.model.findings",
    "build_fabric": "fabric.pipeline",
    "load_spec": "fabric.spec.loader",
    "load_spec_text": "fabric.spec.loader",
    "render_all": "fabric.render",
    "write_outputs": "fabric.write.atomic",
}

__all__ = sorted(_HOME)  # the one list of the public API is _HOME; the imports above only tell type checkers


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'fabric' has no attribute {name!r}")
    from fabric.fast.collector import gc_paused

    with gc_paused():
        value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
