"""Every finding code, declared once: its severities, the stages that raise it, what it checks, one line of
documentation. A finding with a code not listed here cannot be made (Finding checks), and docs/checks.md (the
checks table there) is generated from this table (tests/unit/model/test_codes.py verifies both, and that every code is
raised by a golden broken design, a bad input or a test).

Plain data: no imports of any stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Stage = Literal["spec", "topology", "analysis", "allocation", "intent", "render", "tools"]
Level = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class Code:
    """A finding code as the registry declares it: its severities, the stages that raise it and what it means."""

    code: str
    severities: tuple[Level, ...]
    stages: tuple[Stage, ...]  # where it is raised, in pipeline order
    checks: str  # what is checked (the README's column)
    doc: str  # one line: what the finding means for the user


def _c(code: str, severities: str, stages: str, checks: str, doc: str) -> Code:
    return Code(code, tuple(severities.split()), tuple(stages.split()), checks, doc)  # type: ignore[arg-type]


CODES: tuple[Code, ...] = (
    # ---- the spec: syntax, types, references (exit 2)
    _c(
        "spec-unreadable",
        "error",
        "spec",
        "the spec file can be read and parsed as YAML",
        "fix the YAML syntax or the path",
    ),
    _c("spec-invalid", "error", "spec topology", "field types and values", "a value has the wrong type or range"),
    _c("spec-missing", "error", "spec", "required fields are present", "add the missing key"),
    _c("spec-unknown-key", "error", "spec", "no unknown keys (the nearest valid key is suggested)", "fix the typo"),
    _c("catalog-unreadable", "error", "spec", "part files can be read and parsed", "fix the part file's path or YAML"),
    _c("catalog-invalid", "error", "spec", "part file field types and values", "a part file value is wrong"),
    _c("catalog-missing", "error", "spec", "part files have their required fields", "add the missing key"),
    _c("catalog-unknown-key", "error", "spec", "part files have no unknown keys", "fix the typo in the part file"),
    _c(
        "catalog-duplicate-port",
        "error",
        "spec",
        "a part file's port names are unique per switch model and mode (in every platform's names) and per node type",
        "two ports of a part share a name: two cables would land on one port; fix the name template",
    ),
    _c("catalog-override", "info", "spec", "which built-in parts a part file replaces", "a part file replaced a part"),
    _c("unknown-part", "error", "spec topology", "switch models and node types exist in the catalog", "name a part"),
    _c("unknown-group", "error", "spec", "attached and referenced node groups exist", "name a node group"),
    _c("unknown-ports", "error", "spec", "attached port groups exist on the node type", "name a port group"),
    _c("unknown-fabric", "error", "spec", "a switch-management attachment names a fabric", "name a fabric"),
    _c("technology-mismatch", "error", "spec topology", "parts and ports fit the fabric's technology", "pick parts"),
    _c("platform-unsupported", "error", "spec", "a platform is given only where it applies", "drop the platform"),
    _c("duplicate-name", "error", "spec topology", "device names are unique", "rename one of the devices"),
    _c("duplicate-pkey", "error", "spec", "InfiniBand partition keys are unique per fabric", "give each its own pkey"),
    _c(
        "scheduler-group-unattached",
        "warning",
        "spec",
        "scheduler node groups are attached to the scheduler fabric",
        "its nodes are under no switch of the Slurm and Kubernetes topology",
    ),
    _c(
        "too-large",
        "error",
        "spec",
        "no fabric attaches more node ports than any Clos of its switches can connect; the design's nodes, node "
        "ports, links and counted switch ports stay within the limits on total work",
        "refused before anything is built: fewer nodes, a larger switch or more planes",
    ),
    _c(
        "invalid-name",
        "error",
        "topology",
        "names are still valid names once naming templates are expanded",
        "shorten the template or the prefix",
    ),
    _c("mgmt-cycle", "error", "topology", "switch-management attachments have no cycle", "break the cycle"),
    # ---- the topology can be built
    _c("empty-fabric", "error", "topology", "a fabric attaches something", "attach a node group"),
    _c(
        "radix",
        "error",
        "topology",
        "the switch radix and the tiers can join every leaf at the target",
        "use a larger switch or more tiers",
    ),
    _c(
        "port-budget",
        "error",
        "topology analysis",
        "ports per switch; a port used twice (also across fabrics)",
        "fewer links per switch",
    ),
    _c("uneven-spread", "error", "topology", "uplinks spread evenly over the spines", "change uplinks or spines"),
    _c("rail-alignment", "error warning", "topology analysis", "a leaf carries one rail", "align rails to leaves"),
    _c("csv-unreadable", "error", "topology", "an imported cabling CSV can be read", "fix the CSV's path"),
    _c("csv-invalid", "error", "topology", "an imported cabling CSV's header and rows", "fix the CSV row"),
    _c("unknown-device", "error", "topology", "links of a hand-written fabric name its devices", "name a device"),
    _c("unknown-port", "error", "topology", "links of a hand-written fabric name real ports", "name a port"),
    _c("speed-mismatch", "warning", "topology", "both ends of a link run at one speed", "match the speeds"),
    _c("tier-skip", "error", "topology", "links join adjacent layers", "cable leaf to spine, spine to core"),
    _c("unconnected", "error warning", "topology", "attached ports have a cable", "cable the port or detach it"),
    _c("unknown-rack", "error", "topology", "a pinned rack exists", "name a rack of the layout"),
    # ---- analysis of the graph
    _c(
        "oversubscription",
        "error",
        "analysis",
        "down:up bandwidth per switch and per tier against the target; switches below the top tier without uplinks",
        "add uplinks or spines",
    ),
    _c(
        "overbuild",
        "warning",
        "analysis",
        "2-tier leaves with more uplink than connected downlink bandwidth, the surplus adding up to a spine or more",
        "fewer uplinks (`topology.uplinks`), or fuller leaves (`scalable_unit`, `partial_su: populated`)",
    ),
    _c(
        "bisection",
        "error",
        "analysis",
        "bisection bandwidth against what the oversubscription target promises",
        "add spine capacity",
    ),
    _c(
        "bisection-mismatch",
        "warning",
        "analysis",
        "the graph gives the bisection the Clos formula gives (a generated fabric)",
        "report it",
    ),
    _c(
        "ecmp",
        "error warning",
        "analysis",
        "up-down paths between every pair of leaves of a plane: none (error), fewer than a leaf's uplinks (warning)",
        "cable every leaf up",
    ),
    _c(
        "failure-impact",
        "warning",
        "analysis",
        "the worst single spine/core or uplink failure leaves at least 50 % of the bisection",
        "add spines",
    ),
    _c("disconnected", "error", "analysis", "a fabric is one connected island", "cable the islands together"),
    _c("rack-space", "error", "topology analysis", "rack units, without overlaps", "more racks, or fewer per rack"),
    _c("rack-power", "error", "analysis", "power per rack", "more racks, or a higher power_kw"),
    _c(
        "nvlink-domain-partial",
        "warning",
        "analysis",
        "a rack-scale NVLink system's rack holds all its compute trays (DGX GB200 NVL72: 18), one NVLink domain",
        "set the group's per_rack to the system's trays and its count to a multiple of them",
    ),
    _c(
        "nvlink-domain-split",
        "warning",
        "analysis",
        "an NVLink domain's trays sit under one lowest switch group of the scheduler fabric, so that Slurm's blocks, "
        "the Kubernetes levels and job placement see the domain",
        "make the scalable unit the system's trays (or a multiple of them), so that a rack's trays share their leaves",
    ),
    # ---- allocation
    _c(
        "address-pool",
        "error",
        "allocation",
        "address pools are large enough (how many are needed, how many the pool has)",
        "a larger pool",
    ),
    _c("asn-range", "error", "allocation", "ASNs lie in the private ranges", "move the ASNs into a private range"),
    _c(
        "cable-reach",
        "error",
        "topology allocation",
        "every cable has an allowed medium that carries its speed and reaches its length",
        "allow a medium",
    ),
    _c(
        "optics-missing",
        "warning",
        "allocation",
        "every optical (mmf, smf) link end has a catalog transceiver that fits its cage (connector, thermal top, "
        "ports per cage) and carries its medium and speed",
        "the BOM lacks those transceivers: add a fitting part (`catalog:` part file) or allow copper/AOC media",
    ),
    _c(
        "cage-mixed-mode",
        "warning",
        "allocation",
        "the links in one cage share one signalling (lane rate): no HDR 50G-PAM4 port in an NDR 100G-PAM4 cage",
        "a link of the other signalling does not come up: give that device a cage of its own (2 x 200G splitter)",
    ),
    _c(
        "optics-signalling",
        "error",
        "allocation",
        "both transceivers of an optical link run one lane rate on the fibre that neither cage's native rate is "
        "below (catalog transceivers `lane_gbps`): no QSFP28 100G 4 x 25G NRZ module to a 2 x 400G 100G-PAM4 one, "
        "no HDR to NDR",
        "the link does not come up: give both ends ports of one signalling, or a transceiver that meets both",
    ),
    _c(
        "cage-plugs",
        "warning",
        "allocation",
        "a cage takes one plug that fits it: the links in a twin-port cage ride one transceiver or one twin-port "
        "cable, and a cable's plugs (catalog media `ends`) fit the cages at both ends",
        "let the cage's links take one medium (fibre with a twin-port transceiver), or give the medium that fits",
    ),
    _c(
        "nic-port-speed",
        "warning",
        "allocation",
        "a node port runs its link's speed on that technology (ConnectX-8: no 800GbE on one port)",
        "run the NIC's port at the speed it supports (ConnectX-8: 2 x 400GbE), or use InfiniBand XDR",
    ),
    _c("duplicate-address", "error", "allocation", "no address is assigned twice; pools disjoint", "split pools"),
    _c("duplicate-asn", "error", "allocation", "only switches of one tier share an ASN", "own asn.leaf_start"),
    # ---- intent
    _c("secret-missing", "error", "intent", "secret references resolve", "set the variable or create the file"),
    _c(
        "platform-capability",
        "error warning",
        "intent",
        "a switch's platform can do what the spec asks (BGP unnumbered, RoCE profile, breakouts: error; "
        "PFC watchdog: warning)",
        "another platform",
    ),
    _c(
        "lossless-mismatch",
        "error",
        "intent",
        "every hop of a RoCE path (server NIC, leaf, spine, core) agrees on the lossless profile: DSCP map, "
        "lossless priority with PFC on the port, ECN queue, CNP DSCP and priority; host MTU ≤ every switch MTU",
        "a hop that breaks RoCE's lossless class (named in the finding); one `qos` and `mtu` per fabric feed every "
        "hop, so a mismatch is a bug to report",
    ),
    _c(
        "not-supported",
        "warning",
        "intent",
        "settings the spec accepts that have no effect yet (`sharp`, `adaptive_routing`)",
        "drop the setting",
    ),
    _c(
        "ftree-admissible",
        "error",
        "intent",
        "an ftree-routed fabric is a fat tree OpenSM's ftree accepts: 2–8 switch ranks, every switch on its "
        "planned rank counted from the roots, LMC 0, at least one compute node",
        "fix the tree or use updn",
    ),
    _c(
        "sm-flavor",
        "error warning",
        "intent",
        "the routing engines are ones the SM hosts' OpenSM has: the adaptive-routing engines (`ar_updn`, "
        "`ar_ftree`) are NVIDIA's OpenSM's (UFM) only; upstream OpenSM skips them (error when no other engine is "
        "left, so the fabric stays unrouted)",
        "set `sm.flavor: ufm` if the SM hosts run UFM, or list an upstream engine",
    ),
    _c("placeholder-guids", "warning", "intent", "which GUIDs are placeholders", "collect an inventory"),
    _c("inventory-unreadable", "error", "intent", "the GUID inventory can be read", "fix the inventory's path"),
    _c("inventory-format", "error", "intent", "the GUID inventory's header and rows", "fix the inventory row"),
    _c("inventory-guid", "error", "intent", "inventory GUIDs are well-formed", "fix the GUID"),
    _c("inventory-unknown", "warning", "intent", "inventory rows name plan devices", "fix the device names"),
    _c("duplicate-guid", "error", "intent", "no GUID twice in a subnet or inventory", "fix the inventory"),
    _c("sm-host", "error", "intent", "subnet-manager hosts have a port in the fabric", "name an attached host"),
    _c(
        "no-subnet-manager",
        "warning",
        "intent",
        "an InfiniBand fabric names the hosts that run its subnet manager (`infiniband.sm.hosts`)",
        "without a running SM the ports stay in INIT: name UFM appliances or attached nodes",
    ),
    _c("empty-partition", "warning", "intent", "partitions have members", "name member groups"),
    _c("partition-rate", "error", "intent", "partitions have a real IB rate", "use an IBTA rate"),
    _c(
        "secret-invalid",
        "error",
        "spec intent",
        "a secret from `env` or `file` is one word of printable text",
        "fix the secret: it goes into one config word",
    ),
    # ---- writing: the output directory (exit 2, nothing written)
    _c(
        "output-foreign",
        "error",
        "render",
        "a rebuild replaces only what fabric wrote into the output directory (its marker and manifest)",
        "move your files out of the output directory, or choose another -o",
    ),
    _c(
        "output-holds-input",
        "error",
        "render",
        "the output directory holds no input of the build (spec, part files, CSVs, inventories, secrets, lock)",
        "choose an output directory that holds none of the build's files",
    ),
    _c(
        "output-path",
        "error",
        "render",
        "the output path is one the filesystem can hold (name and path length)",
        "choose a shorter output path",
    ),
    _c(
        "output-refused",
        "error",
        "render",
        "every output path stays inside the output directory",
        "a path that could land outside the output was refused; please report",
    ),
    _c(
        "output-modified",
        "error",
        "render",
        "a rebuild replaces no file fabric wrote that was edited since (the manifest's content digests)",
        "move your edits out of the output directory, or delete the edited files to have them written anew",
    ),
    # ---- growth: the allocations lock of an earlier build
    _c(
        "lock-invalid",
        "error",
        "spec allocation",
        "a lock given to a build (allocations.lock.json) can be read and is a valid lock",
        "give the lock a build wrote, or build with --no-lock",
    ),
    _c(
        "lock-design",
        "error warning",
        "spec",
        "a lock given with --lock is the lock of the design built (a warning with --allow-moves: a renamed design)",
        "give this design's lock, build with --no-lock, or keep the other design's with --allow-moves",
    ),
    _c(
        "lock-move",
        "error warning",
        "allocation",
        "a build with a lock keeps every locked cable, address, ASN, name and rack position",
        "the change would move what runs: grow so that it only adds, or accept with --allow-moves",
    ),
    # ---- render (defence in depth: the loader should have refused the value)
    _c(
        "render-unsafe-value",
        "error",
        "render",
        "every value reaching an output is one line of printable text",
        "rendering is refused; fix the value (and report that the loader let it through)",
    ),
    _c(
        "render-worker-died",
        "error",
        "render",
        "every render worker returns its task (none is killed: the OOM killer, a signal)",
        "the build ends at once (exit 3), the old output kept: the finding names the output the worker was "
        "rendering and its peak memory; build with fewer workers or more memory",
    ),
    _c(
        "ecmp-shortfall",
        "warning",
        "analysis",
        "static ECMP delivers a whole-cluster job's (at most 2,048 NIC ports) ring all-reduce or all-to-all at "
        "least traffic.ecmp_warning_pct % of what adaptive routing does (the traffic model: hashed queue pairs, "
        "max-min fair sharing); on a design of small fabrics only (320 switches or fewer each) when the spec sets "
        "traffic.ecmp_warning_pct",
        "more queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION, traffic.qps) or adaptive routing / packet "
        "spraying where the switches support it; the finding gives the figures of each",
    ),
    # ---- tools
    _c("discovered-format", "error", "tools", "ibnetdiscover and LLDP input can be parsed", "fix the input"),
    _c(
        "diff-input-invalid",
        "error",
        "tools",
        "the output directories `fabric diff` compares hold fabric's tables and configs: regular files (no symbolic "
        "link), bounded, with their columns, one line of printable text per field",
        "`fabric diff` exits 2; compare the directories `fabric build` wrote, or the two specs",
    ),
)

BY_CODE: Mapping[str, Code] = {c.code: c for c in CODES}
