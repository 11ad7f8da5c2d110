"""The RoCEv2 lossless profile of a fabric's switches, from its `qos` settings."""

from __future__ import annotations

from collections.abc import Sequence

from fabric.intent.ethernet.model import QosIntent
from fabric.spec.schema import QosSettings

# fabric roles that carry RoCE (a converged fabric carries storage), so lossless unless the spec says otherwise
ROCE_ROLES = ("compute", "storage", "converged")


def qos_intent(settings: QosSettings | None, role: str, ports: Sequence[str]) -> QosIntent | None:
    """The profile on `ports`, or None when the fabric runs none (`profile: none`, or a role without RoCE)."""
    if settings is None:
        settings = QosSettings() if role in ROCE_ROLES else QosSettings(profile="none")
    if settings.profile == "none":
        return None
    return QosIntent(
        settings.roce_dscp,
        settings.roce_priority,
        settings.cnp_dscp,
        settings.cnp_priority,
        settings.ecn_min_kb * 1000,
        settings.ecn_max_kb * 1000,
        settings.ecn_probability,
        settings.pfc_watchdog,
        tuple(ports),
    )
