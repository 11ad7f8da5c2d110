"""The allocated plan's facts as the intent builder reads them: by device, read once per build."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Container, Mapping

from fabric.allocation.allocate import Allocation, Interface, MlagPair, mlag_pairs
from fabric.fast.addresses import prefix_length
from fabric.intent.ethernet.model import FABRIC_PREFIX_HEADROOM, PrefixRule
from fabric.model.findings import Finding
from fabric.model.kinds import Tier
from fabric.model.topology import LAYER_RANK, Topology
from fabric.spec.loader import Design

NO_ADDRESSES: Mapping[tuple[str, str, int], Interface] = {}  # a device without addresses


def pairs_of(design: Design, topology: Topology) -> dict[str, tuple[MlagPair, int]]:
    """Each leaf of a `dual_homing: bond` fabric → (its pair, the pair's number in the fabric)."""
    pairs: dict[str, tuple[MlagPair, int]] = {}
    for key, ft in topology.fabrics.items():
        if design.spec.dual_homing(key) == "bond":
            for i, pair in enumerate(mlag_pairs(ft), start=1):
                pairs[pair.lower] = pairs[pair.upper] = (pair, i)
    return pairs


class PlanIndex:
    """Addresses, ASNs, MLAG pairs, cable lengths and resolved secrets, keyed the way the builder looks them up.
    `devices`: the switches whose addresses are looked up (None: every one; `fabric validate` makes one switch of
    each class, a few of 39,568 at a million GPUs, whose 10,000,000 addresses it then does not read)."""

    def __init__(
        self, design: Design, topology: Topology, plan: Allocation, devices: Container[str] | None = None
    ) -> None:
        self.design = design
        self.topology = topology
        self.findings: list[Finding] = []
        # device → (interface, purpose, IP version) → the first such address: per device, as a switch's intent
        # reads them (one dict keyed by all four misses the cache on every lookup); node ports' rows (half the
        # plan) are not looked up
        self.addresses: dict[str, dict[tuple[str, str, int], Interface]] = defaultdict(dict)
        self.v6 = False  # any IPv6 address in the plan (else no port looks one up)
        # each fabric's leaf subnets: out-of-band leaves hold management subnets, the others server subnets
        self.subnet_prefix: dict[str, int] = {}
        # fabric → the IPv4 prefixes its plan originates (loopbacks, nodes' loopbacks, leaf subnets)
        self.originated: Counter[str] = Counter()
        originated = self.originated
        addresses, gateways = self.addresses, ("server-gateway", "mgmt-gateway")
        counted = ("loopback", "host-loopback", *gateways)
        for row in plan.addresses:
            purpose = row.purpose
            if purpose == "server":
                continue
            counts = purpose in counted
            if devices is not None and not counts and self.v6 and row.device not in devices:
                continue  # an address no switch made here looks up, and nothing to count or learn from it
            address = row.address
            version = address.version
            if counts and version == 4:
                originated[row.fabric] += 1
            if devices is None or row.device in devices:
                addresses[row.device].setdefault((row.interface, purpose, version), address)
            if version == 6:
                self.v6 = True
            elif purpose in gateways:
                self.subnet_prefix.setdefault(row.fabric, address.network.prefixlen)
        self.rank = {name: LAYER_RANK[dev.layer] for name, dev in topology.devices.items()}
        self.allowed: dict[str, tuple[tuple[PrefixRule, ...], tuple[PrefixRule, ...]]] = {}  # per fabric
        self.first_hosts: dict[tuple[int, int, int], str] = {}  # (version, subnet's bits, prefix) → its first host
        self.asn = {row.device: row.asn for row in plan.asns}
        # fabric → the most links one routed node has in it (the paths to its loopback)
        self.routed_width: dict[str, int] = {}
        for key, ft in topology.fabrics.items():
            if design.spec.dual_homing(key) == "host_routing":
                per_node = Counter(link.a for link in ft.links if link.tier == Tier.NODE_LEAF)
                self.routed_width[key] = max(per_node.values(), default=0)
        self.pairs = pairs_of(design, topology)
        # switch → port → its cable's length; per switch, as a switch's intent reads them
        self.cable_m: dict[str, dict[str, float | None]] = defaultdict(dict)
        ethernet = {key for key, ft in topology.fabrics.items() if ft.technology == "ethernet"}
        cable_m = self.cable_m
        for cable in plan.cables if ethernet else ():  # (none to read in a design without Ethernet: 3,000,000 at 1M)
            link = cable.link
            if link.fabric in ethernet:
                if link.tier != Tier.NODE_LEAF:  # (the lower end of a node link is a node or a management port)
                    cable_m[link.a][link.a_port] = cable.length_m
                cable_m[link.b][link.b_port] = cable.length_m
        spec = design.spec
        self.snmp: str | None = None
        if spec.management.snmp_community is not None:
            secret = design.inputs.secrets["management.snmp_community"]
            self.snmp, problem = secret.value, secret.problem
            if problem:
                self.findings.append(problem)
        self.bgp_password: dict[str, str | None] = {}
        for key, fabric in spec.fabrics.items():
            ref = fabric.routing.bgp_password if fabric.routing else None
            if ref is not None:
                secret = design.inputs.secrets[f"fabrics.{key}.routing.bgp_password"]
                self.bgp_password[key], problem = secret.value, secret.problem
                if problem:
                    self.findings.append(problem)

    def maximum_prefix(self, key: str) -> int | None:
        """The prefix count past which a session of fabric `key` warns: FABRIC_PREFIX_HEADROOM times its plan's,
        rounded up to a power of two, so that growing the fabric rarely rewrites every switch's limit."""
        count = self.originated.get(key, 0)
        return 1 << (FABRIC_PREFIX_HEADROOM * count - 1).bit_length() if count else None

    def address(self, device: str, interface: str, purpose: str, version: int) -> Interface | None:
        return self.addresses.get(device, NO_ADDRESSES).get((interface, purpose, version))

    def first_host_text(self, address: Interface) -> str:
        """The first host of the address's subnet as text (the default management gateway), once per subnet:
        the switches share one, and making its network per switch is not free."""
        prefixlen = prefix_length(address)
        key = (address.version, int(address) >> (address.max_prefixlen - prefixlen), prefixlen)
        found = self.first_hosts.get(key)
        if found is None:
            found = self.first_hosts[key] = str(next(address.network.hosts()))
        return found
