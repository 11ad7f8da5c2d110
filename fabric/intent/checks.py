"""The checks of the intent stage: what a switch's platform must be able to do and settings accepted but without
effect yet (INTENT_CHECKS), then the InfiniBand subnet checks (infiniband/checks.py's SUBNET_CHECKS). Each takes
the IntentContext."""

from __future__ import annotations

from collections.abc import Iterator

from fabric.intent.context import IntentCheck, IntentContext
from fabric.model.findings import Finding, error, warning
from fabric.spec.platforms import FEATURES, Feature, platforms


def check_capabilities(ctx: IntentContext) -> Iterator[Finding]:
    """A platform must be able to do what the spec asks of it; each platform declares what it supports."""
    traits = platforms()
    seen: set[tuple[str, str, str]] = set()
    for intent in ctx.intents.values():
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


INTENT_CHECKS: dict[str, IntentCheck] = {
    "capabilities": check_capabilities,
    "unsupported": check_unsupported,
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
