"""Every file fabric reads from outside goes through here: regular files only, bounded, UTF-8.

A device, FIFO or socket would block or never end (`/dev/zero`); it is refused after an `fstat` of a
descriptor opened with O_NONBLOCK, so even a FIFO without a writer cannot hang the open. The size limit
of each kind is enforced while reading (at most limit + 1 bytes are read), not trusted from `st_size`
(files in /proc report 0). Errors name the file and what is wrong with it, never its contents.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Literal

Kind = Literal["spec", "part", "csv", "inventory", "secret", "ibnetdiscover", "lldp", "lock", "output"]

MIB = 1024 * 1024
# Sizes per kind: far above any real design (the bundled 4-SU SuperPOD spec is 3 KB; a 4,000-node
# cabling CSV is ~3 MB), far below what could exhaust memory.
LIMITS: dict[Kind, int] = {
    "spec": 1 * MIB,
    "part": 1 * MIB,
    "csv": 32 * MIB,
    "inventory": 16 * MIB,
    "secret": 4096,
    "ibnetdiscover": 64 * MIB,
    "lldp": 16 * MIB,
    # a lock is read back by the next build: 100k GPUs on RoCE write 247 MB (and build in 1.7 GB, more than reading
    # it takes); room for four times that, the memory of a lock this large is what its build took anyway
    "lock": 1024 * MIB,
    "output": 64 * MIB,  # one file of a build's outputs (a switch config), read back by `fabric diff`
}
WHAT: dict[Kind, str] = {
    "spec": "a YAML file",
    "part": "a YAML file",
    "csv": "a CSV file",
    "inventory": "a CSV file",
    "secret": "a secret file",
    "ibnetdiscover": "an ibnetdiscover file",
    "lldp": "an LLDP file",
    "lock": "an allocations lock",
    "output": "an output file",
}


class ReadError(Exception):
    """The file cannot be read as that kind of input; `message` follows the file name."""

    def __init__(self, file: str, message: str) -> None:
        self.file = file
        self.message = message
        super().__init__(f"{file}: {message}")


def size_text(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit >= MIB else f"{limit} bytes"


def read_bytes(path: Path, kind: Kind, display: str | None = None, *, follow: bool = True) -> bytes:
    """The bytes of a regular file, at most LIMITS[kind] of them; ReadError otherwise. With `follow` False, a
    symbolic link (as the file itself) is refused, not followed (O_NOFOLLOW)."""
    name = display or str(path)
    limit = LIMITS[kind]
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:
            raise ReadError(name, f"is a symbolic link (not followed), not {WHAT[kind]}") from None
        raise ReadError(name, _reason(exc, kind)) from None
    except ValueError:  # a NUL in the path
        raise ReadError(name, "cannot be read (the path holds a NUL character)") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ReadError(name, f"is a directory, not {WHAT[kind]}")
        if not stat.S_ISREG(info.st_mode):
            raise ReadError(name, f"is not a regular file (a device, FIFO or socket), not {WHAT[kind]}")
        if info.st_size > limit:
            raise ReadError(name, f"is larger than {size_text(limit)}, the limit for {WHAT[kind]}")
        chunks: list[bytes] = []
        total = 0
        want = info.st_size + 1  # one read for a file of its stated size (the byte more sees one that grew)
        while total <= limit:
            chunk = os.read(fd, min(want, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            want = MIB
        if total > limit:
            raise ReadError(name, f"is larger than {size_text(limit)}, the limit for {WHAT[kind]}")
        return b"".join(chunks)
    except OSError as exc:
        raise ReadError(name, _reason(exc, kind)) from None
    finally:
        os.close(fd)


def read_text(path: Path, kind: Kind, display: str | None = None, *, follow: bool = True) -> str:
    """As read_bytes, decoded as UTF-8 (a leading byte-order mark dropped)."""
    return decode(read_bytes(path, kind, display, follow=follow), display or str(path))


def decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ReadError(name, f"is not UTF-8 text (line {line})") from None


def _reason(exc: OSError, kind: Kind) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno == errno.ELOOP:
        return "is a symbolic link loop"
    if exc.errno == errno.EISDIR:
        return f"is a directory, not {WHAT[kind]}"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "cannot be read (permission denied)"
    if exc.errno == errno.ENOTDIR:
        return "no such file (a parent is not a directory)"
    if exc.errno == errno.ENAMETOOLONG:
        return "cannot be read (the path is too long)"
    return f"cannot be read ({os.strerror(exc.errno) if exc.errno else 'error'})"


MAX_DIR_FILES = 10_000


def read_tree(paths: list[Path], kind: Kind, suffixes: tuple[str, ...]) -> list[tuple[Path, str | None, str]]:
    """Files, and the files with one of `suffixes` in directories (sorted, not recursive), each read as text:
    (path, text or None, why it could not be read). A directory with none of them is one problem."""
    out: list[tuple[Path, str | None, str]] = []
    for path in paths:
        try:
            is_dir = path.is_dir()
        except (OSError, ValueError):
            is_dir = False
        if is_dir:
            try:
                found = sorted(p for p in path.iterdir() if p.suffix in suffixes)
            except OSError as exc:
                out.append((path, None, _reason(exc, kind)))
                continue
            if not found:
                out.append((path, None, f"the directory holds no {' or '.join(suffixes)} file"))
            elif len(found) > MAX_DIR_FILES:
                out.append((path, None, f"the directory holds more than {MAX_DIR_FILES:,} files"))
                continue
            targets = found
        else:
            targets = [path]
        for target in targets:
            try:
                out.append((target, read_text(target, kind), ""))
            except ReadError as exc:
                out.append((target, None, exc.message))
    return out
