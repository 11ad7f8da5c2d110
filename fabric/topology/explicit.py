"""Fabrics given by hand: switches and links in the spec, or rows of a cabling CSV.

They become the same draft as a generated fabric, so every check runs on them; whatever is wrong
with them (unknown devices or ports, a port used twice, a link that skips a tier, an attached
node port left unconnected) is a finding, not an exception.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from fabric.model.draft import FabricDraft, SwitchDraft
from fabric.model.findings import Finding, error, warning
from fabric.model.kinds import Layer, Tier
from fabric.model.topology import LAYER_RANK, TIER_OF_LAYER, Link
from fabric.spec.catalog import Catalog, SwitchPort, port_candidates
from fabric.spec.inputs import CsvInput
from fabric.spec.loader import suggest
from fabric.spec.schema import CsvTopology, ExplicitLink, ExplicitSwitch, ExplicitTopology, Fabric
from fabric.topology.attach import Attachment, NodeEntry

CSV_REQUIRED = ("tier", "a_device", "a_port", "b_device", "b_port")
CSV_LAYERS = {
    Tier.NODE_LEAF: (Layer.NODE, Layer.LEAF),
    Tier.LEAF_SPINE: (Layer.LEAF, Layer.SPINE),
    Tier.SPINE_CORE: (Layer.SPINE, Layer.CORE),
}


@dataclass(frozen=True)
class Pin:
    """Where an explicit switch was placed by the spec or the CSV."""

    rack: str | None
    u: int | None
    path: str


@dataclass
class ExplicitResult:
    """An explicit or CSV fabric as a draft, with the ports its links pin."""

    draft: FabricDraft
    pins: dict[str, Pin]


@dataclass(frozen=True)
class _End:
    """One end of an explicit link as written, with the ports its name can be."""

    device: str
    port: str
    layer: str
    speed: int  # a node port's speed; a switch port's in its first mode
    rail: int | None
    candidates: tuple[SwitchPort, ...]  # a switch port in each mode that has its name; () for a node
    path: str  # where it is written


@dataclass(frozen=True)
class _Pending:
    """A link whose switch ports' breakout modes are settled once every link is known."""

    a: _End
    b: _End
    link: ExplicitLink
    path: str
    csv_row: bool
    kind: str | None


