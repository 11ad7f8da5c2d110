"""Kubernetes exports: every object validated against the real CRD schemas (Kueue Topology, Volcano
HyperNode; copies in tests/data/k8s-crds), their CEL rules checked by hand, and the content."""

from __future__ import annotations

import copy
import re
import shlex
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from fabric import render_all
from fabric.analysis.locality import locality
from fabric.pipeline import Build, build_fabric
from fabric.render.outputs.kubernetes import k8s_files, label_keys, object_name
from fabric.spec.loader import load_spec_text
from tests.conftest import DESIGNS, REPO, built

CRDS = REPO / "tests" / "data" / "k8s-crds"
DESIGN_NAMES = ["superpod-h100-4su", "lab-ib-3tier", "roce-512", "lab", "gb200-nvl72-1su"]
LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _strict(schema: Any) -> Any:
    """The API server prunes (or, with strict field validation, rejects) fields a structural schema does not
    name: make that an error by closing every object that lists its properties."""
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


def _crd_schema(file: str, version: str) -> Any:
    crd = yaml.safe_load((CRDS / file).read_text(encoding="utf-8"))
    (found,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    assert found["served"]
    return _strict(found["schema"]["openAPIV3Schema"])


def _docs(build: Build, name: str) -> list[dict[str, Any]]:
    text = k8s_files(build)[f"k8s/{name}"]
    return [d for d in yaml.safe_load_all(text) if d is not None]


def _validate(doc: dict[str, Any], file: str) -> None:
    version = doc["apiVersion"].split("/")[1]
    jsonschema.Draft4Validator(_crd_schema(file, version)).validate(doc)


@pytest.mark.parametrize("design", DESIGN_NAMES)
def test_kueue_topology_validates_against_the_crd_and_its_cel_rules(design: str) -> None:
    build = built(design)
    docs = _docs(build, "kueue-topology.yaml")
    topologies = [d for d in docs if d["kind"] == "Topology"]
    assert len(topologies) == 1
    topology = topologies[0]
    _validate(topology, "kueue.x-k8s.io_topologies.yaml")
    levels = [level["nodeLabel"] for level in topology["spec"]["levels"]]
    # x-kubernetes-validations: unique, hostname only last, 1-16 items
    assert len(levels) == len(set(levels))
    assert levels[-1] == "kubernetes.io/hostname" and levels.count("kubernetes.io/hostname") == 1
    assert 1 <= len(levels) <= 16
    loc = locality(build.design, build.topology)
    assert loc is not None
    keys = label_keys(build.design.spec.exports.kubernetes)
    # coarse to fine: the top level's key first, the lowest switch's last before the host
    assert levels[:-1] == [keys[f"tier{i}"] for i in reversed(range(len(loc.levels)))]
    flavors = [d for d in docs if d["kind"] == "ResourceFlavor"]
    assert [f["spec"]["topologyName"] for f in flavors] == [topology["metadata"]["name"]] * len(loc.groups)
    assert all(f["spec"]["nodeLabels"] for f in flavors)  # Kueue needs ≥1 nodeLabel on a TAS flavor
    assert all(DNS_SUBDOMAIN.match(f["metadata"]["name"]) for f in flavors)


@pytest.mark.parametrize("design", DESIGN_NAMES)
def test_volcano_hypernodes_validate_against_the_crd(design: str) -> None:
    build = built(design)
    docs = _docs(build, "volcano-hypernodes.yaml")
    loc = locality(build.design, build.topology)
    assert loc is not None
    assert [d["metadata"]["name"] for d in docs] == [object_name(s.name) for s in loc.switches]
    names = {d["metadata"]["name"] for d in docs}
    for doc in docs:
        _validate(doc, "topology.volcano.sh_hypernodes.yaml")
        assert DNS_SUBDOMAIN.match(doc["metadata"]["name"])
        for member in doc["spec"]["members"]:
            selector = member["selector"]
            assert len(selector) == 1  # CEL: exactly one of exactMatch, regexMatch, labelMatch
            if "labelMatch" in selector:
                assert member["type"] == "Node"
            if member["type"] == "HyperNode":
                assert selector["exactMatch"]["name"] in names
    # tiers: nodes in tier 1, every HyperNode one tier above its members
    tier = {d["metadata"]["name"]: d["spec"]["tier"] for d in docs}
    for doc in docs:
        for member in doc["spec"]["members"]:
            if member["type"] == "HyperNode":
                assert tier[member["selector"]["exactMatch"]["name"]] == doc["spec"]["tier"] - 1
            else:
                assert doc["spec"]["tier"] == 1
    in_tier1 = [
        m["selector"]["exactMatch"]["name"] for d in docs if d["spec"]["tier"] == 1 for m in d["spec"]["members"]
    ]
    assert sorted(in_tier1) == sorted(loc.nodes)


@pytest.mark.parametrize("design", DESIGN_NAMES)
def test_every_node_is_labelled_once_with_its_chain(design: str) -> None:
    build = built(design)
    docs = _docs(build, "node-labels.yaml")
    loc = locality(build.design, build.topology)
    assert loc is not None
    names = [d["metadata"]["name"] for d in docs]
    assert names == list(loc.nodes)
    keys = label_keys(build.design.spec.exports.kubernetes)
    for doc in docs:
        assert (doc["apiVersion"], doc["kind"]) == ("v1", "Node")
        labels = doc["metadata"]["labels"]
        assert all(LABEL_KEY.match(k) and LABEL_VALUE.match(v) for k, v in labels.items())
        chain = loc.chain(doc["metadata"]["name"])
        assert [labels[keys[f"tier{i}"]] for i in range(len(chain))] == list(chain)
    # the shell script sets the same labels
    script = k8s_files(build)["k8s/label-nodes.sh"].splitlines()
    commands = [shlex.split(line) for line in script if line.startswith("kubectl ")]
    assert [c[4] for c in commands] == names
    for command, doc in zip(commands, docs, strict=True):
        assert dict(pair.split("=", 1) for pair in command[5:]) == doc["metadata"]["labels"]


def test_each_su_is_one_block() -> None:
    build = built("superpod-h100-4su")
    docs = _docs(build, "node-labels.yaml")
    blocks: dict[str, list[str]] = {}
    for doc in docs:
        blocks.setdefault(doc["metadata"]["labels"]["fabric.topograph.run/tier-0"], []).append(doc["metadata"]["name"])
    # SU 1's 32nd slot is the UFM appliances' (`reserved_slots: 1`): 31 DGX there, 32 in every later SU
    assert {k: len(v) for k, v in blocks.items()} == {"su1": 31, "su2": 32, "su3": 32, "su4": 32}
    assert blocks["su2"][0] == "dgx032"
    assert {d["metadata"]["labels"]["fabric.topograph.run/tier-1"] for d in docs} == {"spines"}


def _with_exports(design: str, exports: str) -> Build:
    text = (DESIGNS / f"{design}.yaml").read_text(encoding="utf-8") + exports
    return build_fabric(load_spec_text(text, f"{design}.yaml", DESIGNS))


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        (
            "topograph-legacy",
            [
                "network.topology.nvidia.com/core",
                "network.topology.nvidia.com/spine",
                "network.topology.nvidia.com/leaf",
            ],
        ),
        ("kueue", ["cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"]),
        (
            "gke",
            [
                "cloud.google.com/gce-topology-block",
                "cloud.google.com/gce-topology-subblock",
                "cloud.google.com/gce-topology-host",
            ],
        ),
    ],
)
def test_label_presets(preset: str, expected: list[str]) -> None:
    build = _with_exports("lab-ib-3tier", f"exports: {{kubernetes: {{preset: {preset}}}}}\n")
    (topology, *_) = _docs(build, "kueue-topology.yaml")
    _validate(topology, "kueue.x-k8s.io_topologies.yaml")
    assert [level["nodeLabel"] for level in topology["spec"]["levels"]] == [*expected, "kubernetes.io/hostname"]


