"""Read YAML into plain Python data while remembering the line of every key and list item.

libyaml (through PyYAML's C parser) composes the node graph: a pure-Python scanner made a large spec take
seconds (docs/dev/performance.md). Scalars are resolved by the YAML 1.2 core schema (so `4:3`
is a string and `yes` is not a bool, as with ruamel before), and the plain data is built here, from
the nodes, with limits: nesting depth, nodes that aliases expand to (a billion-laughs bomb is a few
hundred bytes), integer length. Errors say where and what, never quote the file's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner

from fabric.spec.reading import Kind, ReadError, read_text

PathKey = tuple[str | int, ...]

MAX_DEPTH = 64  # nesting of mappings and lists; the deepest bundled design nests 7
MAX_ALIAS_NODES = 100_000  # nodes that aliases may add in all; a real spec reuses a few small blocks
MAX_INT_DIGITS = 40  # far above any ASN, GUID or count; Python refuses to parse > 4,300 digits

_TAG = "tag:yaml.org,2002:"
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}\Z")


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


class _Resolver(BaseResolver):
    """The YAML 1.2 core schema's implicit types (PyYAML's default is YAML 1.1)."""


for _tag, _pattern, _first in (
    ("bool", r"(?:true|True|TRUE|false|False|FALSE)\Z", "tTfF"),
    ("int", r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z", "-+0123456789"),
    (
        "float",
        r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z",
        "-+0123456789.",
    ),
    ("null", r"(?:~|null|Null|NULL|)\Z", ["~", "n", "N", ""]),
    ("merge", r"<<\Z", "<"),
):
    _Resolver.add_implicit_resolver(_TAG + _tag, re.compile(_pattern), list(_first))


try:
    from yaml.cyaml import CParser

    class _Loader(CParser, _Resolver):  # type: ignore[misc]
        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _Resolver.__init__(self)

except ImportError:  # PyYAML without libyaml: correct, only slower

    class _Loader(Reader, Scanner, Parser, Composer, _Resolver):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)
            _Resolver.__init__(self)


def read_yaml(path: Path, *, display: str | None = None, kind: Kind = "spec") -> YamlDoc:
    """Parse one YAML file. Raises YamlReadError for anything that is not a readable document."""
    name = display or str(path)
    try:
        text = read_text(path, kind, name)
    except ReadError as exc:
        raise YamlReadError(name, exc.message) from None
    return parse_yaml(text, name)


def _problem(exc: yaml.MarkedYAMLError) -> str:
    problem = (exc.problem or exc.context or "invalid YAML").strip()
    # never quote the file: alias names and characters the scanner shows come from it
    return re.sub(r"'[^'\s]*[A-Za-z0-9\\][^'\s]*'|\"[^\"\s]*[A-Za-z0-9\\][^\"\s]*\"", "…", problem)


def parse_yaml(text: str, name: str) -> YamlDoc:
    if not text.strip():
        raise YamlReadError(name, "is empty; a spec needs at least `name`, `nodes` and `fabrics`")
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        raise YamlReadError(name, f"invalid YAML: {_problem(exc)}", line) from None
    except yaml.YAMLError:
        raise YamlReadError(name, "invalid YAML") from None
    except RecursionError:
        raise YamlReadError(name, f"nests deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()
    if root is None:
        raise YamlReadError(name, "holds no YAML document")
    lines: dict[PathKey, int] = {(): 1}
    return YamlDoc(name, _Builder(name, lines).build(root, (), 0), lines)


class _Builder:
    """Nodes to plain data, counting what aliases expand to."""

    def __init__(self, name: str, lines: dict[PathKey, int]) -> None:
        self.name = name
        self.lines = lines
        self.seen: set[int] = set()
        self.sizes: dict[int, int] = {}
        self.alias_budget = MAX_ALIAS_NODES

    def fail(self, node: Node, message: str) -> YamlReadError:
        return YamlReadError(self.name, message, node.start_mark.line + 1)

    def size(self, node: Node, active: set[int]) -> int:
        key = id(node)
        if key in self.sizes:
            return self.sizes[key]
        if key in active:
            raise self.fail(node, "invalid YAML: an alias refers to a node that contains it")
        active.add(key)
        total = 1
        if isinstance(node, SequenceNode):
            total += sum(self.size(child, active) for child in node.value)
        elif isinstance(node, MappingNode):
            total += sum(self.size(k, active) + self.size(v, active) for k, v in node.value)
        active.discard(key)
        self.sizes[key] = total
        return total

    def build(self, node: Node, path: PathKey, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail(node, f"nests deeper than {MAX_DEPTH} levels")
        if not isinstance(node, ScalarNode):
            if id(node) in self.seen:  # an alias: it expands to a copy of the whole node
                self.alias_budget -= self.size(node, set())
                if self.alias_budget < 0:
                    raise self.fail(node, f"aliases expand to more than {MAX_ALIAS_NODES:,} nodes")
            self.seen.add(id(node))
        if isinstance(node, SequenceNode):
            items = []
            for index, child in enumerate(node.value):
                here = (*path, index)
                self.lines[here] = child.start_mark.line + 1
                items.append(self.build(child, here, depth + 1))
            return items
        if isinstance(node, MappingNode):
            return self.mapping(node, path, depth)
        assert isinstance(node, ScalarNode)
        return self.scalar(node)

    def mapping(self, node: MappingNode, path: PathKey, depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        first: dict[Any, int] = {}
        merges: list[Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                merges.append(value_node)
                continue
            if not isinstance(key_node, ScalarNode):
                raise self.fail(key_node, "invalid YAML: a mapping key must be a plain value, not a list or mapping")
            key = self.scalar(key_node)
            line = key_node.start_mark.line + 1
            if key in first:
                shown = f"`{key}` " if isinstance(key, str) and IDENTIFIER.match(key) else ""
                raise self.fail(key_node, f"invalid YAML: duplicate key {shown}(first on line {first[key]})")
            first[key] = line
            here = (*path, key)
            self.lines[here] = line
            out[key] = self.build(value_node, here, depth + 1)
        for merge in merges:  # `<<: *defaults`: keys given here win
            sources = merge.value if isinstance(merge, SequenceNode) else [merge]
            for source in sources:
                if not isinstance(source, MappingNode):
                    raise self.fail(source, "invalid YAML: `<<` merges a mapping or a list of mappings")
                kept, self.lines = self.lines, {}  # merged keys carry no position of their own here
                try:
                    merged = self.build(source, path, depth + 1)
                finally:
                    self.lines = kept
                for key, value in merged.items():
                    out.setdefault(key, value)
        return out

    def scalar(self, node: ScalarNode) -> Any:
        tag, value = node.tag, node.value
        if tag == _TAG + "str":
            return value
        if tag == _TAG + "null":
            if value not in ("", "~", "null", "Null", "NULL"):
                raise self.fail(node, "invalid YAML: !!null takes no value")
            return None
        if tag == _TAG + "bool":
            if value not in ("true", "True", "TRUE", "false", "False", "FALSE"):
                raise self.fail(node, "invalid YAML: !!bool takes true or false")
            return value in ("true", "True", "TRUE")
        if tag == _TAG + "int":
            if len(value) > MAX_INT_DIGITS:
                raise self.fail(node, f"a number with more than {MAX_INT_DIGITS} digits")
            try:
                if value.startswith(("0o", "0x")):
                    return int(value[2:], 8 if value[1] == "o" else 16)
                return int(value)
            except ValueError:
                raise self.fail(node, "invalid YAML: !!int takes an integer") from None
        if tag == _TAG + "float":
            lowered = value.lower().lstrip("+")
            if lowered in (".inf", "-.inf", ".nan"):
                return float(lowered.replace(".", ""))
            if len(value) > 2 * MAX_INT_DIGITS:
                raise self.fail(node, f"a number with more than {2 * MAX_INT_DIGITS} characters")
            try:
                return float(value)
            except ValueError:
                raise self.fail(node, "invalid YAML: !!float takes a number") from None
        raise self.fail(node, "invalid YAML: unsupported tag (only plain YAML types are read)")
