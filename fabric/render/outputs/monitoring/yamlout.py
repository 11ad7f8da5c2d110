"""YAML for Prometheus files, serialized from data (PyYAML's text, written by yamltext: the targets of 100k GPUs
are 37,500 entries)."""

from __future__ import annotations

from typing import Any

from fabric.fast import yamltext


def dump(data: Any) -> str:
    return yamltext.dump(data, width=1000)