def test_label_keys_one_by_one_and_volcano_label_members() -> None:
    build = _with_exports(
        "lab-ib-3tier",
        "exports: {kubernetes: {preset: gke, volcano_members: label, labels: {tier2: example.com/core-group}}}\n",
    )
    (topology, *_) = _docs(build, "kueue-topology.yaml")
    assert topology["spec"]["levels"][0] == {"nodeLabel": "example.com/core-group"}
    (su1, *_) = _docs(build, "volcano-hypernodes.yaml")
    _validate(su1, "topology.volcano.sh_hypernodes.yaml")
    assert su1["spec"]["members"] == [
        {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"cloud.google.com/gce-topology-subblock": "su1"}}}}
    ]


def test_bad_label_key_is_a_spec_error(tmp_path: Path) -> None:
    from fabric.model.findings import FabricError

    with pytest.raises(FabricError) as caught:
        _with_exports("lab", "exports: {kubernetes: {labels: {tier0: 'not a key/'}}}\n")
    assert [f.path for f in caught.value.findings] == ["exports.kubernetes.labels.tier0"]


def test_crd_check_rejects_wrong_objects() -> None:
    """The validation is no rubber stamp: a string tier, an unknown field and a bad label key fail."""
    (su1, *_) = _docs(built("lab"), "volcano-hypernodes.yaml")
    for broken in (
        {**su1, "spec": {**su1["spec"], "tier": "1"}},
        {**su1, "spec": {**su1["spec"], "tiers": 1}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            _validate(broken, "topology.volcano.sh_hypernodes.yaml")
    (topology, *_) = _docs(built("lab"), "kueue-topology.yaml")
    with pytest.raises(jsonschema.ValidationError):
        _validate({**topology, "spec": {"levels": [{"nodeLabel": "bad key/"}]}}, "kueue.x-k8s.io_topologies.yaml")


def test_object_names_are_dns_subdomains() -> None:
    assert object_name("Leaf_01") == "leaf-01"
    assert object_name("su1") == "su1"
    assert DNS_SUBDOMAIN.match(object_name("-A.b_C-"))


HOSTILE_NAMES = """name: k8s-names
nodes:
  - {group: gpu_a, type: linux-server, count: 2, name: "gpu_{index}"}
  - {group: GPU-b, type: linux-server, count: 2, name: "gpu-{index}"}
fabrics:
  compute:
    technology: ethernet
    topology: {kind: spine-leaf, leaves: 2, spines: 2, uplinks: 2}
    switches: {leaf: sn4600c}
    platform: eos
    attach: [{group: gpu_a, ports: data}, {group: GPU-b, ports: data}]
    naming: {leaf: "leaf{index}."}
exports:
  kubernetes: {preset: gke, volcano_members: label}
"""


def test_names_that_are_not_dns_1123_are_mapped_distinct_and_valid() -> None:
    """A node `gpu_1` (not a DNS subdomain) next to a node `gpu-1`, switch names ending in `.` and a group in
    capitals: every Node and HyperNode name is a DNS-1123 subdomain, every label value valid, none merged."""
    build = build_fabric(load_spec_text(HOSTILE_NAMES, "k8s-names.yaml"))
    assert not build.errors
    docs = [
        d for name in ("node-labels.yaml", "volcano-hypernodes.yaml", "kueue-topology.yaml") for d in _docs(build, name)
    ]
    nodes = [d["metadata"]["name"] for d in docs if d["kind"] == "Node"]
    assert len(nodes) == len(set(nodes)) == 4 and "gpu-1" in nodes
    for doc in docs:
        assert DNS_SUBDOMAIN.match(doc["metadata"]["name"]), doc["metadata"]["name"]
        for key, value in doc["metadata"].get("labels", {}).items():
            assert LABEL_KEY.match(key) and LABEL_VALUE.match(value), (key, value)
        for value in doc.get("spec", {}).get("nodeLabels", {}).values():
            assert LABEL_VALUE.match(value), value
    hosts = [d["metadata"]["labels"]["cloud.google.com/gce-topology-host"] for d in docs if d["kind"] == "Node"]
    assert len(set(hosts)) == 4
    script = k8s_files(build)["k8s/label-nodes.sh"]
    assert "node --overwrite gpu_" not in script and "leaf1. " not in script and "=leaf1 " in script


def test_label_values_are_bounded_and_end_alphanumeric() -> None:
    from fabric.render.outputs.kubernetes import label_value

    assert label_value("leaf1.") == "leaf1" and label_value("_a b_") == "a-b"
    long = label_value("x" * 100)
    assert len(long) <= 63 and LABEL_VALUE.match(long) and long != label_value("x" * 101)
    assert LABEL_VALUE.match(label_value("...")) and DNS_SUBDOMAIN.match(object_name("___"))


def _compute_domain(build: Any) -> list[dict[str, Any]]:
    return list(yaml.safe_load_all(render_all(build)["k8s/compute-domain.yaml"].decode()))


def test_compute_domain_example_fits_the_dra_drivers_crd_and_one_nvlink_domain() -> None:
    """NVIDIA k8s-dra-driver-gpu, CRD computedomains.resource.nvidia.com v1beta1 (namespaced): spec requires
    `numNodes` (integer, >= 0) and `channel.resourceClaimTemplate.name`; `allocationMode` is Single or All."""
    build = built("gb200-nvl72-1su")
    domain, job = _compute_domain(build)
    assert (domain["apiVersion"], domain["kind"]) == ("resource.nvidia.com/v1beta1", "ComputeDomain")
    spec = domain["spec"]
    assert set(spec) <= {"numNodes", "channel"} and isinstance(spec["numNodes"], int) and spec["numNodes"] >= 0
    assert set(spec["channel"]) <= {"resourceClaimTemplate", "allocationMode"}
    assert spec["channel"].get("allocationMode", "Single") in ("Single", "All")
    template = spec["channel"]["resourceClaimTemplate"]["name"]
    assert isinstance(template, str) and template
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 18  # a pod a tray of one NVL72
    pod = job["spec"]["template"]["spec"]
    (claim,) = pod["resourceClaims"]
    assert claim["resourceClaimTemplateName"] == template
    (container,) = pod["containers"]
    assert container["resources"]["claims"] == [{"name": claim["name"]}]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 4
    (together,) = pod["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert together["topologyKey"] == "fabric.topology/nvlink-domain"  # the label fabric writes on every tray
    labels = yaml.safe_load_all(render_all(build)["k8s/node-labels.yaml"].decode())
    assert all("fabric.topology/nvlink-domain" in n["metadata"]["labels"] for n in labels if n)
    (apart,) = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert apart["topologyKey"] == "kubernetes.io/hostname"
    app = job["spec"]["template"]["metadata"]["labels"]
    assert together["labelSelector"]["matchLabels"] == apart["labelSelector"]["matchLabels"] == app


def test_compute_domain_falls_back_to_the_gpu_clique_label_and_needs_a_domain() -> None:
    text = (DESIGNS / "gb200-nvl72-1su.yaml").read_text(encoding="utf-8")
    variant = text.replace("addressing:", "exports: {kubernetes: {nvlink_label: null}}\naddressing:", 1)
    build = build_fabric(load_spec_text(variant, "variant.yaml", DESIGNS))
    _, job = _compute_domain(build)
    (together,) = job["spec"]["template"]["spec"]["affinity"]["podAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert together["topologyKey"] == "nvidia.com/gpu.clique"
    assert "k8s/compute-domain.yaml" not in render_all(built("superpod-h100-1su"))  # no NVLink domain, no example
