"""Kubernetes topology exports, serialized from data.

Every scheduler node gets one label per locality level (the logical switch above it, fabric.analysis.locality)
under keys from a preset (or set one by one), so that Kueue's Topology, Volcano's label discovery and
NVIDIA topograph's consumers read the same tree Slurm does.

Every name written is valid for the API server: object names (Nodes, HyperNodes) are DNS-1123 subdomains and
label values follow the label-value syntax (at most 63 characters, alphanumeric at both ends, `-_.` inside).
A name that is not is mapped (`object_name`, `label_value`: lower case for objects, other characters as `-`),
and two names that would map to one get a suffix from a hash of the original, so that the tree stays a tree.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fabric.analysis.locality import Locality, locality
from fabric.fast import yamltext
from fabric.pipeline import Build
from fabric.render.engine.registry import Output
from fabric.spec.schema import KubernetesSettings

HOSTNAME = "kubernetes.io/hostname"
TIERS = ("tier0", "tier1", "tier2", "tier3")
# Label keys per preset and level; a level the preset has no key for is not labelled (set it one by one).
PRESETS: Mapping[str, Mapping[str, str]] = {
    "topograph": {t: f"fabric.topograph.run/tier-{i}" for i, t in enumerate(TIERS)},
    "topograph-legacy": {
        "tier0": "network.topology.nvidia.com/leaf",
        "tier1": "network.topology.nvidia.com/spine",
        "tier2": "network.topology.nvidia.com/core",
    },
    "kueue": {"tier0": "cloud.provider.com/topology-rack", "tier1": "cloud.provider.com/topology-block"},
    "gke": {
        "tier0": "cloud.google.com/gce-topology-subblock",
        "tier1": "cloud.google.com/gce-topology-block",
        "host": "cloud.google.com/gce-topology-host",
    },
}


def label_keys(settings: KubernetesSettings) -> dict[str, str]:
    """Level (tier0… and host) → label key: the one set one by one, else the preset's."""
    preset = PRESETS[settings.preset]
    keys = {}
    for level in (*TIERS, "host"):
        key = getattr(settings.labels, level) or preset.get(level)
        if key:
            keys[level] = key
    return keys


def chains(loc: Locality) -> dict[str, list[str]]:
    """Node → the logical switches above it, lowest first (Locality.chain for every node in one pass)."""
    out: dict[str, list[str]] = {node: [] for node in loc.nodes}
    for switch in loc.switches:
        for node in dict.fromkeys(switch.nodes):
            out.setdefault(node, []).append(switch.name)
    return out


def node_labels(build: Build, loc: Locality, names: _Names | None = None) -> dict[str, dict[str, str]]:
    """Node (as the plan names it) → its topology labels (and its group label), in node order."""
    names = names or _Names(build, loc)
    value = names.value
    settings = build.design.spec.exports.kubernetes
    keys = label_keys(settings)
    devices = build.topology.devices
    above = chains(loc)
    domain_of = {n: d.name for d in loc.domains for n in d.nodes} if settings.nvlink_label else {}
    out: dict[str, dict[str, str]] = {}
    for node in loc.nodes:
        labels: dict[str, str] = {}
        chain = above[node]
        for tier, switch in zip(TIERS, chain, strict=False):
            if tier in keys:
                labels[keys[tier]] = value[switch]
        if "host" in keys:
            labels[keys["host"]] = value[node]
        labels[settings.group_label] = value[devices[node].group or ""]
        if node in domain_of and settings.nvlink_label:
            labels[settings.nvlink_label] = label_value(domain_of[node])
        out[node] = labels
    return out


def kueue_levels(build: Build, loc: Locality) -> list[str]:
    """Label keys from the coarsest level to the host; `kubernetes.io/hostname` last (Kueue's rule)."""
    keys = label_keys(build.design.spec.exports.kubernetes)
    tiers = [keys[t] for t in reversed(TIERS[: len(loc.levels)]) if t in keys]
    return [*tiers, *([keys["host"]] if "host" in keys else []), HOSTNAME]


def object_name(name: str) -> str:
    """A name as a Kubernetes object name (DNS-1123 subdomain: lower case, digits, '-', '.'; at most 253)."""
    return _shortened(re.sub(r"[^a-z0-9.-]", "-", name.lower()).strip("-."), name, 253, "-.")


