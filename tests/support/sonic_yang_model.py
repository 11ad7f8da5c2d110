"""Test helper: check a SONiC config_db.json against SONiC's own YANG models with the real libyang (`yanglint`).

SONiC validates its config the same way (sonic-yang-mgmt, `sonic_yang_ext.py`, `loadData`): it translates the
config_db.json dict into YANG instance JSON and lets libyang parse and validate that. `translate` here follows
that translation:

- table `T` modelled by module `M` -> `{"M:M": {"M:T": {...}}}` (each module has one top-level container named
  after itself; every config container inside it is a config_db table);
- inside a table: its lists (a single list only when it is called `T_LIST`, as SONiC requires); each key is split
  on `|` and goes to the first list whose key has as many leaves (INTERFACE: `Ethernet0` -> INTERFACE_LIST,
  `Ethernet0|10.0.0.0/31` -> INTERFACE_IPPREFIX_LIST); then its containers (DEVICE_METADATA/localhost,
  SNMP/LOCATION); then its own leaves. A key that fits none of these is an error (SONiC: "All Keys are not parsed");
- the "type 1 maps" (DSCP_TO_TC_MAP, CABLE_LENGTH, ...) hold an inner list: `{"ROCE": {"8": "0"}}` becomes
  `{"name": "ROCE", "DSCP_TO_TC_MAP": [{"dscp": "8", "tc": "0"}]}`;
- leaf-lists: JSON arrays as they are, strings split on SONiC's separator for the field (comma by default);
- values: config_db holds only strings. SONiC makes uint* leaves JSON numbers, leaves the rest strings and parses
  with libyang 3's LYD_PARSE_JSON_STRING_DATATYPES, which accepts strings for every type. libyang 2 (Debian's)
  has no such flag and wants RFC 7951 encoding, so here a value becomes what its leaf type needs: a JSON number
  for (u)int8..32, true/false for boolean, [null] for empty, and a string for everything else (int64, uint64 and
  decimal64 included). A union with string members takes a number only when the value is an integer inside one
  of its integer members' ranges. A value that does not convert stays a string, so libyang reports it.

The model's structure (containers, lists and their keys, leaves and their resolved types) is read from
`yanglint -f info`, which prints the compiled modules with groupings, typedefs and leafref targets resolved.

`validate` then runs `yanglint -t config` (strict parsing, no state data, as SONiC's `no_state=True, strict=True`)
with every module in the directory, as SONiC loads them all. libyang 2.1 stops at the first error, so to report
them all `validate` takes the offending field (or entry) out of a copy of the config and runs again (details
there). Errors come back in config_db terms (table, key, field, libyang's message); tables no module models come
back as `not_modelled`, not dropped silently.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

# From sonic_yang_ext.py: lists whose config_db entry is a plain {inner key: value} map.
TYPE1_MAP_LISTS = frozenset(
    {
        "DSCP_TO_TC_MAP_LIST",
        "DOT1P_TO_TC_MAP_LIST",
        "TC_TO_PRIORITY_GROUP_MAP_LIST",
        "TC_TO_QUEUE_MAP_LIST",
        "MAP_PFC_PRIORITY_TO_QUEUE_LIST",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP_LIST",
        "DSCP_TO_FC_MAP_LIST",
        "EXP_TO_FC_MAP_LIST",
        "CABLE_LENGTH_LIST",
        "MPLS_TC_TO_TC_MAP_LIST",
        "TC_TO_DSCP_MAP_LIST",
    }
)
# From sonic_yang_ext.py: leaf-lists stored in config_db as one string, and their separator (else ",").
LEAF_LIST_SEPARATORS = {("NTP", "src_intf"): ";"}

# Integer types libyang 2 wants as JSON numbers; 64-bit integers and decimal64 are JSON strings (RFC 7951).
NUMBER_TYPES = frozenset({"int8", "int16", "int32", "uint8", "uint16", "uint32"})

YANG_DIR_ENV = "FABRIC_SONIC_YANG"
# Loaded first: other modules' when/must conditions refer to it, and libyang warns while it is missing.
FIRST_MODULE = "sonic-device_metadata.yang"


def yang_dir() -> Path:
    """The SONiC YANG modules: $FABRIC_SONIC_YANG, else shared/sonic-yang beside the repository, else the
    workplace's /work/shared/sonic-yang (the first that exists; the models are reference data, not ours)."""
    env = os.environ.get(YANG_DIR_ENV)
    if env:
        return Path(env)
    candidates = [Path(__file__).resolve().parents[3] / "shared" / "sonic-yang", Path("/work/shared/sonic-yang")]
    return next((c for c in candidates if c.is_dir()), candidates[0])


