"""monitoring/: targets carry the plan's labels, the plan's series match the cabling plan, every rule and dashboard
query uses metric names the exporters really export (exporters.py), dashboards are importable JSON, and the
settings reach the rules."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from fabric import render_all
from fabric.pipeline import build_fabric
from fabric.render.outputs.monitoring import planned_series as plan
from fabric.render.outputs.monitoring.exporters import EXPORTERS, PLAN_METRICS
from fabric.render.outputs.monitoring.rules import groups
from fabric.spec.loader import load_spec_text
from tests.conftest import DESIGNS, built

DESIGN_NAMES = sorted(p.stem for p in DESIGNS.glob("*.yaml"))
PROMQL_WORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset",
    "sum", "max", "min", "avg", "count", "rate", "increase", "changes", "label_replace", "vector", "label_values",
}  # fmt: skip
BUILTIN = {"ALERTS"}  # Prometheus' own series of firing alerts


def exported_metrics() -> frozenset[str]:
    """Every metric name an exporter of the table exports, and fabric's plan series."""
    return frozenset(m for e in EXPORTERS for m in e.metrics) | frozenset(PLAN_METRICS)


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (strings, label matchers, ranges and label lists removed)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    names = set(re.findall(r"(?<![\w:.])([A-Za-z_:][A-Za-z0-9_:]*)(?![\w:])(?!\s*\()", text))
    return {n for n in names if n not in PROMQL_WORDS and not re.fullmatch(r"\d+[smhd]?", n)}


def monitoring(design: str) -> dict[str, str]:
    return {k: v.decode() for k, v in render_all(built(design)).items() if k.startswith("monitoring/")}


def test_metric_names_are_parsed_from_promql() -> None:
    expr = 'max by (hostname) (label_replace(rate(ifInErrors{job="snmp", x=~"a{1}"}[5m]), "p", "$1", "ifName", "(.+)"))'
    assert metric_names(expr) == {"ifInErrors"}
    assert metric_names("fabric:port_up == 1 unless on(hostname, port) fabric_planned_port_info") == {
        "fabric:port_up",
        "fabric_planned_port_info",
    }


@pytest.mark.parametrize("design", DESIGN_NAMES)
def test_every_rule_uses_exported_metrics(design: str) -> None:
    known = exported_metrics() | BUILTIN
    found = groups(built(design))
    recorded = {r.name for g in found for r in g.rules if not r.alert}
    used: set[str] = set()
    for group in found:
        for rule in group.rules:
            names = metric_names(rule.expr)
            assert names, rule.expr
            assert names <= known | recorded, f"{rule.name}: {sorted(names - known - recorded)}"
            assert set(rule.uses) <= known, rule.name
            used |= names
    assert "fabric_planned_port_info" in used and "fabric:port_up" in used


@pytest.mark.parametrize("design", DESIGN_NAMES)
def test_dashboards_are_importable_and_use_exported_metrics(design: str) -> None:
    files = monitoring(design)
    boards = {k: json.loads(v) for k, v in files.items() if k.startswith("monitoring/grafana/")}
    b = built(design)
    assert sorted(boards) == sorted(
        f"monitoring/grafana/{k}.json" for k, ft in b.topology.fabrics.items() if ft.switches
    )
    recorded = {r.name for g in groups(b) for r in g.rules if not r.alert}
    known = exported_metrics() | BUILTIN | recorded
    uids = set()
    for board in boards.values():
        # what Grafana's import needs: a title, a uid of at most 40 characters, a schema version, panels
        assert board["id"] is None and board["title"] and isinstance(board["schemaVersion"], int)
        assert 0 < len(board["uid"]) <= 40 and re.fullmatch(r"[A-Za-z0-9_-]+", board["uid"])
        uids.add(board["uid"])
        assert [v["name"] for v in board["templating"]["list"]] == ["datasource", "su", "rack"]
        for variable in board["templating"]["list"][1:]:
            query = re.fullmatch(r"label_values\((.+),\s*\w+\)", variable["definition"])
            assert query and metric_names(query.group(1)) <= known
        ids = [p["id"] for p in board["panels"]]
        assert len(set(ids)) == len(ids)
        graphs = [p for p in board["panels"] if p["type"] != "row"]
        assert len(graphs) >= 6
        for panel in board["panels"]:
            pos = panel["gridPos"]
            assert {"h", "w", "x", "y"} <= set(pos) and pos["x"] + pos["w"] <= 24
        for panel in graphs:
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert panel["targets"], panel["title"]
            for target in panel["targets"]:
                names = metric_names(target["expr"])
                assert names and names <= known, f"{panel['title']}: {sorted(names - known)}"
    assert len(uids) == len(boards)


