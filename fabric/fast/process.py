"""Ending the process without the interpreter's teardown, for a command whose work is all done."""

from __future__ import annotations

import os
import sys


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
