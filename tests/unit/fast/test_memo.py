"""The identity memos and what a render worker short of memory forgets of them (fabric/fast/memo.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fabric.fast import memo
from fabric.fast.lazy import LazyMapping, LazyTuple


@pytest.fixture
def memos(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This test's memos only (the process's others are left as they are)."""
    monkeypatch.setattr(memo, "_MEMOS", [])
    monkeypatch.setattr(memo, "_INHERITED", {})
    monkeypatch.setattr(memo, "_LAZY", {})
    monkeypatch.setattr(memo, "_LAZY_INHERITED", set())
    yield


class Value:
    """A frozen value memos key by identity."""


def test_a_memo_computes_once_per_object(memos: None) -> None:
    calls: list[Value] = []
    twice = memo.per_object(lambda v: calls.append(v) or len(calls))
    a, b = Value(), Value()
    assert [twice(a), twice(a), twice(b), twice(a)] == [1, 1, 2, 1]
    assert calls == [a, b]


def test_a_large_worker_forgets_what_its_tasks_added_but_kept_memos_and_inherited_entries(memos: None) -> None:
    made: list[str] = []
    derived = memo.per_object(lambda v: made.append("derived") or object())
    sheet = memo.per_object(lambda v: made.append("sheet") or object(), keep=True)
    shared = memo.registered({})
    parent, task = Value(), Value()
    derived(parent)
    shared["parent"] = 1
    memo.inherit()  # forked here: the entries so far are the parent's
    derived(task)
    sheet(task)
    shared["task"] = 2
    # below the limit nothing is forgotten; past it, the two entries the tasks added to unkept memos
    assert memo.forget_if_large(above=2**62) == 0
    assert memo.forget_if_large(above=0) == 2
    assert shared == {"parent": 1}
    made.clear()
    derived(parent)
    sheet(task)
    assert made == []  # the parent's entry and the kept memo's stay
    derived(task)
    assert made == ["derived"]  # the forgotten one is made again when asked


def test_what_a_lazy_value_made_after_the_fork_is_forgotten_and_made_again(memos: None) -> None:
    made: list[str] = []
    parent = LazyMapping(lambda: made.append("parent") or {"a": 1})
    ends = LazyMapping(lambda: made.append("ends") or {"b": 2})
    wiring = LazyTuple(lambda: made.append("wiring") or (1, 2))
    assert parent["a"] == 1
    memo.inherit()
    assert ends["b"] == 2 and wiring == (1, 2)
    assert memo.forget_if_large(above=0) == 2
    assert ends.built is False and wiring.built is False and parent.built is True
    assert dict(ends) == {"b": 2} and tuple(wiring) == (1, 2)  # made again, equal
    assert made == ["parent", "ends", "wiring", "ends", "wiring"]
    del ends
    assert len(memo._LAZY) == 2  # a lazy value that is gone leaves the list


def test_the_heap_is_given_back() -> None:
    memo.give_back()  # glibc's malloc_trim here; nothing where there is none
    assert memo._malloc_trim() is not None


def test_the_resident_set_is_read() -> None:
    assert memo.resident_bytes() > 10 * 2**20  # a Python process with pytest loaded
