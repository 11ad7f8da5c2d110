"""Write rendered outputs atomically.

Everything is written into a fresh sibling directory first; then it is exchanged with the old
output in one `renameat2(RENAME_EXCHANGE)` call where the kernel offers it (else two renames), and
the old output is removed. A failed or interrupted build leaves the previous output as it was.
A directory that is not a fabric output (no marker file) is never replaced.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

MARKER = ".fabric-output"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class OutputError(Exception):
    pass


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories; False if the system cannot."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(result == 0)


def write_outputs(files: Mapping[str, bytes], out_dir: Path, design: str, private: Iterable[str] = ()) -> Path:
    """Write `files` (path → bytes) as `out_dir`, replacing what was there at once. Paths in `private`
    (files with secrets) are created mode 0600; `private` defaults to the files' own `.private`."""
    secret = set(private) | set(getattr(files, "private", ()))
    out_dir = out_dir.resolve()
    if out_dir.exists():
        if not out_dir.is_dir():
            raise OutputError(f"{out_dir} exists and is not a directory")
        if any(out_dir.iterdir()) and not (out_dir / MARKER).exists():
            raise OutputError(f"{out_dir} is not empty and was not written by fabric; choose another -o directory")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.new-", dir=out_dir.parent))
    try:
        for rel, data in sorted(files.items()):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if rel in secret:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
            else:
                target.write_bytes(data)
        (staging / MARKER).write_text(f"written by fabric for design {design}\n", encoding="utf-8")
        staging.chmod(0o755)
        if out_dir.exists():
            if not _exchange(staging, out_dir):
                old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
                old.rmdir()
                os.rename(out_dir, old)
                os.rename(staging, out_dir)
                staging = old
            shutil.rmtree(staging)  # now the old output
        else:
            os.rename(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out_dir
