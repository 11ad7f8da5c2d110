"""fabric: compile a GPU-cluster fabric spec into a checked, addressed and cabled plan.

>>> from fabric import load_spec, build_fabric, render_all
>>> build = build_fabric(load_spec("designs/superpod-h100-1su.yaml"))
>>> build.figures["compute"].switches
{'leaf': 8, 'spine': 4, 'core': 0}
>>> sorted(render_all(build))[:2]
['asn-plan.csv', 'cabling.csv']
"""

from fabric.model.findings import FabricError, Finding, Severity
from fabric.model.rendered import Rendered
from fabric.pipeline import Build, build_fabric
from fabric.render import render_all
from fabric.spec.loader import Design, load_spec, load_spec_text
from fabric.write.atomic import write_outputs

__all__ = [
    "Build",
    "Design",
    "FabricError",
    "Finding",
    "Rendered",
    "Severity",
    "build_fabric",
    "load_spec",
    "load_spec_text",
    "render_all",
    "write_outputs",
]
