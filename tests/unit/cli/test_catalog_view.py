"""`fabric catalog`: the parts as people and programs read them, and docs/spec/catalog.md's tables generated from it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from fabric.cli import app
from fabric.cli.views.catalog_view import catalog_markdown
from fabric.spec.catalog import builtin_catalog
from tests.conftest import DESIGNS, REPO

runner = CliRunner()


def test_catalog_page_tables_are_generated_from_the_catalog() -> None:
    page = (REPO / "docs" / "spec" / "catalog.md").read_text(encoding="utf-8")
    section = re.search(r"<!-- catalog:begin[^\n]*-->\n(.*?)<!-- catalog:end -->", page, re.DOTALL)
    assert section, "docs/spec/catalog.md has no generated catalog section"
    assert section.group(1) == catalog_markdown(builtin_catalog()), (
        "docs/spec/catalog.md's catalog tables are stale: paste `fabric catalog --markdown` between the markers"
    )


def test_json_lists_every_part_with_its_unverified_values() -> None:
    result = runner.invoke(app, ["catalog", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    catalog = builtin_catalog()
    names = [p["name"] for p in data["parts"]]
    assert names == [*catalog.switches, *catalog.nodes, *catalog.media]
    by_name = {p["name"]: p for p in data["parts"]}
    assert by_name["q3400"]["unverified"] == ["u", "power_w", "ports: 4 x 400G split port names"]
    assert by_name["sn4600c"]["unverified"] == []
    assert by_name["edgecore-as9817-64o"]["ports"][0]["lane_map"][:2] == [25, 9]
    assert [m["speed_gbps"] for m in by_name["arista-7060x6-64pe"]["ports"][0]["modes"]] == [800, 400, 200, 100]
    assert "placeholder" in data["note"]


def test_one_part_and_an_unknown_one() -> None:
    result = runner.invoke(app, ["catalog", "--json", "sn5610"])
    assert result.exit_code == 0 and [p["name"] for p in json.loads(result.output)["parts"]] == ["sn5610"]
    text = runner.invoke(app, ["catalog", "arista-7050sx3-48yc8"])
    assert text.exit_code == 0 and "arista-7050sx3-48yc8" in text.output and "48 × sfp28" in text.output
    missing = runner.invoke(app, ["catalog", "no-such-switch"])
    assert missing.exit_code == 2 and "no part `no-such-switch`" in missing.output


def test_spec_part_files_are_listed(tmp_path: Path) -> None:
    (tmp_path / "parts.yaml").write_text(
        "switches:\n"
        "  my-leaf:\n"
        "    description: my 48 x 25G leaf\n"
        "    technology: ethernet\n"
        "    u: 1\n"
        "    power_w: 300\n"
        "    platform: eos\n"
        "    unverified: [power_w]\n"
        "    ports:\n"
        "      - {group: sfp28, cages: 48, connector: sfp28, lanes: 1,\n"
        "         modes: [{ports: 1, speed_gbps: 25, name: 'swp{cage}'}]}\n",
        encoding="utf-8",
    )
    spec = (DESIGNS / "lab.yaml").read_text(encoding="utf-8") + "catalog: [parts.yaml]\n"
    (tmp_path / "spec.yaml").write_text(spec, encoding="utf-8")
    result = runner.invoke(app, ["catalog", "--json", "--spec", str(tmp_path / "spec.yaml"), "my-leaf"])
    assert result.exit_code == 0, result.output
    (part,) = json.loads(result.output)["parts"]
    assert part["unverified"] == ["power_w"] and part["ports"][0]["cages"] == 48


def test_unverified_must_name_a_field() -> None:
    from pydantic import ValidationError

    from fabric.spec.catalog import Media

    medium = builtin_catalog().media["cat6"].model_dump()
    try:
        Media.model_validate({**medium, "unverified": ["reach"]})
    except ValidationError as exc:
        assert "`reach` is no field" in str(exc)
    else:
        raise AssertionError("an unknown field in `unverified` was accepted")
