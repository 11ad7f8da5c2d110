"""The subnet-manager intent: one frozen, vendor-neutral description per InfiniBand subnet.

A subnet is one InfiniBand fabric, or one plane of a multi-plane fabric (planes are separate subnets
with their own SM). It holds the IB nodes (switches and channel adapters) with their GUIDs, every
cable as IB ports on both ends, the ftree roles (roots, compute and I/O nodes), the SM hosts with
their priorities, the routing engines as OpenSM gets them and the partitions with their members.
The renderers only format it; `fabric verify` compares discovered fabrics with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import ClassVar

from fabric.allocation.allocate import Allocation
from fabric.fast.frozen import maker
from fabric.fast.lazy import LazyMapping, LazyTuple
from fabric.intent.infiniband import IbPlan
from fabric.intent.infiniband.guids import GuidNeed, Guids, Inventory, InventoryRow, assign_keyed_guids
from fabric.intent.infiniband.ports import (
    MTU_CODES,
    RATE_CODES,
    CaPortRef,
    Numberings,
    Rate,
    SwitchNumbering,
    node_cas,
    plan_rate,
)
from fabric.model.cable import Cable
from fabric.model.findings import Finding, error, warning
from fabric.model.kinds import Layer
from fabric.model.topology import LAYER_RANK, Device, FabricTopology, Topology
from fabric.spec.catalog import Catalog
from fabric.spec.loader import Design
from fabric.spec.schema import InfinibandSettings, Partition

DEFAULT_PKEY = 0x7FFF
NO_FALLBACK = "no_fallback"


@dataclass(frozen=True, slots=True)
class IbNode:
    """A switch, or one channel adapter (RDMA device) of a server."""

    key: str  # the NodeDescription: the switch name, or `<device> <hca>`
    device: str
    hca: str | None
    switch: bool
    nports: int
    guid: int
    placeholder: bool
    layer: str  # leaf | spine | core for a switch, node for a CA
    group: str | None  # node group of a CA
    model: str
    nodeid: str = ""  # the node id ibnetdiscover prints (`S-<guid>` / `H-<guid>`)

    def __post_init__(self) -> None:
        if not self.nodeid:
            object.__setattr__(self, "nodeid", f"{'S' if self.switch else 'H'}-{self.guid:016x}")


@dataclass(frozen=True, slots=True)
class IbEnd:
    """One end of an InfiniBand cable: node, IB port number, port GUID and the plan's port name."""

    node: str  # IbNode.key
    port: int  # IB port number
    guid: int  # port GUID (a switch's ports share its node GUID)
    device: str
    port_name: str  # the plan's (cabling.csv) port name


@dataclass(frozen=True, slots=True)
class IbLink:
    """A cable as an InfiniBand link: both ends and the rate."""

    cable: Cable
    a: IbEnd  # the lower layer, as in cabling.csv
    b: IbEnd
    rate: Rate | None

    @property
    def cable_id(self) -> str:
        return self.cable.cable_id


@dataclass(frozen=True, slots=True)
class CaPort:
    """A port of a channel adapter in a subnet, with its GUID and node group."""

    node: str  # IbNode.key
    port: int
    guid: int
    device: str
    group: str | None
    port_name: str
    speed_gbps: int
    placeholder: bool


# A cable as IB ports on both ends: (cable, a's node key, IB port, port GUID, b's node key, IB port, port GUID), the
# a end the lower layer as in cabling.csv. Plain tuples: 300,000 at 100k GPUs, which the outputs read as they are.
Wire = tuple[Cable, str, int, int, str, int, int]


# made per link end and per CA port (600,000 and 100,000 at 100k GPUs) as cheaply as plain dataclasses
_end, _link, _ca_port, _need = maker(IbEnd), maker(IbLink), maker(CaPort), maker(GuidNeed)
_node = maker(IbNode, skip_post_init=True)  # given its nodeid as __post_init__ would make it


