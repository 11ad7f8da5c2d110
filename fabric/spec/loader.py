"""Load a spec: read YAML, validate it into `Spec`, merge part files, check cross-references.

Every problem becomes a finding with the YAML path, file and line; all of them are collected
before the loader gives up, so a user fixes a spec in one round.
"""

from __future__ import annotations

import contextlib
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from fabric.model.findings import FabricError, Finding, Severity, error, warning
from fabric.spec.catalog import (
    Catalog,
    CatalogFile,
    PortClash,
    builtin_catalog,
    node_port_clashes,
    switch_port_clashes,
)
from fabric.spec.inputs import Inputs, read_inputs
from fabric.spec.limits import size_findings, work_findings
from fabric.spec.paths import display_path, locate
from fabric.spec.schema import (
    FABRIC_ROLES,
    ClosTopology,
    Fabric,
    NodeAttach,
    NodeGroup,
    SlurmSettings,
    Spec,
    SwitchMgmtAttach,
)
from fabric.spec.text import normalise_data, text_problems
from fabric.spec.yamlio import IDENTIFIER, PathKey, YamlDoc, YamlReadError, parse_yaml, read_yaml

if TYPE_CHECKING:  # lock.py (and its models) load where a lock is read
    from fabric.spec.lock import LockInput

MAX_UNKNOWN_KEYS = 5  # per file: a file that is not a spec at all should not be listed key by key


@dataclass(frozen=True)
class Design:
    """A validated spec with its merged catalog and where it came from."""

    spec: Spec
    catalog: Catalog
    doc: YamlDoc
    base_dir: Path
    notes: tuple[Finding, ...] = ()  # non-error findings from loading (catalog overrides)
    inputs: Inputs = field(default_factory=Inputs)  # the CSV, inventory and secrets the spec names, read
    lock: LockInput | None = None  # the allocations of an earlier build to keep (`fabric build --lock`)


# --------------------------------------------------------------------------------------------- pydantic errors


def _unwrap(annotation: Any) -> list[Any]:
    """The concrete types an annotation may hold (Annotated, Optional and unions opened up)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            out.extend(_unwrap(arg))
        return out
    return [annotation]


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """Walk the spec's types along a pydantic error location (tags included) to the model there."""
    candidates: list[Any] = [model]
    for part in loc:
        nxt: list[Any] = []
        for cand in candidates:
            if isinstance(cand, type) and issubclass(cand, BaseModel):
                if isinstance(part, str) and part in cand.model_fields:
                    nxt.extend(_unwrap(cand.model_fields[part].annotation))
                elif isinstance(part, str):
                    # a union tag: keep the member it names, if any does
                    kind = cand.model_fields.get("kind")
                    if (
                        (kind is not None and part in typing.get_args(kind.annotation))
                        or part in cand.model_fields
                        or part in ("node-attach", "switch-mgmt-attach")
                    ):
                        nxt.append(cand)
            else:
                origin = typing.get_origin(cand)
                if origin is list and isinstance(part, int):
                    nxt.extend(_unwrap(typing.get_args(cand)[0]))
                elif origin is dict:
                    nxt.extend(_unwrap(typing.get_args(cand)[1]))
        # a tag names one member of a union; prefer models that accept it
        candidates = nxt or candidates
        if not nxt:
            return None
    for cand in candidates:
        if isinstance(cand, type) and issubclass(cand, BaseModel):
            return cand
    return None


def _clean_loc(data: Any, loc: tuple[Any, ...]) -> PathKey:
    """Drop the union tags pydantic inserts, keeping only steps that exist in the data."""
    out: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            out.append(part)
            node = node[part]
        elif last and isinstance(part, str | int) and isinstance(node, dict):
            out.append(part)  # a missing key: name it
        # else: a tag such as 'fat-tree' or 'list[str]'
    return tuple(out)


def _message(err: Any) -> str:
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if msg.startswith("Assertion failed, "):
        msg = msg[len("Assertion failed, ") :]
    return msg


