"""Line shapes (fabric/render/engine/lines.py): a macro filled by str.format writes what Jinja writes, and refuses
what `finalize` refuses."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.render.engine.lines import Shapes, fill, lines_of
from fabric.render.engine.safety import UnsafeText
from tests.conftest import examples

# (template, macro) of every shape fabric fills, with the header context its template needs
CONTEXT = {"label": "`compute`", "design": "d", "placeholders": 0, "nodes": 1, "inventory_key": "k"}
SHAPES = [
    ("opensm/topology.net.j2", "switch"),
    ("opensm/topology.net.j2", "switch_port"),
    ("opensm/topology.net.j2", "ca"),
    ("opensm/topology.net.j2", "ca_port"),
    ("opensm/guids.txt.j2", "row"),
    ("opensm/node-name-map.j2", "row"),
    ("docs/_cabling-lines.j2", "rack_fabric"),
    ("docs/_cabling-lines.j2", "row"),
    ("docs/_cabling-lines.j2", "physical_fabric"),
    ("docs/_cabling-lines.j2", "physical_row"),
]
EXTRA = {"numbering": ["m: n"], "cables": 1, "node_count": 2, "title": "t", "what": "w", "rack": "A01", "index": "i"}
# printable text without the quote of the InfiniBand files, braces and placeholder-like text included
CHARS = st.characters(categories=["L", "N", "P", "S"], include_characters=" ", exclude_characters='"')
TEXT = st.text(CHARS, max_size=9)
TRICKY = st.sampled_from(["{0}", "{}", "}{", "\u29830\u2984", "%s"])  # values that look like format fields


def _shapes(template: str) -> Shapes:
    return Shapes(template, **CONTEXT, **EXTRA)


@pytest.mark.parametrize(("template", "macro"), SHAPES)
@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_a_filled_shape_is_what_jinja_renders(template: str, macro: str, data: st.DataObject) -> None:
    shapes = _shapes(template)
    jinja = getattr(shapes._module, macro)
    values = data.draw(st.lists(TEXT, min_size=len(jinja.arguments), max_size=len(jinja.arguments)))
    values[0] = data.draw(TRICKY)
    assert shapes.shape(macro)(*values) == str(jinja(*values))
    assert shapes.fill(macro, [values, values]) == 2 * str(jinja(*values))
    if template.startswith("docs/_"):  # macros only: made once, without context
        assert lines_of(template).text.strip() == "" and fill(template, macro, [values]) == str(jinja(*values))


@pytest.mark.parametrize(("value", "why"), [("a\nb", "a line break"), ("x\x1b", "U+001B"), ('a"b', "the quote")])
def test_a_value_that_would_break_a_line_is_refused(value: str, why: str) -> None:
    shapes = _shapes("opensm/node-name-map.j2")
    assert shapes.fill("row", [("0x1", "fine")]) == '0x1 "fine"\n'
    with pytest.raises(UnsafeText) as refused:
        shapes.fill("row", [("0x1", "fine"), ("0x2", value)])
    assert str(refused.value).startswith("opensm/node-name-map.j2: a value holds") and why in str(refused.value)
    assert value not in str(refused.value)


def test_length_texts_keep_the_sign_of_zero() -> None:
    from fabric.render.outputs.tables import LengthTexts

    texts = LengthTexts()
    assert [texts[v] for v in (0.0, -0.0, 1.5, 1.5, None, 150.0)] == ["0", "-0", "1.5", "1.5", "", "150"]
    assert sorted(map(str, texts)) == ["1.5", "150.0", "None"]  # zero is not remembered: -0.0 == 0.0


def test_cable_lengths_are_counted_as_written() -> None:
    from types import SimpleNamespace

    from fabric.render.outputs.cabling_md import _lengths

    cables: Any = [SimpleNamespace(media_kind=k, length_m=v) for k, v in [("smf", 150.0), ("", None), ("smf", 150.0)]]
    assert _lengths(cables) == Counter({("smf", "150"): 2, ("none", ""): 1})
    cables += [SimpleNamespace(media_kind="dac", length_m=v) for v in (0.0, -0.0)]
    assert _lengths(cables) == Counter({("smf", "150"): 2, ("none", ""): 1, ("dac", "0"): 1, ("dac", "-0"): 1})
