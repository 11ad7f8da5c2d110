"""The bounded reader at the edge: regular files only, never more than a kind's limit, in as few reads as it can."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.spec import reading
from fabric.spec.reading import LIMITS, ReadError, read_bytes
from tests.conftest import examples


@settings(max_examples=examples(40), deadline=None)
@given(size=st.integers(min_value=0, max_value=40))
def test_a_file_is_read_whole_up_to_the_limit_and_refused_above(
    size: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("read") / "spec.yaml"
    data = bytes(range(size))
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(LIMITS, "spec", 20)
        if size <= 20:
            assert read_bytes(path, "spec") == data
        else:
            with pytest.raises(ReadError, match="is larger than 20 bytes"):
                read_bytes(path, "spec")


def test_a_file_of_known_size_takes_one_read_and_one_to_see_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "lock.json"
    data = b"x" * (3 * reading.MIB + 5)  # above the chunk size: it was four reads and a join
    path.write_bytes(data)
    sizes: list[int] = []
    real_read = os.read

    def counted(fd: int, n: int) -> bytes:
        sizes.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(reading.os, "read", counted)
    assert read_bytes(path, "lock") == data
    assert sizes == [len(data) + 1, reading.MIB]


def test_what_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ReadError, match="not a regular file"):
        read_bytes(fifo, "spec")
    with pytest.raises(ReadError, match="is a directory"):
        read_bytes(tmp_path, "spec")
