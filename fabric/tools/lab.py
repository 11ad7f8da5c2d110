"""A live digital twin: boot a fabric's generated FRR configs in Linux network namespaces.

One namespace per switch and per server, veth pairs wired exactly as the cabling plan says, zebra and
bgpd per switch loading the switch's generated frr.conf; a server that routes on the host (`dual_homing:
host_routing`) gets the addresses of its generated netplan.yaml and runs zebra and bgpd on its frr.conf.
A RoCE server with several rail NICs is set up from its generated host files, as netplan and sysctl
would: each NIC's MTU and addresses, its own routing table and source rule (netplan's `routes` with
`table`, its `routing-policy`), and sysctl.conf's settings. Everything a lab creates is written to its
state file first, so `down` (or a test's teardown) removes exactly that, also after a failure. Only
addresses inside the lab's own namespaces are used. Facts on running FRR this way:
shared/reference/frr-netns.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from ipaddress import ip_interface
from pathlib import Path

import yaml

from fabric.model.kinds import Layer, Tier
from fabric.pipeline import Build
from fabric.render import render_all
from fabric.write.atomic import OutputError, output_parts

FRR_DIR = Path("/usr/lib/frr")
STATE_ROOT = Path("/run/fabric-lab")


def state_name(name: str) -> str:
    """A design or device name as one directory name under the lab's state, or LabError: the writer's path
    rule (one line of printable text, no `..`, no separator), so no name can reach outside the state."""
    try:
        parts = output_parts(name)
    except OutputError as exc:
        raise LabError(str(exc)) from None
    if len(parts) != 1:
        raise LabError(f"refusing to use {name!r} as a directory name: it holds a `/`")
    return name


FRR_DAEMONS = ("zebra", "bgpd", "bfdd")  # what the lab starts, and so what it may stop
MAX_SWITCHES = 40
MAX_LINKS = 200  # veth ends beyond this overflow the kernel's shared neighbour table (gc_thresh3 = 1024)
MIB_PER_SWITCH = 25  # zebra + bgpd resident memory, measured
SWITCH_SYSCTLS = (
    "net.ipv4.ip_forward=1",
    "net.ipv6.conf.all.forwarding=1",
    "net.ipv4.conf.all.rp_filter=0",
    "net.ipv4.conf.default.rp_filter=0",
    "net.ipv6.conf.default.accept_dad=0",
    "net.ipv6.conf.all.accept_dad=0",
    "net.ipv4.fib_multipath_hash_policy=1",
    "net.ipv6.fib_multipath_hash_policy=1",
)


class LabError(Exception):
    """The lab cannot run here (not root, no FRR, too large) or a step failed: one clear message."""


def run(*args: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise LabError(f"`{' '.join(args)}` failed: {(result.stderr or result.stdout).strip()}")
    return result


def preflight(switches: int, links: int) -> None:
    """Refuse, with the reason, what this machine cannot run."""
    if os.geteuid() != 0:
        raise LabError("the lab needs root (network namespaces, veth pairs): run it with sudo")
    missing = [d for d in ("zebra", "bgpd") if not (FRR_DIR / d).exists()] + (
        [] if shutil.which("vtysh") else ["vtysh"]
    )
    if missing:
        raise LabError(f"FRR is not installed ({', '.join(missing)} missing): apt-get install frr")
    if switches > MAX_SWITCHES or links > MAX_LINKS:
        raise LabError(
            f"the fabric has {switches} switches and {links} switch links; the lab holds at most {MAX_SWITCHES} "
            f"switches and {MAX_LINKS} links (each switch runs zebra and bgpd, about {MIB_PER_SWITCH} MiB; more "
            "links overflow the kernel's shared neighbour table)"
        )
    free = _available_mib()
    if free is not None and switches * MIB_PER_SWITCH > free:
        raise LabError(f"{switches} switches need about {switches * MIB_PER_SWITCH} MiB; {free} MiB are available")


def _available_mib() -> int | None:
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return None


def vty(path: Path, command: str, timeout: float = 10, enable: bool = False) -> str:
    """One command over an FRR daemon's vty socket (what vtysh does, without starting vtysh); `enable`: enter
    the enable node first (bfdd's `show` commands live only there)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        data = b""
        for line in ("enable", command) if enable else (command,):
            sock.sendall(line.encode() + b"\0")
            data = b""
            while not (len(data) >= 4 and data[-4:-1] == b"\0\0\0"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
    return data[:-4].decode(errors="replace")


# --------------------------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class Wire:
    a_ns: str
    a_port: str
    b_ns: str
    b_port: str
    mtu: int


@dataclass(frozen=True)
class HostRoute:
    """One of netplan's `routes` entries that names a table: `ip route add TO [via VIA] dev PORT [scope S] table T`."""

    port: str
    to: str
    via: str | None
    scope: str | None
    table: int


@dataclass(frozen=True)
class HostRule:
    """One of netplan's `routing-policy` entries: `ip rule add from SOURCE table T priority P`."""

    source: str
    table: int
    priority: int


@dataclass
class LabPlan:
    """What to create, derived from a Build: namespaces, wires, bridges, addresses, daemons."""

    name: str
    prefix: str
    switches: dict[str, str] = field(default_factory=dict)  # device → namespace
    hosts: dict[str, str] = field(default_factory=dict)
    wires: list[Wire] = field(default_factory=list)
    bridges: dict[str, list[str]] = field(default_factory=dict)  # switch namespace → bridged server ports
    host_addresses: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # host ns → [(port, CIDR)]
    host_routes: dict[str, list[str]] = field(default_factory=dict)  # host ns → gateways
    # RoCE servers, from their generated netplan.yaml and sysctl.conf: host ns → …
    host_mtus: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # (port, MTU)
    host_table_routes: dict[str, list[HostRoute]] = field(default_factory=dict)
    host_rules: dict[str, list[HostRule]] = field(default_factory=dict)
    host_sysctls: dict[str, list[str]] = field(default_factory=dict)  # key=value
    switch_addresses: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # for platforms whose
    # frr.conf does not carry addresses (SONiC): the lab applies the plan's, as SONiC's intfmgrd would
    configs: dict[str, bytes] = field(default_factory=dict)  # device → frr.conf
    bgp_hosts: dict[str, str] = field(default_factory=dict)  # servers that route on the host → namespace
    host_prefixes: dict[str, list[str]] = field(default_factory=dict)  # routing server → its loopback
    leaves: list[str] = field(default_factory=list)
    spines: list[str] = field(default_factory=list)
    expected_peers: dict[str, int] = field(default_factory=dict)  # BGP sessions, every address family's
    # routing server → the ECMP width of its routes: its IPv4 sessions (a numbered dual-stack port has 2 sessions)
    host_widths: dict[str, int] = field(default_factory=dict)
    bfd: list[str] = field(default_factory=list)  # devices whose frr.conf asks for BFD: they also run bfdd
    leaf_prefixes: dict[str, list[str]] = field(default_factory=dict)  # leaf → prefixes it originates
    leaf_prefixes_v6: dict[str, list[str]] = field(default_factory=dict)  # and its IPv6 ones (when exchanged)
    uplinks: dict[str, int] = field(default_factory=dict)


def plan_lab(build: Build, fabric: str | None = None, prefix: str = "fab-") -> LabPlan:
    """The lab of one Ethernet fabric of `build` whose switches have an frr.conf."""
    files = render_all(build)
    candidates = [
        key
        for key, ft in build.topology.fabrics.items()
        if ft.technology == "ethernet" and ft.switches and all(f"configs/{s}/frr.conf" in files for s in ft.switches)
    ]
    if fabric is None:
        if not candidates:
            raise LabError("no Ethernet fabric of this design renders frr.conf (use platform frr or sonic)")
        fabric = candidates[0]
    elif fabric not in candidates:
        raise LabError(f"fabric `{fabric}` cannot boot in the lab; these can: {', '.join(candidates) or 'none'}")
    ft = build.topology.fabrics[fabric]
    lab = LabPlan(build.name, prefix)
    for name in ft.switches:
        lab.switches[name] = prefix + name
        lab.configs[name] = files[f"configs/{name}/frr.conf"]
    intents = build.intents
    for link in ft.links:
        if link.tier == Tier.NODE_LEAF:
            lab.hosts.setdefault(link.a, prefix + "h-" + link.a)
            lab.wires.append(Wire(lab.hosts[link.a], link.a_port, lab.switches[link.b], link.b_port, 9000))
            routed = f"hosts/{link.a}/frr.conf" in files
            if routed and link.a not in lab.bgp_hosts:
                lab.bgp_hosts[link.a] = lab.hosts[link.a]
                lab.configs[link.a] = files[f"hosts/{link.a}/frr.conf"]
                lab.host_addresses[lab.hosts[link.a]] = _netplan_addresses(files[f"hosts/{link.a}/netplan.yaml"])
                lab.expected_peers[link.a] = len(build.hosts[link.a].neighbors)
                lab.host_widths[link.a] = sum(1 for n in build.hosts[link.a].neighbors if not n.v6)
                lab.host_prefixes[link.a] = [str(build.hosts[link.a].loopback_v4.network)]
                if build.hosts[link.a].bfd:
                    lab.bfd.append(link.a)
            elif not routed:
                lab.bridges.setdefault(lab.switches[link.b], []).append(link.b_port)
        else:
            lab.wires.append(Wire(lab.switches[link.a], link.a_port, lab.switches[link.b], link.b_port, 9216))
    rail_ports: dict[str, list[str]] = defaultdict(list)
    for link in ft.links:
        if link.tier == Tier.NODE_LEAF and link.a in build.roce and link.a not in lab.bgp_hosts:
            rail_ports[link.a].append(link.a_port)
    for node, ports in rail_ports.items():
        _roce_host(lab, lab.hosts[node], ports, files[f"hosts/{node}/netplan.yaml"], files[f"hosts/{node}/sysctl.conf"])
    for row in build.allocation.addresses:
        if row.fabric != fabric:
            continue
        if row.purpose == "server" and row.device in lab.hosts and row.device not in {*lab.bgp_hosts, *rail_ports}:
            lab.host_addresses.setdefault(lab.hosts[row.device], []).append((row.interface, str(row.address)))
        elif row.device in lab.switches and intents[row.device].platform != "frr" and row.purpose != "mgmt":
            interface = "lo" if row.interface == "lo" else row.interface
            lab.switch_addresses.setdefault(lab.switches[row.device], []).append((interface, str(row.address)))
    gateways: dict[str, list[str]] = {}
    for name in ft.switches:
        intent = intents[name]
        if intent.servers:
            gateways[name] = [
                str(ip_interface(a).ip) for a in (intent.servers.gateway_v4, intent.servers.gateway_v6) if a
            ]
    for link in ft.links:
        # a server with several rail NICs has no main-table default (its netplan's tables route by source address;
        # its default would come from an in-band or management interface); a one-NIC server keeps the leaf's
        if link.tier == Tier.NODE_LEAF and len(rail_ports.get(link.a, ())) < 2:
            lab.host_routes.setdefault(lab.hosts[link.a], gateways.get(link.b, []))
    for name in ft.switches:
        intent = intents[name]
        if intent.layer == Layer.LEAF:
            lab.leaves.append(name)
            lab.leaf_prefixes[name] = [str(p) for p in intent.bgp.networks] if intent.bgp else []
            lab.leaf_prefixes_v6[name] = [str(p) for p in intent.bgp.networks_v6] if intent.bgp else []
            lab.uplinks[name] = sum(1 for p in intent.used_ports if p.role == "uplink")
        else:
            lab.spines.append(name)
        lab.expected_peers[name] = len(intent.bgp.neighbors) if intent.bgp else 0
        if intent.bgp is not None and intent.bgp.bfd:
            lab.bfd.append(name)
    return lab


def _netplan_addresses(text: bytes) -> list[tuple[str, str]]:
    """(interface, CIDR) of every address a generated netplan file gives, as `netplan apply` would set them."""
    data = yaml.safe_load(text)
    return [
        (name, str(address))
        for name, entry in data["network"]["ethernets"].items()
        for address in entry.get("addresses", ())
    ]


def _roce_host(lab: LabPlan, ns: str, ports: list[str], netplan: bytes, sysctl: bytes) -> None:
    """A RoCE server's addresses, MTUs, per-NIC tables and rules (of its ports in this fabric) from its generated
    netplan.yaml, and its sysctls from its sysctl.conf."""
    ethernets = yaml.safe_load(netplan)["network"]["ethernets"]
    for port in ports:
        entry = ethernets.get(port)
        if entry is None:
            continue
        if "mtu" in entry:
            lab.host_mtus.setdefault(ns, []).append((port, int(entry["mtu"])))
        for address in entry.get("addresses", ()):
            lab.host_addresses.setdefault(ns, []).append((port, str(address)))
        for route in entry.get("routes", ()):
            lab.host_table_routes.setdefault(ns, []).append(
                HostRoute(port, str(route["to"]), route.get("via"), route.get("scope"), int(route.get("table", 254)))
            )
        for rule in entry.get("routing-policy", ()):
            lab.host_rules.setdefault(ns, []).append(
                HostRule(str(rule["from"]), int(rule["table"]), int(rule["priority"]))
            )
    for line in sysctl.decode().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith(("#", ";")):
            lab.host_sysctls.setdefault(ns, []).append(f"{key.strip()}={value.strip()}")


# --------------------------------------------------------------------------------------------- running


class Lab:
    """A running (or to-be-run) lab; its state directory records everything it creates."""

    def __init__(self, plan: LabPlan, state_dir: Path) -> None:
        self.plan = plan
        self.dir = state_dir
        self.state_file = state_dir / "state.json"
        self.created_ns: list[str] = []
        self.saved_sysctls: dict[str, str] = {}

    # ---- bookkeeping: written before acting, so cleanup knows everything
    def _save(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        state = {
            "design": self.plan.name,
            "namespaces": self.created_ns,
            "switches": self.plan.switches,
            "hosts": self.plan.hosts,
            "bgp_hosts": self.plan.bgp_hosts,
            "host_prefixes": self.plan.host_prefixes,
            "leaves": self.plan.leaves,
            "expected_peers": self.plan.expected_peers,
            "host_widths": self.plan.host_widths,
            "leaf_prefixes": self.plan.leaf_prefixes,
            "uplinks": self.plan.uplinks,
        }
        self.state_file.write_text(json.dumps(state, indent=2, sort_keys=True))

    def switch_dir(self, device: str) -> Path:
        return self.dir / state_name(device)

    def check_free(self) -> None:
        if self.state_file.exists():
            raise LabError(f"a lab is running in {self.dir} already; take it down first")

    def up(self) -> float:
        """Create everything and start FRR; returns seconds taken."""
        start = time.monotonic()
        self.check_free()
        if self.plan.bfd and not (FRR_DIR / "bfdd").exists():
            raise LabError(f"routing.bfd is on and FRR's bfdd is missing ({FRR_DIR / 'bfdd'}): apt-get install frr")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.dir.chmod(0o755)  # zebra and bgpd run as user frr
        self._save()
        for ns in [*self.plan.switches.values(), *self.plan.hosts.values()]:
            self.created_ns.append(ns)
            self._save()
            run("ip", "netns", "add", ns)
            run("ip", "-n", ns, "link", "set", "dev", "lo", "up")
        for ns in self.plan.switches.values():
            run("ip", "netns", "exec", ns, "sysctl", "-qw", *SWITCH_SYSCTLS)
        for ns in self.plan.hosts.values():
            run(
                "ip",
                "netns",
                "exec",
                ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.accept_dad=0",
                "net.ipv6.conf.default.accept_dad=0",
                # a server's port set down loses its IPv6 addresses (the kernel's default), which networkd would
                # put back when it comes up; the lab has no networkd, so the kernel keeps them (a numbered IPv6
                # session comes back with its link, as on a server)
                "net.ipv6.conf.all.keep_addr_on_down=1",
            )
        for i, wire in enumerate(self.plan.wires):
            a, b = f"flv{os.getpid() % 10000}a{i}", f"flv{os.getpid() % 10000}b{i}"
            run("ip", "link", "add", "name", a, "type", "veth", "peer", "name", b)
            for tmp, ns, port in ((a, wire.a_ns, wire.a_port), (b, wire.b_ns, wire.b_port)):
                run("ip", "link", "set", "dev", tmp, "netns", ns)
                run("ip", "-n", ns, "link", "set", "dev", tmp, "name", port)
                run("ip", "-n", ns, "link", "set", "dev", port, "mtu", str(wire.mtu))
                run("ip", "-n", ns, "link", "set", "dev", port, "up")
        for ns, ports in self.plan.bridges.items():
            run("ip", "-n", ns, "link", "add", "name", "servers", "type", "bridge")
            for port in ports:
                run("ip", "-n", ns, "link", "set", "dev", port, "master", "servers")
            run("ip", "-n", ns, "link", "set", "dev", "servers", "up")
        for ns, addresses in self.plan.switch_addresses.items():
            for interface, address in addresses:
                run("ip", "-n", ns, "address", "add", address, "dev", interface)
        for ns, sysctls in self.plan.host_sysctls.items():
            run("ip", "netns", "exec", ns, "sysctl", "-qw", *sysctls)
        for ns, mtus in self.plan.host_mtus.items():
            for port, mtu in mtus:
                run("ip", "-n", ns, "link", "set", "dev", port, "mtu", str(mtu))
        for ns, addresses in self.plan.host_addresses.items():
            for port, address in addresses:
                run("ip", "-n", ns, "address", "add", address, "dev", port)
        for ns in self.plan.host_rules.keys() | self.plan.host_table_routes.keys():
            self.apply_host_policy(ns)
        for ns, gateways in self.plan.host_routes.items():
            for gateway in gateways:
                family = "-6" if ":" in gateway else "-4"
                run("ip", "-n", ns, family, "route", "add", "default", "via", gateway)
        routers = {**self.plan.switches, **self.plan.bgp_hosts}
        for device, ns in routers.items():
            self._start_frr(device, ns)
        for device, ns in routers.items():
            d = self.switch_dir(device)
            run("ip", "netns", "exec", ns, "vtysh", "--vty_socket", str(d), "--config_dir", str(d), "-b", timeout=60)
        return time.monotonic() - start

    def apply_host_policy(self, ns: str, version: int | None = None) -> None:
        """A RoCE server's per-NIC tables and source rules, as its netplan.yaml gives them (one IP version's
        only, when `version` says which)."""
        for route in self.plan.host_table_routes.get(ns, ()):
            family = "-6" if ":" in route.to else "-4"
            if version is not None and family != f"-{version}":
                continue
            via = ("via", route.via) if route.via else ()
            scope = ("scope", route.scope) if route.scope else ()
            run(
                "ip",
                "-n",
                ns,
                family,
                "route",
                "add",
                route.to,
                *via,
                "dev",
                route.port,
                *scope,
                "table",
                str(route.table),
            )
        for rule in self.plan.host_rules.get(ns, ()):
            family = "-6" if ":" in rule.source else "-4"
            if version is not None and family != f"-{version}":
                continue
            run(
                "ip",
                "-n",
                ns,
                family,
                "rule",
                "add",
                "from",
                rule.source,
                "table",
                str(rule.table),
                "priority",
                str(rule.priority),
            )

    def _start_frr(self, device: str, ns: str) -> None:
        d = self.switch_dir(device)
        (d / "tmp").mkdir(parents=True, exist_ok=True)
        (d / "frr.conf").write_bytes(self.plan.configs[device])
        (d / "vtysh.conf").write_text("service integrated-vtysh-config\n")
        (d / "empty.conf").write_text("")
        run("chown", "-R", "frr:frr", str(d))
        # bfdd (when the config asks for BFD) gets its own control socket: its default path is shared by every
        # switch; it starts before the config loads, as frrinit.sh starts the daemons /etc/frr/daemons names
        extra = {"zebra": " -s 90000000", "bfdd": f" --bfdctl {d}/bfdd.sock"}
        daemons = " && ".join(
            f"{FRR_DIR / daemon} -d -F datacenter --vty_socket {d} -z {d}/zserv.api -f {d}/empty.conf -P 0 "
            f"-i {d}/{daemon}.pid --log file:{d}/{daemon}.log" + extra.get(daemon, "")
            for daemon in ("zebra", "bgpd", *(("bfdd",) if device in self.plan.bfd else ()))
        )
        script = f"hostname {device} && mount -n --bind {d}/tmp /var/tmp && {daemons}"
        run(
            "ip",
            "netns",
            "exec",
            ns,
            "unshare",
            "--uts",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-ec",
            script,
            timeout=60,
        )

    # ---- observing
    def bgp(self, device: str, command: str) -> object:
        return json.loads(vty(self.switch_dir(device) / "bgpd.vty", command) or "{}")

    def zebra(self, device: str, command: str) -> object:
        return json.loads(vty(self.switch_dir(device) / "zebra.vty", command) or "{}")

    def bfd(self, device: str, command: str) -> object:
        """A command to the device's bfdd (running only where the config asks for BFD)."""
        return json.loads(vty(self.switch_dir(device) / "bfdd.vty", command, enable=True) or "{}")

    def status(self) -> LabStatus:
        return lab_status(self.dir)

    def wait_converged(self, timeout: float = 90, poll: float = 0.1) -> float:
        """Seconds until every session is up and every leaf has every other leaf's prefixes at full width."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            status = self.status()
            if status.converged:
                return time.monotonic() - start
            time.sleep(poll)
        raise LabError(f"the fabric did not converge in {timeout:g} s:\n{self.status().describe()}")

    # ---- tearing down
    def down(self) -> None:
        teardown(self.dir)


@dataclass
class LabStatus:
    sessions: dict[str, tuple[int, int]]  # switch (and routing server) → (established, expected)
    ecmp: dict[str, dict[str, int]]  # leaf → remote prefix → installed next hops
    widths: dict[str, int]  # leaf → its uplinks (the width every remote prefix should have)
    # routing servers: server → another server's loopback → installed next hops (full width: one per leaf)
    host_ecmp: dict[str, dict[str, int]] = field(default_factory=dict)
    host_widths: dict[str, int] = field(default_factory=dict)
    # devices short of sessions: device → each session not up (its peer) → "state, last reset (neighbour address)"
    waiting: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def converged(self) -> bool:
        if not self.sessions or any(up != want for up, want in self.sessions.values()):
            return False
        return all(
            all(w == self.widths[leaf] for w in routes.values()) and routes for leaf, routes in self.ecmp.items()
        ) and all(all(w == self.host_widths[host] for w in routes.values()) for host, routes in self.host_ecmp.items())

    def describe(self) -> str:
        lines = ["switch      sessions", *(f"{s:<11} {up}/{want}" for s, (up, want) in sorted(self.sessions.items()))]
        lines.append("leaf        prefix                      ECMP width")
        for leaf, routes in sorted(self.ecmp.items()):
            for prefix, width in sorted(routes.items()):
                lines.append(f"{leaf:<11} {prefix:<27} {width}/{self.widths[leaf]}")
        if self.host_ecmp:
            lines.append("server      loopback                    ECMP width")
        for host, routes in sorted(self.host_ecmp.items()):
            for prefix, width in sorted(routes.items()):
                lines.append(f"{host:<11} {prefix:<27} {width}/{self.host_widths[host]}")
        if self.waiting:
            lines.append("device      session not up")
        for device, peers in sorted(self.waiting.items()):
            lines.extend(f"{device:<11} {peer}: {why}" for peer, why in peers.items())
        return "\n".join(lines)


def lab_status(state_dir: Path) -> LabStatus:
    state = json.loads((state_dir / "state.json").read_text())
    sessions: dict[str, tuple[int, int]] = {}
    waiting: dict[str, dict[str, str]] = {}
    for device in [*state["switches"], *state.get("bgp_hosts", {})]:
        try:
            summary = json.loads(vty(state_dir / device / "bgpd.vty", "show bgp summary json") or "{}")
        except (OSError, json.JSONDecodeError):
            summary = {}
        up = len(established(summary))
        want = state["expected_peers"][device]
        sessions[device] = (up, want)
        if up < want:
            waiting[device] = _waiting(state_dir / device)
    ecmp: dict[str, dict[str, int]] = defaultdict(dict)
    for leaf in state["leaves"]:
        ecmp[leaf] = _installed(state_dir / leaf, state["leaf_prefixes"], leaf)
    host_ecmp = {
        host: _installed(state_dir / host, state["host_prefixes"], host) for host in state.get("bgp_hosts", {})
    }
    return LabStatus(
        sessions,
        dict(ecmp),
        {leaf: state["uplinks"][leaf] for leaf in state["leaves"]},
        host_ecmp,
        {host: state.get("host_widths", state["expected_peers"])[host] for host in host_ecmp},
        waiting,
    )


def established(summary: object) -> set[str]:
    """The sessions up in `show bgp summary json` (every address family): an unnumbered session is listed under
    each family it carries, a numbered dual-stack link's two sessions under one family each."""
    if not isinstance(summary, dict):
        return set()
    return {
        peer
        for family in summary.values()
        if isinstance(family, dict) and isinstance(family.get("peers"), dict)
        for peer, p in family["peers"].items()
        if isinstance(p, dict) and p.get("state") == "Established"
    }


def _waiting(device_dir: Path) -> dict[str, str]:
    """Each session of a device that is not up (by its peer), with bgpd's own words for why."""
    try:
        neighbors = json.loads(vty(device_dir / "bgpd.vty", "show bgp neighbors json") or "{}")
    except (OSError, json.JSONDecodeError):
        return {"bgpd": "does not answer"}
    if not isinstance(neighbors, dict):
        return {}
    return {
        peer: f"{n.get('bgpState', '?')}, last reset: {n.get('lastResetDueTo', 'none')}"
        f" ({n.get('bgpNeighborAddr') or n.get('hostForeign') or 'neighbour address not known'})"
        for peer, n in sorted(neighbors.items())
        if isinstance(n, dict) and n.get("bgpState") != "Established"
    }


def _installed(device_dir: Path, prefixes: Mapping[str, list[str]], me: str) -> dict[str, int]:
    """Every other device's prefixes → the next hops `me` has installed for it (0: none)."""
    try:
        routes = json.loads(vty(device_dir / "zebra.vty", "show ip route bgp json") or "{}")
    except (OSError, json.JSONDecodeError):
        routes = {}
    out: dict[str, int] = {}
    for other, theirs in prefixes.items():
        if other == me:
            continue
        for prefix in theirs:
            entries = routes.get(prefix, [])
            installed = [e for e in entries if e.get("selected") and e.get("installed")]
            hops = [h for e in installed for h in e.get("nexthops", []) if h.get("fib") and h.get("active")]
            out[prefix] = len(hops)
    return out


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting for an init that does not reap (as in some containers)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def stop_daemons(pid_files: Iterable[Path], graceful: bool = True) -> None:
    """Stop the FRR daemons named by these pid files: SIGTERM, then SIGKILL after 3 s (or SIGKILL at once)."""
    pids = []
    for pid_file in pid_files:
        with contextlib.suppress(OSError, ValueError):
            pid = int(pid_file.read_text().strip())
            if Path(f"/proc/{pid}/comm").read_text().strip() in FRR_DAEMONS:  # never a recycled pid
                pids.append(pid)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM if graceful else signal.SIGKILL)
    deadline = time.monotonic() + 3
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if alive(p)]
        time.sleep(0.02)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def teardown(state_dir: Path) -> None:
    """Stop the lab's daemons (by pid file), delete its namespaces, remove its state. Safe to repeat."""
    stop_daemons(sorted(state_dir.glob("*/*.pid")))
    state_file = state_dir / "state.json"
    namespaces: list[str] = []
    with contextlib.suppress(OSError, ValueError):
        namespaces = json.loads(state_file.read_text())["namespaces"]
    for ns in namespaces:
        run("ip", "netns", "delete", ns, check=False)
    shutil.rmtree(state_dir, ignore_errors=True)


def running_labs(root: Path | None = None) -> Mapping[str, Path]:
    root = root or STATE_ROOT
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if (p / "state.json").exists()}
