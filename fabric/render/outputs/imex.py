"""NVIDIA IMEX per NVLink domain: `imex/<domain>/nodes_config.cfg` and `config.cfg`.

IMEX (the import/export service of multi-node NVLink) runs on every compute tray of a domain; each daemon reads
the same list of the domain's nodes, one IP address a line (`IMEX_NODE_CONFIG_FILE`, default
`/etc/nvidia-imex/nodes_config.cfg`; NVIDIA IMEX guide, config.html and deployment.html: all daemons must agree
on the map, the administrator or job launcher writes it). fabric writes the NVLink-domain-wide model: per domain
(a rack-scale system's rack, fabric.analysis.locality) the trays' in-band addresses from the IP plan — each
tray's first port on its in-band fabric (or its converged storage and in-band fabric), IPv4 when it has one — in
node order. `config.cfg` is the service's file with NVIDIA's defaults and the nodes file's path. A domain whose
trays have no in-band address gets no files (the design has no in-band fabric for them).
"""

from __future__ import annotations

from fabric.analysis.locality import NvlinkDomain, locality
from fabric.model.kinds import INBAND_ROLES
from fabric.pipeline import Build
from fabric.render.engine.registry import Output
from fabric.render.engine.templating import render

NODES_FILE = "/etc/nvidia-imex/nodes_config.cfg"  # IMEX guide, config.html: IMEX_NODE_CONFIG_FILE's default
SERVER_PORT = 50000  # IMEX guide, config.html: SERVER_PORT's default


def inband_addresses(build: Build) -> dict[str, str]:
    """Node → the address IMEX binds to: its first in-band port's (IPv4 before IPv6), from the IP plan."""
    spec = build.design.spec
    inband = [k for k in spec.fabrics if spec.fabric_role(k) in INBAND_ROLES]
    if not inband:
        return {}
    rank = {k: i for i, k in enumerate(inband)}
    best: dict[str, tuple[int, int, int, str]] = {}
    for i, row in enumerate(build.allocation.addresses):
        if row.purpose != "server" or row.fabric not in rank:
            continue
        key = (rank[row.fabric], 0 if row.address.version == 4 else 1, i, str(row.address.ip))
        if row.device not in best or key < best[row.device]:
            best[row.device] = key
    return {node: key[3] for node, key in best.items()}


def nodes_config(domain: NvlinkDomain, addresses: dict[str, str]) -> str:
    """One address a line, no comments or blank lines (GPU feature discovery's parser wants an IP on every line)."""
    return "".join(f"{addresses[n]}\n" for n in domain.nodes)


def config_cfg(build: Build, domain: NvlinkDomain) -> str:
    return render(
        "imex/config.cfg.j2",
        domain=domain.name,
        system=domain.system,
        rack=domain.rack,
        trays=len(domain.nodes),
        design=build.name,
        port=SERVER_PORT,
        nodes_file=NODES_FILE,
    )


def imex_files(build: Build) -> dict[str, str]:
    loc = locality(build.design, build.topology)
    if loc is None or not loc.domains:
        return {}
    addresses = inband_addresses(build)
    out: dict[str, str] = {}
    for domain in loc.domains:
        if not all(n in addresses for n in domain.nodes):
            continue
        out[f"imex/{domain.name}/nodes_config.cfg"] = nodes_config(domain, addresses)
        out[f"imex/{domain.name}/config.cfg"] = config_cfg(build, domain)
    return out


OUTPUTS: tuple[Output, ...] = (Output("imex", imex_files, weight=0.1),)