# --- the schema, read from `yanglint -f info` -------------------------------------------------------------------

# One YANG statement: keyword, argument ("" when none), substatements.
Stmt = tuple[str, str, list["Stmt"]]
_TOKEN = re.compile(r"""\s+|"((?:[^"\\]|\\.)*)"|'([^']*)'|([{};])|([^\s{};"']+)""", re.S)


def _parse_yang(text: str) -> list[Stmt]:
    """The statements of YANG text (as yanglint prints it: no comments, no string concatenation)."""
    # yanglint 2.1's info printer leaves a multi-leaf `unique` unclosed (`unique "agent_ip, port;`): close it.
    text = re.sub(r'^(\s*unique "[^"\n]*);$', r'\1";', text, flags=re.M)
    tokens: list[tuple[str, bool]] = []  # (text, is a {;} delimiter)
    for m in _TOKEN.finditer(text):
        if m.group(1) is not None:
            tokens.append((re.sub(r"\\(.)", lambda e: {"n": "\n", "t": "\t"}.get(e[1], e[1]), m.group(1)), False))
        elif m.group(2) is not None:
            tokens.append((m.group(2), False))
        elif m.group(3):
            tokens.append((m.group(3), True))
        elif m.group(4):
            tokens.append((m.group(4), False))
    pos = 0

    def block() -> list[Stmt]:
        nonlocal pos
        out: list[Stmt] = []
        while pos < len(tokens) and tokens[pos] != ("}", True):
            keyword = tokens[pos][0]
            pos += 1
            arg = ""
            if not tokens[pos][1]:
                arg = tokens[pos][0]
                pos += 1
            subs: list[Stmt] = []
            if tokens[pos] == ("{", True):
                pos += 1
                subs = block()
            pos += 1  # the ';' or the '}'
            out.append((keyword, arg, subs))
        return out

    return block()


@dataclass(frozen=True)
class Leaf:
    name: str
    # How a value may be encoded: ("number", ranges) / ("boolean", ()) / ("empty", ()) / ("string", ()), one per
    # (flattened) union member; ranges are (low, high) pairs, empty meaning the type's own bounds.
    encodings: tuple[tuple[str, tuple[tuple[int, int], ...]], ...]
    leaf_list: bool = False
    targets: tuple[str, ...] = ()  # the tables its leafrefs point into


@dataclass
class Node:
    """A container (keys == []) or a list, with its children by name."""

    name: str
    keys: list[str] = field(default_factory=list)
    children: dict[str, Node | Leaf] = field(default_factory=dict)

    @property
    def is_list(self) -> bool:
        return bool(self.keys)


def _ranges(type_stmt: Stmt) -> tuple[tuple[int, int], ...]:
    spec = next((arg for kw, arg, _ in type_stmt[2] if kw == "range"), "")
    out = []
    for part in filter(None, (p.strip() for p in spec.split("|"))):
        low, _, high = part.partition("..")
        out.append(
            (
                -(2**64) if low == "min" else int(low),
                2**64 if (high or low) == "max" else int(high or low),
            )
        )
    return tuple(out)


def _encodings(type_stmt: Stmt) -> list[tuple[str, tuple[tuple[int, int], ...]]]:
    base, subs = type_stmt[1], type_stmt[2]
    if base in ("union", "leafref"):  # union members; a leafref's compiled type prints its target's type inside
        return [e for kw, arg, s in subs if kw == "type" for e in _encodings((kw, arg, s))]
    if base in NUMBER_TYPES:
        return [("number", _ranges(type_stmt))]
    if base in ("boolean", "empty"):
        return [(base, ())]
    return [("string", ())]