def label_value(name: str) -> str:
    """A name as a Kubernetes label value: at most 63 characters of letters, digits, '-', '_', '.', beginning and
    ending with a letter or digit (k8s.io/apimachinery validation.IsValidLabelValue)."""
    return _shortened(re.sub(r"[^A-Za-z0-9_.-]", "-", name).strip("-_."), name, 63, "-_.")


def _shortened(mapped: str, name: str, limit: int, ends: str) -> str:
    if not mapped:
        return "x" + _digest(name)
    if len(mapped) > limit:
        return mapped[: limit - 7].rstrip(ends) + "-" + _digest(name)
    return mapped


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:6]


def _mapping(names: Iterable[str], mapped: Callable[[str], str]) -> dict[str, str]:
    """name → its mapped form, distinct for distinct names: a name that had to change and lands on another's
    form gets a suffix from a hash of itself (a name that is valid as it is keeps itself)."""
    out = {name: mapped(name) for name in dict.fromkeys(names)}
    taken = {v for k, v in out.items() if k == v}
    for name, value in out.items():
        if name != value:
            if value in taken:
                value = out[name] = mapped(f"{value[:50]}-{_digest(name)}")
            taken.add(value)
    return out


class _Names:
    """The names of one export as Kubernetes has them: nodes as objects, switches as HyperNodes, label values."""

    def __init__(self, build: Build, loc: Locality) -> None:
        nodes = list(loc.nodes)
        switches = [s.name for s in loc.switches]
        groups = [build.topology.devices[n].group or "" for n in nodes]
        self.node = _mapping(nodes, object_name)
        self.hyper = _mapping(switches, object_name)
        self.value = _mapping([*switches, *nodes], label_value)
        self.value.update({g: label_value(g) if g else "" for g in groups})


def _dump(documents: list[Any], header: str) -> str:
    return header + yamltext.dump_all(documents)  # PyYAML's text (safe dumper, explicit starts), faster


def node_labels_yaml(build: Build, loc: Locality, labelled: dict[str, dict[str, str]], names: _Names) -> str:
    docs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": names.node[node], "labels": labels}}
        for node, labels in labelled.items()
    ]
    header = (
        f"# Topology labels of the scheduler nodes of design {build.name} (fabric `{loc.fabric}`); written by fabric.\n"
        "# Apply with `kubectl apply --server-side --force-conflicts -f node-labels.yaml` or run label-nodes.sh.\n"
    )
    return _dump(docs, header)


def label_script(build: Build, loc: Locality, labelled: dict[str, dict[str, str]], names: _Names) -> str:
    lines = [
        "#!/bin/sh",
        f"# Topology labels of the scheduler nodes of design {build.name}; written by fabric. Run: sh label-nodes.sh",
        "set -eu",
    ]
    for node, labels in labelled.items():
        pairs = " ".join(shlex.quote(f"{k}={v}") for k, v in labels.items())
        lines.append(f"kubectl label node --overwrite {shlex.quote(names.node[node])} {pairs}")
    return "\n".join(lines) + "\n"


def kueue_yaml(build: Build, loc: Locality) -> str:
    settings = build.design.spec.exports.kubernetes
    topology = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Topology",
        "metadata": {"name": settings.topology_name},
        "spec": {"levels": [{"nodeLabel": key} for key in kueue_levels(build, loc)]},
    }
    flavors = [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": object_name(f"{settings.topology_name}-{group}")},
            "spec": {"nodeLabels": {settings.group_label: label_value(group)}, "topologyName": settings.topology_name},
        }
        for group in loc.groups
    ]
    header = (
        f"# Kueue topology-aware scheduling for design {build.name}: the Topology (levels coarse to fine,\n"
        "# hostname last) and one ResourceFlavor per scheduler node group; written by fabric.\n"
    )
    return _dump([topology, *flavors], header)