def validation_findings(
    exc: ValidationError, doc: YamlDoc, model: type[BaseModel], *, code_prefix: str = "spec"
) -> list[Finding]:
    """One finding per offending path; messages of union branches are joined."""
    from difflib import get_close_matches  # (here: only a refused spec needs it)

    grouped: dict[PathKey, list[tuple[str, str, str]]] = {}
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        path = _clean_loc(doc.data, loc)
        kind = err["type"]
        hint = ""
        if kind == "extra_forbidden":
            key = str(path[-1]) if path else ""
            parent = _model_at(model, loc[:-1])
            valid = sorted(parent.model_fields) if parent else []
            close = get_close_matches(key, valid, n=1)
            # a key is shown only when it could be one: never print lines of a file that is not YAML at all
            msg = f"unknown key `{key}`" if IDENTIFIER.match(key) else "an unknown key (not a plausible name)"
            hint = (f"did you mean `{close[0]}`? " if close else "") + (
                f"valid keys here: {', '.join(valid)}" if valid else ""
            )
            kind_code = f"{code_prefix}-unknown-key"
        elif kind == "missing":
            msg = f"missing required key `{path[-1]}`" if path else "missing required key"
            kind_code = f"{code_prefix}-missing"
        else:
            msg = _message(err)
            kind_code = f"{code_prefix}-invalid"
        grouped.setdefault(path, []).append((kind_code, msg, hint.strip()))
    # A typo shows as an unknown key plus a missing one; report the typo only.
    typos = {
        (path[:-1], close)
        for path, items in grouped.items()
        for code, _, hint in items
        if code.endswith("unknown-key") and hint.startswith("did you mean `")
        for close in [hint.split("`")[1]]
    }
    findings = []
    unknown = 0
    for path, items in grouped.items():
        if path and (path[:-1], path[-1]) in typos and all(c.endswith("-missing") for c, _, _ in items):
            continue
        if all(c.endswith("unknown-key") for c, _, _ in items):
            unknown += 1
            if unknown > MAX_UNKNOWN_KEYS:
                continue
        codes = {c for c, _, _ in items}
        code = next(iter(codes)) if len(codes) == 1 else f"{code_prefix}-invalid"
        msg = " or ".join(dict.fromkeys(m for _, m, _ in items))
        hint = next((h for _, _, h in items if h), "")
        findings.append(
            Finding(Severity.ERROR, code, display_path(doc.data, path), msg, hint, doc.file, doc.line_of(path))
        )
    if unknown > MAX_UNKNOWN_KEYS:
        findings.append(
            Finding(
                Severity.ERROR,
                f"{code_prefix}-unknown-key",
                "",
                f"{unknown - MAX_UNKNOWN_KEYS} more unknown key(s) not listed",
                "is this the right file?",
                doc.file,
                0,
            )
        )
    return findings


def text_findings(doc: YamlDoc, code: str) -> list[Finding]:
    """Control characters, surrogates and overlong strings anywhere in a document, keys included (its space
    separators normalised to spaces first, in place: the text rule of fabric/model/text.py)."""
    findings = []
    normalise_data(doc.data)
    for path, is_key, problem in text_problems(doc.data):
        where = display_path(doc.data, path)
        message = f"a key {problem}" if is_key else problem
        findings.append(Finding(Severity.ERROR, code, where, message, "", doc.file, doc.line_of(path)))
        if len(findings) >= 2 * MAX_UNKNOWN_KEYS:
            break
    return findings


# --------------------------------------------------------------------------------------------- cross-references


def suggest(name: str, valid: list[str]) -> str:
    if not valid:
        return "there is none to choose from"
    from difflib import get_close_matches  # (here: only a refused spec needs it)

    close = get_close_matches(name, valid, n=1, cutoff=0.5)
    listing = ", ".join(valid) if len(valid) <= 24 else ", ".join(valid[:24]) + f", … ({len(valid)} in all)"
    return (f"did you mean `{close[0]}`? " if close else "") + f"valid: {listing}"


@dataclass(frozen=True)
class _Parts:
    """What cross-reference checks need; taken from a valid Spec, or from whatever validates of a broken one."""

    nodes: list[NodeGroup]
    fabrics: dict[str, Fabric]
    fabric_keys: list[str]
    catalog: list[str]
    scheduler: SlurmSettings | None = None

    @classmethod
    def of(cls, spec: Spec) -> _Parts:
        return cls(list(spec.nodes), dict(spec.fabrics), list(spec.fabrics), list(spec.catalog), spec.exports.scheduler)

    @classmethod
    def lenient(cls, data: dict[str, Any]) -> _Parts:
        """The node groups and fabrics that validate on their own, so that one run reports every problem."""
        nodes: list[NodeGroup] = []
        fabrics: dict[str, Fabric] = {}
        raw_nodes = data.get("nodes")
        for item in raw_nodes if isinstance(raw_nodes, list) else []:
            with contextlib.suppress(ValidationError):
                nodes.append(NodeGroup.model_validate(item))
        raw_fabrics = data.get("fabrics")
        keys = [str(k) for k in raw_fabrics] if isinstance(raw_fabrics, dict) else []
        for key, item in raw_fabrics.items() if isinstance(raw_fabrics, dict) else []:
            with contextlib.suppress(ValidationError):
                fabrics[str(key)] = Fabric.model_validate(item)
        raw_catalog = data.get("catalog")
        files = [c for c in raw_catalog if isinstance(c, str)] if isinstance(raw_catalog, list) else []
        scheduler = None
        raw_exports = data.get("exports")
        if isinstance(raw_exports, dict):
            with contextlib.suppress(ValidationError):
                scheduler = SlurmSettings.model_validate(raw_exports.get("scheduler") or {})
        return cls(nodes, fabrics, keys, files, scheduler)


