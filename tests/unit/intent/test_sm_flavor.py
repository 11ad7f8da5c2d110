"""`infiniband.sm.flavor` (issue 26 item 5, review W4): NVIDIA's OpenSM in UFM (`ufm`: adaptive routing, UFM's
paths) or upstream OpenSM (`upstream`: ftree,updn, /etc/opensm), defaulting from the SM hosts' node type.

The `ufm` output is checked against what NVIDIA's documents say (no UFM runs here); upstream OpenSM's own handling
of the adaptive-routing engines is proven live in tests/live/test_ibsim.py
(test_upstream_opensm_cannot_route_with_the_ufm_engines)."""

from __future__ import annotations

from typing import Any

import pytest

from fabric import Build
from fabric.intent.infiniband.subnet import Subnet
from fabric.render.outputs.infiniband import render_subnet
from tests.support.design_variants import variant

# What NVIDIA documents for UFM's OpenSM, key → (value, source):
NVIDIA_UFM = {
    # "The default value is: ar_updn which is relevant for a fat tree topology" (InfiniBand Cluster Bring-up
    # Procedure, Adaptive Routing: https://docs.nvidia.com/networking/display/ibclusterbringupprocedure/adaptive+routing)
    "routing_engine": "ar_updn",
    # "Default SM configuration file – /opt/ufm/files/conf/opensm/opensm.conf", "Default partition configuration
    # file – /opt/ufm/files/conf/opensm/partitions.conf", "Default SM log – /opt/ufm/files/log/opensm.log" (UFM
    # Enterprise User Manual, Appendix – SM Default Files:
    # https://docs.nvidia.com/networking/display/ufmenterpriseumv61914/appendix-sm-default-files)
    "config": "/opt/ufm/files/conf/opensm/opensm.conf",
    "partition_config_file": "/opt/ufm/files/conf/opensm/partitions.conf",
    "log_file": "/opt/ufm/files/log/opensm.log",
}
UPSTREAM = {"routing_engine": "ftree,updn,no_fallback", "directory": "/etc/opensm", "log_file": "/var/log/opensm.log"}


def _lab(sm: dict[str, Any], **settings: Any) -> Build:
    """lab-ib (UFM appliances ufm001/ufm002, storage servers fs1/fs2) with its `infiniband.sm` and settings set."""

    def change(data: dict[str, Any]) -> None:
        ib = data["fabrics"]["compute"]["infiniband"]
        ib["sm"] = sm
        ib.update(settings)

    return variant("lab-ib", change)


def _subnet(build: Build) -> Subnet:
    subnet = build.infiniband.subnet("compute")
    assert subnet is not None
    return subnet


def _keys(conf: str) -> dict[str, str]:
    lines = [line.split(" ", 1) for line in conf.splitlines() if line and not line.startswith("#")]
    return {k: v for k, v in lines}


UFM_HOSTS, SERVER_HOSTS = ["ufm001", "ufm002"], ["fs1", "fs2"]
# (SM hosts, flavor in the spec) → the flavor fabric picks
CASES = {
    "ufm appliances, no flavor": (UFM_HOSTS, None, "ufm"),
    "ufm appliances, upstream asked": (UFM_HOSTS, "upstream", "upstream"),
    "servers, no flavor": (SERVER_HOSTS, None, "upstream"),
    "servers, ufm asked": (SERVER_HOSTS, "ufm", "ufm"),
    "a ufm appliance and a server": (["ufm001", "fs1"], None, "upstream"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_flavor_defaults_from_the_sm_hosts_and_sets_engine_and_paths(case: str) -> None:
    hosts, flavor, expected = CASES[case]
    sm: dict[str, Any] = {"hosts": hosts} | ({"flavor": flavor} if flavor else {})
    subnet = _subnet(_lab(sm))
    assert subnet.flavor == expected
    files = render_subnet(subnet)
    keys = _keys(files["infiniband/compute/opensm.conf"])
    if expected == "ufm":
        assert keys["routing_engine"] == NVIDIA_UFM["routing_engine"] + ",no_fallback"
        assert keys["partition_config_file"] == NVIDIA_UFM["partition_config_file"]
        assert keys["log_file"] == NVIDIA_UFM["log_file"]
        directory = NVIDIA_UFM["config"].rsplit("/", 1)[0]
        assert "/etc/opensm" not in files["infiniband/compute/opensm.conf"]
    else:
        assert keys["routing_engine"] == UPSTREAM["routing_engine"]
        assert keys["log_file"] == UPSTREAM["log_file"]
        directory = UPSTREAM["directory"]
        assert "/opt/ufm" not in files["infiniband/compute/opensm.conf"]
    paths = [v for k, v in keys.items() if k.endswith(("_file", "_name")) and k != "log_file"]
    assert len(paths) == 5 and all(p.rsplit("/", 1)[0] == directory for p in paths)  # root, cn, io, partitions, map
    assert not [f for f in _lab(sm).findings if f.code == "sm-flavor"]


def test_settings_written_in_the_spec_win_over_the_flavor() -> None:
    subnet = _subnet(_lab({"hosts": UFM_HOSTS}, routing_engine=["ar_ftree", "ar_updn"], config_dir="/srv/sm"))
    keys = _keys(render_subnet(subnet)["infiniband/compute/opensm.conf"])
    assert subnet.flavor == "ufm"
    assert keys["routing_engine"] == "ar_ftree,ar_updn,no_fallback"
    assert keys["partition_config_file"] == "/srv/sm/partitions.conf"
    assert keys["log_file"] == NVIDIA_UFM["log_file"]  # not written in the spec: UFM's


# (flavor, engines) → the sm-flavor finding's severity (None: no finding)
ENGINE_CASES = {
    "ufm runs ar_updn": ("ufm", ["ar_updn"], None),
    "upstream with only ar_updn": ("upstream", ["ar_updn"], "error"),
    "upstream with ar_ftree then updn": ("upstream", ["ar_ftree", "updn"], "warning"),
    "upstream with ftree, updn": ("upstream", ["ftree", "updn"], None),
}


@pytest.mark.parametrize("case", list(ENGINE_CASES))
def test_adaptive_routing_engines_on_upstream_opensm_are_a_finding(case: str) -> None:
    flavor, engines, severity = ENGINE_CASES[case]
    build = _lab({"hosts": UFM_HOSTS, "flavor": flavor}, routing_engine=engines)
    found = [f for f in build.findings if f.code == "sm-flavor"]
    assert [f.severity.name.lower() for f in found] == ([severity] if severity else [])
    if found:
        assert found[0].path == "fabrics.compute.infiniband.routing_engine"
        assert engines[0] in found[0].message
