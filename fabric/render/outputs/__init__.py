"""Every output fabric writes, by family: one module (or package) per family, each declaring its `OUTPUTS`.

A new output goes into its family's module (a new family: a module here and its name in FAMILIES);
tests/unit/test_registry.py checks that every module declaring OUTPUTS is listed and that no name repeats.
"""

from __future__ import annotations

from importlib import import_module

from fabric.render.engine.registry import Output

# the families, by module name under fabric/render/outputs/
FAMILIES = tuple(
    import_module(f"{__name__}.{name}")
    for name in (
        "bom",
        "cabling_md",
        "configs",
        "diagrams",
        "hosts",
        "imex",
        "infiniband",
        "kubernetes",
        "lock",
        "monitoring",
        "netbox",
        "report",
        "slurm",
        "summary",
        "tables",
        "workbook",
    )
)


def _in_name_order() -> tuple[Output, ...]:
    found: dict[str, Output] = {}
    for family in FAMILIES:
        for output in family.OUTPUTS:
            if output.name in found:
                raise AssertionError(f"output {output.name} is declared twice (again in {family.__name__})")
            found[output.name] = output
    return tuple(found[name] for name in sorted(found))


OUTPUTS: tuple[Output, ...] = _in_name_order()