def _cost_parts(spec: Spec, catalog: Catalog) -> Iterator[Finding]:
    """The rack and PDU the bill of materials counts are catalog parts."""
    for field_name, parts, kind in (("rack", catalog.racks, "rack"), ("pdu", catalog.pdus, "PDU")):
        name = getattr(spec.costs, field_name)
        if name not in parts:
            yield error("unknown-part", f"costs.{field_name}", f"unknown {kind} `{name}`", suggest(name, sorted(parts)))


def _cross_references(spec: _Parts, catalog: Catalog) -> Iterator[Finding]:
    node_types = sorted(catalog.nodes)
    switch_models = sorted(catalog.switches)
    groups = {g.group: g for g in spec.nodes}
    seen_groups: set[str] = set()
    for group in spec.nodes:
        path = f"nodes[group={group.group}]"
        if group.group in seen_groups:
            yield error("duplicate-name", f"{path}.group", f"node group `{group.group}` is defined twice")
        seen_groups.add(group.group)
        if group.type not in catalog.nodes:
            yield error(
                "unknown-part", f"{path}.type", f"unknown node type `{group.type}`", suggest(group.type, node_types)
            )
    for key, fabric in spec.fabrics.items():
        fpath = f"fabrics.{key}"
        if fabric.dual_homing not in (None, "none") and (fabric.role or key) == "oob":
            yield error(
                "spec-invalid",
                f"{fpath}.dual_homing",
                f"fabric `{key}` is out-of-band: its ports are management addresses, they do not route",
                "drop `dual_homing` here; set it on the in-band, compute or storage fabric",
            )
        topology = fabric.topology
        if fabric.dual_homing == "bond" and (
            not isinstance(topology, ClosTopology) or topology.rail_optimized or topology.planes != 1
        ):
            yield error(
                "spec-invalid",
                f"{fpath}.dual_homing",
                f"`dual_homing: bond` pairs the leaves of a generated fabric; fabric `{key}` is "
                + ("rail-optimized or has planes" if isinstance(topology, ClosTopology) else "explicit"),
                "use a spine-leaf topology without rails or planes, or `dual_homing: host_routing`",
            )
        if fabric.technology == "infiniband" and (fabric.role or key) == "converged":
            yield error(
                "spec-invalid",
                f"{fpath}.role",
                f"fabric `{key}` is InfiniBand: a converged storage and in-band fabric is Ethernet "
                "(in-band management runs over IP on Ethernet ports)",
                "set `technology: ethernet`, or role `storage` for an InfiniBand storage fabric",
            )
        if fabric.role is None and key not in FABRIC_ROLES:
            yield error(
                "spec-missing",
                f"{fpath}.role",
                f"fabric `{key}` needs a role",
                f"set role to one of: {', '.join(FABRIC_ROLES)} (the default only for fabrics named like a role)",
            )
        for layer in ("leaf", "spine", "core"):
            choice = getattr(fabric.switches, layer)
            if choice is None:
                continue
            spath = f"{fpath}.switches.{layer}"
            if fabric.technology == "infiniband" and choice.platform is not None:
                yield error(
                    "platform-unsupported",
                    f"{spath}.platform",
                    "InfiniBand switches have no platform",
                    "the subnet manager configures them; drop `platform`",
                )
            model = catalog.switches.get(choice.model)
            if model is None:
                yield error(
                    "unknown-part",
                    spath,
                    f"unknown switch model `{choice.model}`",
                    suggest(choice.model, switch_models),
                )
            elif model.technology != fabric.technology:
                yield error(
                    "technology-mismatch",
                    spath,
                    f"`{choice.model}` is an {model.technology} switch; fabric `{key}` is {fabric.technology}",
                    suggest(
                        choice.model,
                        sorted(k for k, m in catalog.switches.items() if m.technology == fabric.technology),
                    ),
                )
        for i, attach in enumerate(fabric.attach):
            apath = f"{fpath}.attach[{i}]"
            if isinstance(attach, NodeAttach):
                found = groups.get(attach.group)
                if found is None:
                    yield error(
                        "unknown-group",
                        f"{apath}.group",
                        f"no node group `{attach.group}`",
                        suggest(attach.group, sorted(groups)),
                    )
                    continue
                node_type = catalog.nodes.get(found.type)
                if node_type is None:
                    continue
                port_group = node_type.ports.get(attach.ports)
                if port_group is None:
                    yield error(
                        "unknown-ports",
                        f"{apath}.ports",
                        f"node type `{found.type}` has no port group `{attach.ports}`",
                        suggest(attach.ports, sorted(node_type.ports)),
                    )
                elif port_group.technology not in ("any", fabric.technology):
                    yield error(
                        "technology-mismatch",
                        f"{apath}.ports",
                        f"`{found.type}` port group `{attach.ports}` is {port_group.technology}; "
                        f"fabric `{key}` is {fabric.technology}",
                        suggest(
                            attach.ports,
                            sorted(p for p, g in node_type.ports.items() if g.technology in ("any", fabric.technology)),
                        ),
                    )
            elif isinstance(attach, SwitchMgmtAttach) and attach.switch_mgmt != "all":
                for j, other in enumerate(attach.switch_mgmt):
                    if other not in spec.fabric_keys or other == key:
                        yield error(
                            "unknown-fabric",
                            f"{apath}.switch_mgmt[{j}]",
                            f"no other fabric `{other}`",
                            suggest(other, sorted(k for k in spec.fabric_keys if k != key)),
                        )
        if fabric.infiniband is not None:
            ib = fabric.infiniband
            named: list[tuple[str, list[str]]] = [
                (f"{fpath}.infiniband.io_groups", ib.io_groups),
                (f"{fpath}.infiniband.compute_groups", ib.compute_groups or []),
            ]
            for j, part in enumerate(ib.partitions):
                if part.members != "all":
                    named.append((f"{fpath}.infiniband.partitions[{j}].members", part.members))
                named.append((f"{fpath}.infiniband.partitions[{j}].limited", part.limited))
            for where, names in named:
                for member in names:
                    if member not in groups:
                        yield error(
                            "unknown-group", where, f"no node group `{member}`", suggest(member, sorted(groups))
                        )
            pkeys = [p.pkey for p in fabric.infiniband.partitions]
            if len(set(pkeys)) != len(pkeys):
                yield error("duplicate-pkey", f"{fpath}.infiniband.partitions", "P_Keys must be unique")
    yield from _scheduler_references(spec, groups)


