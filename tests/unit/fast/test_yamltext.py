"""yamltext writes the bytes PyYAML's safe dumper writes: on tricky scalars, generated documents and the
real outputs that use it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.fast import yamltext
from tests.conftest import examples

DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def pyyaml(data: Any, width: int = 80) -> str:
    return str(yaml.dump(data, Dumper=DUMPER, sort_keys=False, default_flow_style=False, width=width))


TRICKY = [
    "",
    " ",
    "a b",
    "a: b",
    "a:b",
    "- a",
    "-a",
    "#x",
    "x #y",
    "yes",
    "No",
    "on",
    "null",
    "~",
    "1",
    "1.5",
    "0x1F",
    "1e3",
    "2024-01-01",
    "12:30",
    ".inf",
    "=",
    "'q'",
    '"q"',
    "a\nb",
    "tab\there",
    "é",
    "\u2028",
    "leaf01:Ethernet1",
    "10.0.0.1:9100",
    "fd00::1/127",
    "*",
    "&a",
    "!t",
    "%",
    "@",
    "`",
    "{x}",
    "[x]",
    "a,b",
    "?",
    "? x",
    "x?",
    "a/b",
    "long " * 40,
    "x" * 200,
]
SCALARS = st.one_of(
    st.sampled_from(TRICKY),
    st.text(alphabet="ab1: -#.\n'\"é/", max_size=12),
    st.integers(-(10**20), 10**20),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
)
KEYS = st.one_of(st.sampled_from(TRICKY), st.text(alphabet="ab1: -#.", max_size=8), st.integers(0, 99))
DOCS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=30,
)


@pytest.mark.parametrize("value", [*TRICKY, 0, -1, True, False, None, 2.5, 10**20])
def test_scalars_as_pyyaml_writes_them(value: Any) -> None:
    for data in ({"key": value}, [value], {"k": [value, {"n": value}]}, {str(value): 1} if value is not None else {}):
        for width in (80, 1000):
            assert yamltext.dump(data, width) == pyyaml(data, width)


@settings(max_examples=examples(400), deadline=None)
@given(DOCS, st.sampled_from([80, 120, 1000]))
def test_generated_documents(data: Any, width: int) -> None:
    assert yamltext.dump(data, width) == pyyaml(data, width)


def test_shared_containers_keep_pyyamls_anchors() -> None:
    shared = {"a": "b"}
    data = {"x": shared, "y": [shared, []]}
    assert yamltext.dump(data) == pyyaml(data) and "&id001" in pyyaml(data)


def test_dump_all_is_pyyamls_with_explicit_start() -> None:
    docs: list[Any] = [{"a": 1}, [], {"b": ["c", {"d": None}]}, "text", {}]
    expected = yaml.dump_all(docs, Dumper=DUMPER, sort_keys=False, default_flow_style=False, explicit_start=True)
    assert yamltext.dump_all(docs) == expected
