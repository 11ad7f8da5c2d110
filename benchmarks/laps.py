"""A stopwatch for stage timings: `lap = Laps(); …; lap("stage")` records the seconds since the previous lap.
Plain stdlib, so the pyavd side of vs_pyavd.py (another venv) can use it too."""

from __future__ import annotations

import time


class Laps:
    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self._last = time.perf_counter()

    def __call__(self, stage: str) -> None:
        now = time.perf_counter()
        self.times[stage] = round(now - self._last, 2)
        self._last = now