def _scheduler_references(spec: _Parts, groups: dict[str, NodeGroup]) -> Iterator[Finding]:
    scheduler = spec.scheduler
    if scheduler is None:
        return
    if scheduler.fabric is not None and scheduler.fabric not in spec.fabric_keys:
        yield error(
            "unknown-fabric",
            "exports.scheduler.fabric",
            f"no fabric `{scheduler.fabric}`",
            suggest(scheduler.fabric, sorted(spec.fabric_keys)),
        )
    key = scheduler.fabric
    if key is None:
        key = next((k for k, f in spec.fabrics.items() if (f.role or k) == "compute"), None)
    fabric = spec.fabrics.get(key) if key is not None else None
    attached = {a.group for a in fabric.attach if isinstance(a, NodeAttach)} if fabric is not None else set()
    for j, member in enumerate(scheduler.groups or []):
        if member not in groups:
            yield error(
                "unknown-group",
                f"exports.scheduler.groups[{j}]",
                f"no node group `{member}`",
                suggest(member, sorted(groups)),
            )
        elif fabric is not None and member not in attached:
            yield warning(
                "scheduler-group-unattached",
                f"exports.scheduler.groups[{j}]",
                f"node group `{member}` is not attached to fabric `{key}`: its nodes are under no switch of the "
                "Slurm and Kubernetes topology",
                f"attach it to `{key}`, or choose the fabric with exports.scheduler.fabric",
            )


def _port_clashes(extra: CatalogFile, name: str, part_doc: YamlDoc) -> list[Finding]:
    """A part file's switch models and node types name each port once (fabric/spec/catalog.py checks how)."""
    found: list[tuple[str, str, PortClash]] = [
        *(("switches", part, c) for part, model in extra.switches.items() for c in switch_port_clashes(model)),
        *(("nodes", part, c) for part, node in extra.nodes.items() for c in node_port_clashes(node)),
    ]
    return [
        Finding(
            Severity.ERROR,
            "catalog-duplicate-port",
            display_path(part_doc.data, (section, part, *clash.path)),
            f"{'switch model' if section == 'switches' else 'node type'} `{part}` in {name}: {clash.message}",
            clash.hint,
            part_doc.file,
            part_doc.line_of((section, part, *clash.path)),
        )
        for section, part, clash in found
    ]


