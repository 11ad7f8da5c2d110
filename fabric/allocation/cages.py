"""The cage each port of a device sits in, from the catalog: a switch's faceplate cage (by the port's mode) or a
node's cage, and the cage's kind (connector, thermal top, ports per cage). The media choice (allocate.py: a cable's
plugs must fit both cages) and the optics (optics.py: a transceiver per cage end) read it."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from fabric.model.topology import Device
from fabric.spec.catalog import Catalog, NodeType, SwitchModel, port_candidates

CageKind = tuple[str, str | None, int | None]  # connector, thermal top, ports per cage (None: not declared)
MGMT_CAGE: CageKind = ("rj45", None, None)  # a switch port outside its port groups: the management jack


def model_key(device: Device) -> tuple[str, str | None]:
    """What a device's ports and cages depend on: its model, and a switch's platform (which names its ports; a
    node's names none). Per-device memos of catalog answers are keyed by it."""
    return device.model, None if device.layer == "node" else device.platform


@cache
def switch_cages(model: SwitchModel, platform: str | None) -> dict[str, tuple[int, CageKind]]:
    groups = {g.group: g for g in model.ports}
    out: dict[str, tuple[int, CageKind]] = {}
    for name, ports in port_candidates(model, platform).items():
        group = groups[ports[0].group]
        out[name] = (ports[0].cage, (ports[0].connector, group.top, group.ports_per_cage))
    return out


def node_cages(node_type: NodeType) -> dict[str, tuple[str, CageKind]]:
    out: dict[str, tuple[str, CageKind]] = {}
    for group in node_type.ports.values():
        for port in group.port_list():
            out[port.name] = (port.cage or port.name, (group.connector, group.top, group.ports_per_cage))
    return out


class CageLookup:
    """A device's port → (cage id, cage kind), memoised per model (hundreds of thousands of ports)."""

    def __init__(self, catalog: Catalog, devices: Mapping[str, Device]) -> None:
        self._catalog = catalog
        self._devices = devices
        self._by_model: dict[tuple[str, str | None], tuple[dict[str, tuple[str, CageKind]], CageKind]] = {}
        self._by_device: dict[str, tuple[dict[str, tuple[str, CageKind]], CageKind]] = {}

    def __call__(self, name: str, port: str) -> tuple[str, CageKind]:
        found = self._by_device.get(name) or self.ports(name)
        return found[0].get(port) or (port, found[1])

    def ports(self, name: str) -> tuple[dict[str, tuple[str, CageKind]], CageKind]:
        """The device's model's port → (cage id, cage kind), and the kind of a port it does not list (the same
        objects for every device of the model)."""
        found = self._by_device.get(name)
        if found is not None:
            return found
        device = self._devices[name]
        key = model_key(device)
        found = self._by_model.get(key)
        if found is None:
            if device.layer == "node":
                found = (node_cages(self._catalog.nodes[device.model]), ("?", None, None))
            else:
                switch = switch_cages(self._catalog.switches[device.model], device.platform)
                found = ({p: (str(c) if c else p, k) for p, (c, k) in switch.items()}, MGMT_CAGE)
            self._by_model[key] = found
        self._by_device[name] = found
        return found
