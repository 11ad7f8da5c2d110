"""The rail view of a rail-optimized fabric: which rail leaf of which SU carries which GPU index of which
nodes, and how the rails meet at the spines.

One table per plane: a row per scalable unit (its nodes), a column per rail (GPU index), the rail leaf in
each cell; below it the spine groups, an edge from every rail column with the links that rail sends there.
Past MAX_ROWS scalable units the middle rows fold into one "… N more SUs" row.
"""

from __future__ import annotations

from collections import defaultdict

from fabric.model.topology import Device
from fabric.pipeline import Build
from fabric.render.outputs.diagrams.adjacency import adjacency
from fabric.render.outputs.diagrams.common import LAYER_COLOURS, bandwidth, name_range, node_sus
from fabric.render.outputs.diagrams.dot import html_text
from fabric.render.outputs.diagrams.graph import Box, Diagram, Edge

MAX_ROWS = 12


def rails_diagram(build: Build, key: str) -> Diagram | None:
    ft = build.topology.fabrics[key]
    if not ft.rail_optimized:
        return None
    graph = adjacency(ft)
    sus = node_sus(ft)
    boxes: list[Box] = []
    edges: list[Edge] = []
    planes = sorted({ft.devices[s].plane or 0 for s in ft.switches})
    leaves_of: dict[int, dict[tuple[int, int], Device]] = {}
    for plane in planes:
        leaves: dict[tuple[int, int], Device] = {}
        for name in ft.switches:
            d: Device = ft.devices[name]
            if d.layer == "leaf" and (d.plane or 0) == plane and d.su is not None and d.rail is not None:
                leaves[(d.su, d.rail)] = d
        if leaves:
            leaves_of[plane] = leaves
    nodes_of: dict[int, list[str]] = defaultdict(list)
    for node, su in sus.items():
        if su is not None:
            nodes_of[su].append(node)
    one = _one_table(leaves_of)
    if one:
        # each plane carries its own GPU indices (a GB200 tray's GPU p on plane p) over the same SUs: one table,
        # a column per GPU index headed with its plane, rather than a table per plane repeating the SUs and nodes
        merged = {at: leaf for leaves in leaves_of.values() for at, leaf in leaves.items()}
        plane_of = {rail: plane for plane, leaves in leaves_of.items() for _, rail in leaves}
        boxes.append(_table("rails", merged, nodes_of, "", plane_of))
    for plane, leaves in leaves_of.items():
        table_id = "rails" if one else f"rails{plane}"
        if not one:
            caption = f"plane {plane}: " if len(planes) > 1 else ""
            boxes.append(_table(table_id, leaves, nodes_of, caption, {}))
        rails = sorted({r for _, r in leaves})
        # Uplinks of each rail's leaves into the plane's spines (pods: each leaf into its own pod's spines).
        up: dict[int, list[int]] = {}
        for (_su, rail), leaf in leaves.items():
            for other, link in graph.edges_of(leaf.name):
                if link.tier == "leaf-spine" and other != leaf.name:
                    entry = up.setdefault(rail, [0, 0])
                    entry[0] += 1
                    entry[1] += link.speed_gbps
        spines = [n for n in ft.switches if ft.devices[n].layer == "spine" and (ft.devices[n].plane or 0) == plane]
        cores = [n for n in ft.switches if ft.devices[n].layer == "core" and (ft.devices[n].plane or 0) == plane]
        pods = sorted({pod for n in spines if (pod := ft.devices[n].pod) is not None})
        spine_id = f"sp{plane}"
        where = (
            f" in {len(pods)} pods\n(a rail leaf joins its own pod's spines)"
            if pods
            else "\n(every rail leaf joins every spine)"
        )
        boxes.append(
            Box(
                spine_id,
                f"{len(spines)} spines{where}\n{name_range(spines)}",
                attrs={"fillcolor": LAYER_COLOURS["spine"]},
            )
        )
        for rail in rails:
            count, total = up.get(rail, (0, 0))
            if count:
                edges.append(
                    Edge(spine_id, f"{table_id}:r{rail}:n", f"rail {rail}: {count:,} × {bandwidth(total / count)}")
                )
        if cores:
            core_id = f"co{plane}"
            boxes.append(
                Box(core_id, f"{len(cores)} cores\n{name_range(cores)}", attrs={"fillcolor": LAYER_COLOURS["core"]})
            )
            links = [link for n in spines for _, link in graph.edges_of(n) if link.tier == "spine-core"]
            if links:
                total = sum(link.speed_gbps for link in links)
                edges.append(Edge(core_id, spine_id, f"{len(links):,} × {bandwidth(total / len(links))}"))
    if not boxes:
        return None
    title = f"{build.name} · fabric {key} · rails: GPU index → rail leaf per scalable unit, and rails to spines"
    return Diagram(f"rails-{key}", title, tuple(boxes), tuple(edges), graph_attrs={"ranksep": "1.5"})


def _one_table(leaves_of: dict[int, dict[tuple[int, int], Device]]) -> bool:
    """Several planes, each with GPU indices of its own, over the same SUs."""
    if len(leaves_of) < 2:
        return False
    rails = [{r for _, r in leaves} for leaves in leaves_of.values()]
    sus = [{s for s, _ in leaves} for leaves in leaves_of.values()]
    return sum(map(len, rails)) == len(set().union(*rails)) and all(s == sus[0] for s in sus)


def _table(
    table_id: str,
    leaves: dict[tuple[int, int], Device],
    nodes_of: dict[int, list[str]],
    caption: str,
    plane_of: dict[int, int],
) -> Box:
    """A row per SU (its nodes), a column per GPU index (its plane under it, when one table shows several)."""
    rails = sorted({r for _, r in leaves})
    su_list = sorted({s for s, _ in leaves})
    shown: list[int | None] = list(su_list)
    if len(su_list) > MAX_ROWS:
        shown = [*su_list[: MAX_ROWS - 3], None, *su_list[-2:]]
    folded = len(su_list) - (len(shown) - 1) if None in shown else 0
    header = "".join(
        f'<TD PORT="r{r}" BGCOLOR="{LAYER_COLOURS["leaf"]}"><B>GPU {r}</B>'
        + (f"<BR/>plane {plane_of[r]}" if r in plane_of else "")
        + "</TD>"
        for r in rails
    )
    rows = [f"<TR><TD><B>SU</B></TD><TD><B>nodes</B></TD>{header}</TR>"]
    for su in shown:
        if su is None:
            rows.append(f'<TR><TD COLSPAN="{len(rails) + 2}">… {folded} more SUs, laid out the same …</TD></TR>')
            continue
        cells = "".join(f"<TD>{html_text(leaves[(su, r)].name) if (su, r) in leaves else '—'}</TD>" for r in rails)
        nodes = nodes_of.get(su, [])
        rows.append(f"<TR><TD>SU{su}</TD><TD>{html_text(name_range(nodes))} ({len(nodes)})</TD>{cells}</TR>")
    table = (
        '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4">'
        f'<TR><TD COLSPAN="{len(rails) + 2}"><B>{html_text(caption)}GPU i of every node of an SU → that SU\'s '
        "rail-i leaf; node slot s → down port s</B></TD></TR>" + "".join(rows) + "</TABLE>"
    )
    return Box(table_id, table, html=True, attrs={"shape": "plaintext", "style": ""})