@dataclass(frozen=True, slots=True)
class SmHost:
    """A subnet-manager host: priority, master or standby, its port and config file."""

    host: str
    priority: int
    master: bool
    port: CaPort | None  # its first port in this subnet (None: it has none; an error)
    file: str  # opensm.conf for the master, opensm-<host>.conf for a standby
    known: bool = True  # a node of the design (else the topology stage reports it)


@dataclass(frozen=True, slots=True)
class Member:
    """A partition member: port GUID and membership."""

    guid: int
    membership: str  # full | limited
    label: str  # `<device> <hca> (<group>)`, for the comment


@dataclass(frozen=True, slots=True)
class PartitionPlan:
    """A partition as OpenSM gets it: P_Key, IPoIB, MTU, rate and members."""

    name: str
    pkey: int
    ipoib: bool
    mtu: int
    mtu_code: int
    rate_gbps: int | None
    rate_code: int | None
    keyword: str | None  # ALL / ALL_CAS for `members: all`; None when members are listed
    members: tuple[Member, ...]
    added: bool = False  # the explicit default partition fabric adds when the spec has none
    self_full: bool = False  # SELF=full (the SM port) in an added default partition


@dataclass(frozen=True, slots=True)
class Members:
    """What a subnet's GUIDs decide: its nodes and cabled CA ports with their GUIDs, the ftree roots and roles, the
    SM hosts' ports and the partitions' members. A million of each at 1M GPUs: a build nothing renders (`fabric
    validate`) makes them only when something reads them, and the checks read the subnet's facts instead."""

    nodes: tuple[IbNode, ...]  # switches in fabric order, then CAs in cable order
    by_key: Mapping[str, IbNode]
    cabled: tuple[CaPort, ...]  # every cabled CA port, in cable order (a CA is always a cable's a end)
    roots: tuple[IbNode, ...]
    compute: tuple[CaPort, ...]
    io: tuple[CaPort, ...]
    sm: tuple[SmHost, ...]
    ports: tuple[CaPort, ...]  # the cabled CA ports in the order of their devices (as the partitions list them)


@dataclass(frozen=True)
class Subnet:
    """One InfiniBand subnet (a fabric or one plane of it): nodes, cables, ftree roles, SM hosts and partitions.

    The nodes, CA ports, roots, roles, SM hosts and partitions are its `members`, made by `made` when first read
    (at once where the build renders); the facts below them are what the checks read."""

    design: str
    fabric: str
    plane: int | None
    directory: str  # infiniband/<fabric> or infiniband/<fabric>/plane<p>
    settings: InfinibandSettings
    # every cable, in plan order (`links`: the same as IbLinks); a LazyTuple, made when an output first reads it
    # (3,000,000 at a million GPUs: `fabric validate` never does)
    wiring: Sequence[Wire]
    engines: tuple[str, ...]  # as opensm.conf gets them
    fallback_appended: bool
    numbering: Mapping[str, SwitchNumbering]  # per switch
    tiers: int
    made: Callable[[], Members] = field(compare=False, repr=False)
    # facts of the members, made without them (tests/unit/intent/test_subnet_facts.py); no defaults: a subnet
    # made without one would pass a check unasked (placeholder_only skips the GUID owners)
    layers: Mapping[str, str]  # each switch's layer, in fabric order
    attached: tuple[str, ...]  # the devices of the CAs, in cable order
    cabled_devices: frozenset[str]  # the devices of the cabled CA ports
    cabled_groups: frozenset[str | None]  # their node groups
    size: int  # nodes: switches and CAs
    placeholder_only: bool  # every node's GUID a placeholder
    slowest: int | None  # the speed of the slowest cabled CA port
    # the SM's keys from their secrets, as opensm.conf writes them (0x and 16 hex digits); None: OpenSM's default
    m_key: str | None = None
    sm_key: str | None = None
    flavor: str = "upstream"  # which OpenSM the SM hosts run: `ufm` (NVIDIA's, in UFM) or `upstream`
    cables: Sequence[Cable] = ()  # every cable, in plan order (the wiring's)
    # what the render-safety walk reads beside the fields
    walked: ClassVar[tuple[str, ...]] = ("members", "partitions")

    @cached_property
    def members(self) -> Members:
        return self.made()

    @property
    def nodes(self) -> tuple[IbNode, ...]:
        return self.members.nodes

    @property
    def by_key(self) -> Mapping[str, IbNode]:
        return self.members.by_key

    @property
    def cabled(self) -> tuple[CaPort, ...]:
        return self.members.cabled

    @property
    def roots(self) -> tuple[IbNode, ...]:
        return self.members.roots

    @property
    def compute(self) -> tuple[CaPort, ...]:
        return self.members.compute

    @property
    def io(self) -> tuple[CaPort, ...]:
        return self.members.io

    @property
    def sm(self) -> tuple[SmHost, ...]:
        return self.members.sm

    @cached_property
    def partitions(self) -> tuple[PartitionPlan, ...]:
        """The partitions as OpenSM gets them (the members only read for a partition that lists its groups)."""
        return tuple(_partitions(self.settings, lambda: self.members.ports, self.slowest))

    @cached_property
    def links(self) -> tuple[IbLink, ...]:
        """Every cable as an IbLink, made when first asked for (fabric verify, tests): the build and its outputs
        read `wiring`."""
        out = []
        for c, a, a_port, a_guid, b, b_port, b_guid in self.wiring:
            link = c.link
            a_end = _end(a, a_port, a_guid, link.a, link.a_port)
            b_end = _end(b, b_port, b_guid, link.b, link.b_port)
            out.append(_link(c, a_end, b_end, plan_rate(link.speed_gbps)))
        return tuple(out)

    @property
    def label(self) -> str:
        return f"`{self.fabric}`" + (f" plane {self.plane}" if self.plane else "")

    @property
    def placeholders(self) -> int:
        return self.size if self.placeholder_only else sum(1 for n in self.nodes if n.placeholder)

    @property
    def switches(self) -> tuple[IbNode, ...]:
        return tuple(n for n in self.nodes if n.switch)

    @property
    def cas(self) -> tuple[IbNode, ...]:
        return tuple(n for n in self.nodes if not n.switch)


