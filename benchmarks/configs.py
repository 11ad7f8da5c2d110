"""Render time per switch and platform for a design's Ethernet switches (default: designs/roce-512.yaml).

.venv/bin/python benchmarks/configs.py [SPEC]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from fabric import build_fabric
from fabric.render.platforms import PLATFORMS

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> None:
    spec = Path(argv[0]) if argv else REPO / "designs" / "roce-512.yaml"
    start = time.perf_counter()
    build = build_fabric(spec)
    built = time.perf_counter() - start
    intents = build.intents
    print(f"{build.name}: {len(intents)} Ethernet switches; spec to intents {built:.2f} s")
    print(f"{'platform':<9} {'ms/switch':>9} {'KiB/switch':>10}")
    for name, platform in PLATFORMS.items():
        start = time.perf_counter()
        size = sum(len(text) for intent in intents.values() for text in platform.render(intent).values())
        took = time.perf_counter() - start
        print(f"{name:<9} {1000 * took / len(intents):>9.1f} {size / 1024 / len(intents):>10.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
