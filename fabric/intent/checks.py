"""The checks of the intent stage: what a switch's platform must be able to do, settings accepted but without
effect yet, and that every hop of a RoCE path agrees on the lossless profile (INTENT_CHECKS), then the InfiniBand
subnet checks (infiniband/checks.py's SUBNET_CHECKS). Each takes the IntentContext."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from fabric.intent.context import IntentCheck, IntentContext
from fabric.intent.ethernet.model import DeviceIntent, PortIntent, QosIntent
from fabric.model.findings import Finding, error, warning
from fabric.model.kinds import Layer
from fabric.spec.platforms import FEATURES, Feature, PlatformTraits, platforms

if TYPE_CHECKING:
    from fabric.intent.hosts import RailNic


def check_capabilities(ctx: IntentContext) -> Iterator[Finding]:
    """A platform must be able to do what the spec asks of it; each platform declares what it supports."""
    traits = platforms()
    seen: set[tuple[str, str, str]] = set()
    for intent in ctx.switches:  # the first switch of a class with a feature is the first switch with it
        platform = traits[intent.platform]
        wanted: dict[Feature, bool] = {
            "bgp-unnumbered": intent.bgp is not None and intent.bgp.unnumbered,
            "roce-lossless": intent.qos is not None,
            "pfc-watchdog": intent.qos is not None and intent.qos.pfc_watchdog,
            "breakout": any(p.breakout > 1 for p in intent.used_ports),
            "mlag": intent.mlag is not None,
        }
        for feature, needed in wanted.items():
            if not needed or feature in platform.supports or (intent.fabric, intent.platform, feature) in seen:
                continue
            seen.add((intent.fabric, intent.platform, feature))
            able = sorted(name for name, p in traits.items() if feature in p.supports)
            severity, why = FEATURES[feature]
            make = error if severity == "error" else warning
            yield make(
                "platform-capability",
                f"fabrics.{intent.fabric}.switches",
                f"platform `{intent.platform}` (switch {intent.hostname} and others of fabric `{intent.fabric}`) "
                f"cannot {why}",
                f"use a platform that can: {', '.join(able)}" if able else "no platform can",
            )


# setting of `fabrics.<f>.infiniband` → why it has no effect yet
UNSUPPORTED_IB = {
    "sharp": "SHARP is configured by the aggregation manager (sharp_am, UFM), which fabric does not write yet; "
    "upstream OpenSM has no SHARP setting",
    "adaptive_routing": "adaptive routing needs NVIDIA's OpenSM (its ar_ftree / ar_updn engines, which "
    "routing_engine accepts); upstream OpenSM has no such setting, so fabric writes none",
}


def check_unsupported(ctx: IntentContext) -> Iterator[Finding]:
    """Settings the spec accepts that change no output yet say so instead of doing nothing silently."""
    for key, fabric in ctx.design.spec.fabrics.items():
        settings = fabric.infiniband
        if settings is None:
            continue
        for name, why in UNSUPPORTED_IB.items():
            if getattr(settings, name):
                yield warning(
                    "not-supported",
                    f"fabrics.{key}.infiniband.{name}",
                    f"`{name}: true` is not supported yet and has no effect: {why}",
                    f"drop `{name}`, or configure it on the subnet manager by hand",
                )


# what both ends of a RoCE hop must agree on: (what, QosIntent field). The ECN queue is the lossless priority's
# (ECN marks on roce_tc on the switches, DCQCN runs on it on the NICs), so it differs exactly when that does.
HOP_FIELDS = (
    ("RoCE DSCP", "roce_dscp"),
    ("lossless priority (PFC and ECN queue)", "roce_tc"),
    ("CNP DSCP", "cnp_dscp"),
    ("CNP priority", "cnp_tc"),
)
# between two switches also the ECN marking (the NICs take the switches' marks, they do not mark)
SWITCH_FIELDS = (
    *HOP_FIELDS,
    ("ECN minimum threshold (bytes)", "ecn_min_bytes"),
    ("ECN maximum threshold (bytes)", "ecn_max_bytes"),
    ("ECN marking probability (%)", "ecn_probability"),
)
_LAYER_ORDER = {Layer.LEAF: 0, Layer.SPINE: 1, Layer.CORE: 2}  # path order of a switch's uplinks


def _profile_differences(
    a_name: str, a: QosIntent | None, b_name: str, b: QosIntent | None, fields: tuple[tuple[str, str], ...]
) -> list[str]:
    if a is None or b is None:
        return [f"{a_name if a is None else b_name} has no lossless profile, {b_name if a is None else a_name} has one"]
    return [
        f"{what} {getattr(a, attr)} on {a_name}, {getattr(b, attr)} on {b_name}"
        for what, attr in fields
        if getattr(a, attr) != getattr(b, attr)
    ]


def _agrees(
    switches: list[DeviceIntent], nics: list[tuple[str, RailNic]], traits: Mapping[str, PlatformTraits]
) -> bool:
    """Whether every switch (`switches`: the first of each class will do) and NIC of a fabric has one profile, PFC
    on every port it uses and an MTU no smaller than any NIC's (checked in bulk; a superset of the per-hop
    conditions)."""
    values = {
        tuple(getattr(nic.qos, attr) for _, attr in HOP_FIELDS) for nic in {id(n.qos): n for _, n in nics}.values()
    }
    host_mtu = max((nic.mtu for _, nic in nics), default=0)
    for switch in switches:
        qos = switch.qos
        if qos is None:
            return False
        values.add(tuple(getattr(qos, attr) for _, attr in HOP_FIELDS))
        used = switch.used_ports
        if not {p.name for p in used} <= set(qos.ports):
            return False
        if used and min(min(p.mtu for p in used), traits[switch.platform].max_mtu) < host_mtu:
            return False
    switch_values = {tuple(getattr(s.qos, attr) for _, attr in SWITCH_FIELDS) for s in switches if s.qos is not None}
    return len(values) <= 1 and len(switch_values) <= 1


def check_lossless(ctx: IntentContext) -> Iterator[Finding]:
    """Every hop of a RoCE path (host → leaf → spine → core and back) agrees on the lossless profile: the DSCP
    map, the lossless priority with PFC on it and its ECN queue, the CNP DSCP and priority; and the MTU chain
    holds (host MTU ≤ every switch MTU on the path, as the platform really programs it). The RoCE MTU cannot be
    set: the adapter uses the largest of 1024/2048/4096 not above the network interface's MTU (IBM, "Setting the
    MTU size", https://www.ibm.com/docs/en/linux-on-systems?topic=functions-set-mtu, for mlx5 RoCE adapters;
    Linux commit bcacb897 "IB/mlx4: Enable 4K mtu for IBoE": the port MTU is derived from the netdevice's), so it
    is ≤ the host MTU by construction and fabric writes none. Checked per link end to end, links in path order
    (host NICs, then leaf, spine, core uplinks); the first hop that breaks it is reported once per fabric with
    what differs, and how many more hops break."""
    traits = platforms()
    ports_of: dict[str, dict[str, PortIntent]] = {}
    pfc_of: dict[str, frozenset[str]] = {}

    def port_of(device: DeviceIntent, name: str) -> PortIntent | None:
        ports = ports_of.get(device.hostname)
        if ports is None:
            ports = ports_of[device.hostname] = {p.name: p for p in device.ports}
        return ports.get(name)

    def pfc_missing(device: DeviceIntent, port: PortIntent) -> list[str]:
        """PFC (and the profile) must be on the port itself, not only on the switch."""
        if device.qos is None:
            return []
        pfc = pfc_of.get(device.hostname)
        if pfc is None:
            pfc = pfc_of[device.hostname] = frozenset(device.qos.ports)
        return [] if port.name in pfc else [f"PFC is not enabled on {device.hostname}:{port.name}"]

    def mtu(device: DeviceIntent, port: PortIntent) -> int:
        """The MTU the switch really programs on the port: the intent's, capped by its platform's largest."""
        return min(port.mtu, traits[device.platform].max_mtu)

    keys: dict[tuple[int, tuple[tuple[str, str], ...]], tuple[object, ...]] = {}  # (id(profile), fields) → values

    def same(a: QosIntent | None, b: QosIntent | None, fields: tuple[tuple[str, str], ...]) -> bool:
        """Whether two profiles agree on `fields` (each profile's values taken once: the NICs of a fabric share
        one profile object, a switch has its own)."""
        if a is b:
            return True
        if a is None or b is None:
            return False
        values = []
        for profile in (a, b):
            key = keys.get((id(profile), fields))
            if key is None:
                key = keys[(id(profile), fields)] = tuple(getattr(profile, attr) for _, attr in fields)
            values.append(key)
        return values[0] == values[1]

    def differences(nic: RailNic, hostname: str, leaf: DeviceIntent, fields: tuple[tuple[str, str], ...]) -> list[str]:
        return _profile_differences(f"the NIC {hostname}:{nic.name}", nic.qos, leaf.hostname, leaf.qos, fields)

    nics_by_fabric: dict[str, list[tuple[str, RailNic]]] = {}
    for host in ctx.roce.values():
        for nic in host.nics:
            nics_by_fabric.setdefault(nic.fabric, []).append((host.hostname, nic))
    classes_by_fabric: dict[str, list[DeviceIntent]] = {}
    for intent in ctx.switches:
        classes_by_fabric.setdefault(intent.fabric, []).append(intent)
    for key in ctx.design.spec.fabrics:
        classes = classes_by_fabric.get(key, [])
        nics = nics_by_fabric.get(key, [])
        if not nics and all(s.qos is None for s in classes):
            continue  # no lossless profile on this fabric
        if _agrees(classes, nics, traits):
            continue  # the usual case, in one pass: the walk below only names the first hop that breaks it
        switches = [s for s in ctx.intents.values() if s.fabric == key]  # (every switch: made now in a validate)
        broken: dict[str, tuple[str, list[str]]] = {}  # hop → (the setting to name, what differs), in path order
        host_mtu = 0
        for hostname, nic in nics:
            host_mtu = max(host_mtu, nic.mtu)
            leaf = ctx.intents.get(nic.leaf)
            port = port_of(leaf, nic.leaf_port) if leaf is not None else None
            if leaf is None or port is None:
                continue  # not a switch this build configures
            qos = [] if same(nic.qos, leaf.qos, HOP_FIELDS) else differences(nic, hostname, leaf, HOP_FIELDS)
            qos += pfc_missing(leaf, port)
            too_big = nic.mtu > mtu(leaf, port)
            if qos or too_big:
                sizes = [f"host MTU {nic.mtu} above {leaf.hostname}:{port.name}'s {mtu(leaf, port)}"] if too_big else []
                hop = f"{hostname}:{nic.name} → {leaf.hostname}:{port.name}"
                broken.setdefault(hop, ("qos" if qos else "mtu", qos + sizes))
        uplinks = sorted(
            ((s, p) for s in switches for p in s.used_ports if p.role == "uplink"),
            key=lambda sp: _LAYER_ORDER.get(sp[0].layer, len(_LAYER_ORDER)),
        )
        for device, port in uplinks:
            peer = ctx.intents.get(port.peer_device)
            far = port_of(peer, port.peer_port) if peer is not None else None
            if peer is None or far is None:
                continue
            qos = (
                []
                if same(device.qos, peer.qos, SWITCH_FIELDS)
                else _profile_differences(device.hostname, device.qos, peer.hostname, peer.qos, SWITCH_FIELDS)
            )
            qos += pfc_missing(device, port) + pfc_missing(peer, far)
            too_small = host_mtu > min(mtu(device, port), mtu(peer, far))
            if qos or too_small:
                low = ", ".join(f"{d.hostname}:{p.name} {mtu(d, p)}" for d, p in ((device, port), (peer, far)))
                sizes = [f"host MTU {host_mtu} above the switch MTU ({low})"] if too_small else []
                hop = f"{device.hostname}:{port.name} → {peer.hostname}:{far.name}"
                broken.setdefault(hop, ("qos" if qos else "mtu", qos + sizes))
        if not broken:
            continue
        hop, (setting, diff) = next(iter(broken.items()))
        more = len(broken) - 1
        yield error(
            "lossless-mismatch",
            f"fabrics.{key}.{setting}",
            f"RoCE is not lossless on fabric `{key}`: the first hop that breaks it, {hop}: {'; '.join(diff)}"
            + (f" (and {more} more hops)" if more else ""),
            f"every switch and server NIC of the fabric takes `fabrics.{key}.qos`, and the MTU from "
            f"`fabrics.{key}.mtu` (hosts min(9000, mtu)), so a hop that differs is a bug in fabric: report it with the "
            "spec, and do not deploy the fabric's QoS until it is fixed",
        )


INTENT_CHECKS: dict[str, IntentCheck] = {
    "capabilities": check_capabilities,
    "unsupported": check_unsupported,
    "lossless": check_lossless,
}


def run_intent_checks(ctx: IntentContext) -> list[Finding]:
    """INTENT_CHECKS, then infiniband/checks.py's SUBNET_CHECKS (each runs per subnet: a design without InfiniBand
    subnets has none to run, and does not load their module)."""
    findings: list[Finding] = []
    for check in INTENT_CHECKS.values():
        findings.extend(check(ctx))
    if ctx.subnets:
        from fabric.intent.infiniband.checks import SUBNET_CHECKS

        for check in SUBNET_CHECKS.values():
            findings.extend(check(ctx))
    return findings
