"""YAML paths as users read them, and back to file lines.

`('nodes', 0, 'type')` is shown as `nodes[group=gpu].type` when the item has a `group` (or
`name`) key, else `nodes[0].type`. Later stages report paths in this display form; `locate`
turns one back into the line of the user's file.
"""

from __future__ import annotations

import re
from typing import Any

from fabric.model.findings import Finding
from fabric.spec.yamlio import PathKey, YamlDoc

_ITEM_KEYS = ("group", "name")
_SEGMENT = re.compile(r"([^.\[\]]+)|\[([^\]]+)\]")


def display_path(data: Any, path: PathKey) -> str:
    out = ""
    node = data
    for part in path:
        if isinstance(part, int):
            label = str(part)
            if isinstance(node, list) and 0 <= part < len(node) and isinstance(node[part], dict):
                for key in _ITEM_KEYS:
                    value = node[part].get(key)
                    if isinstance(value, str | int) and not isinstance(value, bool) and _shown(str(value)):
                        label = f"{key}={value}"
                        break
            out += f"[{label}]"
        else:
            out += ("." if out else "") + (str(part) if _shown(str(part)) else "<key>")
        node = _child(node, part)
    return out


def _shown(text: str) -> bool:
    """Path parts are printed in findings: only plain ones, never a control character or a whole line."""
    return bool(_PLAIN.fullmatch(text))


_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._ -]{0,63}")


def _child(node: Any, part: str | int) -> Any:
    if isinstance(node, dict):
        return node.get(part)
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return None


def raw_path(data: Any, display: str) -> PathKey:
    """The inverse of `display_path`, as far as the data allows."""
    out: list[str | int] = []
    node = data
    for match in _SEGMENT.finditer(display):
        key, item = match.group(1), match.group(2)
        part: str | int
        if key is not None:
            part = key
        elif item is not None and item.isdigit():
            part = int(item)
        elif item is not None and "=" in item and isinstance(node, list):
            field, value = item.split("=", 1)
            found = next((i for i, x in enumerate(node) if isinstance(x, dict) and str(x.get(field)) == value), None)
            if found is None:
                break
            part = found
        else:
            break
        out.append(part)
        node = _child(node, part)
        if node is None:
            break
    return tuple(out)


def locate(doc: YamlDoc | None, finding: Finding) -> Finding:
    """Fill in file and line of a finding whose path points into `doc`."""
    if doc is None or finding.file:
        return finding
    from dataclasses import replace

    line = doc.line_of(raw_path(doc.data, finding.path)) if finding.path else 0
    return replace(finding, file=doc.file, line=line)
