"""The lock decoded into msgspec structs (fabric/spec/lock.py's first way; the decoder of
fabric/spec/lock_checks.py) takes only what json.loads with the column checks and the schema take, and reads it
alike; anything else goes on to them (tests/unit/spec/test_lock_read.py compares
those two)."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import pytest

from fabric.model.findings import FabricError
from fabric.model.lock_format import ENTRIES
from fabric.render.outputs.lock import lock_json
from fabric.spec import lock as spec_lock
from fabric.spec.reading import ReadError, read_text
from tests.conftest import built
from tests.unit.allocation.test_growth import _built
from tests.unit.spec.test_lock_read import HOSTILE


def _decoded(text: str | bytes) -> spec_lock.Lock | None:
    found = spec_lock._by_structs(text)
    return None if found is None else spec_lock._lock(found)


def _text(design: str) -> str:
    return lock_json(built(design) if design == "lab" else _built(design))


@pytest.mark.parametrize("design", ["lab", "superpod-2su"])
def test_a_written_lock_is_decoded_as_the_columns_and_the_schema_read_it(design: str, tmp_path: Path) -> None:
    text = _text(design)
    data = json.loads(text)
    decoded = _decoded(text)
    assert decoded is not None and decoded == spec_lock._lock(spec_lock._by_columns(data))  # type: ignore[arg-type]
    assert decoded == spec_lock._by_schema(data, "x.json") and decoded.as_data() == data
    (tmp_path / "lock.json").write_text(text)
    assert spec_lock.read_lock(tmp_path / "lock.json") == decoded and len(decoded.addresses) == len(data["addresses"])


def test_a_decoded_name_and_purpose_are_held_once() -> None:
    lock = _decoded(_text("superpod-2su"))
    assert lock is not None
    ends = [c.b_device for c in lock.cables if c.b_device == lock.cables[0].b_device]
    purposes = [a.purpose for a in lock.addresses if a.purpose == lock.addresses[0].purpose]
    assert len(ends) > 1 and all(d is ends[0] for d in ends)
    assert len(purposes) > 1 and all(p is purposes[0] for p in purposes)


@pytest.mark.parametrize("design", ["lab", "superpod-2su"])
def test_what_the_structs_take_in_any_field_the_schema_takes_alike(design: str) -> None:
    """Each odd value in each field of the first entry of each list: decoded only when the schema reads the same
    lock (and then to the same lock)."""
    base = json.loads(_text(design))
    taken = 0
    for key in (k for k in ENTRIES if base[k]):
        for field in base[key][0]:
            for value in HOSTILE:
                data = {**base, key: [{**base[key][0], field: value}, *base[key][1:]]}
                decoded = _decoded(json.dumps(data))
                if decoded is not None:
                    taken += 1
                    assert decoded == spec_lock._by_schema(data, "x.json"), (key, field, value)
    assert 10 < taken < 100  # the values valid in some field (e.g. "" as an optional name, 1 as a rack unit)


def _variant(text: str, name: str) -> bytes:
    if name == "a key with its default left out":
        data = json.loads(text)
        del data["devices"][0]["u"]
        return json.dumps(data).encode()
    if name == "byte-order mark":
        return codecs.BOM_UTF8 + text.encode()
    if name == "not UTF-8":
        return text.replace('"model": "', '"model": "\xff', 1).encode("latin-1")
    odd = {"a number past 64 bits": '"u": 123456789012345678901234567890', "NaN": '"u": NaN'}
    if name in odd:
        return text.replace('"u": 1', odd[name], 1).encode()
    return text.replace('"model": "', '"model": "\\ud800', 1).encode()  # an escaped lone surrogate


VARIANTS = [
    "byte-order mark",
    "a key with its default left out",
    "a number past 64 bits",
    "NaN",
    "an escaped lone surrogate",
    "not UTF-8",
]


def _outcome(read: Any) -> Any:
    """The lock read, or the findings (code, path, message) of its refusal."""
    try:
        return read()
    except FabricError as exc:
        return [(f.code, f.path, f.message) for f in exc.findings]


def _read_before(path: Path) -> spec_lock.Lock:
    """read_lock as it was before the decoder: the text, then json.loads and the columns, then the schema."""
    try:
        text = read_text(path, "lock", str(path))
    except ReadError as exc:
        raise FabricError([spec_lock._invalid(str(path), exc.message)], spec_invalid=True) from None
    return spec_lock._parse(text, str(path))


@pytest.mark.parametrize("name", VARIANTS)
def test_what_the_decoder_refuses_goes_on_to_json_and_the_schema(name: str, tmp_path: Path) -> None:
    """A lock the decoder refuses is read (or refused, with the same findings) as before it."""
    data = _variant(_text("lab"), name)
    assert spec_lock._by_structs(data) is None
    path = tmp_path / "lock.json"
    path.write_bytes(data)
    before = _outcome(lambda: _read_before(path))
    got = _outcome(lambda: spec_lock.read_lock(path))
    assert got == before and got
    assert isinstance(got, spec_lock.Lock) == (name in ("byte-order mark", "a key with its default left out"))


def test_a_key_given_twice_is_the_last_as_json_loads_takes_it() -> None:
    text = _text("lab")
    model = json.loads(text)["devices"][0]["model"]
    twice = text.replace(f'"model": "{model}"', f'"model": "other", "model": "{model}"', 1)
    decoded = _decoded(twice)
    assert decoded is not None and decoded == _decoded(text) and decoded.devices[0].model == model
