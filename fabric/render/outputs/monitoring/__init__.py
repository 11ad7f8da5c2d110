"""monitoring/: Prometheus scrape targets, alert rules that know the plan, a runbook, Grafana dashboards and the
plan's series for node_exporter's textfile collector."""

from __future__ import annotations

from fabric.render.engine.registry import Output
from fabric.render.outputs.monitoring import dashboard, dcgm_counters, prometheus, rules, runbook, textfile

OUTPUTS: tuple[Output, ...] = (
    *prometheus.OUTPUTS,
    *rules.OUTPUTS,
    *runbook.OUTPUTS,
    *dashboard.OUTPUTS,
    *textfile.OUTPUTS,
    *dcgm_counters.OUTPUTS,
)
