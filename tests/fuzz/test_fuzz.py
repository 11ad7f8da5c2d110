"""Structure-aware fuzzing of the input boundary (issue 7).

Valid designs (designs/lab.yaml, lab-ib.yaml, roce-512.yaml) are mutated one field at a time: a value is
replaced by a wrong type, an extreme number, a hostile string (newlines, `../`, NUL, surrogates, escape
sequences, format fields, very long text) or nested garbage; a key is dropped, or an unknown one added.
Whatever comes out, the loader returns a Design or raises FabricError, never anything else; every finding
is printable text on its lines. A few hundred mutants of the small lab go through the whole pipeline and
`render_all`: no exception but FabricError, no output path outside the output directory, and no rendered
line that starts with the marker the hostile strings carry after a line break (`ZZINJECT`): a value can
never add a config line.

Hypothesis runs derandomized (tests/conftest.py), so every CI run draws the same 11,500 cases. Inputs that
once failed are kept in tests/fuzz-regressions/ and run on every test run.
"""

from __future__ import annotations

import copy
import json
import posixpath
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric.model.findings import FabricError, Finding
from fabric.pipeline import build_fabric
from fabric.render import render_all
from fabric.spec.loader import Design, _load_doc, load_spec, load_spec_text
from fabric.spec.schema import is_name
from fabric.spec.yamlio import YamlDoc, parse_yaml
from tests.conftest import DESIGNS, REPO, examples

MARKER = "ZZINJECT"
REGRESSIONS = sorted((REPO / "tests" / "fuzz-regressions").glob("*.yaml"))
BASES = {name: parse_yaml((DESIGNS / f"{name}.yaml").read_text(), name).data for name in ("lab", "lab-ib", "roce-512")}

# Strings a hostile or careless user types; every line break is followed by the marker.
HOSTILE_STRINGS = [
    "",
    " ",
    "../x",
    "../../../../x{index}",
    "a/b",
    "/etc/passwd",
    "x\n" + MARKER + " evil",
    "x\r" + MARKER,
    "x\r\n" + MARKER,
    "x\u2028" + MARKER,
    "x\u0085" + MARKER,
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udc80y",
    "\x1b[31mred\x1b[0m",
    "\x1b]0;title\x07",
    "\u202eevil",
    "{index}",
    "{index:>99}",
    "{index:\n>9}",
    "{0}",
    "{index.__class__}",
    "{group[0]}",
    "{{",
    "}",
    "x" * 5000,
    "%s%n%x",
    "'",
    '"',
    "\\",
    "$(reboot)",
    "`id`",
    "leaf{index}\n" + MARKER + " username evil\n!",
    "1:0",
    "0:1",
    "-1",
    "nan",
    ".inf",
    "::/0",
    "0.0.0.0/0",
    "fd00::/8",
    "10.0.0.0/33",
    "ff02::1/128",
    "10.0.0.1",
    "a..b",
    "lab\n",
    "\t",
    "é",
    "名前",
    "😀",
]
EXTREME_NUMBERS = [0, -1, 1, 2, 3, 7, 64, 255, 65535, 2**31, 2**32, 2**63, 10**12, 10**40, -(10**40), 0.5, -0.0, 1e308]

leaf_values = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(EXTREME_NUMBERS),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(HOSTILE_STRINGS),
    st.text(max_size=20),
)
garbage = st.recursive(
    leaf_values,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.sampled_from(["a", "name", "group", "x"]), children)
    ),
    max_leaves=6,
)