def settings_of(design: Design, fabric: str) -> InfinibandSettings:
    return design.spec.fabrics[fabric].infiniband or InfinibandSettings()


# What `sm.flavor: ufm` changes unless the spec sets the key itself: NVIDIA's OpenSM in UFM runs adaptive routing,
# "The default value is: ar_updn which is relevant for a fat tree topology" (InfiniBand Cluster Bring-up Procedure,
# https://docs.nvidia.com/networking/display/ibclusterbringupprocedure/adaptive+routing), from UFM's configuration
# directory, "Default SM configuration file – /opt/ufm/files/conf/opensm/opensm.conf … Default SM log –
# /opt/ufm/files/log/opensm.log" (UFM Enterprise User Manual, Appendix – SM Default Files,
# https://docs.nvidia.com/networking/display/ufmenterpriseumv61914/appendix-sm-default-files).
UFM_DEFAULTS: dict[str, object] = {
    "routing_engine": ["ar_updn"],
    "config_dir": "/opt/ufm/files/conf/opensm",
    "log_file": "/opt/ufm/files/log/opensm.log",
}
# engines only NVIDIA's OpenSM has (upstream OpenSM 3.3 knows none of them)
AR_ENGINES = ("ar_updn", "ar_ftree")


def sm_flavor(design: Design, topology: Topology, settings: InfinibandSettings) -> str:
    """The spec's `sm.flavor`, else `ufm` when every SM host is a node whose type runs UFM, else `upstream`."""
    if settings.sm.flavor is not None:
        return settings.sm.flavor
    kinds = set()
    for host in settings.sm.hosts:
        device = topology.devices.get(host)
        node_type = design.catalog.nodes.get(device.model) if device is not None else None
        kinds.add(node_type.subnet_manager if node_type is not None else None)
    return "ufm" if kinds == {"ufm"} else "upstream"


def flavored(settings: InfinibandSettings, flavor: str) -> InfinibandSettings:
    """The settings with the flavor's defaults for the keys the spec leaves unset."""
    if flavor != "ufm":
        return settings
    update = {k: v for k, v in UFM_DEFAULTS.items() if k not in settings.model_fields_set}
    return settings.model_copy(update=update) if update else settings


