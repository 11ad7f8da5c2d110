"""The monitoring rules at scale in a real Prometheus: a generated design's plan series and synthetic
infiniband-exporter series (every planned switch port Active but a few), scraped over loopback by the generated
`fabric-plan` job; prints how long Prometheus takes to evaluate each rule group and what fires.

    .venv/bin/python benchmarks/monitoring.py          # the 32k-GPU design of benchmarks/run.py
    .venv/bin/python benchmarks/monitoring.py 100k

Needs Debian's `prometheus`. Everything listens on 127.0.0.1 and is stopped at the end. Figures are printed, never
asserted.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from run import SIZES, spec_text

DOWN = 10  # planned switch ports whose link is not Active


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=120) as response:
        return json.load(response)


def main(size: str) -> None:
    from fabric import render_all
    from fabric.pipeline import build_fabric
    from fabric.spec.loader import load_spec_text

    prometheus = shutil.which("prometheus")
    if not prometheus:
        sys.exit("needs prometheus (apt-get install prometheus)")
    nodes, planes = SIZES[size]
    start = time.perf_counter()
    build = build_fabric(load_spec_text(spec_text(size, nodes, planes), base_dir="."))
    files = {k: v for k, v in render_all(build).items() if k.startswith("monitoring/")}
    print(f"{size}: {len(build.allocation.cables)} cables, build and render {time.perf_counter() - start:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for path, data in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
        mon = root / "monitoring"
        plan = (mon / "textfile/fabric_plan.prom").read_text()
        ports = re.findall(r'^fabric_planned_port_info\{hostname="([^"]+)",port="([^"]+)"', plan, re.M)
        lines = ["# TYPE infiniband_width gauge\n"]
        for host, port in ports[DOWN:]:
            lines.append(f'infiniband_width{{component="switch",local_name="{host}",local_port="{port}"}} 4\n')
        (root / "ib.prom").write_text("".join(lines))
        http, web = _port(), _port()
        config = yaml.safe_load((mon / "prometheus.yml").read_text())
        plan_job = next(j for j in config["scrape_configs"] if j["job_name"] == "fabric-plan")
        plan_job |= {
            "scrape_interval": "15s",
            "scrape_timeout": "14s",
            "metrics_path": "/monitoring/textfile/fabric_plan.prom",
        }
        plan_job["static_configs"] = [{"targets": [f"127.0.0.1:{http}"]}]
        ib_job = {
            "job_name": "infiniband",
            "scrape_interval": "15s",
            "metrics_path": "/ib.prom",
            "static_configs": [{"targets": [f"127.0.0.1:{http}"], "labels": {"hostname": "ufm", "fabric": "compute"}}],
        }
        config["global"]["evaluation_interval"] = "15s"
        config["rule_files"] = [str(mon / f) for f in config["rule_files"]]
        config["scrape_configs"] = [plan_job, ib_job]
        (root / "bench.yml").write_text(yaml.safe_dump(config, sort_keys=False))
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(http), "--directory", tmp],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ),
            subprocess.Popen(
                [prometheus, f"--config.file={root / 'bench.yml'}", f"--storage.tsdb.path={root / 'data'}",
                 f"--web.listen-address=127.0.0.1:{web}"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ),
        ]  # fmt: skip
        try:
            api = f"http://127.0.0.1:{web}/api/v1"
            started = time.monotonic()
            deadline = started + 600
            while time.monotonic() < deadline:
                time.sleep(5)
                try:
                    alerts = _get(f"{api}/alerts")["data"]["alerts"]
                except (OSError, KeyError):
                    continue
                down = [a for a in alerts if a["labels"]["alertname"] == "FabricPlannedLinkDown"]
                if len(down) >= DOWN:
                    break
            print(f"  alerts pending {time.monotonic() - started:.0f} s after Prometheus started")
            groups = _get(f"{api}/rules")["data"]["groups"]
            for group in groups:
                print(f"  rule group {group['name']}: evaluated in {group['evaluationTime'] * 1000:.0f} ms")
            series = _get(f"{api}/query?query=count(%7B__name__%3D~%22fabric_.*%7Cinfiniband_.*%22%7D)")
            print(f"  series scraped: {series['data']['result'][0]['value'][1]}")
            example = down[0]["labels"] if down else None
            print(f"  FabricPlannedLinkDown alerts: {len(down)} (expected {DOWN}), e.g. {example}")
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(timeout=30)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "32k")
