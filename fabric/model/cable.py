"""A cable of the cabling plan: one link with its placed ends, medium, part, length and labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabric.model.kinds import MediaKind
from fabric.model.topology import Link


def end_label(rack: str, u: int | None) -> str:
    return f"{rack}-U{u:02d}" if rack and u else rack or "?"


@dataclass(frozen=True, slots=True)
class Cable:
    """A planned cable: its link, both ends' rack and U, medium, part, length and ID."""

    cable_id: str
    link: Link
    a_rack: str
    a_u: int | None
    b_rack: str
    b_u: int | None
    media_kind: MediaKind | Literal[""]  # "" when no allowed medium carries the cable
    media: str  # catalog key
    part: str
    length_m: float | None
    route_m: float | None

    def labels(self) -> tuple[str, str]:
        """What is printed on the label at each end: the cable, then this end, then the far end."""
        link = self.link
        a = f"{end_label(self.a_rack, self.a_u)} {link.a} {link.a_port}"
        b = f"{end_label(self.b_rack, self.b_u)} {link.b} {link.b_port}"
        return f"{self.cable_id} {a} > {b}", f"{self.cable_id} {b} > {a}"