def settings_path(design: Design, fabric: str, key: str = "") -> str:
    """A spec path into the fabric's `infiniband` block (the fabric's own path when it has none)."""
    if design.spec.fabrics[fabric].infiniband is None:
        return f"fabrics.{fabric}"
    return f"fabrics.{fabric}.infiniband" + (f".{key}" if key else "")


# --------------------------------------------------------------------------------------------- building


@dataclass
class _Draft:
    """A subnet while it is built: its switches, cables, port numbering and channel adapters."""

    fabric: str
    plane: int | None
    switches: list[str]
    cables: list[Cable]
    numbering: dict[str, SwitchNumbering]
    cas: dict[str, tuple[str, str | None, tuple[str, ...], int]]  # key → device, hca, ports, nports
    # each cable's CA end (a CA is always the a end), in cable order: CA key, IB port, port name, speed
    cabled: list[tuple[str, int, str, int]]


def _ib_fabrics(topology: Topology) -> list[FabricTopology]:
    return [ft for ft in topology.fabrics.values() if ft.technology == "infiniband" and ft.switches]


def _drafts(design: Design, topology: Topology, plan: Allocation) -> list[_Draft]:
    devices = topology.devices
    catalog = design.catalog
    # each fabric's cables by plane, in plan order (one pass over 3,000,000 cables at a million GPUs)
    by_fabric: dict[str, dict[int | None, list[Cable]]] = {}
    for cable in plan.cables:
        link = cable.link
        planes = by_fabric.get(link.fabric)
        if planes is None:
            planes = by_fabric[link.fabric] = {}
        here = planes.get(link.plane)
        if here is None:
            here = planes[link.plane] = []
        here.append(cable)
    types: dict[str, Mapping[str, CaPortRef]] = {}
    numberings = Numberings()
    drafts: list[_Draft] = []
    for ft in _ib_fabrics(topology):
        grouped = by_fabric.get(ft.name, {})
        if ft.planes == 1:  # one subnet of every cable
            every = (
                next(iter(grouped.values()))
                if len(grouped) == 1
                else [c for c in plan.cables if c.link.fabric == ft.name]
            )
            by_plane: dict[int | None, list[Cable]] = {None: every}
        else:  # each numbered plane of its cables or switches
            numbered = set(grouped) | {devices[s].plane for s in ft.switches}
            by_plane = {p: grouped.get(p, []) for p in sorted(x for x in numbered if x is not None)}
        for plane, mine in by_plane.items():
            switches = [s for s in ft.switches if ft.planes == 1 or devices[s].plane == plane]
            used: dict[str, list[tuple[str, int]]] = {s: [] for s in switches}
            cas: dict[str, tuple[str, str | None, tuple[str, ...], int]] = {}
            cabled: list[tuple[str, int, str, int]] = []
            for cable in mine:  # (a switch's end, the usual case, is looked up once)
                link = cable.link
                ports = used.get(link.a)
                if ports is not None:
                    ports.append((link.a_port, link.speed_gbps))
                else:
                    found = _add_ca(cas, types, devices, catalog, link.a, link.a_port)
                    if found is not None:
                        cabled.append((*found, link.a_port, link.speed_gbps))
                ports = used.get(link.b)
                if ports is not None:
                    ports.append((link.b_port, link.speed_gbps))
                else:
                    _add_ca(cas, types, devices, catalog, link.b, link.b_port)
            numbering = {
                s: numberings.of(devices[s].model, catalog.switches[devices[s].model], used[s]) for s in switches
            }
            drafts.append(_Draft(ft.name, plane if ft.planes > 1 else None, switches, mine, numbering, cas, cabled))
    return drafts


