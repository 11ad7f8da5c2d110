"""Kubernetes topology exports, serialized from data.

Every scheduler node gets one label per locality level (the logical switch above it, fabric.analysis.locality)
under keys from a preset (or set one by one), so that Kueue's Topology, Volcano's label discovery and
NVIDIA topograph's consumers read the same tree Slurm does.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
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


def node_labels(build: Build, loc: Locality) -> dict[str, dict[str, str]]:
    """Node → its topology labels (and its group label), in node order."""
    settings = build.design.spec.exports.kubernetes
    keys = label_keys(settings)
    devices = build.topology.devices
    above = chains(loc)
    out: dict[str, dict[str, str]] = {}
    for node in loc.nodes:
        labels: dict[str, str] = {}
        chain = above[node]
        for tier, switch in zip(TIERS, chain, strict=False):
            if tier in keys:
                labels[keys[tier]] = switch
        if "host" in keys:
            labels[keys["host"]] = node
        labels[settings.group_label] = devices[node].group or ""
        out[node] = labels
    return out


def kueue_levels(build: Build, loc: Locality) -> list[str]:
    """Label keys from the coarsest level to the host; `kubernetes.io/hostname` last (Kueue's rule)."""
    keys = label_keys(build.design.spec.exports.kubernetes)
    tiers = [keys[t] for t in reversed(TIERS[: len(loc.levels)]) if t in keys]
    return [*tiers, *([keys["host"]] if "host" in keys else []), HOSTNAME]


def object_name(name: str) -> str:
    """A switch name as a Kubernetes object name (DNS subdomain: lower case, digits, '-', '.')."""
    return re.sub(r"[^a-z0-9.-]", "-", name.lower()).strip("-.") or "x"


def _dump(documents: list[Any], header: str) -> str:
    return header + yamltext.dump_all(documents)  # PyYAML's text (safe dumper, explicit starts), faster


def node_labels_yaml(build: Build, loc: Locality, labelled: dict[str, dict[str, str]]) -> str:
    docs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": labels}}
        for node, labels in labelled.items()
    ]
    header = (
        f"# Topology labels of the scheduler nodes of design {build.name} (fabric `{loc.fabric}`); written by fabric.\n"
        "# Apply with `kubectl apply --server-side --force-conflicts -f node-labels.yaml` or run label-nodes.sh.\n"
    )
    return _dump(docs, header)


def label_script(build: Build, loc: Locality, labelled: dict[str, dict[str, str]]) -> str:
    lines = [
        "#!/bin/sh",
        f"# Topology labels of the scheduler nodes of design {build.name}; written by fabric. Run: sh label-nodes.sh",
        "set -eu",
    ]
    for node, labels in labelled.items():
        pairs = " ".join(shlex.quote(f"{k}={v}") for k, v in labels.items())
        lines.append(f"kubectl label node --overwrite {shlex.quote(node)} {pairs}")
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
            "metadata": {"name": f"{settings.topology_name}-{group}".lower()},
            "spec": {"nodeLabels": {settings.group_label: group}, "topologyName": settings.topology_name},
        }
        for group in loc.groups
    ]
    header = (
        f"# Kueue topology-aware scheduling for design {build.name}: the Topology (levels coarse to fine,\n"
        "# hostname last) and one ResourceFlavor per scheduler node group; written by fabric.\n"
    )
    return _dump([topology, *flavors], header)


def volcano_yaml(build: Build, loc: Locality) -> str:
    settings = build.design.spec.exports.kubernetes
    keys = label_keys(settings)
    docs = []
    for s in loc.switches:
        if s.level == 0:
            if settings.volcano_members == "label" and "tier0" in keys:
                members = [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {keys["tier0"]: s.name}}}}]
            else:
                members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in s.nodes]
        else:
            members = [{"type": "HyperNode", "selector": {"exactMatch": {"name": object_name(c)}}} for c in s.children]
        docs.append(
            {
                "apiVersion": "topology.volcano.sh/v1alpha1",
                "kind": "HyperNode",
                "metadata": {"name": object_name(s.name)},
                "spec": {"tier": s.level + 1, "tierName": s.layer, "members": members},
            }
        )
    header = (
        f"# Volcano HyperNodes for design {build.name}: tier 1 holds the nodes of one lowest logical switch,\n"
        "# each higher tier the HyperNodes below it; written by fabric.\n"
    )
    return _dump(docs, header)


def k8s_files(build: Build) -> dict[str, str]:
    loc = locality(build.design, build.topology)
    if loc is None or not loc.levels:
        return {}
    labels = node_labels(build, loc)
    return {
        "k8s/node-labels.yaml": node_labels_yaml(build, loc, labels),
        "k8s/label-nodes.sh": label_script(build, loc, labels),
        "k8s/kueue-topology.yaml": kueue_yaml(build, loc),
        "k8s/volcano-hypernodes.yaml": volcano_yaml(build, loc),
    }


OUTPUTS: tuple[Output, ...] = (Output("kubernetes", k8s_files, weight=0.4),)