def _load_part_files(spec: _Parts, doc: YamlDoc, base_dir: Path) -> tuple[Catalog, list[Finding]]:
    catalog = builtin_catalog()
    findings: list[Finding] = []
    for i, name in enumerate(spec.catalog):
        path = base_dir / name
        try:
            part_doc = read_yaml(path, display=str(path), kind="part")
        except YamlReadError as exc:
            findings.append(
                Finding(
                    Severity.ERROR,
                    "catalog-unreadable",
                    f"catalog[{i}]",
                    f"part file {exc.file} {exc.message}",
                    "paths are relative to the spec file",
                    doc.file,
                    doc.line_of(("catalog", i)),
                )
            )
            continue
        bad_text = text_findings(part_doc, "catalog-invalid")
        if bad_text:
            findings.extend(bad_text)
            continue
        try:
            extra = CatalogFile.model_validate(part_doc.data)
        except ValidationError as exc:
            findings.extend(validation_findings(exc, part_doc, CatalogFile, code_prefix="catalog"))
            continue
        findings.extend(_port_clashes(extra, name, part_doc))  # the parts are still known: no unknown-part echo
        for section in ("switches", "nodes", "media"):
            for part in getattr(extra, section):
                if part in getattr(catalog, section):
                    findings.append(
                        Finding(
                            Severity.INFO,
                            "catalog-override",
                            f"{section}.{part}",
                            f"`{part}` from {name} replaces the built-in part",
                            "",
                            part_doc.file,
                            part_doc.line_of((section, part)),
                        )
                    )
        catalog = catalog.merged(extra)
    return catalog, findings


def load_spec(path: str | Path) -> Design:
    """Read, validate and cross-check a spec file. Raises FabricError (spec_invalid) with every finding."""
    path = Path(path)
    try:
        doc = read_yaml(path)
    except YamlReadError as exc:
        raise FabricError(
            [Finding(Severity.ERROR, "spec-unreadable", "", exc.message, "", exc.file, exc.line)], spec_invalid=True
        ) from None
    return _load_doc(doc, path.parent)


def load_spec_text(text: str, name: str = "<spec>", base_dir: str | Path = ".") -> Design:
    """As load_spec, for YAML text (notebooks, tests); part files are looked up in `base_dir`."""
    try:
        doc = parse_yaml(text, name)
    except YamlReadError as exc:
        raise FabricError(
            [Finding(Severity.ERROR, "spec-unreadable", "", exc.message, "", exc.file, exc.line)], spec_invalid=True
        ) from None
    return _load_doc(doc, Path(base_dir))


def _load_doc(doc: YamlDoc, base_dir: Path) -> Design:
    if not isinstance(doc.data, dict):
        raise FabricError(
            [
                Finding(
                    Severity.ERROR,
                    "spec-invalid",
                    "",
                    "the spec must be a mapping of keys (name, nodes, fabrics, …)",
                    "",
                    doc.file,
                    1,
                )
            ],
            spec_invalid=True,
        )
    bad_text = text_findings(doc, "spec-invalid")
    if bad_text:
        raise FabricError(bad_text, spec_invalid=True)
    spec: Spec | None = None
    findings: list[Finding] = []
    try:
        spec = Spec.model_validate(doc.data)
        parts = _Parts.of(spec)
    except ValidationError as exc:
        findings.extend(validation_findings(exc, doc, Spec))
        parts = _Parts.lenient(doc.data)
    catalog, part_findings = _load_part_files(parts, doc, base_dir)
    findings.extend(part_findings)
    findings.extend(locate(doc, f) for f in _cross_references(parts, catalog))
    if spec is not None:
        findings.extend(locate(doc, f) for f in _cost_parts(spec, catalog))
    if spec is None or any(f.severity == Severity.ERROR for f in findings):
        raise FabricError(findings, spec_invalid=True)
    too_large = [locate(doc, f) for f in size_findings(spec, catalog)]
    too_large = too_large or [locate(doc, f) for f in work_findings(spec, catalog)]
    if too_large:
        raise FabricError([*findings, *too_large], spec_invalid=True)
    inputs = read_inputs(spec, base_dir)
    return Design(spec=spec, catalog=catalog, doc=doc, base_dir=base_dir, notes=tuple(findings), inputs=inputs)
