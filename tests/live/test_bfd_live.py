"""BFD live (issue 26 item 5): designs/lab.yaml with `routing.bfd: true` booted in network namespaces, bfdd
started next to zebra and bgpd because the generated frr.conf asks for it. Every leaf–spine session has a BFD
session Up and BGP registered with it; a spine whose BFD stops answering is detected by BFD (the leaf's BGP
session is reset for "BFD down", not by its hold timer), while the other spine's stays Up. The same lab with
BFD off runs no bfdd and its BGP sessions know no BFD.

Needs root and Debian's frr (bfdd is in the frr package); skips without them, or fails under
FABRIC_REQUIRE_REAL=1.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabric.tools.lab import FRR_DIR, Lab, plan_lab
from tests.conftest import require_root, require_tool
from tests.support.design_variants import variant

PREFIX = f"b{os.getpid() % 100000}-"
LEAF, CUT, KEPT = "leaf1", "spine1", "spine2"


@pytest.fixture(scope="module", autouse=True)
def frr() -> None:
    require_root("network namespaces")
    require_tool("vtysh", "apt-get install frr")
    require_tool(str(FRR_DIR / "bfdd"), "apt-get install frr")


def _with_bfd(on: bool) -> Any:
    def change(data: dict[str, Any]) -> None:
        for fabric in data["fabrics"].values():
            fabric.setdefault("routing", {})["bfd"] = on

    return variant("lab", change)


@pytest.fixture(params=[True, False], ids=["bfd-on", "bfd-off"])
def lab(request: pytest.FixtureRequest) -> Iterator[Lab]:
    state = Path(tempfile.mkdtemp(prefix="fabric-bfd-"))
    state.chmod(0o755)  # the daemons drop to user frr
    plan = plan_lab(_with_bfd(request.param), prefix=PREFIX)
    lab = Lab(plan, state / "lab")
    try:
        lab.up()
        lab.wait_converged(timeout=90)
        yield lab
    finally:
        lab.down()
        shutil.rmtree(state, ignore_errors=True)
        leftover = (
            [ns for ns in os.listdir("/run/netns") if ns.startswith(PREFIX)] if os.path.isdir("/run/netns") else []
        )
        assert not leftover, f"the lab left namespaces behind: {leftover}"


def _peers(lab: Lab, device: str) -> dict[str, dict[str, Any]]:
    """bfdd's sessions of a device, keyed by the peer address."""
    out = lab.bfd(device, "show bfd peers json")
    assert isinstance(out, list)
    return {p["peer"]: p for p in out}


def _neighbors(lab: Lab, device: str) -> dict[str, dict[str, Any]]:
    out = lab.bgp(device, "show bgp neighbors json")
    assert isinstance(out, dict)
    return out


def _spine_address(lab: Lab, spine: str, version: int = 4) -> str:
    """The leaf's session to `spine` of one IP version (a numbered link has one of each: the lab has IPv6)."""
    [address] = [
        peer
        for peer, n in _neighbors(lab, LEAF).items()
        if n.get("nbrDesc", "").startswith(spine + ":") and (":" in peer) == (version == 6)
    ]
    return address


def _wait(predicate: Any, timeout: float = 30) -> bool:
    """Poll for a state (no timing is asserted: the deadline only bounds a hung lab)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_bfd_sessions_are_up_and_detect_a_silent_peer(lab: Lab) -> None:
    plan = lab.plan
    if not plan.bfd:  # BFD off: no bfdd anywhere, and BGP knows no BFD session
        assert b" bfd" not in plan.configs[LEAF]
        for device in plan.switches:
            assert not (lab.switch_dir(device) / "bfdd.pid").exists()
            neighbors = _neighbors(lab, device)
            assert len(neighbors) == plan.expected_peers[device] > 0
            assert all("peerBfdInfo" not in n for n in neighbors.values()), device
        return
    assert sorted(plan.bfd) == sorted(plan.switches)
    # every switch: one BFD session per BGP session, all up, and BGP registered with each
    for device in plan.switches:
        assert _wait(lambda d=device: len(_peers(lab, d)) == plan.expected_peers[d])
        assert _wait(lambda d=device: {p["status"] for p in _peers(lab, d).values()} == {"up"}), _peers(lab, device)
        neighbors = _neighbors(lab, device)
        assert len(neighbors) == plan.expected_peers[device] > 0
        assert {n["peerBfdInfo"]["status"] for n in neighbors.values()} == {"Up"}, device
    cut, kept = _spine_address(lab, CUT), _spine_address(lab, KEPT)
    cut6 = _spine_address(lab, CUT, 6)  # the link's IPv6 session: BFD watches it too
    before = _neighbors(lab, LEAF)[cut]
    dropped = before["connectionsDropped"]  # (a session may have been reset once while the fabric came up)
    dropped6 = _neighbors(lab, LEAF)[cut6]["connectionsDropped"]
    print("before the cut:", dropped, before.get("lastResetDueTo"), before.get("lastNotificationReason"))
    kept_dropped = _neighbors(lab, LEAF)[kept]["connectionsDropped"]
    # the spine's BFD goes silent (its bfdd killed; its bgpd and the link stay up)
    pid = int((lab.switch_dir(CUT) / "bfdd.pid").read_text())
    assert Path(f"/proc/{pid}/comm").read_text().strip() == "bfdd"
    os.kill(pid, signal.SIGKILL)
    assert _wait(lambda: _peers(lab, LEAF)[cut]["status"] == "down"), _peers(lab, LEAF)[cut]
    assert _wait(lambda: _neighbors(lab, LEAF)[cut]["connectionsDropped"] > dropped)
    reset = _neighbors(lab, LEAF)[cut]
    # BFD took it down (a Cease with RFC 9384's subcode 10, "BFD Down"), not the hold timer (error code 4)
    assert reset["lastNotificationReason"] == "Cease/BFD Down", reset
    assert reset["lastErrorCodeSubcode"] == "060A", reset
    assert _wait(lambda: _neighbors(lab, LEAF)[cut6]["connectionsDropped"] > dropped6)
    assert _neighbors(lab, LEAF)[cut6]["lastNotificationReason"] == "Cease/BFD Down"
    assert _peers(lab, LEAF)[kept]["status"] == "up"
    assert _neighbors(lab, LEAF)[kept]["bgpState"] == "Established"
    assert _neighbors(lab, LEAF)[kept]["connectionsDropped"] == kept_dropped
