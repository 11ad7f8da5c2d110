"""Pinned workers: a call runs on the worker named, its state stays there, results and errors come back."""

from __future__ import annotations

import os

import pytest

from fabric.fast.pinned import Pinned

_STATE: dict[str, int] = {}


def _remember(key: str, value: int) -> tuple[int, int]:
    _STATE[key] = value
    return os.getpid(), value


def _recall(key: str) -> tuple[int, int | None]:
    return os.getpid(), _STATE.get(key)


def _fail(text: str) -> None:
    raise ValueError(text)


def test_a_call_runs_on_the_worker_named_and_its_state_stays_there() -> None:
    with Pinned(2) as pool:
        assert pool.idle() == [0, 1]
        pool.submit(0, _remember, "a", 7)
        assert pool.idle() == [1]
        worker, (pid0, value) = pool.done()
        assert (worker, value) == (0, 7) and pid0 != os.getpid()
        pool.submit(1, _recall, "a")  # the other worker never saw it
        pool.submit(0, _recall, "a")
        seen = dict(pool.done() for _ in range(2))
        assert seen[0] == (pid0, 7) and seen[1][1] is None and seen[1][0] != pid0
    assert "a" not in _STATE  # the caller's own memory is not the workers'


def test_a_workers_error_is_raised_by_the_caller_and_a_busy_worker_takes_no_second_call() -> None:
    with Pinned(1) as pool:
        pool.submit(0, _fail, "no such part")
        with pytest.raises(RuntimeError):
            pool.submit(0, _recall, "a")
        with pytest.raises(ValueError, match="no such part"):
            pool.done()
        pool.submit(0, _remember, "b", 1)  # the worker goes on after an error
        assert pool.done()[1][1] == 1
