"""What every process pays before its first build: the stages' classes and the modules a design loads.

No timings (speed lives in benchmarks/): what keeps the start cheap, as facts that could become untrue."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import fabric

STAGES = ("model", "spec", "topology", "analysis", "allocation", "intent")


def _stage_dataclasses() -> list[type]:
    found = []
    for stage in STAGES:
        package = importlib.import_module(f"fabric.{stage}")
        names = [package.__name__] + [m.name for m in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]
        for name in names:
            module = importlib.import_module(name)
            found += [
                v
                for v in vars(module).values()
                if isinstance(v, type) and v.__module__ == name and dataclasses.is_dataclass(v)
            ]
    return found


def test_every_dataclass_of_the_stages_has_a_docstring() -> None:
    # without one, @dataclass writes `Name(field: type, ...)` as its __doc__ through inspect.signature at import
    # (~0.1 ms a class, every process)
    classes = _stage_dataclasses()
    assert len(classes) >= 80  # the walk found the stages' modules
    generated = sorted(f"{c.__module__}.{c.__qualname__}" for c in classes if c.__doc__.startswith(f"{c.__name__}("))
    assert generated == [], "dataclasses without a docstring:\n" + "\n".join(generated)


def test_an_ethernet_clos_build_loads_no_module_it_does_not_use() -> None:
    # the subnet modules load when a design has an InfiniBand fabric, explicit.py for an explicit or CSV fabric,
    # inventory.py where a spec names an inventory or a cabling CSV is read,
    # difflib only for a refused spec's hints
    code = (
        "import sys\n"
        "from fabric import build_fabric\n"
        "b = build_fabric(sys.argv[1])\n"
        "print('SWITCHES', len(b.intents), 'SUBNETS', len(b.infiniband.subnets))\n"
        "unused = ('fabric.topology.explicit', 'fabric.spec.inventory', 'difflib')\n"
        "ib = [m for m in sys.modules if m.startswith('fabric.intent.infiniband.') or m in unused]\n"
        "print('LOADED', sorted(ib))\n"
    )
    root = Path(fabric.__file__).parent.parent
    out = subprocess.run(
        [sys.executable, "-c", code, str(root / "designs" / "lab.yaml")], capture_output=True, text=True, timeout=120
    )
    assert "SUBNETS 0" in out.stdout and "SWITCHES 0" not in out.stdout, out.stdout + out.stderr
    assert "LOADED []" in out.stdout, out.stdout


def test_an_infiniband_build_still_gets_its_subnets_and_checks() -> None:
    from fabric import build_fabric

    root = Path(fabric.__file__).parent.parent
    build = build_fabric(root / "designs" / "lab-ib.yaml")
    assert len(build.infiniband.subnets) == 1
    assert "fabric.intent.infiniband.checks" in sys.modules  # the subnet checks ran


def test_a_section_made_by_model_construct_is_the_section_validated_from_nothing() -> None:
    # the schema's sections default to Model.model_construct (their own validators are not built at import): that is
    # the same value only while the model has no model validator and pydantic validates no default
    from pydantic import BaseModel

    from fabric.spec import schema

    models = [v for v in vars(schema).values() if isinstance(v, type) and issubclass(v, schema.StrictModel)]
    made = []
    for model in models:
        for name, info in model.model_fields.items():
            factory = info.default_factory
            owner = getattr(factory, "__self__", None)
            if getattr(factory, "__name__", "") == "model_construct" and isinstance(owner, type):
                assert issubclass(owner, BaseModel)
                assert not owner.__pydantic_decorators__.model_validators, f"{owner.__name__} has a model validator"
                assert not info.validate_default and not owner.model_config.get("validate_default")
                constructed = factory()  # type: ignore[call-arg]
                assert constructed == owner.model_validate({}), f"{model.__name__}.{name}"
                made.append(owner.__name__)
    assert len(made) >= 15  # the sections of Spec, Exports, Fabric, MonitoringSettings, …