class _Builder:
    def __init__(self, key: str, fabric: Fabric, catalog: Catalog, nodes: Sequence[NodeEntry]) -> None:
        self.key = key
        self.fabric = fabric
        self.catalog = catalog
        self.path = f"fabrics.{key}.topology"
        self.nodes = {n.name: n for n in nodes}
        self.draft = FabricDraft()
        self.pins: dict[str, Pin] = {}
        self.switches: dict[str, SwitchDraft] = {}
        self.used: dict[tuple[str, str], str] = {}  # (device, port) → where it was used
        self.pending: list[_Pending] = []

    def add_switch(self, sw: ExplicitSwitch, path: str) -> None:
        if sw.name in self.switches or sw.name in self.nodes:
            self.draft.findings.append(error("duplicate-name", f"{path}.name", f"`{sw.name}` is defined twice"))
            return
        model = self.catalog.switches.get(sw.model)
        if model is None:
            self.draft.findings.append(
                error(
                    "unknown-part",
                    f"{path}.model",
                    f"unknown switch model `{sw.model}`",
                    suggest(sw.model, sorted(self.catalog.switches)),
                )
            )
            return
        if model.technology != self.fabric.technology:
            self.draft.findings.append(
                error(
                    "technology-mismatch",
                    f"{path}.model",
                    f"`{sw.model}` is an {model.technology} switch; fabric `{self.key}` is {self.fabric.technology}",
                )
            )
            return
        choice = self.fabric.switches.for_layer(sw.layer)
        layer_platform = choice.platform if choice.model == sw.model else None
        platform = layer_platform or self.fabric.platform_of("", model.platform)
        index = sum(1 for s in self.switches.values() if s.layer == sw.layer) + 1
        draft = SwitchDraft(sw.name, sw.layer, sw.model, platform, sw.plane, index=index)
        self.switches[sw.name] = draft
        self.draft.switches.append(draft)
        self.pins[sw.name] = Pin(sw.rack, sw.u, path)

    def _end(self, text: str, path: str) -> _End | None:
        """One link end, or None after a finding."""
        device, port = text.split(":", 1)
        if device in self.switches:
            sw = self.switches[device]
            model = self.catalog.switches[sw.model]
            ports = port_candidates(model, sw.platform)
            found = ports.get(port)
            if found is None:
                self.draft.findings.append(
                    error(
                        "unknown-port",
                        path,
                        f"`{sw.model}` has no port `{port}` (switch `{device}`)",
                        suggest(port, list(ports)),
                    )
                )
                return None
            return _End(device, port, sw.layer, found[0].speed_gbps, None, found, path)
        node = self.nodes.get(device)
        if node is None:
            known = sorted(self.switches) + sorted(self.nodes)[:20]
            self.draft.findings.append(
                error(
                    "unknown-device",
                    path,
                    f"no switch or node `{device}` in fabric `{self.key}`",
                    suggest(device, known),
                )
            )
            return None
        node_type = self.catalog.nodes[node.type]
        for group in node_type.ports.values():
            for p in group.port_list():
                if p.name == port:
                    return _End(device, port, Layer.NODE, group.speed_gbps, p.rail, (), path)
        names = [p.name for g in node_type.ports.values() for p in g.port_list()]
        self.draft.findings.append(
            error(
                "unknown-port",
                path,
                f"node type `{node.type}` has no port `{port}` (node `{device}`)",
                suggest(port, names),
            )
        )
        return None

    def _media(self, name: str | None, kind: str | None, speed: int, path: str) -> str | None:
        """The catalog media of an explicit link: by name, or the first of a kind that carries the speed."""
        media = self.catalog.media
        if name is not None:
            if name not in media:
                self.draft.findings.append(
                    error("unknown-part", path, f"unknown media `{name}`", suggest(name, list(media)))
                )
            return name if name in media else None
        if kind:
            for key, m in media.items():
                if m.kind == kind and speed in m.speeds_gbps and self.fabric.technology in m.technologies:
                    return key
            self.draft.findings.append(
                error(
                    "cable-reach",
                    path,
                    f"no {kind} media in the catalog carries {speed}G {self.fabric.technology}",
                    "add one to a part file, or leave media empty to choose by distance",
                )
            )
        return None

    def add_link(self, link: ExplicitLink, path: str, *, csv_row: bool = False, kind: str | None = None) -> None:
        a = self._end(link.a, path if csv_row else path + ".a")
        b = self._end(link.b, path if csv_row else path + ".b")
        if a is None or b is None:
            return
        if LAYER_RANK[a.layer] > LAYER_RANK[b.layer]:
            a, b = b, a
        if LAYER_RANK[b.layer] - LAYER_RANK[a.layer] != 1:
            self.draft.findings.append(
                error(
                    "tier-skip",
                    path,
                    f"{a.device}:{a.port} ({a.layer}) — {b.device}:{b.port} ({b.layer}) does not join adjacent tiers",
                    "links join node-leaf, leaf-spine or spine-core",
                )
            )
            return
        for end in (a, b):
            first = self.used.get((end.device, end.port))
            if first is not None:
                self.draft.findings.append(
                    error("port-budget", path, f"port {end.device}:{end.port} is used twice (first at {first})")
                )
                return
        for end in (a, b):
            self.used[(end.device, end.port)] = path
        self.pending.append(_Pending(a, b, link, path, csv_row, kind))

    def _resolve_modes(self) -> dict[tuple[str, str], int]:
        """The breakout mode of every used cage: one that has the names of all its used ports, at the
        speed of most of its nodes' ports where there is a choice. Returns each switch port's speed."""
        cages: dict[tuple[str, int], list[tuple[_End, int | None]]] = {}
        for p in self.pending:
            for end, peer in ((p.a, p.b), (p.b, p.a)):
                if end.candidates:
                    cages.setdefault((end.device, end.candidates[0].cage), []).append(
                        (end, None if peer.candidates else peer.speed)
                    )
        speeds: dict[tuple[str, str], int] = {}
        for (device, cage), uses in cages.items():
            modes = [(c.breakout, c.speed_gbps) for c in uses[0][0].candidates]
            common = [m for m in modes if all(m in {(c.breakout, c.speed_gbps) for c in e.candidates} for e, _ in uses)]
            if not common:
                end = uses[-1][0]
                self.draft.findings.append(
                    error(
                        "port-budget",
                        end.path,
                        f"cage {cage} of `{device}` is used in two breakout modes ("
                        + ", ".join(sorted({e.port for e, _ in uses}))
                        + ")",
                        "name every port of a cage in the same breakout mode",
                    )
                )
                for end, _ in uses:
                    speeds[(end.device, end.port)] = end.candidates[0].speed_gbps
                continue
            wanted = Counter(s for _, s in uses if s is not None)
            mode = max(common, key=lambda m: (wanted.get(m[1], 0), -common.index(m)))
            for end, _ in uses:
                speeds[(end.device, end.port)] = mode[1]
        return speeds

    def _make_links(self) -> None:
        speeds = self._resolve_modes()
        for p in self.pending:
            a_speed = speeds.get((p.a.device, p.a.port), p.a.speed)
            b_speed = speeds[(p.b.device, p.b.port)]
            if p.a.candidates and a_speed != b_speed:
                self.draft.findings.append(
                    warning(
                        "speed-mismatch",
                        p.path,
                        f"{p.a.device}:{p.a.port} ({a_speed}G) — {p.b.device}:{p.b.port} ({b_speed}G) runs at "
                        f"{min(a_speed, b_speed)}G",
                    )
                )
            speed = min(a_speed, b_speed)
            media = self._media(p.link.media, p.kind, speed, p.path if p.csv_row else p.path + ".media")
            self.draft.links.append(
                Link(
                    self.key,
                    TIER_OF_LAYER[p.b.layer],
                    p.a.device,
                    p.a.port,
                    p.b.device,
                    p.b.port,
                    speed,
                    self.switches[p.b.device].plane,
                    p.a.rail,
                    media,
                    p.link.length_m,
                    p.path,
                )
            )

    def _leaf_rails(self) -> None:
        """A leaf whose GPU ports are all on one rail is that rail's leaf; its uplinks carry the rail too."""
        rails: dict[str, set[int | None]] = {}
        for link in self.draft.links:
            if link.tier == Tier.NODE_LEAF:
                rails.setdefault(link.b, set()).add(link.rail)
        for name, found in rails.items():
            found.discard(None)  # non-GPU ports (UFM, storage) do not make a rail
            if len(found) == 1:
                self.switches[name].rail = next(iter(found))
        self.draft.links = [
            replace(link, rail=self.switches[link.a].rail) if link.tier == Tier.LEAF_SPINE else link
            for link in self.draft.links
        ]

    def finish(self, attached: Sequence[Attachment]) -> ExplicitResult:
        self._make_links()
        self._leaf_rails()
        if self.draft.links:
            self.draft.tiers = max(LAYER_RANK[s.layer] for s in self.switches.values())
        missing: dict[str, list[str]] = {}
        for att in attached:
            for ep in att.ports:
                if (ep.device, ep.port) not in self.used:
                    missing.setdefault(att.path, []).append(f"{ep.device}:{ep.port}")
        for path, ports in missing.items():
            shown = ", ".join(ports[:4]) + (f" and {len(ports) - 4} more" if len(ports) > 4 else "")
            self.draft.findings.append(
                error(
                    "unconnected",
                    path,
                    f"{len(ports)} attached port(s) of fabric `{self.key}` have no link: {shown}",
                    "cable them, or drop the group from attach",
                )
            )
        linked = {device for device, _ in self.used}
        for name in self.switches:
            if name not in linked:
                self.draft.findings.append(
                    warning("unconnected", self.pins[name].path, f"switch `{name}` has no links")
                )
        return ExplicitResult(self.draft, self.pins)