def test_gpu_rows_only_where_gpus_attach() -> None:
    files = monitoring("superpod-h100-4su")
    titles = {
        k: [p["title"] for p in json.loads(v)["panels"]] for k, v in files.items() if k.startswith("monitoring/grafana")
    }
    assert "GPU health" in titles["monitoring/grafana/compute.json"]
    assert "GPU health" in titles["monitoring/grafana/storage.json"]  # the DGX attach to storage too
    assert not [t for t in titles["monitoring/grafana/inband.json"] if t.startswith("PFC")]  # no RoCE profile there
    assert "Symbol errors" in titles["monitoring/grafana/compute.json"]
    assert "Switch input errors" in titles["monitoring/grafana/inband.json"]


def _targets(files: dict[str, str], job: str) -> list[dict[str, object]]:
    return yaml.safe_load(files[f"monitoring/targets/{job}.yml"])  # type: ignore[no-any-return]


def test_targets_carry_the_plans_labels() -> None:
    files = monitoring("superpod-h100-4su")
    b = built("superpod-h100-4su")
    devices = b.topology.devices
    gpus = [d for d in devices.values() if d.model == "dgx-h100"]
    node = _targets(files, "node")
    assert len(node) == sum(1 for d in devices.values() if d.layer == "node")
    dcgm = _targets(files, "dcgm")
    assert len(dcgm) == len(gpus) == 127
    first = next(t for t in dcgm if t["labels"]["hostname"] == gpus[0].name)  # type: ignore[index]
    assert first["targets"] == [f"{gpus[0].name}:9400"]
    assert first["labels"] == {
        "hostname": gpus[0].name,
        "layer": "node",
        "model": "dgx-h100",
        "fabric": "compute,storage,inband,oob",
        "su": "1",
        "rack": gpus[0].rack,
        "u": str(gpus[0].u),
        "group": "gpu",
    }
    snmp = _targets(files, "snmp")
    ethernet = [d for d in devices.values() if d.layer != "node" and d.fabric in ("inband", "oob")]
    assert len(snmp) == len(ethernet) > 0
    addresses = {r.device: str(r.address.ip) for r in b.allocation.addresses if r.purpose == "mgmt"}
    for t in snmp:
        labels = t["labels"]
        assert t["targets"] == [addresses[labels["hostname"]]]  # type: ignore[index]
        assert {"hostname", "layer", "model", "fabric", "rack", "u", "platform"} <= set(labels)  # type: ignore[arg-type]
    ib = _targets(files, "infiniband")
    # compute: its master subnet manager; storage names no SM host, so its first HCA host runs the exporter
    assert [t["targets"] for t in ib] == [["ufm001:9683"], ["stor01:9683"]]
    assert [t["labels"]["fabric"] for t in ib] == ["compute", "storage"]  # type: ignore[index]


