"""Traffic model settings (fabric/analysis/traffic): the queue pairs the jobs use and when static ECMP warns."""

from __future__ import annotations

from pydantic import Field

from fabric.spec.schema.types import Float, Int, StrictModel


class TrafficSettings(StrictModel):
    """How the jobs' collectives are modelled on the scheduler fabric, and the `ecmp-shortfall` threshold."""

    qps: Int = Field(
        default=1,
        ge=1,
        le=64,
        description="Queue pairs per connection the jobs use: NCCL_IB_QPS_PER_CONNECTION (NCCL's default: 1).",
    )
    ecmp_warning_pct: Float = Field(
        default=80.0,
        ge=0,
        le=100,
        description="Warn (`ecmp-shortfall`) when static ECMP delivers less than this % of what adaptive routing "
        "delivers to a whole-cluster ring all-reduce or all-to-all (0: never). On a design whose fabrics have 320 "
        "switches or fewer each, checked only when set here (validating a small design loads no numpy).",
    )