def build_explicit(
    key: str, fabric: Fabric, catalog: Catalog, nodes: Sequence[NodeEntry], attached: Sequence[Attachment]
) -> ExplicitResult:
    topo = fabric.topology
    assert isinstance(topo, ExplicitTopology)
    builder = _Builder(key, fabric, catalog, nodes)
    for i, sw in enumerate(topo.switches):
        builder.add_switch(sw, f"fabrics.{key}.topology.switches[{i}]")
    for i, link in enumerate(topo.links):
        builder.add_link(link, f"fabrics.{key}.topology.links[{i}]")
    return builder.finish(attached)


def _csv_layers(rows: Sequence[Mapping[str, str]], nodes: Mapping[str, NodeEntry]) -> dict[str, str]:
    layers: dict[str, str] = {}
    for row in rows:
        tier = row.get("tier", "")
        pair = CSV_LAYERS.get(tier)
        if pair is None:
            continue
        for side, layer in zip(("a", "b"), pair, strict=True):
            device = row.get(f"{side}_device", "")
            if device and device not in nodes and layer != Layer.NODE:
                layers.setdefault(device, layer)
    return layers


def build_from_csv(
    key: str,
    fabric: Fabric,
    catalog: Catalog,
    nodes: Sequence[NodeEntry],
    attached: Sequence[Attachment],
    table: CsvInput,
) -> ExplicitResult:
    topo = fabric.topology
    assert isinstance(topo, CsvTopology)
    builder = _Builder(key, fabric, catalog, nodes)
    path = f"fabrics.{key}.topology.file"
    if table.problem:
        builder.draft.findings.append(error("csv-unreadable", path, table.problem, "paths are relative to the spec"))
        return ExplicitResult(builder.draft, {})
    builder.draft.findings.extend(table.findings)
    rows = [row.cells for row in table.rows]
    lines = [row.line for row in table.rows]
    columns = table.columns if rows else ()
    missing = [c for c in CSV_REQUIRED if c not in columns]
    if not rows or missing:
        builder.draft.findings.append(
            error(
                "csv-invalid",
                path,
                f"{topo.file} " + (f"lacks columns {', '.join(missing)}" if rows else "has no rows"),
                "use fabric's cabling.csv format (cable_id,fabric,plane,rail,tier,a_rack,a_u,a_device,…)",
            )
        )
        return ExplicitResult(builder.draft, {})
    layers = _csv_layers(rows, builder.nodes)
    models = dict(topo.models)
    first_row: dict[str, int] = {}
    for i, row in enumerate(rows):
        for side in ("a", "b"):
            first_row.setdefault(row.get(f"{side}_device", ""), i)
    for device, layer in layers.items():
        model = models.get(device) or fabric.switches.for_layer(layer).model
        row, line = rows[first_row[device]], lines[first_row[device]]
        side = "a" if row.get("a_device") == device else "b"
        rack = row.get(f"{side}_rack") or None
        u_text = row.get(f"{side}_u") or ""
        sw = ExplicitSwitch(
            name=device,
            model=model,
            layer=layer,
            rack=rack,
            u=_small_int(u_text, 60),
            plane=_small_int(row.get("plane", ""), 8),
        )
        builder.add_switch(sw, f"{path}:{line}")
    for line, row in zip(lines, rows, strict=True):
        where = f"{path}:{line}"
        if row.get("tier") not in CSV_LAYERS:
            builder.draft.findings.append(
                error("csv-invalid", where, f"tier `{row.get('tier')}` is not node-leaf, leaf-spine or spine-core")
            )
            continue
        if not all(row.get(c) for c in CSV_REQUIRED):
            builder.draft.findings.append(
                error("csv-invalid", where, "a row needs a_device, a_port, b_device and b_port")
            )
            continue
        length = row.get("length_m") or ""
        try:
            length_m = float(length) if length and len(length) <= 16 else None
        except ValueError:
            length_m = None
        if length_m is not None and not 0 < length_m <= 10_000:  # NaN and inf too
            length_m = None
        link = ExplicitLink(
            a=f"{row['a_device']}:{row['a_port']}",
            b=f"{row['b_device']}:{row['b_port']}",
            length_m=length_m if length_m and length_m > 0 else None,
        )
        builder.add_link(link, where, csv_row=True, kind=row.get("media") or None)
    return builder.finish(attached)


def _small_int(text: str, most: int) -> int | None:
    """A positive ASCII integer up to `most` (a rack unit, a plane), else None: `²` is a digit to str.isdigit."""
    return int(text) if re.fullmatch(r"[0-9]{1,4}", text) and 0 < int(text) <= most else None


_CSV_ROW = re.compile(r"^(fabrics\.[^:]+\.topology\.file):(\d+)(?:\..*)?$")


def locate_csv_rows(findings: Sequence[Finding], files: Mapping[str, str]) -> list[Finding]:
    """Findings about CSV rows (path `fabrics.<f>.topology.file:<line>…`) point into the CSV file."""
    out = []
    for f in findings:
        match = _CSV_ROW.match(f.path)
        if match and match.group(1) in files:
            f = replace(f, path=match.group(1), file=files[match.group(1)], line=int(match.group(2)))
        out.append(f)
    return out
