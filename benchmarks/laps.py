"""A stopwatch for stage timings: `lap = Laps(); …; lap("stage")` records the seconds since the previous lap,
wall (`times`) and CPU of this process (`cpu`, user + system). Plain stdlib, so the pyavd side of vs_pyavd.py
(another venv) can use it too."""

from __future__ import annotations

import time


class Laps:
    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._last = time.perf_counter()
        self._last_cpu = time.process_time()

    def __call__(self, stage: str) -> None:
        now, now_cpu = time.perf_counter(), time.process_time()
        self.times[stage] = round(now - self._last, 2)
        self.cpu[stage] = round(now_cpu - self._last_cpu, 2)
        self._last, self._last_cpu = now, now_cpu