def volcano_yaml(build: Build, loc: Locality, names: _Names) -> str:
    settings = build.design.spec.exports.kubernetes
    keys = label_keys(settings)
    docs = []
    for s in loc.switches:
        if s.level == 0:
            if settings.volcano_members == "label" and "tier0" in keys:
                members = [
                    {"type": "Node", "selector": {"labelMatch": {"matchLabels": {keys["tier0"]: names.value[s.name]}}}}
                ]
            else:
                members = [{"type": "Node", "selector": {"exactMatch": {"name": names.node[n]}}} for n in s.nodes]
        else:
            members = [{"type": "HyperNode", "selector": {"exactMatch": {"name": names.hyper[c]}}} for c in s.children]
        docs.append(
            {
                "apiVersion": "topology.volcano.sh/v1alpha1",
                "kind": "HyperNode",
                "metadata": {"name": names.hyper[s.name]},
                "spec": {"tier": s.level + 1, "tierName": "nvlink" if s.nvlink else s.layer, "members": members},
            }
        )
    header = (
        f"# Volcano HyperNodes for design {build.name}: tier 1 holds the nodes of one lowest logical switch,\n"
        "# each higher tier the HyperNodes below it; written by fabric.\n"
    )
    return _dump(docs, header)


CLIQUE_LABEL = "nvidia.com/gpu.clique"  # GPU feature discovery: <cluster UUID>.<clique ID> of the node's GPUs
IMEX_CHANNEL = "imex-channel"


def compute_domain_yaml(build: Build, loc: Locality) -> str:
    """An example for NVIDIA's DRA driver (k8s-dra-driver-gpu, CRD `computedomains.resource.nvidia.com`, v1beta1):
    a ComputeDomain and an Indexed Job of one pod a tray over a whole NVLink domain. The pods share the domain's
    IMEX channel through the ResourceClaimTemplate the driver generates (`spec.channel.resourceClaimTemplate`);
    they land in one NVLink domain by a required pod affinity on the label fabric writes for it (GPU feature
    discovery's `nvidia.com/gpu.clique` when that label is off), one pod a node by anti-affinity on the hostname.
    `numNodes: 0` is the driver's advice with its default IMEXDaemonsWithDNSNames mode (the field is deprecated)."""
    settings = build.design.spec.exports.kubernetes
    domain = loc.domains[0]
    name = object_name(f"{build.name}-nvlink-job")
    template = object_name(f"{name}-channel")
    topology_key = settings.nvlink_label or CLIQUE_LABEL
    node_type = build.design.catalog.nodes[build.topology.devices[domain.nodes[0]].model]
    compute_domain = {
        "apiVersion": "resource.nvidia.com/v1beta1",
        "kind": "ComputeDomain",
        "metadata": {"name": name},
        "spec": {"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": template}}},
    }
    pod = {
        "metadata": {"labels": {"app": name}},
        "spec": {
            "restartPolicy": "Never",
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": name}}, "topologyKey": topology_key}
                    ]
                },
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": name}}, "topologyKey": HOSTNAME}
                    ]
                },
            },
            "containers": [
                {
                    "name": "worker",
                    "image": "REPLACE-WITH-YOUR-IMAGE",
                    "resources": {"limits": {"nvidia.com/gpu": node_type.gpus}, "claims": [{"name": IMEX_CHANNEL}]},
                }
            ],
            "resourceClaims": [{"name": IMEX_CHANNEL, "resourceClaimTemplateName": template}],
        },
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "completionMode": "Indexed",
            "completions": domain.trays,
            "parallelism": domain.trays,
            "template": pod,
        },
    }
    header = (
        f"# Example for NVIDIA's DRA driver, design {build.name}: a ComputeDomain and a Job of one pod a tray\n"
        f"# over one NVLink domain ({domain.system}: {domain.trays} trays, {domain.gpus} GPUs), kept in one domain\n"
        f"# by the `{topology_key}` label; written by fabric. Set the image and namespace before applying.\n"
    )
    return _dump([compute_domain, job], header)


def k8s_files(build: Build) -> dict[str, str]:
    loc = locality(build.design, build.topology)
    if loc is None or not loc.levels:
        return {}
    names = _Names(build, loc)
    labels = node_labels(build, loc, names)
    return {
        "k8s/node-labels.yaml": node_labels_yaml(build, loc, labels, names),
        "k8s/label-nodes.sh": label_script(build, loc, labels, names),
        "k8s/kueue-topology.yaml": kueue_yaml(build, loc),
        "k8s/volcano-hypernodes.yaml": volcano_yaml(build, loc, names),
    } | ({"k8s/compute-domain.yaml": compute_domain_yaml(build, loc)} if loc.domains else {})


OUTPUTS: tuple[Output, ...] = (Output("kubernetes", k8s_files, weight=0.4),)
