"""The hardware catalog as people and programs read it: `fabric catalog` (a table, one part's lines, JSON) and the
README's table.

Every part with its port groups, speeds and breakouts, U, power and placeholder price, and the values no vendor
datasheet confirmed (each part's `unverified`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from fabric.spec.catalog import Catalog, Media, NodeType, SwitchModel

if TYPE_CHECKING:
    from rich.table import Table

PRICES = "prices are placeholders for relative comparisons: put your quotes in a part file"
KINDS = ("switch", "node", "medium")


def parts(catalog: Catalog) -> list[tuple[str, str, SwitchModel | NodeType | Media]]:
    """(kind, name, part) for every part, switches, then node types, then media, each in catalog order."""
    return [
        *(("switch", n, p) for n, p in catalog.switches.items()),
        *(("node", n, p) for n, p in catalog.nodes.items()),
        *(("medium", n, p) for n, p in catalog.media.items()),
    ]


def _number(value: float) -> str:
    return f"{value:g}"


def switch_ports(model: SwitchModel) -> list[str]:
    """One line per port group: `64 × osfp (8 lanes): 1 × 800G | 2 × 400G`, cages beyond the first noted."""
    out = []
    for g in model.ports:
        modes = " | ".join(f"{m.ports} × {m.speed_gbps}G" for m in g.modes)
        first = f", from {g.first_cage}" if g.first_cage != 1 else ""
        lane_map = ", lane map" if g.lane_map is not None else ""
        out.append(f"{g.cages} × {g.connector} ({g.lanes} lane{'s' if g.lanes > 1 else ''}{first}{lane_map}): {modes}")
    return out


def node_ports(node: NodeType) -> list[str]:
    out = []
    for name, group in node.ports.items():
        ports = group.port_list()
        rails = sorted({p.rail for p in ports if p.rail is not None})
        rail = f", rails {rails[0]}–{rails[-1]}" if rails else ""
        out.append(f"{name}: {len(ports)} × {group.speed_gbps}G {group.connector}{rail}")
    system = node.rack_system
    if system is not None:
        mgmt = f", {system.mgmt_switches} × {system.mgmt_switch_model or 'management switch'}"
        out.append(
            f"rack system {system.name}: {system.trays} trays ({system.gpus} GPUs, one NVLink domain), "
            f"{system.nvlink_switch_trays} NVLink switch trays{mgmt if system.mgmt_switches else ''}, "
            f"{system.power_shelves} power shelves, {system.power_kw:g} kW, {system.cooling}-cooled"
        )
    return out


def unverified_values(part: SwitchModel | NodeType | Media) -> list[str]:
    """The part's unverified values, a node type's rack system's as `rack_system.<field>`."""
    nested = part.rack_system.unverified if isinstance(part, NodeType) and part.rack_system is not None else ()
    return [*part.unverified, *(f"rack_system.{v}" for v in nested)]


def unverified(part: SwitchModel | NodeType | Media) -> str:
    return "; ".join(unverified_values(part)) or "—"


def part_json(kind: str, name: str, part: SwitchModel | NodeType | Media) -> dict[str, Any]:
    data: dict[str, Any] = {"name": name, "kind": kind, **part.model_dump(mode="json")}
    data["unverified"] = unverified_values(part)
    return data


def catalog_json(catalog: Catalog, name: str | None = None) -> dict[str, Any]:
    listed = [part_json(k, n, p) for k, n, p in parts(catalog) if name is None or n == name]
    return {"note": PRICES, "parts": listed}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def catalog_markdown(catalog: Catalog) -> str:
    """The README's catalog tables (`fabric catalog --markdown`)."""
    lines = [
        "| switch | description | ports: cages × connector (lanes): modes | U | W | price (USD, placeholder) | "
        "unverified |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in catalog.switches.items():
        platform = f" ({s.platform})" if s.platform else ""
        lines.append(
            f"| `{name}`{platform} | {_cell(s.description)} | {'<br>'.join(_cell(p) for p in switch_ports(s))} "
            f"| {s.u} | {s.power_w} | {_number(s.list_price_usd)} | {_cell(unverified(s))} |"
        )
    lines += [
        "",
        "| node type | description | GPUs | port groups | U | W | price (USD, placeholder) | unverified |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, n in catalog.nodes.items():
        lines.append(
            f"| `{name}` | {_cell(n.description)} | {n.gpus} | {'<br>'.join(_cell(p) for p in node_ports(n))} "
            f"| {n.u} | {n.power_w} | {_number(n.list_price_usd)} | {_cell(unverified(n))} |"
        )
    lines += [
        "",
        "| medium | kind | description | speeds (G) | reach (m) | price (USD, placeholder) | unverified |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, m in catalog.media.items():
        speeds = ", ".join(str(s) for s in m.speeds_gbps)
        lines.append(
            f"| `{name}` | {m.kind} | {_cell(m.description)} | {speeds} | {_number(m.reach_m)} "
            f"| {_number(m.price_usd)} | {_cell(unverified(m))} |"
        )
    return "\n".join(lines) + "\n"


class PartRow(NamedTuple):
    """A part as the terminal shows it: text cells, a line per port group and per unverified value."""

    name: str
    kind: str
    description: str
    ports: list[str]
    u: str
    watts: str
    price: str
    unverified: list[str]


def part_rows(catalog: Catalog, name: str | None = None) -> list[PartRow]:
    """Every part's row (or the one named `name`'s), in `parts` order."""
    rows = []
    for kind, part_name, part in parts(catalog):
        if name is not None and part_name != name:
            continue
        if isinstance(part, SwitchModel):
            ports, u, watts, price = switch_ports(part), str(part.u), str(part.power_w), part.list_price_usd
            kind += f", {part.platform}" if part.platform else ""
        elif isinstance(part, NodeType):
            ports, u, watts, price = node_ports(part), str(part.u), str(part.power_w), part.list_price_usd
        else:
            assert isinstance(part, Media)
            speeds = ", ".join(f"{s}G" for s in part.speeds_gbps)
            ports, u, watts, price = [f"{speeds}, reach {part.reach_m:g} m"], "", "", part.price_usd
        rows.append(PartRow(part_name, kind, part.description, ports, u, watts, f"{price:g}", unverified_values(part)))
    return rows


def part_text(row: PartRow) -> str:
    """One part: every value on its own line."""
    return "\n".join(
        (
            f"{row.name} ({row.kind}): {row.description}",
            "  " + "\n  ".join(row.ports),
            f"  {f'U {row.u}, {row.watts} W, ' if row.u else ''}price {row.price} USD ({PRICES})",
            f"  unverified: {'; '.join(row.unverified) or 'nothing'}",
        )
    )


def catalog_table(rows: list[PartRow]) -> Table:
    """Every part in a table, a row each."""
    from rich.table import Table

    table = Table(title=f"Hardware catalog ({PRICES})", show_lines=True)
    for column in ("part", "kind", "description", "ports", "U", "W", "price", "unverified"):
        table.add_column(column, justify="right" if column in ("U", "W", "price") else "left", overflow="fold")
    for row in rows:
        table.add_row(
            row.name,
            row.kind,
            row.description,
            "\n".join(row.ports),
            row.u,
            row.watts,
            row.price,
            "\n".join(row.unverified) or "—",
        )
    return table
