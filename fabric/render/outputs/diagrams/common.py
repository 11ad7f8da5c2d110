"""What the views share: colours, number formats, name ranges, and which SU a node belongs to."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fabric.model.topology import FabricTopology

LAYER_COLOURS = {"core": "#f4cccc", "spine": "#fce5cd", "leaf": "#d9ead3", "node": "#cfe2f3"}
LAYER_TITLES = {"core": "cores", "spine": "spines", "leaf": "leaves", "node": "nodes"}


def _number(value: float) -> str:
    return f"{value:,.0f}" if value == round(value) else f"{value:,.1f}"


def bandwidth(gbps: float) -> str:
    """400 → '400G', 102400 → '102.4T', 18022400 → '18,022.4T'."""
    if gbps >= 1000:
        return f"{_number(gbps / 1000)}T"
    return f"{_number(gbps)}G"


def name_range(names: Sequence[str], indices: Sequence[int] | None = None) -> str:
    """dgx001, dgx002, dgx003 → 'dgx001–dgx003' when the indices run without a gap; up to 4 names listed;
    else 'first … last'."""
    if not names:
        return ""
    if len(names) == 1:
        return names[0]
    if indices is None or list(indices) == list(range(indices[0], indices[0] + len(indices))):
        return f"{names[0]}–{names[-1]}"
    if len(names) <= 4:
        return ", ".join(names)
    return f"{names[0]} … {names[-1]}"


def speeds(values: Iterable[int]) -> str:
    return "/".join(f"{s}G" for s in sorted(set(values)))


def node_sus(ft: FabricTopology) -> dict[str, int | None]:
    """Node name → the scalable unit of the leaf its first link lands on (None outside SUs)."""
    out: dict[str, int | None] = {}
    for link in ft.links:
        if link.tier == "node-leaf" and link.a not in out:
            out[link.a] = ft.devices[link.b].su
    return out