def _series(text: str, name: str) -> list[dict[str, str]]:
    out = []
    for line in text.splitlines():
        if line.startswith(name + "{"):
            out.append(dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', line[len(name) :])))
    return out


def test_plan_series_match_the_cabling_plan() -> None:
    b = built("superpod-h100-4su")
    text = monitoring("superpod-h100-4su")["monitoring/textfile/fabric_plan.prom"]
    cables = _series(text, "fabric_planned_cable_info")
    assert [c["cable_id"] for c in cables] == [c.cable_id for c in b.allocation.cables]
    ports = _series(text, "fabric_planned_port_info")
    switch_ends = sum(
        (b.topology.devices[c.link.a].layer != "node") + 1 for c in b.allocation.cables
    )  # the b end is always a switch
    assert len(ports) == switch_ends
    ib = next(p for p in ports if p["cable_id"] == "compute-0001")
    cable = b.allocation.cables[0]
    assert ib == {
        "hostname": cable.link.b,
        "port": str(b.infiniband.ends[(cable.link.b, cable.link.b_port)][1]),
        "cable_id": "compute-0001",
    }
    first = cables[0]
    assert (
        first["a_device"] == cable.link.a and first["b_port"] == cable.link.b_port and first["a_rack"] == cable.a_rack
    )
    assert first["label"].startswith("compute-0001 ")
    eth = next(p for p in ports if p["cable_id"].startswith("inband-"))
    assert not eth["port"].isdigit()  # an interface name, as IF-MIB ifName gives it
    budgets = _series(text, "fabric_rack_power_budget_watts")
    assert len(budgets) == len({d.rack for d in b.topology.devices.values() if d.rack})
    assert re.search(r'fabric_rack_power_budget_watts\{rack="A01"\} 45000\n', text)
    assert len(_series(text, "fabric_gpu_power_limit_watts")) == 127
    assert 'fabric_gpu_temp_limit_celsius{hostname="dgx001"} 87\n' in text


def test_groups_apply_where_they_should() -> None:
    names = {d: [g.name for g in groups(built(d))] for d in ("lab", "lab-ib", "roce-512", "superpod-h100-4su")}
    assert names["lab"] == ["fabric-links", "fabric-roce", "fabric-bgp", "fabric-power"]
    assert names["lab-ib"] == ["fabric-links", "fabric-power"]
    assert names["roce-512"] == ["fabric-links", "fabric-roce", "fabric-bgp", "fabric-gpu", "fabric-power"]
    # the 4-SU design's Ethernet fabrics run no RoCE profile (in-band, out-of-band)
    assert names["superpod-h100-4su"] == ["fabric-links", "fabric-bgp", "fabric-gpu", "fabric-power"]


def test_job_names_are_the_jobs_of_the_targets() -> None:
    # job_names finds the jobs without making the targets' addresses: the same set as listing every target
    seen = set()
    for design in ("lab", "lab-ib", "roce-512", "superpod-h100-4su"):
        b = built(design)
        jobs = frozenset(job for job, _, _, _ in plan._entries(b))
        assert plan.job_names(b) == jobs, design
        seen |= jobs
    assert seen == {"node", "dcgm", "ipmi", "snmp", "frr", "infiniband"}


def _spec(extra: str) -> str:
    return (DESIGNS / "roce-512.yaml").read_text() + extra


def test_thresholds_reach_the_rules() -> None:
    b = build_fabric(
        load_spec_text(
            _spec(
                "monitoring:\n  thresholds: {gpu_idle: true, gpu_idle_util_pct: 5, pfc_pause_per_s: 50, flaps: 7,"
                " gpu_temp_c: 80}\n  ports: {dcgm: 9500}\n  runbook_url: https://wiki/runbook\n"
            ),
            base_dir=DESIGNS,
        )
    )
    files = {k: v.decode() for k, v in render_all(b).items() if k.startswith("monitoring/")}
    gpu = files["monitoring/rules/fabric-gpu.yml"]
    assert "alert: FabricGpuIdle" in gpu and 'hpc_job!=""} < 5' in gpu
    assert 'prio3_pause{job="node"}[5m]) > 50' in files["monitoring/rules/fabric-roce.yml"]
    assert "fabric:port_flaps >= 7" in files["monitoring/rules/fabric-links.yml"]
    assert "runbook: https://wiki/runbook#fabricplannedlinkdown" in files["monitoring/rules/fabric-links.yml"]
    assert "gpu001:9500" in files["monitoring/targets/dcgm.yml"]
    assert 'fabric_gpu_temp_limit_celsius{hostname="gpu001"} 80\n' in files["monitoring/textfile/fabric_plan.prom"]
    assert "FabricGpuIdle" not in monitoring("roce-512")["monitoring/rules/fabric-gpu.yml"]  # off by default


def test_monitoring_can_be_turned_off() -> None:
    b = build_fabric(load_spec_text(_spec("monitoring: {enabled: false}\n"), base_dir=DESIGNS))
    assert not [k for k in render_all(b) if k.startswith("monitoring/")]
    assert [k for k in render_all(built("roce-512")) if k.startswith("monitoring/")]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("monitoring: {scrape_interval: 30 s}\n", "monitoring.scrape_interval"),
        ("monitoring: {runbook_url: 'a b'}\n", "monitoring.runbook_url"),
        ("monitoring: {runbook_url: 'javascript:alert(1)'}\n", "monitoring.runbook_url"),
        ("monitoring: {runbook_url: 'JavaScript:alert(1)'}\n", "monitoring.runbook_url"),
        ("monitoring: {runbook_url: 'file:///etc/passwd'}\n", "monitoring.runbook_url"),
        ("monitoring: {scrape_interval: 99999999999999999999d}\n", "monitoring.scrape_interval"),
        ("monitoring: {thresholds: {link_down_for: 106752d}}\n", "monitoring.thresholds.link_down_for"),
        ("monitoring: {ports: {node: 0}}\n", "monitoring.ports.node"),
        ("monitoring: {thresholds: {flapz: 1}}\n", "monitoring.thresholds.flapz"),
    ],
)
def test_bad_monitoring_settings_are_findings(text: str, where: str) -> None:
    from fabric.model.findings import FabricError

    with pytest.raises(FabricError) as raised:
        load_spec_text(_spec(text), base_dir=DESIGNS)
    assert [f.path for f in raised.value.findings] == [where]