def _paths(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if path else []
    if isinstance(data, dict):
        for key, value in data.items():
            out.extend(_paths(value, (*path, key)))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            out.extend(_paths(value, (*path, index)))
    return out


PATHS = {name: _paths(data) for name, data in BASES.items()}


def _like(original: Any) -> st.SearchStrategy[Any]:
    """Mutations of the same kind as the value: an edited string or a nearby extreme number."""
    if isinstance(original, str):
        return st.one_of(
            st.sampled_from(HOSTILE_STRINGS).map(lambda s: original + s),
            st.sampled_from(HOSTILE_STRINGS).map(lambda s: s + original),
        )
    if isinstance(original, bool):
        return st.sampled_from([0, 1, "yes", "true", None])
    if isinstance(original, int | float):
        return st.sampled_from([*EXTREME_NUMBERS, float("nan"), float("inf"), -original, str(original)])
    return garbage


def _gentle(original: Any) -> st.SearchStrategy[Any]:
    """Plausible edits, so that mutants also get past the loader and through the pipeline."""
    if isinstance(original, bool):
        return st.booleans()
    if isinstance(original, int):
        return st.integers(min_value=0, max_value=70)
    if isinstance(original, float):
        return st.floats(min_value=0.1, max_value=50)
    if isinstance(original, str):
        return st.sampled_from(["x", "-2", "2", "a.b", " x", "4:3", "10.9.0.0/16", "fd00:9::/48"]).map(
            lambda s: original + s
        )
    return st.just(original)


@st.composite
def mutants(draw: st.DrawFn, bases: tuple[str, ...] = tuple(BASES), gentle: bool = False) -> tuple[str, Any]:
    name = draw(st.sampled_from(bases))
    data = copy.deepcopy(BASES[name])
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        path = draw(st.sampled_from(PATHS[name]))
        parent: Any = data
        try:
            for part in path[:-1]:
                parent = parent[part]
            original = parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed it
        ops = ["replace", "replace", "like", "like", "drop", "extra", "wrap"] + ["gentle"] * (7 if gentle else 0)
        op = draw(st.sampled_from(ops))
        if op == "gentle":
            parent[path[-1]] = draw(_gentle(original))
        elif op == "replace":
            parent[path[-1]] = draw(garbage)
        elif op == "like":
            parent[path[-1]] = draw(_like(original))
        elif op == "drop":
            del parent[path[-1]]
        elif op == "extra" and isinstance(parent, dict):
            parent[draw(st.sampled_from(HOSTILE_STRINGS[:20]) | st.just("bogus"))] = draw(leaf_values)
        elif op == "wrap":
            parent[path[-1]] = [original, original]
    return name, data


def _check_findings(findings: list[Finding]) -> None:
    for finding in findings:
        text = finding.format()
        for line in text.split("\n"):
            assert line.isprintable(), f"a finding prints a control character: {line!r}"
            assert not line.lstrip().startswith(MARKER), f"a finding starts a line with input: {line!r}"


def _load(data: Any, as_text: bool) -> Design | None:
    """The loader on a mutant, as YAML text (JSON is YAML) or as already-parsed data (surrogates, NaN, 2**70)."""
    try:
        if as_text:
            text = json.dumps(data, indent=1, allow_nan=True)
            return load_spec_text(text, "mutant.yaml", DESIGNS)
        return _load_doc(YamlDoc("mutant.yaml", data, {(): 1}), DESIGNS)
    except FabricError as exc:
        _check_findings(exc.findings)
        return None


LOADER = settings(max_examples=examples(3500), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("as_text", [True, False], ids=["yaml", "data"])
@LOADER
@given(mutant=mutants())
def test_loader_gives_a_design_or_findings(mutant: tuple[str, Any], as_text: bool) -> None:
    _load(mutant[1], as_text)


@settings(max_examples=examples(3500), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=garbage)
def test_loader_on_nested_garbage(data: Any) -> None:
    _load(data, as_text=False)
    _load({"name": "g", "nodes": data, "fabrics": data}, as_text=False)


def _check_outputs(design: Design) -> int:
    try:
        build = build_fabric(design)
    except FabricError as exc:
        _check_findings(exc.findings)
        return 0
    _check_findings(list(build.findings))
    if build.errors:
        return 0
    files = render_all(build)
    for path, content in files.items():
        assert not path.startswith("/") and posixpath.normpath(path) == path and not path.startswith(".."), path
        assert all(is_name(part) for part in path.split("/")), f"output path {path!r}"
        if path.endswith((".png", ".xlsx")):  # binary: pictures laid out by dot, the zipped workbook
            continue
        for line in content.decode("utf-8").splitlines():
            assert not line.lstrip().startswith(MARKER), f"{path}: an input value starts a line: {line!r}"
    return len(files)


@pytest.fixture(scope="module", autouse=True)
def _sources_only() -> Iterator[None]:
    """Diagrams as DOT sources only: what the fuzzer checks is fabric's text, and a `dot` run per case would
    cost a second each (tests/unit/render/test_pictures.py lays them out)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("fabric.render.outputs.diagrams.have_dot", lambda: False)
        yield


@settings(max_examples=examples(1000), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutant=mutants(("lab", "lab-ib"), gentle=True))
def test_pipeline_and_render_never_escape_or_inject(mutant: tuple[str, Any]) -> None:
    design = _load(mutant[1], as_text=False)
    if design is not None:
        _check_outputs(design)


@pytest.mark.parametrize("case", REGRESSIONS, ids=lambda p: p.stem)
def test_fuzz_regressions(case: Path) -> None:
    try:
        design = load_spec(case)
    except FabricError as exc:
        _check_findings(exc.findings)
        return
    _check_outputs(design)
    if case.stem != "csv-superscript-unit":  # the other two built (wrongly, or not at all) before
        assert any(f.code == "duplicate-name" for f in build_fabric(design).errors), case.stem


def test_the_mutated_designs_are_valid_to_start_with() -> None:
    for name in BASES:
        design = _load(BASES[name], as_text=True)
        assert design is not None and _check_outputs(design) > 10, name