def _add_ca(
    cas: dict[str, tuple[str, str | None, tuple[str, ...], int]],
    types: dict[str, Mapping[str, CaPortRef]],
    devices: Mapping[str, Device],
    catalog: Catalog,
    dev: str,
    port: str,
) -> tuple[str, int] | None:
    """The CA of a cable's end on a server, into `cas` (key → device, hca, ports, nports) if new; its key and the
    end's IB port on it (None: not a server's end)."""
    if devices[dev].layer != Layer.NODE:
        return None
    node_type = devices[dev].model
    if node_type not in types:
        types[node_type] = node_cas(catalog.nodes[node_type])
    ref = types[node_type].get(port)
    hca = ref.hca if ref else port
    key = f"{dev} {hca}"
    if key not in cas:
        cas[key] = (dev, hca, ref.ports if ref else (port,), len(ref.ports) if ref else 1)
    return key, ref.number if ref else 1


def _inventories(design: Design) -> tuple[list[Inventory], list[Finding]]:
    """The inventories the loader read (each file once), with the findings about them."""
    inventories = list(design.inputs.inventories.values())
    return inventories, [f for inv in inventories for f in inv.findings]


def _merged(inventories: Sequence[Inventory]) -> Inventory | None:
    if not inventories:
        return None
    rows = tuple(row for inv in inventories for row in inv.rows)
    return Inventory(", ".join(inv.file for inv in inventories), rows, ())


def build_subnets(design: Design, topology: Topology, plan: Allocation, every: bool = True) -> IbPlan:
    """The intent of every InfiniBand subnet of the design, with the findings about it (build_infiniband).
    `every`: False where nothing renders the build (`fabric validate`): without an inventory, each subnet's members
    (and every placeholder GUID: 1,039,568 SHA-256s at 1M GPUs) are made when first read, and the checks read none."""
    drafts = _drafts(design, topology, plan)
    if not drafts:
        return IbPlan()
    inventories, findings = _inventories(design)
    inventory = _merged(inventories)
    guids: Mapping[str, Guids]
    unused: list[InventoryRow] = []
    if inventory is None and not every:
        guids = LazyMapping(partial(_placeholders, drafts))
    else:
        guids, unused = assign_keyed_guids(_needs(drafts), inventory)
    if unused:
        first = unused[0]
        shown = ", ".join(f"{r.device} {r.port}".strip() for r in unused[:4]) + (
            f" and {len(unused) - 4} more" if len(unused) > 4 else ""
        )
        inv_file = next(inv.file for inv in inventories if first in inv.rows)
        findings.append(
            warning(
                "inventory-unknown",
                next(
                    f"fabrics.{k}.infiniband.inventory"
                    for k, f in design.spec.fabrics.items()
                    if f.infiniband is not None and f.infiniband.inventory is not None
                ),
                f"{len(unused)} inventory row(s) name no switch or HCA of an InfiniBand fabric: {shown}",
                "check the device and port names against inventory.csv and cabling.csv (a_hca)",
            )
        )
        findings[-1] = _at(findings[-1], inv_file, first.line)
    subnets: list[Subnet] = []
    keys: dict[str, tuple[str | None, str | None]] = {}
    for draft in drafts:
        if draft.fabric not in keys:
            keys[draft.fabric] = _sm_keys(design, draft.fabric, findings)
        m_key, sm_key = keys[draft.fabric]
        subnet = _subnet(design, topology, draft, guids, inventory is None, every)
        subnets.append(replace(subnet, m_key=m_key, sm_key=sm_key))
    placeholder_fabrics: dict[str, list[int]] = {}
    for subnet in subnets:
        counts = placeholder_fabrics.setdefault(subnet.fabric, [0, 0])
        counts[0] += subnet.placeholders
        counts[1] += subnet.size
    for fabric, (count, total) in placeholder_fabrics.items():
        if count:
            settings = settings_of(design, fabric)
            source = "there is no inventory" if settings.inventory is None else f"{settings.inventory} lacks them"
            findings.append(
                warning(
                    "placeholder-guids",
                    settings_path(design, fabric, "inventory" if settings.inventory else ""),
                    f"{count} of {total} switches and HCAs of fabric `{fabric}` get placeholder GUIDs "
                    f"(0xfab0…; {source}); the subnet-manager files are marked and must not be deployed as they are",
                    "collect the node GUIDs (ibstat, or ibnetdiscover of the built fabric) into an inventory CSV "
                    f"and set fabrics.{fabric}.infiniband.inventory",
                )
            )
    made = tuple(subnets)
    # every cable end's HCA and IB port, 6,000,000 at 1M GPUs: made when an output first reads it (validate never)
    return IbPlan(made, LazyMapping(partial(cable_ends, made)), tuple(findings))