def test_durations_up_to_prometheus_range_and_http_runbooks_pass() -> None:
    """Prometheus' longest duration is int64 nanoseconds (prometheus/common model.ParseDuration): 106,751 days
    and 9,223,372,036,854 ms are in range (one more day is not, above); http(s) URLs and relative paths are."""
    for text in (
        "monitoring: {thresholds: {link_down_for: 106751d}, scrape_interval: 9223372036854ms}\n",
        "monitoring: {runbook_url: 'HTTPS://wiki.example.com/runbook'}\n",
        "monitoring: {runbook_url: 'docs/runbook.md'}\n",
    ):
        assert load_spec_text(_spec(text), base_dir=DESIGNS)


def test_runbook_names_parts_and_platform_commands() -> None:
    text = monitoring("superpod-h100-4su")["monitoring/runbook.md"]
    alerts = [a for g in groups(built("superpod-h100-4su")) for a in g.rules if a.alert]
    for alert in alerts:
        assert f'<a id="{alert.anchor}"></a>' in text
    assert "fabric `compute`, leaf-spine: 192 × MFP7E10-N003 (mmf-400g)" in text
    assert "`fabric verify SPEC --ibnetdiscover FILE` or `fabric verify SPEC --lldp DIR`" in text
    assert "nv show interface <port> transceiver" in text and "mlxlink -d lid-<LID>" in text


def test_plan_helpers_find_the_subnet_manager_host() -> None:
    jobs = plan.targets(built("lab-ib"))
    assert [t.address for t in jobs["infiniband"]] == ["ufm001:9683"]
    assert "snmp" not in jobs and "frr" not in jobs


@pytest.mark.parametrize("design", ["lab", "lab-ib"])
def test_the_design_report_lists_every_alert_with_its_runbook_section(design: str) -> None:
    files = render_all(built(design))
    rules = [yaml.safe_load(v) for k, v in files.items() if k.startswith("monitoring/rules/")]
    names = [r["alert"] for doc in rules for g in doc["groups"] for r in g["rules"] if "alert" in r]
    runbook = files["monitoring/runbook.md"].decode()
    assert len(names) >= 5
    for report in ("report.md", "report.html"):
        text = files[report].decode()
        linked = re.findall(r"monitoring/runbook\.md#(fabric[a-z]+)", text)
        assert sorted(linked) == sorted(n.lower() for n in names), report  # every alert once
    for name in names:
        assert f'<a id="{name.lower()}"></a>' in runbook  # the link lands on the alert's section


