"""The subnet manager's M_Key and SM_Key (issue 26 item 5, review S5): from the secret mechanism, written into
opensm.conf only, a finding (never the value) for a missing or malformed secret."""

from __future__ import annotations

from typing import Any

import pytest

from fabric import render_all
from fabric.model.findings import FabricError
from tests.support.design_variants import variant

M_ENV, S_ENV = "FABRIC_UNIT_M_KEY", "FABRIC_UNIT_SM_KEY"
SECRET = "0x8a3c51d2e4f60718"


def _keyed(level: int | None = None) -> Any:
    def change(data: dict[str, Any]) -> None:
        sm = data["fabrics"]["compute"]["infiniband"]["sm"]
        sm["m_key"], sm["sm_key"] = {"env": M_ENV}, {"env": S_ENV}
        if level is not None:
            sm["m_key_protection_level"] = level

    return variant("lab-ib", change)


def test_the_keys_go_into_opensm_conf_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(M_ENV, SECRET)
    monkeypatch.setenv(S_ENV, "0xABC")
    build = _keyed()
    assert not [f for f in build.findings if f.severity == "error"]
    files = render_all(build)
    holding = sorted(name for name, data in files.items() if SECRET.encode() in data)
    assert holding == ["infiniband/compute/opensm-ufm002.conf", "infiniband/compute/opensm.conf"]
    conf = files["infiniband/compute/opensm.conf"].decode()
    assert f"m_key {SECRET}\nm_key_protection_level 1\n" in conf  # level 1 by default: Gets see zero
    assert "sm_key 0x0000000000000abc\n" in conf  # as OpenSM writes a key: 16 hex digits
    assert b"0xABC" not in b"".join(files.values()) and not any(b"0xabc\n" in d for d in files.values())


def test_without_keys_opensm_keeps_its_defaults() -> None:
    conf = render_all(variant("lab-ib", lambda data: None))["infiniband/compute/opensm.conf"].decode()
    assert "m_key" not in conf and "sm_key" not in conf


@pytest.mark.parametrize("value", ["notakey", "0xg1", "0x12345678901234567", "1234abcd"])
def test_a_malformed_key_is_a_finding_that_never_shows_it(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(M_ENV, value)
    monkeypatch.setenv(S_ENV, "0x1")
    found = [f for f in _keyed().findings if f.code == "secret-invalid"]
    assert [f.path for f in found] == ["fabrics.compute.infiniband.sm.m_key"]
    assert value not in found[0].format()


def test_a_missing_key_secret_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(M_ENV, raising=False)
    monkeypatch.setenv(S_ENV, "0x1")
    found = [f for f in _keyed().findings if f.code == "secret-missing"]
    assert [f.path for f in found] == ["fabrics.compute.infiniband.sm.m_key.env"]


def test_the_protection_level_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(M_ENV, SECRET)
    monkeypatch.setenv(S_ENV, "0x1")
    assert "m_key_protection_level 2\n" in render_all(_keyed(2))["infiniband/compute/opensm.conf"].decode()
    with pytest.raises(FabricError, match="m_key_protection_level"):
        _keyed(3)
