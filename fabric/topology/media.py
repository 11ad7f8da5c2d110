"""Choose a cable for a link: the first allowed medium that carries its speed and reaches its length."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fabric.spec.catalog import Media
from fabric.spec.schema import CablingPolicy

CageKind = tuple[str, str | None, int | None]  # connector, thermal top, ports per cage (as allocation.cages)

DEFAULT_SLACK_PCT = 10.0
DEFAULT_SERVICE_LOOP_M = 1.0
DEFAULT_TRAY_HEIGHT_M = 0.3


@dataclass(frozen=True)
class CablingRules:
    """A fabric's resolved cabling policy (fabric → design → built-in defaults)."""

    kinds: tuple[str, ...] | None
    slack_pct: float
    service_loop_m: float
    tray_height_m: float

    @classmethod
    def resolve(cls, fabric: CablingPolicy | None, design: CablingPolicy) -> CablingRules:
        def pick(name: str, default: float) -> float:
            for layer in (fabric, design):
                value = getattr(layer, name) if layer is not None else None
                if value is not None:
                    return float(value)
            return default

        kinds = fabric.media if fabric is not None and fabric.media is not None else design.media
        return cls(
            tuple(kinds) if kinds is not None else None,
            pick("slack_pct", DEFAULT_SLACK_PCT),
            pick("service_loop_m", DEFAULT_SERVICE_LOOP_M),
            pick("tray_height_m", DEFAULT_TRAY_HEIGHT_M),
        )

    def length_for(self, route_m: float) -> float:
        return route_m * (1 + self.slack_pct / 100) + self.service_loop_m


@dataclass(frozen=True, slots=True)
class Choice:
    """The medium chosen for a link and its orderable length."""

    key: str
    media: Media
    length_m: float  # orderable length

    @property
    def part(self) -> str:
        return self.media.part.format(code=length_code(self.length_m), length=format_length(self.length_m))


def length_code(length_m: float) -> str:
    """LinkX length code: 30 m → '030', 1.5 m → '01A', 0.5 m → '00A'."""
    whole = int(length_m)
    return f"{whole:02d}A" if length_m - whole >= 0.5 else f"{whole:03d}"


def format_length(length_m: float) -> str:
    return f"{length_m:g}"


class MediaChooser:
    """Candidates per (technology, speed) are computed once; choosing is then a short scan."""

    def __init__(self, media: Mapping[str, Media], rules: CablingRules, technology: str) -> None:
        self.rules = rules
        self.technology = technology
        self._media = media
        self._candidates: dict[int, list[tuple[str, Media]]] = {}
        self._made: dict[tuple[str, float], Choice] = {}  # (medium, length) → its one Choice
        self._parts: dict[tuple[str, float], str] = {}
        # (speed, cages, kinds) → the media `choose` scans: the same few for thousands of links
        self._options: dict[
            tuple[int, tuple[CageKind | None, CageKind | None], tuple[str, ...] | None], list[tuple[str, Media]]
        ] = {}

    def candidates(self, speed: int) -> Sequence[tuple[str, Media]]:
        found = self._candidates.get(speed)
        if found is None:
            usable = [
                (key, m)
                for key, m in self._media.items()
                if self.technology in m.technologies and speed in m.speeds_gbps
            ]
            if self.rules.kinds is not None:
                order = {kind: i for i, kind in enumerate(self.rules.kinds)}
                usable = sorted((c for c in usable if c[1].kind in order), key=lambda c: order[c[1].kind])
            found = self._candidates[speed] = usable
        return found

    def choose(
        self,
        speed: int,
        needed_m: float,
        forced: str | None = None,
        cages: tuple[CageKind | None, CageKind | None] = (None, None),
        kinds: tuple[str, ...] | None = None,
    ) -> Choice | None:
        """The first medium (of `kinds`, where given) that carries the speed, reaches `needed_m` and whose plugs
        fit both ends' `cages` (connector, top, ports per cage; None: unknown); a `forced` medium as it is."""
        if forced is not None and forced in self._media:
            options: Sequence[tuple[str, Media]] = [(forced, self._media[forced])]
        else:
            found = self._options.get((speed, cages, kinds))
            if found is None:
                found = self._options[(speed, cages, kinds)] = [
                    (key, m)
                    for key, m in self.candidates(speed)
                    if (kinds is None or m.kind in kinds) and m.fits(*cages)
                ]
            options = found
        for key, m in options:
            if needed_m <= m.reach_m:
                lengths = m.lengths_m  # ascending (the catalog refuses others): the first long enough, by bisection
                i = bisect_left(lengths, needed_m - 1e-9)
                if i < len(lengths):
                    length = lengths[i]
                    made = self._made.get((key, length))
                    if made is None:
                        made = self._made[(key, length)] = Choice(key, m, length)
                    return made
        return None

    def part(self, choice: Choice) -> str:
        """`choice.part`, formatted once per medium and length (a cable plan asks for thousands)."""
        found = self._parts.get((choice.key, choice.length_m))
        if found is None:
            found = self._parts[(choice.key, choice.length_m)] = choice.part
        return found

    def reach(self, speed: int) -> float:
        return max((m.reach_m for _, m in self.candidates(speed)), default=0.0)