def _needs(drafts: Sequence[_Draft]) -> dict[str, GuidNeed]:
    """What needs a GUID, by key: every switch and CA of the drafts."""
    needs: dict[str, GuidNeed] = {}
    for draft in drafts:
        for s in draft.switches:
            needs[s] = _need(s, None, ())
        for key, (dev, hca, ports, _) in draft.cas.items():
            needs[key] = _need(dev, hca, ports)
    return needs


def _placeholders(drafts: Sequence[_Draft]) -> dict[str, Guids]:
    """Every node's GUID when there is no inventory: placeholders (as `assign_keyed_guids` gives them then)."""
    return assign_keyed_guids(_needs(drafts), None)[0]


def cable_ends(subnets: tuple[Subnet, ...]) -> dict[tuple[str, str], tuple[str | None, int]]:
    """(device, port) → (HCA of a CA's end, its IB port) of every cable end of the subnets: a CA is always a
    cable's a end (a switch's `hca` is None), the b end a switch or, on a CA-to-CA cable, given no HCA."""
    ends: dict[tuple[str, str], tuple[str | None, int]] = {}
    for subnet in subnets:
        by_key = subnet.by_key
        for c, a_key, a_port, _, _, b_port, _ in subnet.wiring:
            link = c.link
            ends[(link.a, link.a_port)] = (by_key[a_key].hca, a_port)
            ends[(link.b, link.b_port)] = (None, b_port)
    return ends


SM_KEY = re.compile(r"0x[0-9a-fA-F]{1,16}")


def _sm_keys(design: Design, fabric: str, findings: list[Finding]) -> tuple[str | None, str | None]:
    """A fabric's M_Key and SM_Key from their secrets, 64-bit numbers as opensm.conf writes them; a finding (never
    the value) for a secret that is missing or not such a number."""
    out: dict[str, str | None] = {"m_key": None, "sm_key": None}
    for name in out:
        where = f"fabrics.{fabric}.infiniband.sm.{name}"
        secret = design.inputs.secrets.get(where)
        if secret is None:
            continue
        if secret.problem is not None:
            findings.append(secret.problem)
        elif secret.value is not None and SM_KEY.fullmatch(secret.value):
            out[name] = f"0x{int(secret.value, 16):016x}"
        else:
            findings.append(
                error(
                    "secret-invalid",
                    where,
                    f"the secret of {name} is not a 64-bit number (0x and 1 to 16 hex digits)",
                    "store the key as 0x followed by up to 16 hex digits (e.g. `openssl rand -hex 8` after 0x)",
                )
            )
    return out["m_key"], out["sm_key"]


def _at(finding: Finding, file: str, line: int) -> Finding:
    return replace(finding, file=file, line=line)


def _subnet(
    design: Design, topology: Topology, draft: _Draft, guids: Mapping[str, Guids], placeholders: bool, every: bool
) -> Subnet:
    """The subnet of a draft, its members made by `made` (`placeholders`: no inventory gives a GUID; `every`: the
    members made now, in this process, which the render workers then share, and the draft not kept)."""
    devices = topology.devices
    settings = settings_of(design, draft.fabric)
    flavor = sm_flavor(design, topology, settings)
    settings = flavored(settings, flavor)
    layers = {s: devices[s].layer for s in draft.switches}
    top = max((LAYER_RANK[layer] for layer in layers.values()), default=1)
    engines = list(settings.routing_engine)
    appended = NO_FALLBACK not in engines and "minhop" not in engines
    if appended:
        engines.append(NO_FALLBACK)
    cas = draft.cas
    cabled_devices = frozenset(cas[key][0] for key, _, _, _ in draft.cabled)
    keys = (*draft.switches, *cas)
    directory = f"infiniband/{draft.fabric}" + (f"/plane{draft.plane}" if draft.plane else "")
    made = partial(_members, devices, draft, guids, settings, top)
    if every:
        made = partial(_kept, made())
    return Subnet(
        design=design.spec.name,
        fabric=draft.fabric,
        plane=draft.plane,
        directory=directory,
        settings=settings,
        wiring=LazyTuple(partial(_wiring, draft.cables, draft.numbering, cas, guids)),
        engines=tuple(engines),
        fallback_appended=appended,
        numbering=dict(draft.numbering),
        tiers=top,
        made=made,
        flavor=flavor,
        cables=draft.cables,
        layers=layers,
        attached=tuple(dict.fromkeys(device for device, _, _, _ in cas.values())),
        cabled_devices=cabled_devices,
        cabled_groups=frozenset(devices[d].group for d in cabled_devices),
        size=len(keys),
        slowest=min((speed for _, _, _, speed in draft.cabled), default=None),
        placeholder_only=placeholders or all(guids[key].placeholder for key in keys),
    )


