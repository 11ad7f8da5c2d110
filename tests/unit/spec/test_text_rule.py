"""One text rule for the loader and the renderers (fabric/model/text.py): space separators normalised to a space,
everything else `str.isprintable` refuses refused; `validate` and `build` agree on every character."""

from __future__ import annotations

import sys

import pytest

from fabric import build_fabric, render_all
from fabric.model.findings import FabricError
from fabric.model.text import first_refused, normalise
from fabric.render.engine.safety import first_unsafe
from fabric.spec.loader import load_spec_text
from fabric.spec.text import text_problem

SPEC = """name: text-rule
description: "{text}"
nodes:
  - {{group: srv, type: linux-server, count: 4, name: "srv{{index}}"}}
fabrics:
  compute:
    technology: ethernet
    topology: {{kind: spine-leaf, leaves: 2, spines: 2, uplinks: 2}}
    switches: {{leaf: sn4600c}}
    platform: eos
    attach: [{{group: srv, ports: data}}]
"""


def test_space_separators_are_normalised_and_format_characters_refused() -> None:
    assert normalise("a\u00a0b\u2009c\u3000d") == "a b c d"
    assert normalise("plain") == "plain"
    for char in "\u200b\u200d\u00ad\ufeff\u202e\u2066\n\t\x00\u2028":
        assert first_refused(normalise(f"a{char}b")) == char
        assert text_problem(f"a{char}b") and first_unsafe(f"a{char}b")
    assert text_problem("a\u00a0b") is None
    assert first_unsafe("a\u00a0b")  # (the renderers see text the loader normalised: a raw one is refused)


def test_validate_and_build_agree_on_every_character() -> None:
    """Every code point of the Basic Multilingual Plane (surrogates apart: YAML cannot hold them): the loader
    accepts exactly what the renderers accept once normalised."""
    for code in range(0x20, 0x10000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        loader = text_problem(f"a{char}b") is None
        renderer = first_unsafe(normalise(f"a{char}b")) is None
        assert loader == renderer, f"U+{code:04X}"
    assert sys.maxunicode >= 0x10FFFF


def test_a_no_break_space_in_a_description_builds_normalised() -> None:
    build = build_fabric(load_spec_text(SPEC.format(text="GPU\\u00a0cluster\\u2009one")))
    assert build.design.spec.description == "GPU cluster one" and not build.errors
    report = render_all(build)["report.md"].decode()
    assert "GPU cluster one" in report and "\u00a0" not in report


@pytest.mark.parametrize("char", ["\\u202e", "\\u200b", "\\u2066"])
def test_a_zero_width_or_bidi_character_is_a_finding_at_validate(char: str) -> None:
    with pytest.raises(FabricError) as raised:
        load_spec_text(SPEC.format(text=f"GPU{char}cluster"))
    assert [(f.code, f.path) for f in raised.value.findings] == [("spec-invalid", "description")]


def test_markdown_outputs_escape_html() -> None:
    build = build_fabric(load_spec_text(SPEC.format(text="<img src=x onerror=alert(1)> & <b>")))
    report = render_all(build)["report.md"].decode()
    assert "<img" not in report and "<b>" not in report
    assert "&lt;img src=x onerror=alert(1)&gt; &amp; &lt;b&gt;" in report
