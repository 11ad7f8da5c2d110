"""`fabric verify`: the comparison, node matching, the LLDP formats and the command (exit codes, JSON, bad input)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric import render_all
from fabric.cli import app
from fabric.model.cable import Cable
from fabric.tools.ibnetdiscover import parse_ibnetdiscover
from fabric.tools.lldp import parse_lldp_text, read_lldp
from fabric.tools.verify import End, ObservedCable, PlannedCable, choose_subnet, compare, match_nodes, verify_lldp
from tests.conftest import DESIGNS, REPO, built

runner = CliRunner()


def _cable(n: int, a: tuple[str, str], b: tuple[str, str]) -> PlannedCable:
    from fabric.model.topology import Link

    link = Link("f", "leaf-spine", a[0], a[1], b[0], b[1], 400)
    cable = Cable(f"f-{n:04d}", link, "A01", 1, "A02", 2, "mmf", "mmf-400g", "P", 5, 4)
    return PlannedCable(cable, End(a[0], a[1], "A01", 1), End(b[0], b[1], "A02", 2))


PLAN = [
    _cable(1, ("leaf1", "p1"), ("spine1", "p1")),
    _cable(2, ("leaf1", "p2"), ("spine1", "p2")),
    _cable(3, ("leaf2", "p1"), ("spine1", "p3")),
    _cable(4, ("leaf2", "p2"), ("spine2", "p1")),
]


def _seen(*pairs: tuple[tuple[str, str], tuple[str, str]]) -> list[ObservedCable]:
    return [ObservedCable(End(*a), End(*b)) for a, b in pairs]


def test_everything_as_planned() -> None:
    observed = _seen(*(((p.b.device, p.b.port), (p.a.device, p.a.port)) for p in PLAN))  # either end first
    report = compare("d", "s", "src", PLAN, observed)
    assert report.ok and report.exit_code == 0 and report.as_planned == 4 and report.planned == 4
    assert report.text().endswith("everything matches the plan\n")


def test_swapped_missing_and_unexpected() -> None:
    observed = _seen(
        (("leaf1", "p1"), ("spine1", "p2")),  # cables 1 and 2 swapped at the spine
        (("leaf1", "p2"), ("spine1", "p1")),
        (("leaf2", "p2"), ("spine2", "p1")),
        (("leaf1", "p9"), ("leaf2", "p9")),  # a leaf-to-leaf cable
    )  # cable 3 is missing
    report = compare("d", "s", "src", PLAN, observed)
    assert report.exit_code == 1
    assert [(p.kind, p.cable_id) for p in report.problems] == [
        ("missing", "f-0003"),
        ("wrong-port", "f-0001"),
        ("wrong-port", "f-0002"),
        ("unexpected", ""),
    ]
    wrong = report.problems[1]
    assert wrong.found is not None and wrong.found[1] == End("spine1", "p2")
    assert "move it to A02 U02 spine1 p1" in wrong.message and wrong.label.startswith("f-0001 ")
    assert report.counts() == {"missing": 1, "wrong-port": 2, "unexpected": 1, "rate": 0}
    assert report.as_planned == 1


def test_a_cable_moved_to_another_device_keeps_its_lower_end() -> None:
    observed = _seen(
        (("leaf1", "p1"), ("spine1", "p1")),
        (("leaf1", "p2"), ("spine1", "p2")),
        (("leaf2", "p1"), ("spine2", "p7")),  # cable 3's spine end went to spine2
        (("leaf2", "p2"), ("spine2", "p1")),
    )
    report = compare("d", "s", "src", PLAN, observed)
    assert [(p.kind, p.cable_id) for p in report.problems] == [("wrong-port", "f-0003")]
    assert "the leaf2 p1 end is right; the other end is in ? spine2 p7" in report.problems[0].message


def test_unchecked_cables_are_not_missing() -> None:
    report = compare(
        "d", "s", "src", PLAN, _seen((("leaf1", "p1"), ("spine1", "p1"))), checkable=lambda p: p.a.device == "leaf1"
    )
    assert [(p.kind, p.cable_id) for p in report.problems] == [("missing", "f-0002")]
    assert report.unchecked == 2 and report.planned == 2
    assert "2 not checked" in report.text()


def test_rates_compare_width_and_speed() -> None:
    from fabric.intent.infiniband.ports import plan_rate

    plan = [PlannedCable(p.cable, p.a, p.b, plan_rate(400)) for p in PLAN[:1]]
    for found, problem in (("4xNDR", None), ("1xNDR", "width 1x, planned 4x"), ("4xHDR", "speed HDR, planned NDR")):
        observed = [ObservedCable(End("leaf1", "p1"), End("spine1", "p1"), found)]
        report = compare("d", "s", "src", plan, observed)
        assert [p.message.split(": ")[-1] for p in report.problems] == ([problem] if problem else [])
    observed = [ObservedCable(End("leaf1", "p1"), End("spine1", "p1"), "4xSDR")]
    assert compare("d", "s", "src", plan, observed, ignore_speed=True).ok


# --------------------------------------------------------------------------------------------- InfiniBand


def _lab_net() -> str:
    return render_all(built("lab-ib"))["infiniband/compute/topology.net"].decode()


def test_nodes_match_by_description_when_guids_differ() -> None:
    build = built("lab-ib")
    subnet = build.infiniband.subnet("compute")
    assert subnet is not None
    text = _lab_net().replace("fab0", "b83f")  # the real fabric has other GUIDs than the placeholders
    text = text.replace('# "spine1" enhanced', '# "MF0;spine1:MQM9700/U1" enhanced')
    text = text.replace('# "node01 mlx5_0"\n', '# "node01.cluster.local mlx5_0"\n')
    discovered = parse_ibnetdiscover(text, "real")
    matched, notes, by_description = match_nodes(subnet, discovered)
    assert len(matched) == len(subnet.nodes) and by_description == len(subnet.nodes) and notes == []
    assert {n.key for n in matched.values()} == set(subnet.by_key)
    chosen, why = choose_subnet(build, discovered, None)
    assert chosen is subnet and why == ""


def test_a_wrong_description_is_a_note() -> None:
    subnet = built("lab-ib").infiniband.subnet("compute")
    assert subnet is not None
    discovered = parse_ibnetdiscover(_lab_net().replace('"leaf1" enhanced', '"leaf-one" enhanced'), "x")
    _, notes, _ = match_nodes(subnet, discovered)
    assert notes == ["leaf1: node description is 'leaf-one'"]


def test_choose_subnet_explains() -> None:
    build = built("lab-ib-3tier")
    discovered = parse_ibnetdiscover(_lab_net(), "x")
    assert (
        choose_subnet(build, discovered, "nope")[1]
        == "no InfiniBand fabric `nope` in lab-ib-3tier (there are: compute)"
    )
    assert "no discovered node matches" in choose_subnet(build, discovered, None)[1]
    assert choose_subnet(built("lab"), discovered, None)[1] == "lab has no InfiniBand fabric"


def _verify(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["verify", *args])
    return result.exit_code, result.output


def test_verify_the_planned_topology(tmp_path: Path) -> None:
    net = tmp_path / "discovered.txt"
    net.write_text(_lab_net())
    code, output = _verify(str(DESIGNS / "lab-ib.yaml"), "--ibnetdiscover", str(net))
    assert code == 0 and "28 planned cable(s): 28 as planned" in output
    code, output = _verify(str(DESIGNS / "lab-ib.yaml"), "--ibnetdiscover", str(net), "--json")
    data = json.loads(output)
    assert code == 0 and data["ok"] and data["counts"] == {"missing": 0, "wrong-port": 0, "unexpected": 0, "rate": 0}
    assert data["discovered"] == {"nodes": 18, "cables": 28}


def test_verify_reports_json_problems(tmp_path: Path) -> None:
    lines = _lab_net().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("[1]") and '"node' in line)
    net = tmp_path / "discovered.txt"
    net.write_text("\n".join(lines[:first] + lines[first + 1 :]) + "\n")  # one side of a cable gone: still a cable
    code, _ = _verify(str(DESIGNS / "lab-ib.yaml"), "--ibnetdiscover", str(net))
    assert code == 0
    lines = _lab_net().splitlines()  # the first server cable trains at 2x, seen from both ends
    i = next(i for i, line in enumerate(lines) if line.startswith("[") and '"H-' in line)
    port_guid = lines[i].split("](")[1].split(")")[0]
    j = next(j for j, line in enumerate(lines) if line.startswith(f"[1]({port_guid})"))
    for k in (i, j):
        lines[k] = lines[k].replace("4xNDR", "2xNDR")
    net.write_text("\n".join(lines) + "\n")
    code, output = _verify(str(DESIGNS / "lab-ib.yaml"), "--ibnetdiscover", str(net), "--json")
    data = json.loads(output)
    assert code == 1 and data["counts"]["rate"] == 1
    problem = data["problems"][0]
    assert problem["kind"] == "rate" and problem["cable_id"].startswith("compute-")
    assert set(problem["planned"][0]) == {"rack", "u", "device", "port", "detail", "in_plan"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give either --ibnetdiscover FILE or --lldp PATH"),
        (("--ibnetdiscover", "a", "--lldp", "b"), "give either --ibnetdiscover FILE or --lldp PATH"),
        (("--ibnetdiscover", "no-such-file"), "error: no-such-file: no such file"),
        (("--lldp", "no-such-file.json"), "no such file (no-such-file.json)"),
    ],
)
def test_verify_usage_errors(args: tuple[str, ...], message: str) -> None:
    code, output = _verify(str(DESIGNS / "lab-ib.yaml"), *args)
    assert code == 2 and message in output


def test_verify_refuses_a_design_with_errors(tmp_path: Path) -> None:
    net = tmp_path / "x.net"
    net.write_text(_lab_net())
    code, output = _verify(str(REPO / "tests" / "broken" / "ib-not-fat-tree.yaml"), "--ibnetdiscover", str(net))
    assert code == 2 and "the design has errors" in output and "ftree-admissible" in output


VERIFY_CASES = sorted((REPO / "tests" / "verify").glob("*.txt"))


@pytest.fixture
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


@pytest.mark.usefixtures("_in_repo")
@pytest.mark.parametrize("case", sorted((REPO / "tests" / "verify").glob("*.in")), ids=lambda p: p.stem)
def test_bad_discovered_data_golden(case: Path, golden) -> None:  # type: ignore[no-untyped-def]
    option = "--lldp" if case.stem.startswith("lldp") else "--ibnetdiscover"
    code, output = _verify("designs/lab-ib.yaml", option, str(case.relative_to(REPO)))
    golden(case.with_suffix(".txt"), f"exit {code}\n{output}")
    assert code == 2 and "Traceback" not in output and "hint:" in output


# --------------------------------------------------------------------------------------------- LLDP


def _lldpctl(interfaces: dict[str, tuple[str, str, str]]) -> dict[str, object]:
    """lldpctl -f json: one interface is an object, several a list of one-key objects."""
    items = [
        {
            local: {
                "via": "LLDP",
                "chassis": {remote: {"id": {"type": "mac", "value": "0e:3b:ea:2e:6f:80"}}},
                "port": {"id": {"type": kind, "value": port if kind == "ifname" else "aa:bb"}, "descr": port},
            }
        }
        for local, (remote, port, kind) in interfaces.items()
    ]
    return {"lldp": {"interface": items[0] if len(items) == 1 else items}}


def test_lldpctl_json_forms() -> None:
    one = json.dumps(_lldpctl({"swp1": ("srv1", "eth1", "mac")}))
    many = json.dumps(_lldpctl({"swp1": ("srv1", "eth1", "ifname"), "swp51": ("spine1", "swp1", "ifname")}))
    got, devices, problems = parse_lldp_text(one, "leaf1.json", "leaf1")
    assert problems == [] and devices == ["leaf1"]
    assert [(n.local_device, n.local_port, n.remote_device, n.remote_port) for n in got] == [
        ("leaf1", "swp1", "srv1", "eth1")
    ]
    got, _, problems = parse_lldp_text(many, "leaf1.json", "leaf1")
    assert problems == [] and [(n.local_port, n.remote_device, n.remote_port) for n in got] == [
        ("swp1", "srv1", "eth1"),
        ("swp51", "spine1", "swp1"),
    ]
    combined = json.dumps({"leaf1": json.loads(one), "leaf2": json.loads(many)})
    got, devices, problems = parse_lldp_text(combined, "all.json", "all")
    assert problems == [] and devices == ["leaf1", "leaf2"] and len(got) == 3


def test_lldpctl_json0_form() -> None:
    json0 = {
        "lldp": [
            {
                "interface": [
                    {
                        "name": "swp3",
                        "chassis": [{"id": [{"type": "mac", "value": "x"}], "name": [{"value": "srv2"}]}],
                        "port": [{"id": [{"type": "mac", "value": "y"}], "descr": [{"value": "eth1"}]}],
                    }
                ]
            }
        ]
    }
    got, _, problems = parse_lldp_text(json.dumps(json0), "leaf1.json", "leaf1")
    assert problems == [] and [(n.local_port, n.remote_device, n.remote_port) for n in got] == [
        ("swp3", "srv2", "eth1")
    ]


def test_lldp_csv_form() -> None:
    text = "local_device,local_port,remote_device,remote_port\nleaf1,swp1,srv1,eth1\n\nleaf1,swp2,,\n"
    got, devices, problems = parse_lldp_text(text, "n.csv", "n")
    assert [(n.local_device, n.remote_device, n.line) for n in got] == [("leaf1", "srv1", 2)]
    assert devices == ["leaf1"] and [(p.code, p.line) for p in problems] == [("discovered-format", 4)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        ("{nope", "not valid JSON"),
        ('{"interfaces": []}', "JSON without an `lldp` key"),
        ('{"lldp": 5}', "`lldp` is neither an object nor a list"),
        ('{"lldp": {"interface": {"swp1": {"via": "LLDP"}}}}', "interface swp1: no neighbour chassis name or port"),
        ("device,port\nleaf1,swp1\n", "no column local_device"),
    ],
)
def test_bad_lldp_is_a_finding(text: str, message: str) -> None:
    _, _, problems = parse_lldp_text(text, "x.json", "x")
    assert len(problems) == 1 and message in problems[0].message and problems[0].hint


def _lab_lldp(tmp_path: Path, skip: set[str] = frozenset(), swap: tuple[str, str] | None = None) -> Path:  # type: ignore[assignment]
    """LLDP files of the lab design's switches, made from the plan (switch side only)."""
    build = built("lab")
    tables: dict[str, dict[str, tuple[str, str, str]]] = {}
    for cable in build.allocation.cables:
        link = cable.link
        tables.setdefault(link.b, {})[link.b_port] = (link.a, link.a_port, "ifname")
        if link.tier != "node-leaf":
            tables.setdefault(link.a, {})[link.a_port] = (link.b, link.b_port, "ifname")
    if swap:
        leaf, (p, q) = "leaf1", swap
        tables[leaf][p], tables[leaf][q] = tables[leaf][q], tables[leaf][p]
    where = tmp_path / "lldp"
    where.mkdir()
    for device, interfaces in tables.items():
        if device not in skip:
            (where / f"{device}.json").write_text(json.dumps(_lldpctl(interfaces)))
    return where


def test_verify_lldp_of_the_plan(tmp_path: Path) -> None:
    report = verify_lldp(built("lab"), read_lldp([_lab_lldp(tmp_path)]))
    assert report.ok and report.planned == len(built("lab").allocation.cables) and report.unchecked == 0


def test_verify_lldp_with_swapped_ports_and_partial_data(tmp_path: Path) -> None:
    data = read_lldp([_lab_lldp(tmp_path, skip={"leaf4", "spine2"}, swap=("swp1", "swp2"))])
    report = verify_lldp(built("lab"), data, "compute")
    assert [(p.kind, p.cable_id) for p in report.problems] == [
        ("wrong-port", "compute-0001"),
        ("wrong-port", "compute-0002"),
    ]
    assert report.unchecked == 3  # leaf4's two server cables and leaf4-spine2: neither end was collected
    code, output = _verify(str(DESIGNS / "lab.yaml"), "--lldp", str(tmp_path / "lldp"), "--fabric", "compute")
    assert code == 1 and "WRONG PORT  compute-0001" in output and "3 not checked" in output
