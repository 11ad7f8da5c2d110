"""Control of Python's cyclic garbage collector, in one place: paused while a stage makes millions of long-lived
objects (the build's stages, the reading of a lock), and long-lived objects kept out of later collections' way
(a build that lives until the process ends, what a forked render worker inherits or keeps between tasks).
docs/dev/performance.md says why each one pays and which benchmark shows it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: the stages make millions of long-lived objects (a 100k-GPU
    fabric: millions) and next to no cyclic garbage; each automatic collection walks all of them again, a large
    share of the build (docs/dev/performance.md). Reference counting still frees everything as usual.

    On the way out the survivors go straight to the oldest generation (freeze, then unfreeze: a list splice, no
    walk); else the first collection after the pause walks them all as young objects. They
    stay collectable as any long-lived object. Skipped when something else holds objects frozen: unfreeze
    would release those too."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def keep_for_good() -> None:
    """Everything alive now stays alive until the process ends: later collections need not walk it again."""
    gc.freeze()


@contextmanager
def shared_with_children() -> Iterator[None]:
    """Objects alive now are left alone by the collectors of processes forked inside (fewer shared pages copied
    on write); released on the way out."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def worker_collects_between_tasks() -> None:
    """A forked worker: no automatic collections; it calls `after_task` at the end of each task."""
    gc.disable()


def after_task() -> None:
    """What a task left is collected, and what survives (memos later tasks read) leaves later collections' way."""
    gc.collect()
    gc.freeze()