def _targets(type_stmt: Stmt) -> list[str]:
    """The tables the leafrefs in a type point into: `/m:top/m:TABLE/...` or `../../TABLE/...` -> TABLE."""
    out = []
    for keyword, arg, subs in type_stmt[2]:
        if keyword == "path" and type_stmt[1] == "leafref":
            steps = [s.split(":")[-1] for s in re.sub(r"\[[^\]]*\]", "", arg).split("/") if s not in ("", "..")]
            out.append(steps[1] if arg.startswith("/") else steps[0])
        elif keyword == "type":
            out += _targets((keyword, arg, subs))
    return out


def _node(name: str, subs: list[Stmt], is_list: bool) -> Node:
    node = Node(name)
    key = ""
    stack = list(reversed(subs))
    while stack:
        keyword, arg, children = stack.pop()
        if keyword in ("choice", "case"):  # transparent in instance data
            stack.extend(reversed(children))
        elif keyword == "key":
            key = arg
        elif keyword in ("container", "list") and not _config_false(children):
            node.children[arg] = _node(arg, children, keyword == "list")
        elif keyword in ("leaf", "leaf-list") and not _config_false(children):
            type_stmt = next(s for s in children if s[0] == "type")
            kinds, targets = tuple(_encodings(type_stmt)), tuple(_targets(type_stmt))
            node.children[arg] = Leaf(arg, kinds, keyword == "leaf-list", targets)
    if is_list:
        # The compiled list has its key leaves first, in key order; yanglint 2.1 prints the key statement with
        # the names run together ("nameip-prefix"), so take the shortest run of leading leaves that spells it.
        wanted = re.sub(r"[\s,]", "", key)
        spelled = ""
        for child in node.children.values():
            if not isinstance(child, Leaf) or spelled == wanted:
                break
            node.keys.append(child.name)
            spelled += child.name
        if spelled != wanted:
            raise ValueError(f"cannot read the keys of list {name} from {key!r}")
    return node


def _config_false(subs: list[Stmt]) -> bool:
    return ("config", "false", []) in subs


@dataclass
class Schema:
    modules: list[Path]  # every module file, in the order given to yanglint
    tables: dict[str, tuple[str, Node]]  # config_db table -> (module name, its container)


