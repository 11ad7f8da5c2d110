"""structured-config.yaml, written by render/yamltext.py with addresses as text, is exactly what PyYAML's safe
dumper writes (the file's bytes are a contract; the emitter only skips PyYAML's per-node representer)."""

from __future__ import annotations

from ipaddress import ip_address, ip_interface
from typing import Any

import pytest
import yaml

from fabric.fast import yamltext
from fabric.render.platforms import eos_structured
from fabric.render.platforms.eos_structured import _ADDRESS_TYPES, _dump
from tests.conftest import built

# text the YAML 1.1 resolver would read as another type, indicators, quoting, escapes, folding
TRICKY: list[Any] = [
    *[
        "yes",
        "Yes",
        "NO",
        "on",
        "Off",
        "TRUE",
        "true1",
        "on-off",
        "null",
        "NULL",
        "~",
        "y",
        "n",
        "nan",
        ".nan",
        ".inf",
        "=",
        "<<",
        "_x",
        "/x",
    ],
    *["1:20", "12:30:45", "0:0", "1.5", "1.2.3", "1e5", "+1", "0x1F", "017", "1_000", "2001-12-14", "::1"],
    *["a: b", "a:", "a:b", "a :b", "a #b", "a#b", "- a", "-a", "a -", "a - b", "x ", " x", "x  y", "a,b", "a[b]"],
    *["", "é", "tab\there", "line\nbreak", "quote's", '"', "x" * 130, "word " * 30, "Ethernet49/1", "10.0.0.1/31"],
    *[0, 1, -7, True, False, None, 1.0, 0.5, ip_address("fd00::1"), ip_interface("10.1.0.0/31")],
]


def _pyyaml(data: Any) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return str(
        yaml.dump(
            yamltext.plain(data, _ADDRESS_TYPES), Dumper=dumper, sort_keys=False, default_flow_style=False, width=120
        )
    )


@pytest.mark.parametrize("value", TRICKY, ids=repr)
def test_a_scalar_is_written_as_pyyaml_writes_it(value: Any) -> None:
    key = value if isinstance(value, str | int | float | None) else "k"
    data = {"k": value, key: [value, [value, []], {"m": value, "e": {}}], "deep": {"er": [{"est": value}]}}
    assert _dump(data) == _pyyaml(data)


def test_the_emitter_writes_the_structured_configs() -> None:
    """Every EOS switch of the MLAG lab: the fast path is taken (no fallback) and gives PyYAML's bytes."""
    build = built("lab-mlag")
    switches = [(n, i) for n, i in build.intents.items() if i.platform == "eos"]
    assert len(switches) == 6
    for _, intent in switches:
        data = eos_structured.structured_config(intent, build)
        out: list[str] = []
        yamltext._mapping(data, "", "", out, set(), _ADDRESS_TYPES)
        assert "".join(out) == _dump(data) == _pyyaml(data)
