"""YAML for Prometheus files, serialized from data (libyaml's emitter where it is available)."""

from __future__ import annotations

from typing import Any

import yaml


def dump(data: Any) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return str(yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, width=1000))