@cache
def load_schema(directory: Path, yanglint: str = "yanglint") -> Schema:
    """Every module in `directory` (yanglint compiles them, so they must all load) and the tables they model."""
    files = sorted(directory.glob("*.yang"), key=lambda p: (p.name != FIRST_MODULE, p.name))
    info = subprocess.run(
        [yanglint, "-D", "-p", str(directory), "-f", "info", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if info.returncode != 0:
        raise RuntimeError(f"yanglint cannot load the modules in {directory}:\n{info.stderr}")
    tables: dict[str, tuple[str, Node]] = {}
    for keyword, module, subs in _parse_yang(info.stdout):
        assert keyword == "module", keyword
        # SONiC: the module's one top-level container, named like the module, holds one container per table.
        top = next((s for s in subs if s[0] == "container" and s[1] == module), None)
        if top is None or _config_false(top[2]):
            continue  # a module of typedefs/groupings only
        for table in _node(module, top[2], False).children.values():
            if isinstance(table, Node) and not table.is_list:
                tables[table.name] = (module, table)
    return Schema(files, tables)


# --- config_db -> YANG instance JSON ----------------------------------------------------------------------------


@dataclass(frozen=True)
class YangError:
    """One problem, located in config_db terms: table, entry key, field (each "" when not known)."""

    table: str
    key: str
    field: str
    message: str
    path: str = ""  # the instance-data path libyang named
    after_drop: str = ""  # set when found after dropping an entry or table: this error may follow from that

    def __str__(self) -> str:
        where = "|".join(p for p in (self.table, self.key) if p) + (f" field {self.field!r}" if self.field else "")
        note = f" [found after dropping {self.after_drop}]" if self.after_drop else ""
        return f"{where or '<config>'}: {self.message}{note}"


@dataclass
class Translation:
    instance: dict[str, Any]
    not_modelled: list[str]
    errors: list[YangError]


def _encode(leaf: Leaf, value: Any, table: str = "") -> Any:
    """A config_db value as YANG JSON for `leaf` of `table` (see the module docstring)."""
    if leaf.leaf_list:
        items = value.split(LEAF_LIST_SEPARATORS.get((table, leaf.name), ",")) if isinstance(value, str) else value
        one = Leaf(leaf.name, leaf.encodings)  # one item
        return [_encode(one, str(v).strip()) for v in items if str(v).strip() != ""]
    text = str(value)
    for kind, ranges in leaf.encodings:
        if kind == "number" and re.fullmatch(r"[+-]?\d+", text):
            number = int(text)
            # a union member's range decides between it and a string member; else libyang reports the range
            if not ranges or any(lo <= number <= hi for lo, hi in ranges) or ("string", ()) not in leaf.encodings:
                return number
        if kind == "boolean" and text in ("true", "false"):
            return text == "true"
        if kind == "empty" and text == "":
            return [None]
    return text


def _entry(table: str, key: str, lst: Node, fields: Any, errors: list[YangError]) -> dict[str, Any]:
    """One config_db entry (`key` -> `fields`) as an entry of list `lst`."""
    entry: dict[str, Any] = {}
    for name, part in zip(lst.keys, key.split("|"), strict=True):
        entry[name] = _encode(_leaf(lst, name), part.strip())
    if not isinstance(fields, dict):
        errors.append(YangError(table, key, "", f"entry is {type(fields).__name__}, not an object"))
    elif lst.name in TYPE1_MAP_LISTS:
        # {inner key: value} -> the inner list, entries {its key leaf: inner key, its other leaf: value}
        inner = next(c for c in lst.children.values() if isinstance(c, Node))
        inner_key = _leaf(inner, inner.keys[0])
        inner_value = [c for c in inner.children.values() if isinstance(c, Leaf) and c is not inner_key][-1]
        entry[inner.name] = [
            {inner_key.name: _encode(inner_key, k), inner_value.name: _encode(inner_value, v)}
            for k, v in fields.items()
        ]
    else:
        for name, value in fields.items():
            child = lst.children.get(name)
            if isinstance(child, Leaf) and name not in lst.keys:
                entry[name] = _encode(child, value, table)
            elif isinstance(child, Node) and not child.is_list:
                entry[name] = {}
                _container(table, child, value, entry[name], errors, key)
            else:
                errors.append(YangError(table, key, name, f"no leaf {name!r} in the model's {lst.name}"))
    return entry


def _leaf(node: Node, name: str) -> Leaf:
    child = node.children[name]
    assert isinstance(child, Leaf), name
    return child


def _container(
    table: str, node: Node, config: Any, out: dict[str, Any], errors: list[YangError], key: str = ""
) -> None:
    """Fill `out` (the YANG JSON of container `node`) from `config` (a table, or the fields of one of its keys)."""
    if not isinstance(config, dict):
        errors.append(YangError(table, key, "", f"is {type(config).__name__}, not an object"))
        return
    rest = dict(config)
    lists = [c for c in node.children.values() if isinstance(c, Node) and c.is_list]
    if len(lists) == 1 and lists[0].name != node.name + "_LIST":
        lists = []  # SONiC translates a table's single list only when it is called <TABLE>_LIST
    for lst in lists:  # in model order; each key goes to the first list with as many key leaves
        entries = [_entry(table, k, lst, rest.pop(k), errors) for k in list(rest) if len(k.split("|")) == len(lst.keys)]
        if entries:
            out[lst.name] = entries
    for child in node.children.values():
        if isinstance(child, Node) and not child.is_list and child.name in rest:
            inner: dict[str, Any] = {}
            _container(table, child, rest.pop(child.name), inner, errors, child.name)
            out[child.name] = inner
    for name in list(rest):
        leaf = node.children.get(name)
        if isinstance(leaf, Leaf):
            out[name] = _encode(leaf, rest.pop(name), table)
    for name in rest:  # SONiC: "All Keys are not parsed"
        errors.append(
            YangError(
                table, key or name, name if key else "", f"no list, container or leaf of the model takes {name!r}"
            )
        )


def translate(config_db: dict[str, Any], schema: Schema) -> Translation:
    """config_db.json (as a dict) -> SONiC YANG instance JSON, the tables no module models, translation errors."""
    result = Translation({}, [], [])
    for table, content in config_db.items():
        if table not in schema.tables:
            result.not_modelled.append(table)
            continue
        module, node = schema.tables[table]
        body: dict[str, Any] = {}
        _container(table, node, content, body, result.errors)
        result.instance.setdefault(f"{module}:{module}", {})[f"{module}:{table}"] = body
    return result


# --- validation with yanglint -----------------------------------------------------------------------------------


def run_yanglint(instance: dict[str, Any], schema: Schema, yanglint: str = "yanglint") -> tuple[int, str]:
    """(exit code, stderr) of `yanglint -t config` over `instance` with every module of `schema`."""
    with tempfile.TemporaryDirectory(prefix="sonic-yang-") as work:
        data = Path(work) / "config.json"
        data.write_text(json.dumps(instance, indent=1))
        # -D: search no directory but the models'; strict parsing is yanglint's default (-n would relax it).
        directory = str(schema.modules[0].parent)
        run = subprocess.run(
            [yanglint, "-D", "-p", directory, "-t", "config", *map(str, schema.modules), str(data)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    return run.returncode, run.stderr


# One libyang error as yanglint prints it: the message, then where (a data path, or only a schema path).
_ERROR = re.compile(
    r'^libyang err : (?P<message>.*?)(?: \((?:Schema location "(?P<schema>[^"]*)"(?:, )?)?'
    r'(?:Data location "(?P<data>[^"]*)")?(?:, line number (?P<line>\d+))?\.\))?$',
    re.S,
)


def _steps(path: str) -> list[tuple[str, list[str]]]:
    """A libyang path as (node name, its predicates' key values) per step: /a/b[k='x/y'][j='z']/c."""
    steps = re.findall(r"/([^/\[]+)((?:\[[^=\]]+=(?:'[^']*'|\"[^\"]*\")\])*)", path)
    return [(name, [v[1:-1] for v in re.findall(r"=('[^']*'|\"[^\"]*\")\]", preds)]) for name, preds in steps]


Where = tuple[str, str, str]  # (table, key, field) in config_db terms


def _locate(error: re.Match[str], instance: dict[str, Any], schema: Schema) -> list[Where]:
    """Where a libyang error is in config_db terms; for a missing mandatory leaf (a schema path only), each entry
    of that list without it. The field of a type 1 map's inner list entry is that entry's key."""
    data, schema_path = error["data"], error["schema"]
    steps = _steps(data or schema_path or "")
    if len(steps) < 3 or steps[1][0] not in schema.tables:
        return [(steps[1][0] if len(steps) > 1 else "", "", "")]
    module, table_node = schema.tables[steps[1][0]]
    table, (name, values) = table_node.name, steps[2]
    child = table_node.children.get(name)
    if isinstance(child, Leaf):  # a leaf of the table container itself
        return [(table, "", name)]
    field_name = (steps[3][1][:1] or [steps[3][0]])[0] if len(steps) > 3 else ""
    body = instance.get(f"{module}:{module}", {}).get(f"{module}:{table}", {})
    if data is not None and error["line"] and isinstance(child, Node) and child.is_list:
        # A value libyang could not parse: its data path stops short (no predicate for a bad key, no key of a
        # type 1 map's inner entry); the leaf it names, last before the line it names in our JSON, has the value.
        leaf = steps[-1][0]
        lines = json.dumps(instance, indent=1).splitlines()[: int(error["line"])]
        line = next((t.strip().rstrip(",") for t in reversed(lines) if t.strip().startswith(f'"{leaf}":')), None)
        value = str(json.loads("{" + line + "}")[leaf]) if line else None
        for e in body.get(name, []) if len(values) < len(child.keys) else []:
            parts = [str(e[k]) for k in child.keys]
            if parts[: len(values)] == values and parts[len(values)] == value:
                return [(table, "|".join(parts), child.keys[len(values)])]
        if len(steps) > 3 and not steps[3][1] and isinstance(child.children.get(steps[3][0]), Node) and value:
            field_name = value
    if data is None and isinstance(child, Node) and child.is_list:
        missing = [e for e in body.get(name, []) if field_name not in e]
        return [(table, "|".join(str(e[k]) for k in child.keys), field_name) for e in missing] or [(table, "", "")]
    return [(table, "|".join(values) if values else name, field_name)]


def _schema_leaf(path: str, schema: Schema) -> Leaf | None:
    """The leaf a data path ends at, if any."""
    steps = _steps(path)
    node: Node | Leaf | None = (
        schema.tables[steps[1][0]][1] if len(steps) > 1 and steps[1][0] in schema.tables else None
    )
    for name, _ in steps[2:]:
        node = node.children.get(name) if isinstance(node, Node) else None
    return node if isinstance(node, Leaf) else None


@dataclass
class Report:
    errors: list[YangError]
    not_modelled: list[str]
    instance: dict[str, Any]  # the translation of the config as given


def validate(config_db: dict[str, Any], directory: Path, yanglint: str = "yanglint", rounds: int = 100) -> Report:
    """Every error SONiC's models (via libyang) report on `config_db`, and the tables they do not model.

    libyang 2.1 stops at its first error, so after each one a copy of the config is changed and yanglint runs
    again, `rounds` times at most:
    - a bad field is dropped, and with it the same value from every other entry of the table (the error says
      how many had it; libyang would reject them alike);
    - a missing mandatory field (also one dropped here) gets the value a sibling entry has for it if one is known
      good, else the entry is dropped; an error naming an entry or a key leaf drops the entry;
    - a leafref to an entry dropped here is no error of the config: it is dropped without a report. Other errors
      found after an entry was dropped say so, as they may follow from that.
    """
    schema = load_schema(directory, yanglint)
    first = translate(config_db, schema)
    report = Report(list(first.errors), first.not_modelled, first.instance)
    db = copy.deepcopy(config_db)
    seen: set[Where] = set()  # reported or dropped
    refilled: set[Where] = set()
    bad: set[tuple[str, str, str]] = set()  # (table, field, value) reported
    dropped: list[tuple[str, str]] = []  # (table, key) of entries dropped
    instance = first.instance
    for _ in range(rounds):
        code, stderr = run_yanglint(instance, schema, yanglint)
        if code == 0:
            return report
        blocks = [b.strip() for b in re.split(r"^(?=libyang \w+ *:|YANGLINT\[)", stderr, flags=re.M)]
        error = next((m for b in blocks if (m := _ERROR.match(b))), None)
        if error is None:
            report.errors.append(YangError("", "", "", f"yanglint failed (exit {code}): {stderr.strip()}"))
            return report
        message, path = " ".join(error["message"].split()), error["data"] or error["schema"] or ""
        mandatory = message.startswith("Mandatory node ")
        value = re.match(r'Invalid (?:leafref|union) value "([^"]*)"', message)
        leaf = _schema_leaf(path, schema) if value else None
        cascade = leaf is not None and value is not None and any((t, value[1]) in dropped for t in leaf.targets)
        progress = False
        for where in _locate(error, instance, schema):
            table, key, name = where
            entries: dict[str, Any] = db[table] if isinstance(db.get(table), dict) else {}
            entry = entries.get(key) if isinstance(entries.get(key), dict) else None
            old = entry.get(name) if entry is not None else None
            same = [e for k, e in entries.items() if k != key and isinstance(e, dict) and name in e and e[name] == old]
            if not (cascade or where in seen):
                also = f" (same value in {len(same)} other entries)" if same and not mandatory else ""
                after = ", ".join("|".join(d) for d in dropped[:3]) + (" ..." if len(dropped) > 3 else "")
                report.errors.append(YangError(table, key, name, message + also, path, after))
            seen.add(where)
            good = [
                e[name]
                for k, e in entries.items()
                if isinstance(e, dict)
                and name in e
                and (table, k, name) not in seen
                and (table, name, str(e[name])) not in bad
            ]
            if mandatory and entry is not None and good and where not in refilled:
                entry[name] = good[0]
                refilled.add(where)
            elif entry is not None and name in entry and where not in refilled:
                if not cascade:
                    bad.add((table, name, str(old)))
                for e in [entry, *same]:
                    del e[name]
                seen.update((table, k, name) for k, e in entries.items() if any(e is x for x in same))
            elif key in entries:
                del entries[key]
                dropped.append((table, key))
            elif table in db:
                del db[table]
                dropped.append((table, ""))
            else:
                continue
            progress = True
        if not progress:
            report.errors.append(YangError("", "", "", "cannot isolate the error above; stopped looking for more"))
            return report
        instance = translate(db, schema).instance
    report.errors.append(YangError("", "", "", f"stopped after {rounds} rounds; there may be more errors"))
    return report
