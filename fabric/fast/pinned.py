"""Worker processes a caller addresses one by one: each call goes to the worker the caller names, and results come
back as they are done. A worker keeps what its calls leave in its own memory (a module's dict), so a caller that
sends a follow-up call to the worker that did the first one finds that state there rather than pickling it back
and forth (`fabric plan`'s sweep keeps a candidate's topology in the worker that built it).

docs/dev/performance.md ("The plan sweep") says where this pays.
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import Any


def _serve(conn: Connection) -> None:
    """A worker's loop: a call (function, arguments) in, (True, result) or (False, error) out; None ends it."""
    while True:
        try:
            call = conn.recv()
        except EOFError:
            return
        if call is None:
            return
        function, args, kwargs = call
        try:
            reply: tuple[bool, Any] = (True, function(*args, **kwargs))
        except Exception as exc:  # sent back whole: the caller raises it
            reply = (False, _Failed(exc, traceback.format_exc()))
        conn.send(reply)


class _Failed:
    """A worker's exception and its traceback text (the exception is raised again by the caller)."""

    def __init__(self, exc: Exception, text: str) -> None:
        self.exc, self.text = exc, text


class Pinned:
    """`count` forked worker processes, numbered from 0: `submit(worker, function, *args)` runs a call on that
    worker (one at a time each), `done()` waits for the next finished call: (worker, result). A call's exception is
    raised by `done()`. Use as a context manager: the workers end with the block (also on an error)."""

    def __init__(self, count: int) -> None:
        context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        self._busy: set[int] = set()
        for _ in range(count):
            here, there = context.Pipe()
            proc = context.Process(target=_serve, args=(there,), daemon=True)
            proc.start()
            there.close()
            self._conns.append(here)
            self._procs.append(proc)

    def __enter__(self) -> Pinned:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(graceful=exc[0] is None)

    @property
    def count(self) -> int:
        return len(self._conns)

    def idle(self) -> list[int]:
        """The workers with no call running, in number order."""
        return [w for w in range(len(self._conns)) if w not in self._busy]

    def submit(self, worker: int, function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        if worker in self._busy:
            raise RuntimeError(f"worker {worker} is running a call")
        self._conns[worker].send((function, args, kwargs))
        self._busy.add(worker)

    def done(self) -> tuple[int, Any]:
        """The next finished call's worker and result (waits for one; some call must be running)."""
        if not self._busy:
            raise RuntimeError("no call is running")
        ready = wait([self._conns[w] for w in sorted(self._busy)])
        worker = next(w for w in sorted(self._busy) if self._conns[w] in ready)
        reply: tuple[bool, Any]
        try:
            reply = self._conns[worker].recv()
        except EOFError:
            raise RuntimeError(f"worker {worker} ended") from None
        self._busy.discard(worker)
        ok, value = reply
        if not ok:
            raise value.exc from RuntimeError(value.text)
        return worker, value

    def close(self, graceful: bool = True) -> None:
        """End the workers: each is told to stop (graceful) or terminated, then joined."""
        for worker, (conn, proc) in enumerate(zip(self._conns, self._procs, strict=True)):
            if graceful and worker not in self._busy:
                try:
                    conn.send(None)
                except OSError:
                    proc.terminate()
            else:
                proc.terminate()
        for conn, proc in zip(self._conns, self._procs, strict=True):
            proc.join()
            conn.close()
        self._conns, self._procs, self._busy = [], [], set()
