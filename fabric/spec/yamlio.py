"""Read YAML into plain Python data while remembering the line of every key and list item.

ruamel.yaml keeps positions on its round-trip containers; we copy them into a flat
`{path tuple: line}` index and hand the rest of the program plain dicts and lists.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

PathKey = tuple[str | int, ...]


class YamlReadError(Exception):
    """The file cannot be read as YAML at all: one clear line for the user."""

    def __init__(self, file: str, message: str, line: int = 0) -> None:
        self.file = file
        self.line = line
        self.message = message
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class YamlDoc:
    """A parsed document: plain data plus the line (1-based) of every key and item."""

    file: str
    data: Any
    lines: dict[PathKey, int] = field(default_factory=dict)

    def line_of(self, path: PathKey) -> int:
        """The line of `path`, or of its nearest ancestor that exists in the file (0: not in the file)."""
        for end in range(len(path), 0 if path else -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line:
                return line
        return 0


def _plain(node: Any, path: PathKey, lines: dict[PathKey, int]) -> Any:
    if isinstance(node, CommentedMap):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            child = (*path, key)
            with contextlib.suppress(KeyError, TypeError):  # merged keys carry no position
                lines[child] = node.lc.key(key)[0] + 1
            out[key] = _plain(value, child, lines)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, value in enumerate(node):
            child = (*path, index)
            with contextlib.suppress(KeyError, TypeError, IndexError):
                lines[child] = node.lc.item(index)[0] + 1
            items.append(_plain(value, child, lines))
        return items
    if isinstance(node, str):
        return str(node)  # drop ruamel's scalar string subclasses
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


def read_yaml(path: Path, *, display: str | None = None) -> YamlDoc:
    """Parse one YAML file. Raises YamlReadError for anything that is not a readable document."""
    name = display or str(path)
    if path.is_dir():
        raise YamlReadError(name, "is a directory, not a YAML file")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise YamlReadError(name, "no such file") from None
    except UnicodeDecodeError:
        raise YamlReadError(name, "is not UTF-8 text") from None
    except OSError as exc:
        raise YamlReadError(name, f"cannot be read ({exc.strerror or exc})") from None
    return parse_yaml(text, name)


def parse_yaml(text: str, name: str) -> YamlDoc:
    if not text.strip():
        raise YamlReadError(name, "is empty; a spec needs at least `name`, `nodes` and `fabrics`")
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        raw = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        raise YamlReadError(name, f"invalid YAML: {problem}", line) from None
    except YAMLError as exc:
        raise YamlReadError(name, f"invalid YAML: {str(exc).splitlines()[0]}") from None
    if raw is None:
        raise YamlReadError(name, "holds no YAML document")
    lines: dict[PathKey, int] = {(): 1}
    return YamlDoc(name, _plain(raw, (), lines), lines)
