"""One fabric (`fabrics.<f>`): its technology, topology, switches, attachments and per-fabric settings."""

# No `from __future__ import annotations` in the model modules: pydantic would compile each annotation string
# at import; written ones are evaluated once, by Python.
from typing import Literal, Self

from pydantic import (
    Field,
    model_validator,
)

from fabric.model.kinds import Role
from fabric.spec.platforms import PlatformName
from fabric.spec.schema.attach import (
    Attach,
    CablingPolicy,
    LayerSwitches,
    Naming,
    Oversubscription,
    OversubscriptionByLayer,
)
from fabric.spec.schema.ethernet import AsnPlan, QosSettings, RoutingSettings
from fabric.spec.schema.infiniband import InfinibandSettings
from fabric.spec.schema.topology import TopologySpec
from fabric.spec.schema.types import (
    Int,
    StrictModel,
    no_entries,
)


class Fabric(StrictModel):
    """One fabric: compute, storage, in-band, out-of-band or converged (storage and in-band); InfiniBand or Ethernet."""

    role: Role | None = Field(
        default=None,
        description="Fabric role. `converged`: storage and in-band on one Ethernet fabric (the GB200 SuperPOD's "
        "storage and in-band fabric): lossless like a storage fabric, its nodes' ports in-band addresses (IMEX, "
        "NCCL's sockets). Default: the fabric's key when it is one of the roles.",
    )
    technology: Literal["infiniband", "ethernet"]
    topology: TopologySpec
    switches: LayerSwitches
    oversubscription: Oversubscription = Field(
        default_factory=OversubscriptionByLayer.model_construct,
        description='Target down:up bandwidth, `"1:1"` or `{leaf: "4:3", spine: "1:1"}`. '
        "Checked per switch and per tier.",
    )
    attach: list[Attach] = Field(default_factory=no_entries, description="What connects to the leaves.")
    speed_gbps: Int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="Switch port speed; cages break out to reach it. Default: the fastest node port attached.",
    )
    cabling: CablingPolicy | None = None
    naming: Naming = Field(default_factory=Naming.model_construct)
    infiniband: InfinibandSettings | None = Field(default=None, description="InfiniBand fabrics only.")
    routing: RoutingSettings | None = Field(default=None, description="Ethernet fabrics only.")
    qos: QosSettings | None = Field(
        default=None,
        description="Ethernet fabrics only. Default: the RoCE lossless profile on compute and storage fabrics, "
        "none on in-band and out-of-band ones (`profile: none` turns it off).",
    )
    mtu: Int | None = Field(default=None, ge=1500, le=9216, description="Ethernet switch MTU. Default 9216.")
    platform: PlatformName | None = Field(
        default=None,
        description="Network OS of every switch of this Ethernet fabric (a layer's `switches.<layer>.platform` "
        "wins). Default: the catalog model's platform.",
    )
    asn: AsnPlan | None = Field(default=None, description="Per-fabric ASN plan; default: the design's `asn`.")
    dual_homing: Literal["none", "host_routing", "bond"] | None = Field(
        default=None,
        description="How a node's ports on this Ethernet fabric work together. `none`: each port is an address in "
        "its leaf's server subnet (one default gateway per port, no failover). `host_routing`: each port is a "
        "routed link (a /31, or unnumbered) with its own eBGP session to its leaf; the node gets a loopback and a "
        "private ASN and advertises the loopback, so it stays reachable while any one link is up (fabric writes "
        "`hosts/<node>/frr.conf` and `netplan.yaml`). `bond`: leaves come in pairs (leaf 2k-1 and 2k) that run MLAG "
        "over 2 peer-link cables each (planned cables; they take 2 down ports per leaf); a node's two ports are one "
        "LACP bond in its pair's server subnet, behind a virtual gateway both leaves answer for (EOS, Cumulus; a "
        "platform without MLAG is a finding; fabric writes `hosts/<node>/netplan.yaml`). Generated, "
        "non-rail-optimized one-plane fabrics only. Default: `none` on every role.",
    )

    @model_validator(mode="after")
    def _technology_fields(self) -> Self:
        if self.technology == "infiniband":
            for name in ("routing", "qos", "mtu", "asn", "platform", "dual_homing"):
                if getattr(self, name) is not None:
                    raise ValueError(f"`{name}` applies to Ethernet fabrics only")
        elif self.infiniband is not None:
            raise ValueError("`infiniband` applies to InfiniBand fabrics only")
        return self

    def platform_of(self, layer: str, default: str | None) -> str | None:
        """The network OS of a layer's switches (precedence as documented on the fields)."""
        choice = self.switches.for_layer(layer).platform if layer else None
        return choice or self.platform or default
