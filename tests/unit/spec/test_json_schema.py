"""The JSON Schema editors use: shipped in docs/, equal to `fabric schema`, named by every design,
and every design validates against it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from fabric.cli import app
from fabric.spec.yamlio import read_yaml
from tests.conftest import DESIGNS, REPO

SCHEMA = REPO / "docs" / "fabric.schema.json"
DESIGN_FILES = sorted(DESIGNS.glob("*.yaml"))


def test_shipped_schema_is_what_fabric_schema_prints() -> None:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0, result.output
    assert SCHEMA.read_text(encoding="utf-8") == result.output, (
        "docs/fabric.schema.json is stale: run `fabric schema > docs/fabric.schema.json`"
    )
    jsonschema.Draft202012Validator.check_schema(json.loads(result.output))


def test_there_are_designs() -> None:
    assert len(DESIGN_FILES) >= 8


@pytest.mark.parametrize("path", DESIGN_FILES, ids=lambda p: p.name)
def test_design_names_the_schema_on_its_first_line(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=../docs/fabric.schema.json"
    assert (path.parent / "../docs/fabric.schema.json").resolve() == SCHEMA


@pytest.mark.parametrize("path", DESIGN_FILES, ids=lambda p: p.name)
def test_design_validates_against_the_schema(path: Path) -> None:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(read_yaml(path).data)]
    assert errors == []


def test_schema_rejects_what_the_spec_rejects() -> None:
    """The schema is no rubber stamp: an unknown key and a malformed ratio fail it."""
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    data = read_yaml(DESIGNS / "lab.yaml").data
    bad_key = {**data, "nodez": []}
    bad_ratio = json.loads(json.dumps(data))
    bad_ratio["fabrics"]["compute"]["oversubscription"] = "four to one"
    assert len(list(validator.iter_errors(bad_key))) == 1
    assert len(list(validator.iter_errors(bad_ratio))) >= 1


def test_optional_bounds_use_json_schemas_own_keywords() -> None:
    """An optional bounded number (`spines: Int | None = Field(ge=1, …)`) is bounded for editors too."""
    text = SCHEMA.read_text(encoding="utf-8")
    assert '"ge"' not in text and '"le"' not in text
    validator = jsonschema.Draft202012Validator(json.loads(text))
    data = json.loads(json.dumps(read_yaml(DESIGNS / "lab.yaml").data))
    data["fabrics"]["compute"]["topology"]["spines"] = 0
    errors = list(validator.iter_errors(data))
    assert len(errors) == 1  # the topology matches none of its kinds; for its own kind, because of `spines`:
    nested, messages = list(errors[0].context or ()), []
    while nested:
        error = nested.pop()
        messages.append((list(error.absolute_path)[-1:], error.message))
        nested.extend(error.context or ())
    assert (["spines"], "0 is less than the minimum of 1") in messages
