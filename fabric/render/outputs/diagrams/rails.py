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
    for plane in planes:
        leaves: dict[tuple[int, int], Device] = {}
        for name in ft.switches:
            d: Device = ft.devices[name]
            if d.layer == "leaf" and (d.plane or 0) == plane and d.su is not None and d.rail is not None:
                leaves[(d.su, d.rail)] = d
        if not leaves:
            continue
        rails = sorted({r for _, r in leaves})
        su_list = sorted({s for s, _ in leaves})
        nodes_of: dict[int, list[str]] = defaultdict(list)
        for node, su in sus.items():
            if su is not None:
                nodes_of[su].append(node)
        shown: list[int | None] = list(su_list)
        if len(su_list) > MAX_ROWS:
            shown = [*su_list[: MAX_ROWS - 3], None, *su_list[-2:]]
        folded = len(su_list) - (len(shown) - 1) if None in shown else 0
        header = "".join(f'<TD PORT="r{r}" BGCOLOR="{LAYER_COLOURS["leaf"]}"><B>GPU {r}</B></TD>' for r in rails)
        rows = [f"<TR><TD><B>SU</B></TD><TD><B>nodes</B></TD>{header}</TR>"]
        for su in shown:
            if su is None:
                rows.append(f'<TR><TD COLSPAN="{len(rails) + 2}">… {folded} more SUs, laid out the same …</TD></TR>')
                continue
            cells = "".join(f"<TD>{html_text(leaves[(su, r)].name) if (su, r) in leaves else '—'}</TD>" for r in rails)
            nodes = nodes_of.get(su, [])
            rows.append(f"<TR><TD>SU{su}</TD><TD>{html_text(name_range(nodes))} ({len(nodes)})</TD>{cells}</TR>")
        table_id = f"rails{plane}"
        caption = f"plane {plane}: " if len(planes) > 1 else ""
        table = (
            '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4">'
            f'<TR><TD COLSPAN="{len(rails) + 2}"><B>{html_text(caption)}GPU i of every node of an SU → that SU\'s '
            "rail-i leaf; node slot s → down port s</B></TD></TR>" + "".join(rows) + "</TABLE>"
        )
        boxes.append(Box(table_id, table, html=True, attrs={"shape": "plaintext", "style": ""}))
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
