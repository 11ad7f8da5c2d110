"""Ending the process: without the interpreter's teardown, for a command whose work is all done; on SIGTERM or
SIGHUP, as on an interrupt (its cleanup run)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

# what ends a build as an interrupt does (SIGINT is Python's KeyboardInterrupt already)
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_installed = False  # our handlers are set (ended_like_an_interrupt's block is running)


def _defaults_in_child() -> None:
    """A forked child (a render worker, the analysis beside) gets the default actions back at once: a Python
    handler runs only between bytecodes, so a worker blocked in a lock when its pool terminates it would never
    die, and the pool's join would wait for ever."""
    if _installed:
        for signum in ENDING_SIGNALS:
            with contextlib.suppress(ValueError):  # not the main thread: nothing of ours to undo there
                signal.signal(signum, signal.SIG_DFL)


os.register_at_fork(after_in_child=_defaults_in_child)


_kept: list[object] | None = None  # what this process holds until it ends at once (None: it ends as usual)


def ends_at_once() -> None:
    """This process ends with `exit_now` (the command line's EXIT_AT_ONCE commands): `keep_to_the_end` holds."""
    global _kept
    _kept = []


def keep_to_the_end(value: T) -> T:
    """Hold `value` until the process ends, where it ends at once (else nothing). Why: as a command's frame
    unwinds, its last reference to a build goes and the build is freed object by object before the exit that frees
    it all at once (2.3 s of a million-GPU RoCE `fabric validate`, after the findings were printed). A process
    that goes on (tests, the library) keeps nothing."""
    if _kept is not None:
        _kept.append(value)
    return value


def exit_now(code: int) -> None:
    """Flush stdout and stderr, then end the process with `code` at once (`os._exit`).

    Why: at interpreter exit a large build's objects are freed one by one, CPU spent after everything was
    written (docs/dev/performance.md). What is skipped: atexit handlers, finalizers, unflushed files other than
    stdout and stderr — so call it only when nothing is left to clean up (outputs written and committed, worker
    processes joined)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


@contextmanager
def ended_like_an_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP (a service manager stopping fabric, a closed terminal) end this
    process as SIGINT does: an exception raised where it is (SystemExit with 128 + the signal's number, the
    shell's convention), so that the block's cleanup runs (`fabric build` removes its staging tree; the old
    output stays). A forked child (render workers, the analysis beside) ends at once, as by default: a pool ends
    its workers with SIGTERM. The handlers before are put back after the block."""
    owner = os.getpid()

    def end(signum: int, frame: object) -> None:
        if os.getpid() != owner:  # a forked child: the signal's default action
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise SystemExit(128 + signum)

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    global _installed
    before = {signum: signal.signal(signum, end) for signum in ENDING_SIGNALS}
    _installed = True
    try:
        yield
    finally:
        _installed = False
        for signum, handler in before.items():
            signal.signal(signum, handler)
