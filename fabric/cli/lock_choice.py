"""Which earlier build's assignments a build keeps: the lock given with --lock, none with --no-lock, else the
previous lock in the output directory when it is this design's (another design's is noted and left)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from fabric.model.text import printable

if TYPE_CHECKING:
    from fabric.model.findings import Finding
    from fabric.spec.loader import Design


@dataclass(frozen=True)
class LockChoice:
    """What the command line says about the lock."""

    file: Path | None  # --lock FILE
    ignore: bool  # --no-lock
    allow_moves: bool  # --allow-moves
    out: Path | None  # where the build writes (its previous lock is read when no --lock is given)


def with_lock(design: Design, choice: LockChoice) -> Design:
    """The design with the lock to keep: --lock FILE, else the output directory's previous one of this design."""
    from fabric.spec.lock import LOCK_FILE, LockInput, read_lock

    if choice.ignore:
        return design
    path = choice.file
    if path is None:
        previous = (choice.out or Path("output") / design.spec.name) / LOCK_FILE
        if not previous.is_file():
            return design
        path = previous
    lock = read_lock(path)
    if choice.file is None and lock.design != design.spec.name:
        print(f"note: {printable(str(path))} is the lock of another design; not kept", file=sys.stderr)
        return design
    notes = design.notes
    if lock.design != design.spec.name:  # given with --lock: kept, and said (a renamed design, or the wrong file)
        notes = (*notes, _other_design(lock.design, design.spec.name, str(path), choice.allow_moves))
    return replace(design, lock=LockInput(lock, str(path), choice.allow_moves), notes=notes)


def _other_design(locked: str, name: str, file: str, allow_moves: bool) -> Finding:
    from fabric.model.findings import Finding, Severity

    return Finding(
        Severity.WARNING if allow_moves else Severity.ERROR,
        "lock-design",
        "name",
        f"the lock given ({printable(file)}) is design `{locked}`'s, not `{name}`'s",
        "give this design's lock, build without one (--no-lock), or keep the other design's with --allow-moves "
        "(a renamed design)",
    )
