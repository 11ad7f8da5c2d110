"""Platform differences are traits of `templates/<os>/platform.yaml`, not comparisons of a platform's name: outside
the renderers (fabric/render/platforms/) and the platform registry (fabric/spec/platforms.py), no module of the
package compares a platform to a literal name. Read with ast, so the rule holds for code not yet run."""

from __future__ import annotations

import ast

from fabric.spec.platforms import platform_names, platforms
from tests.conftest import REPO

PACKAGE = REPO / "fabric"
ALLOWED = ("fabric/render/platforms/", "fabric/spec/platforms.py")
# the live lab runs FRR containers only: a switch of another platform gets its addresses from the lab's
# wiring instead of its own configuration, which is the lab's concern and not the platform's
EXCEPTIONS = {("fabric/tools/lab.py", "frr")}


def _literal_names(node: ast.expr, constants: dict[str, set[str]]) -> set[str]:
    """The platform names a comparison operand spells: a string, a tuple/list/set of them, or a module constant
    holding one."""
    names = set(platform_names())
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & names
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)} & names
    if isinstance(node, ast.Name | ast.Attribute):  # a constant of this module, or of another one (module.NAME)
        return constants.get(node.id if isinstance(node, ast.Name) else node.attr, set())
    return set()


def _is_platform(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name == "platform" or name.endswith("_platform")


def _constants(tree: ast.Module) -> dict[str, set[str]]:
    """The module's top-level constants that hold platform names."""
    constants: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names = _literal_names(node.value, {})
            if names:
                constants[node.targets[0].id] = names
    return constants


def _comparisons(tree: ast.Module, shown: str, constants: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(shown, platform name) for each comparison of a platform to a literal name in the module."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_platform(o) for o in operands):
                for operand in operands:
                    found |= {(shown, name) for name in _literal_names(operand, constants)}
    return found


def test_no_module_compares_a_platform_to_a_name() -> None:
    trees = {p.relative_to(REPO).as_posix(): ast.parse(p.read_text(encoding="utf-8")) for p in PACKAGE.rglob("*.py")}
    constants: dict[str, set[str]] = {}
    for tree in trees.values():
        constants.update(_constants(tree))
    found: set[tuple[str, str]] = set()
    for relative, tree in sorted(trees.items()):
        if not relative.startswith(ALLOWED):
            found |= _comparisons(tree, relative, constants)
    assert found - EXCEPTIONS == set(), "declare a trait in templates/<os>/platform.yaml instead"
    assert found >= EXCEPTIONS, "an exception no longer needed: drop it from EXCEPTIONS"


def test_the_scan_sees_names_constants_and_attributes() -> None:
    tree = ast.parse('ok = device.platform == "cumulus" or platform in KINDS or x.platform in m.OTHER or name == "frr"')
    constants = {**_constants(ast.parse('KINDS = ("eos", "sonic")')), **_constants(ast.parse('OTHER = ["frr"]'))}
    assert {name for _, name in _comparisons(tree, "probe.py", constants)} == {"cumulus", "eos", "sonic", "frr"}


def test_the_traits_the_intent_reads_are_declared() -> None:
    cumulus = platforms()["cumulus"]
    assert cumulus.peer_svi.format(vlan=4094) == "peerlink.4094"
    assert cumulus.mlag_peer_link_local
    assert platforms()["eos"].peer_svi.format(vlan=4094) == "Vlan4094"
    assert not platforms()["eos"].bgp_in_frr
