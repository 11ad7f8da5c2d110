"""monitoring/: Prometheus scrape targets, alert rules that know the plan, a runbook and Grafana dashboards."""