def _members(
    devices: Mapping[str, Device], draft: _Draft, guids: Mapping[str, Guids], settings: InfinibandSettings, top: int
) -> Members:
    """A subnet's members (`top`: its highest switch rank)."""
    nodes: list[IbNode] = []
    for s in draft.switches:
        dev = devices[s]
        g = guids[s]
        nodes.append(
            _node(
                s,
                s,
                None,
                True,
                draft.numbering[s].nports,
                g.node,
                g.placeholder,
                dev.layer,
                None,
                dev.model,
                f"S-{g.node:016x}",
            )
        )
    for key, (device, hca, _ports, nports) in draft.cas.items():
        dev = devices[device]
        g = guids[key]
        nodes.append(
            _node(
                key,
                device,
                hca,
                False,
                nports,
                g.node,
                g.placeholder,
                Layer.NODE,
                dev.group,
                dev.model,
                f"H-{g.node:016x}",
            )
        )
    by_key = {n.key: n for n in nodes}
    cabled: list[CaPort] = []  # every cabled CA port (a CA is always the a end), in cable order
    for key, number, port_name, speed in draft.cabled:  # 200,000 at 100k GPUs
        node = by_key[key]
        port_guid = guids[key].ports[number - 1]
        cabled.append(_ca_port(key, number, port_guid, node.device, node.group, port_name, speed, node.placeholder))
    roots = tuple(n for n in nodes if n.switch and LAYER_RANK[n.layer] == top) if top > 1 else ()
    order = {name: i for i, name in enumerate(devices)}
    ca_ports = sorted(cabled, key=lambda p: (order[p.device], p.node, p.port))
    compute, io = _ftree_roles(settings, ca_ports)
    sm_hosts = []
    for i, host in enumerate(settings.sm.hosts):
        sm_port = next((p for p in ca_ports if p.device == host), None)
        sm_hosts.append(
            SmHost(
                host,
                max(0, settings.sm.priority - i),
                i == 0,
                sm_port,
                "opensm.conf" if i == 0 else f"opensm-{host}.conf",
                host in devices,
            )
        )
    return Members(
        nodes=tuple(nodes),
        by_key=by_key,
        cabled=tuple(cabled),
        roots=roots,
        compute=compute,
        io=io,
        sm=tuple(sm_hosts),
        ports=tuple(ca_ports),
    )


def _ca_ends(
    cas: Mapping[str, tuple[str, str | None, tuple[str, ...], int]], guids: Mapping[str, Guids]
) -> dict[tuple[str, str], tuple[str, int, int]]:
    """(device, port) → CA key, IB port, port GUID of every port of the subnet's CAs."""
    ca_end: dict[tuple[str, str], tuple[str, int, int]] = {}
    for key, (device, _hca, ports, _) in cas.items():
        port_guids = guids[key].ports
        for number, port in enumerate(ports, start=1):
            ca_end[(device, port)] = (key, number, port_guids[number - 1])
    return ca_end


def _kept(members: Members) -> Members:
    """Members made already (`made` of a subnet made with them)."""
    return members