@pytest.mark.parametrize("design", ["lab", "lab-ib", "superpod-h100-4su"])
def test_plan_series_fast_path_writes_what_the_general_path_writes(
    design: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fabric.render.outputs.monitoring import textfile

    b = built(design)
    fast = textfile.fabric_plan(b)
    monkeypatch.setattr(textfile, "_plain", lambda *columns: False)  # every value "needs escaping"
    assert not textfile._ends_plain(b.allocation.cables) and not textfile._session_lines(b)
    assert textfile._cable_lines(b.allocation.cables, textfile._Shared()) is None  # its places
    assert textfile.fabric_plan(b) == fast
    assert fast.count("fabric_planned_cable_info{") == len(b.allocation.cables)


def test_plan_series_escape_what_needs_it() -> None:
    from dataclasses import replace

    from fabric.render.outputs.monitoring import textfile

    b = built("lab")
    cables = (replace(b.allocation.cables[0], cable_id='c"1\\x'), *b.allocation.cables[1:])
    odd = replace(b, allocation=replace(b.allocation, cables=cables))
    assert not textfile._ends_plain(odd.allocation.cables) and textfile._ends_plain(b.allocation.cables)
    assert textfile._cable_lines(b.allocation.cables, textfile._Shared()) is not None
    text = textfile.fabric_plan(odd)
    assert text.count('cable_id="c\\"1\\\\x"') == 2  # its cable series and its switch end's port series
    assert _series(text, "fabric_planned_cable_info")[0]["label"].startswith('c\\"1\\\\x A01-U01 ')


@pytest.mark.parametrize("per", [1, 3, 1000])
def test_plan_series_pieces_are_the_file_in_parts(per: int) -> None:
    """The file as the writer gets it (TextPieces, `per` cables a piece) is the file whole, also where one piece
    holds a value to escape and takes the general path while the others take the fast one."""
    from dataclasses import replace

    from fabric.render.outputs.monitoring import textfile

    b = built("lab-ib")
    cables = b.allocation.cables
    odd_cables = (*cables[:4], replace(cables[4], cable_id='c"5'), *cables[5:])
    for build in (b, replace(b, allocation=replace(b.allocation, cables=odd_cables))):
        pieces = list(textfile.fabric_plan_pieces(build, per))
        # one piece of every cable: the odd build's cable series all take the general path
        assert "".join(pieces) == "".join(textfile.fabric_plan_pieces(build, 10**6))
        assert len(pieces) == 2 + 2 * -(-len(cables) // per) + 1  # 2 headers, cables and ports per piece, the rest
    whole = textfile.fabric_plan(replace(b, allocation=replace(b.allocation, cables=odd_cables)))
    assert whole.count('cable_id="c\\"5"') == 2  # its cable series and its switch end's port series


def test_the_job_names_are_the_jobs_of_the_targets() -> None:
    # the rules and the runbook ask only which jobs there are: the same answer without the labels
    seen: set[str] = set()
    for design in DESIGN_NAMES:
        b = built(design)
        assert plan.job_names(b) == set(plan.targets(b)), design
        seen |= plan.job_names(b)
    assert seen == {"node", "dcgm", "ipmi", "snmp", "frr", "infiniband"}


@pytest.mark.parametrize("design", DESIGN_NAMES)
def test_dcgm_counters_export_every_gpu_field_read(design: str) -> None:
    """monitoring/dcgm-counters.csv (for `dcgm-exporter -f`) lists every DCGM field a rule or dashboard reads
    (the throttle and HBM alerts' fields are not in dcgm-exporter's defaults), each line the three CSV fields
    dcgm-exporter reads; a design with no GPU node writes none."""
    import csv
    import io

    from fabric.render.outputs.monitoring.dcgm_counters import ALIASES, DEFAULTS, PATH

    files = monitoring(design)
    if not plan.gpu_nodes(built(design)):
        assert PATH not in files
        return
    rows = [r for r in csv.reader(io.StringIO(files[PATH])) if r and not r[0].startswith("#")]
    assert all(len(r) == 3 and r[1].strip() in ("gauge", "counter") for r in rows), rows
    listed = [r[0] for r in rows]
    assert len(listed) == len(set(listed)) == len(DEFAULTS) + 4
    read = {n for g in groups(built(design)) for r in g.rules for n in metric_names(r.expr) if n.startswith("DCGM_")}
    for name, text in files.items():
        if name.startswith("monitoring/grafana/"):
            read |= set(re.findall(r"DCGM_[A-Z0-9_]+", text))
    assert read, design  # every GPU design's rules read DCGM fields
    assert {ALIASES.get(n, n) for n in read} <= set(listed), sorted({ALIASES.get(n, n) for n in read} - set(listed))
    assert {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_MEM_MAX_OP_TEMP"} <= set(listed)
