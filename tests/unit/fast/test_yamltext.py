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


def _shaped(data: Any, chosen: Any) -> tuple[Any, list[Any]]:
    """`data` with the scalars (keys and values, in writing order) that `chosen(i)` picks as slots, and their
    values in slot order."""
    values: list[Any] = []
    count = [0]

    def scalar(value: Any) -> Any:
        count[0] += 1
        if chosen(count[0] - 1):
            values.append(value)
            return yamltext.slot(len(values) - 1)
        return value

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {scalar(k): walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return scalar(node)

    return walk(data), values


@settings(max_examples=examples(400), deadline=None)
@given(st.dictionaries(KEYS, DOCS, min_size=1, max_size=4), st.integers(1, 3), st.sampled_from([80, 120]))
def test_a_form_filled_is_the_document_pyyaml_writes(data: dict[Any, Any], every: int, width: int) -> None:
    shape, values = _shaped(data, lambda i: i % every == 0)
    if len({str(k) for k in shape}) != len(shape):
        return  # a key made a slot collides with another as text: not a shape
    form = yamltext.form(shape, len(values), width)
    if form is not None:
        assert form.fill(values, lambda: data) == pyyaml(data, width)


def test_a_netplan_like_form_fills_and_falls_back_where_dump_would() -> None:
    def doc(name: Any, mtu: Any, address: Any) -> dict[str, Any]:
        return {"network": {"version": 2, "ethernets": {name: {"mtu": mtu, "addresses": [address, "::/0"]}}}}

    form = yamltext.form(doc(yamltext.slot(0), yamltext.slot(1), yamltext.slot(2)), 3, 120)
    assert form is not None and form.keys == (True, False, False) and len(form.pieces) == 4
    cases = [
        ("enp1s0", 9000, "10.0.0.1/31"),  # the slots' path
        ("yes", "9000", "fd00::1/127"),  # quoted by PyYAML: its own choice, remembered
        ("eth0", True, "a\nb"),  # a scalar over lines: dump's fallback, PyYAML's text
        ("eth0", 1500, "x" * 150),  # a line PyYAML may fold: the same
        ("eth0", 1.5, None),
    ]
    for name, mtu, address in cases:
        document = doc(name, mtu, address)
        assert form.fill([name, mtu, address], lambda document=document: document) == pyyaml(document, 120)
    with pytest.raises(ValueError, match="2 values for 3 slots"):
        form.fill(["a", 1], lambda: {})


def test_a_slot_must_be_a_whole_scalar_once() -> None:
    slot = yamltext.slot
    assert yamltext.form({"a": "x" + slot(0)}, 1) is None  # inside a longer scalar
    assert yamltext.form({"a": slot(0), "b": slot(0)}, 1) is None  # twice
    assert yamltext.form({"a": slot(1), "b": slot(0)}, 2) is None  # out of order
    assert yamltext.form({"a": slot(0), "b": slot(1)}, 1) is None  # one more than said
    assert yamltext.form([slot(0)], 1) is None  # not a mapping
    assert yamltext.form({"a": slot(0)}, 1) is not None