def _wiring(
    cables: Sequence[Cable],
    numbering: Mapping[str, SwitchNumbering],
    cas: Mapping[str, tuple[str, str | None, tuple[str, ...], int]],
    guids: Mapping[str, Guids],
) -> tuple[Wire, ...]:
    """Each cable's IB ports and port GUIDs at both ends (a switch's port by its numbering, a CA's from its CA's
    ports)."""
    ca_end = _ca_ends(cas, guids)  # (device, port) → CA key, IB port, port GUID
    switch_of = {s: (n.numbers, guids[s].node) for s, n in numbering.items()}
    wiring: list[Wire] = []
    switch_at = switch_of.get
    for c in cables:  # both ends: 600,000 at 100k GPUs
        link = c.link
        switch = switch_at(link.a)
        if switch is not None:
            a_key, a_port, a_guid = link.a, switch[0].get(link.a_port, 0), switch[1]
        else:
            a_key, a_port, a_guid = ca_end[(link.a, link.a_port)]
        switch = switch_at(link.b)
        if switch is not None:
            b_key, b_port, b_guid = link.b, switch[0].get(link.b_port, 0), switch[1]
        else:
            b_key, b_port, b_guid = ca_end[(link.b, link.b_port)]
        wiring.append((c, a_key, a_port, a_guid, b_key, b_port, b_guid))
    return tuple(wiring)


def ftree_role(settings: InfinibandSettings, group: str | None) -> str | None:
    """What ftree takes a CA port of the node group for: `io`, `compute`, or None (neither)."""
    if group in settings.io_groups:
        return "io"
    if settings.compute_groups is None or group in settings.compute_groups:
        return "compute"
    return None


def _ftree_roles(
    settings: InfinibandSettings, ports: Sequence[CaPort]
) -> tuple[tuple[CaPort, ...], tuple[CaPort, ...]]:
    compute, io = [], []
    for port in ports:
        role = ftree_role(settings, port.group)
        if role == "io":
            io.append(port)
        elif role == "compute":
            compute.append(port)
    return tuple(compute), tuple(io)


def _partitions(
    settings: InfinibandSettings, ports: Callable[[], Sequence[CaPort]], slowest: int | None
) -> list[PartitionPlan]:
    """`ports()`: the cabled CA ports in device order, read for a partition that lists its member groups;
    `slowest`: the slowest one's speed."""
    out: list[PartitionPlan] = []
    mtu = settings.mtu
    for part in settings.partitions:
        out.append(_partition(part, mtu, ports, slowest))
    if not any(p.pkey == DEFAULT_PKEY for p in settings.partitions):
        out.insert(
            0,
            PartitionPlan(
                "Default",
                DEFAULT_PKEY,
                False,
                mtu,
                MTU_CODES[mtu],
                None,
                None,
                "ALL",
                (),
                added=True,
                self_full=True,
            ),
        )
    return out


def _partition(
    part: Partition, mtu_default: int, ports: Callable[[], Sequence[CaPort]], slowest: int | None
) -> PartitionPlan:
    mtu = part.mtu or mtu_default
    members: list[Member] = []
    if part.members == "all":
        keyword = "ALL" if part.pkey == DEFAULT_PKEY else "ALL_CAS"
        speeds = [slowest] if slowest is not None else []  # (every port's: the slowest is their least)
    else:
        keyword = None
        full, limited = set(part.members), set(part.limited)
        listed = ports()
        for p in listed:
            if p.group in full or p.group in limited:
                members.append(
                    Member(p.guid, "full" if p.group in full else "limited", f"{p.node} ({p.group}){_mark(p)}")
                )
        chosen = {m.guid for m in members}
        speeds = [p.speed_gbps for p in listed if p.guid in chosen]
    rate = part.rate_gbps or (min(speeds) if speeds else slowest)
    return PartitionPlan(
        part.name,
        part.pkey,
        part.ipoib,
        mtu,
        MTU_CODES[mtu],
        rate,
        RATE_CODES.get(rate) if rate is not None else None,
        keyword,
        tuple(members),
    )


def _mark(port: CaPort) -> str:
    return " placeholder" if port.placeholder else ""
