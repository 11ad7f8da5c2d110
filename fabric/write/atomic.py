"""Write rendered outputs atomically.

Everything is written into a fresh sibling directory first (`.<out>.new-XXXX`, its marker file written
before anything else, so an interrupted build's leftovers are recognisable; a `Staging`, which render
workers forked after it write into as they render, so no file's bytes cross a pipe) and made durable (one
syncfs(2), else a fsync of every file and directory); then it is exchanged with the old output in one
`renameat2(RENAME_EXCHANGE)` call where the kernel offers it (else two renames), and the old output is
removed. A failed or interrupted build leaves the previous output as it was; the next build removes what
an interrupted one left behind.

Every path is checked before it is written: relative, no `..`, `.` or empty parts, each part a
single line of printable text; files and directories are created through directory descriptors with
O_NOFOLLOW|O_EXCL, so nothing — a template, a name, a symlink planted in the staging tree — can put a file
outside the output directory. A directory that is not a fabric output (no marker file) is never replaced.

No file fabric did not write is ever removed: every output carries, beside its marker, a manifest
(`.fabric-manifest`) of the files written into it, and a rebuild replaces the old output only if it holds
nothing else — a user's `NOTES.txt`, a `.git/`, a file put in place of one fabric wrote — else it is refused
with the list of those entries (`output-foreign`; refusing is safer than carrying them over, which would have
to pick between a user's file and a new output of the same name). The manifest records each file's content
digest too (SHA-1 of its bytes, taken as they are written: a line is `sha1sum`'s, `<40 hex>  <path>`; no clock,
so the same spec still writes the same tree), and a rebuild over a file fabric wrote that was edited since is
refused as well, with the list of the edited files (`output-modified`): a hand edit is never replaced silently.
The manifest is read as untrusted input: bounded, every line a digest of 40 lowercase hex digits and an output
path as `output_parts` checks it, no path twice (a manifest of paths alone, as fabric wrote before digests, is
read as such: its files' contents are not known, so they are not compared).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import hashlib
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

from fabric.model.rendered import Rendered

MARKER = ".fabric-output"
MANIFEST = ".fabric-manifest"  # the files written into the output, `<sha1 hex>  <relative path>` a line, by path
DIGESTS = ".fabric-digests-"  # + a render worker's pid: the digests of what it wrote, in the staging root until commit
DIGEST_HEX = 40  # the length of a SHA-1 digest in hex
HASHERS = 4  # threads that hash an old output's files (hashlib and os.read release the GIL)
HASH_BATCH = 512  # files a hashing thread takes at once (whole directories)
MANIFEST_BYTES = 64 * 1024 * 1024  # 64 MiB: far above the paths of the largest design's outputs
MANIFEST_ENTRIES = 1_000_000
SHOWN_FOREIGN = 20  # entries a refusal lists by name (then "and N more")
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class OutputError(Exception):
    """A refused write; `code` is the finding code it is reported as (fabric/model/codes.py)."""

    def __init__(self, message: str, code: str = "output-refused", hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint


def staging_prefixes(name: str) -> tuple[str, str]:
    """Name prefixes of the sibling directories a build of output `name` creates (new tree, old tree)."""
    return f".{name}.new-", f".{name}.old-"


def output_parts(path: str) -> tuple[str, ...]:
    """The parts of an output path, or OutputError if it could land anywhere but inside the output."""
    if not isinstance(path, str) or not path:
        raise OutputError(f"refusing to write output path {path!r}: not a non-empty string")
    parts = tuple(path.split("/"))
    # (an absolute path starts with "/"; the whole path is printable and free of backslashes if every part is)
    if path.startswith("/") or "" in parts or "." in parts or ".." in parts:
        raise OutputError(f"refusing to write output path {path!r}: it must be relative, without `..`, `.` or `//`")
    if not path.isprintable() or "\\" in path:
        raise OutputError(f"refusing to write output path {path!r}: a part is not a single line of printable text")
    if parts in ((MARKER,), (MANIFEST,)) or (len(parts) == 1 and path.startswith(DIGESTS)):
        raise OutputError(f"refusing to write output path {path!r}: that is the output marker")
    return parts


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


def _libc_syncfs() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    function = getattr(ctypes.CDLL(name, use_errno=True), "syncfs", None) if name else None
    return cast("Callable[[int], int] | None", function)


# syncfs(2) flushes the whole staging tree in one call (a fsync per file is a disk round trip each);
# without it, every file and directory is fsynced on its own
_SYNCFS = _libc_syncfs()


def _sync(fd: int) -> None:
    """Make everything written so far durable: the filesystem of `fd` (syncfs), else `fd` itself."""
    if _SYNCFS is None:
        os.fsync(fd)
    elif _SYNCFS(fd) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


# text is encoded slice by slice: a slice's bytes come from memory just freed, where one bytes object of a whole
# file (95 MB of cabling.csv at 100k GPUs) is fresh pages the kernel faults in and zeroes one by one (~4x slower)
_SLICE = 64 * 1024


def _digest() -> Any:
    """A new content digest (of the manifest): SHA-1, OpenSSL's (SHA-NI where the CPU has it: 1.3 GB/s on the
    development machine, where blake2b ran at 0.9 GB/s). It tells a user's edit from fabric's bytes; it guards
    against no forger, who could as well rewrite the manifest."""
    return hashlib.sha1(usedforsecurity=False)


def _write_file(dir_fd: int, name: str, data: bytes | str | Iterable[str], mode: int) -> str:
    """Create `name` in the directory `dir_fd` (never through a symlink, never over a file) holding `data` (text
    as UTF-8; an iterable of texts: each as it comes, TextPieces' pieces); fsync it unless the tree is synced at
    once. Returns the digest of its bytes, hashed as they are written (they are in memory). A text that is not
    UTF-8 (a lone surrogate) raises UnicodeEncodeError, maybe after the file got its first pieces."""
    digest = _digest()
    fd = os.open(name, _FILE_FLAGS, mode, dir_fd=dir_fd)
    try:  # os.write, not a file object: no buffer, no fstat (840 files at 4 x 256 EOS)
        if isinstance(data, bytes):
            _write_all(fd, data)
            digest.update(data)
        else:
            for text in (data,) if isinstance(data, str) else data:
                for start in range(0, len(text), _SLICE):
                    chunk = text[start : start + _SLICE].encode()  # (a slice never splits a character)
                    _write_all(fd, chunk)
                    digest.update(chunk)
        if _SYNCFS is None:
            os.fsync(fd)
    finally:
        os.close(fd)
    return str(digest.hexdigest())


def _write_all(fd: int, data: bytes) -> None:
    done = os.write(fd, data)
    if done < len(data):  # a short write (a signal, a full disk): the rest, until it is all written
        view = memoryview(data)[done:]
        while view:
            done = os.write(fd, view)
            if done == 0:  # (no progress, no error: never seen on a file, but not a reason to spin)
                raise OSError(errno.EIO, "a write made no progress")
            view = view[done:]


def _rmtree(path: Path) -> None:
    """Remove a tree another build may be removing at the same time: directory by directory in threads, through
    directory descriptors (never through a symlink); whatever that leaves (a symlink to a directory, an error)
    shutil.rmtree removes, raising what it cannot."""
    with contextlib.suppress(OSError):
        _remove_in_threads(path)
    if os.path.lexists(path):

        def gone_is_fine(function: Callable[..., Any], target: str, exc_info: Any) -> None:
            if not isinstance(exc_info[1], FileNotFoundError):
                raise exc_info[1]

        shutil.rmtree(path, onerror=gone_is_fine)


DIRS_OPEN = 64  # staging directory descriptors a writing process keeps open (the most recently used)
REMOVERS = 8  # threads: ext4 removes the entries of different directories at once, each unlink mostly waiting
_OPEN_AT_ONCE = 256  # directory descriptors handed to the threads and not yet closed


def _remove_in_threads(path: Path) -> None:
    """Each directory's files unlinked in a thread of its own, a directory without subdirectories removed with its
    files; the others last, deepest first: an old output of thousands of directories goes in less wall time, for
    as much CPU (docs/dev/performance.md)."""
    slots = threading.BoundedSemaphore(_OPEN_AT_ONCE)
    held: dict[str, int] = {}  # the directories with subdirectories: a descriptor of each, until the end
    inner: list[str] = []

    def clear(fd: int, files: list[str], parent: int, name: str) -> None:
        try:
            for file in files:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(file, dir_fd=fd)
        finally:
            os.close(fd)
            slots.release()
        if parent >= 0:
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(name, dir_fd=parent)

    try:
        with ThreadPoolExecutor(REMOVERS) as pool:
            pending = []
            for root, dirs, files, fd in os.fwalk(path):
                parent = held.get(os.path.dirname(root), -1)
                leaf = not dirs and parent >= 0
                if dirs:
                    held[root] = os.dup(fd)
                    inner.append(root)
                if files or leaf:
                    slots.acquire()
                    pending.append(
                        pool.submit(clear, os.dup(fd), files, parent if leaf else -1, os.path.basename(root))
                    )
            for task in pending:
                task.result()
        for root in reversed(inner[1:]):  # (the top is removed by its path below)
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(os.path.basename(root), dir_fd=held[os.path.dirname(root)])
    finally:
        for fd in held.values():
            os.close(fd)
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(path)


def remove_stale(parent: Path, name: str) -> list[Path]:
    """Remove what interrupted builds of output `name` left in `parent`: directories with a staging prefix
    that hold the marker (or nothing at all) and that no running build holds locked. Returns them."""
    removed: list[Path] = []
    prefixes = staging_prefixes(name)
    try:
        entries = sorted(e.name for e in os.scandir(parent) if e.name.startswith(prefixes))
    except OSError:
        return removed
    for entry in entries:
        path = parent / entry
        try:
            fd = os.open(path, _DIR_FLAGS)
        except OSError:
            continue  # not a directory (or a symlink): not ours
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a build writing it right now
            try:
                ours = os.stat(MARKER, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                ours = None
            if ours is not None:
                _rmtree(path)
            elif not os.listdir(fd):
                os.rmdir(path)  # killed between creating it and writing the marker
            else:
                continue
            removed.append(path)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


class Staging:
    """The staging tree of one build of `out_dir`: files go in with `write` (from this process or from render
    workers forked after it was made, each through its own directory descriptors), then `commit` makes the
    tree durable and exchanges it with the old output, or `abort` removes it. Until commit the old output
    stays as it was."""

    def __init__(self, out_dir: Path, design: str) -> None:
        given = out_dir
        verified: dict[str, tuple[int, ...]] = {}  # the old output's unedited files: path -> what lstat said
        if not design.isprintable():
            raise OutputError("refusing to write: the design name is not a single line of printable text")
        out_dir = Path(os.path.abspath(out_dir))
        if not out_dir.name or not out_dir.name.isprintable():
            raise OutputError(f"refusing to write to {str(out_dir)!r}: not a directory name of printable text")
        try:
            out_dir = out_dir.resolve()
            if out_dir.exists() and not out_dir.is_dir():
                raise OutputError(f"{given} exists and is not a directory", "output-foreign")
            refuse_foreign(out_dir, given, verified)
        except OSError as exc:
            raise path_error(given, exc) from None
        parent = out_dir.parent
        self._made = [p for p in (parent, *parent.parents) if not p.exists()]  # removed again by abort
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale(parent, out_dir.name)
        self.out_dir = out_dir
        self._path = Path(tempfile.mkdtemp(prefix=staging_prefixes(out_dir.name)[0], dir=parent))
        self._owner = self._parent = os.getpid()
        self._dirs: dict[tuple[str, ...], int] = {}
        self._digests: dict[str, str] = {}  # path -> digest of the files this process wrote
        self._digest_fd = -1  # a render worker's file of digests (DIGESTS + its pid)
        self._verified = verified
        self._root = -1
        try:
            self._root = os.open(self._path, _DIR_FLAGS)
            fcntl.flock(self._root, fcntl.LOCK_EX)  # released by the kernel whenever this process ends
            _write_file(self._root, MARKER, f"written by fabric for design {design}\n".encode(), 0o666)
        except BaseException:
            self.abort()
            raise
        self._dirs[()] = self._root

    def _directory(self, key: tuple[str, ...]) -> int:
        """A descriptor of the staging directory `key` (made if need be). The most recently used `DIRS_OPEN` stay
        open: outputs are written directory by directory, and a million GPUs' host files are 125,000 of them,
        past a process's descriptor limit (1,024 by default; the build stopped at "Too many open files")."""
        if self._owner != os.getpid():  # a forked worker: its own descriptors (the inherited ones are shared)
            self._dirs, self._owner, self._digest_fd = {(): self._root}, os.getpid(), -1
        dirs = self._dirs
        fd = dirs.pop(key, None)
        if fd is None:
            parent = self._directory(key[:-1])
            with contextlib.suppress(FileExistsError):  # made by another worker
                os.mkdir(key[-1], 0o777, dir_fd=parent)
            fd = os.open(key[-1], _DIR_FLAGS, dir_fd=parent)
            if len(dirs) > DIRS_OPEN:  # the least recently used one (after the root, which stays) closed
                oldest = next(k for k in dirs if k)
                os.close(dirs.pop(oldest))
        dirs[key] = fd  # (a dict keeps insertion order: the last is the most recently used)
        return fd

    def write(self, rel: str, data: bytes | str | Iterable[str], private: bool) -> None:
        """Create file `rel` holding `data` (text as UTF-8, texts one after the other), mode 0600 if `private`;
        OutputError if its path could leave the output or something is in the way."""
        path = output_parts(rel)
        try:
            digest = _write_file(self._directory(path[:-1]), path[-1], data, 0o600 if private else 0o666)
            self._record(rel, digest)
        except OSError as exc:
            why = {
                errno.ELOOP: "a symlink is in the way",
                errno.ENOTDIR: "a symlink or a file is in the way",
                errno.EEXIST: "it exists already",
            }.get(exc.errno or 0)
            raise OutputError(f"refusing to write output path {rel!r}: {why or exc.strerror or exc}") from exc

    def _record(self, rel: str, digest: str) -> None:
        """Keep the digest of a file written for the manifest: in memory in the building process; a render worker
        (forked) appends it to a file of its own in the staging root, which commit reads."""
        if os.getpid() == self._parent:
            self._digests[rel] = digest
            return
        if self._digest_fd < 0:
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
            self._digest_fd = os.open(f"{DIGESTS}{os.getpid()}", flags, 0o600, dir_fd=self._root)
        _write_all(self._digest_fd, f"{digest}  {rel}\n".encode())

    def _workers_digests(self) -> None:
        """Take the digests the render workers recorded into `_digests` and remove their files."""
        for name in os.listdir(self._root):
            if not name.startswith(DIGESTS):
                continue
            for line in _read_at(self._root, name).decode().splitlines():
                digest, _, rel = line.partition("  ")
                self._digests[rel] = digest
            os.unlink(name, dir_fd=self._root)

    def _close_dirs(self) -> None:
        for key, fd in self._dirs.items():
            if key:
                os.close(fd)
        self._dirs = {(): self._root}

    def commit(self) -> Path:
        """Make the tree durable, then put it in place of the old output (removed). Returns the output."""
        staging, out_dir, parent = self._path, self.out_dir, self.out_dir.parent
        try:
            if _SYNCFS is None:  # every directory on its own (workers made some), the root by _sync
                for path, _, _, fd in os.fwalk(".", topdown=False, dir_fd=self._root):
                    if path != ".":
                        os.fsync(fd)
            self._close_dirs()
            self._workers_digests()
            _write_file(self._root, MANIFEST, _manifest_text(self._root, self._digests), 0o666)
            os.fchmod(self._root, 0o755)
            _sync(self._root)
            # again: a file the user put there or edited while the build rendered (only files whose lstat changed
            # since the first check are hashed again)
            refuse_foreign(out_dir, verified=self._verified)
            if out_dir.exists():
                if not _exchange(staging, out_dir):
                    old = Path(tempfile.mkdtemp(prefix=staging_prefixes(out_dir.name)[1], dir=parent))
                    old.rmdir()
                    os.rename(out_dir, old)
                    try:
                        os.rename(staging, out_dir)
                    except BaseException:
                        os.rename(old, out_dir)
                        raise
                    staging = old
                _fsync_dir(parent)
                _rmtree(staging)  # now the old output
            else:
                os.rename(staging, out_dir)
                _fsync_dir(parent)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        finally:
            self._close()
        return out_dir

    @contextlib.contextmanager
    def syncing(self, every: float = 0.1) -> Iterator[None]:
        """While the block runs (the render workers writing the tree), a thread of its own flushes what is written
        so far every `every` seconds, so that commit's sync finds little left: the disk writes while the cores
        render (docs/dev/performance.md). Durability stays commit's; its sync reports any error."""
        if _SYNCFS is None:  # every file is fsynced as it is written
            yield
            return
        syncfs, root, stop = _SYNCFS, self._root, threading.Event()

        def flush() -> None:
            while not stop.wait(every):
                syncfs(root)

        thread = threading.Thread(target=flush, name="fabric-sync", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def abort(self) -> None:
        """Remove the tree (and the directories made to hold it); the old output stays."""
        shutil.rmtree(self._path, ignore_errors=True)
        self._close()
        for made in self._made:
            with contextlib.suppress(OSError):  # not empty: someone else's now
                made.rmdir()

    def _close(self) -> None:
        if self._root >= 0:
            self._close_dirs()
            os.close(self._root)
            self._root = -1
            self._dirs = {}


def write_outputs(rendered: Rendered, out_dir: Path, design: str) -> Path:
    """Write `rendered` (what render_all returns) as `out_dir`, replacing what was there at once. Files it
    marks private (secrets) are created mode 0600."""
    if not isinstance(rendered, Rendered):
        raise TypeError(f"write_outputs takes the Rendered value of render_all, not {type(rendered).__name__}")
    for rel in rendered:
        output_parts(rel)  # every path checked before anything is written
    staging = Staging(out_dir, design)
    try:
        for rel, data in rendered.items():
            staging.write(rel, data, rel in rendered.private)
    except BaseException:
        staging.abort()
        raise
    return staging.commit()


def path_error(path: Path, exc: OSError) -> OutputError:
    """An OSError met on the output's path as the finding it is reported as (a name too long, a file in the way)."""
    if exc.errno == errno.ENAMETOOLONG:
        return OutputError(
            f"cannot write to {printable_path(path)}: a name in the path is longer than the filesystem allows "
            "(255 bytes a name on most filesystems, 4,096 a path on Linux)",
            "output-path",
            "choose a shorter -o directory",
        )
    return OutputError(f"cannot write to {printable_path(path)}: {exc.strerror or 'error'}", "output-path")


def printable_path(path: Path, most: int = 120) -> str:
    """`path` quoted, shortened to its first and last characters when long."""
    text = str(path)
    return repr(text if len(text) <= most else f"{text[: most // 2]}…{text[-most // 2 :]}")


def _manifest_text(root: int, digests: dict[str, str]) -> bytes:
    """The manifest of the staging tree `root`: every file in it but the marker, `<digest>  <relative path>` a
    line, by path; the digests as `digests` has them (taken as the files were written), else hashed here."""
    lines: list[tuple[str, str]] = []
    for top, _, files, fd in os.fwalk(".", dir_fd=root):
        prefix = "" if top == "." else top[2:] + "/"
        for name in files:
            if top == "." and name in (MARKER, MANIFEST):
                continue
            path = prefix + name
            digest = digests.get(path)
            lines.append((path, digest if digest is not None else _hash_at(fd, name)))
    return "".join(f"{digest}  {path}\n" for path, digest in sorted(lines)).encode()


def _hash_at(dir_fd: int, name: str) -> str:
    """The digest of the regular file `name` in the directory `dir_fd` (never through a symlink)."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        digest = _digest()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
    finally:
        os.close(fd)
    return str(digest.hexdigest())


_HEX = frozenset("0123456789abcdef")


def read_manifest(out_dir: Path, shown_as: Path | None = None) -> dict[str, str | None] | None:
    """The files the manifest of output `out_dir` lists, each with its digest (None in a manifest of paths alone,
    as fabric wrote before digests); None if it has none; OutputError if it is not one fabric could have written
    (too large, not a regular file, a digest that is not 40 lowercase hex digits, digests on some lines only, a
    path that could leave the output or is listed twice), naming the directory `shown_as`."""
    shown = shown_as or out_dir
    try:
        fd = os.open(out_dir / MANIFEST, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputError(
            f"{shown}: its manifest {MANIFEST} cannot be read ({exc.strerror})", "output-foreign"
        ) from None
    damaged = OutputError(
        f"{shown}: its manifest {MANIFEST} is not one fabric wrote; what else the directory holds is unknown",
        "output-foreign",
        "move the files you keep out of it, remove it, or choose another -o directory",
    )
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise damaged
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > MANIFEST_BYTES:
                raise damaged
            chunks.append(chunk)
    finally:
        os.close(fd)
    try:
        lines = b"".join(chunks).decode().split("\n")
    except UnicodeDecodeError:
        raise damaged from None
    if lines[-1] != "" or len(lines) > MANIFEST_ENTRIES + 1:
        raise damaged
    written: dict[str, str | None] = {}
    with_digests = bool(lines[0]) and _digest_line(lines[0])
    for line in lines[:-1]:
        if with_digests != _digest_line(line) or (not with_digests and line[DIGEST_HEX : DIGEST_HEX + 2] == "  "):
            raise damaged  # a digest on some lines only, or one that is not 40 lowercase hex digits
        digest, path = (line[:DIGEST_HEX], line[DIGEST_HEX + 2 :]) if with_digests else (None, line)
        if path in written:
            raise damaged
        try:
            output_parts(path)
        except OutputError:
            raise damaged from None
        written[path] = digest
    return written


def _digest_line(line: str) -> bool:
    """Whether a manifest line is `<40 lowercase hex>  <path>` (else it is read as a path alone)."""
    return line[DIGEST_HEX : DIGEST_HEX + 2] == "  " and _HEX.issuperset(line[:DIGEST_HEX])


def foreign_entries(out_dir: Path, shown_as: Path | None = None) -> list[str]:
    """What `out_dir` holds that fabric did not write (relative paths, sorted; a foreign directory is one entry,
    not looked into): everything in a directory without the marker, or without a manifest (an output of a
    fabric before manifests), else every file, symlink or directory its manifest does not list."""
    try:
        top = sorted(os.listdir(out_dir))
    except FileNotFoundError:
        return []
    if not top:
        return []
    if not os.path.isfile(out_dir / MARKER) or os.path.islink(out_dir / MARKER):
        return top
    written = read_manifest(out_dir, shown_as)
    if written is None:
        return [name for name in top if name != MARKER]
    dirs = {"/".join(p.split("/")[:i]) for p in written for i in range(1, p.count("/") + 1)}
    foreign: list[str] = []
    pending = [""]
    while pending:
        rel = pending.pop()
        with os.scandir(out_dir / rel if rel else out_dir) as entries:
            for entry in entries:
                path = f"{rel}/{entry.name}" if rel else entry.name
                if not rel and entry.name in (MARKER, MANIFEST):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    (pending if path in dirs else foreign).append(path)
                elif entry.is_symlink() or not entry.is_file(follow_symlinks=False) or path not in written:
                    foreign.append(path)  # (fabric writes no symlink, FIFO or device)
    return sorted(foreign)


def _signature(st: os.stat_result) -> tuple[int, ...]:
    """What tells that a file was not touched since it was last hashed (kept in memory only, never written)."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def modified_entries(out_dir: Path, verified: dict[str, tuple[int, ...]] | None = None) -> list[str]:
    """The files of output `out_dir` its manifest lists with a digest that their bytes no longer have (edited by
    hand since fabric wrote them), sorted. A listed file that is gone or is no regular file is not one
    (foreign_entries reports what is in a file's place). Files whose lstat is as `verified` recorded when they were
    last found unedited are not hashed again; `verified` gets every file found unedited. Hashed directory by
    directory (one descriptor each), in batches of about HASH_BATCH files spread over HASHERS threads: a future
    and a directory open per file were a third of the check's CPU at 62,000 files (docs/dev/performance.md)."""
    written = read_manifest(out_dir) if os.path.isdir(out_dir) else None
    if not written:
        return []
    verified = {} if verified is None else verified
    by_dir: dict[str, list[tuple[str, str, str]]] = {}  # parent -> (path, name, digest)
    for path, digest in written.items():
        if digest is not None:
            parent, _, name = path.rpartition("/")
            by_dir.setdefault(parent, []).append((path, name, digest))
    batches: list[list[tuple[str, list[tuple[str, str, str]]]]] = [[]]
    size = 0
    for parent, files in by_dir.items():
        if size >= HASH_BATCH:
            batches.append([])
            size = 0
        batches[-1].append((parent, files))
        size += len(files)

    def edited(batch: list[tuple[str, list[tuple[str, str, str]]]]) -> list[str]:
        found: list[str] = []
        for parent, files in batch:
            try:
                fd = os.open(f"{out_dir}/{parent}" if parent else out_dir, _DIR_FLAGS)
            except OSError:  # gone, or a symlink or a file in its place: foreign_entries tells
                continue
            try:
                for path, name, digest in files:
                    try:
                        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                        if not stat.S_ISREG(st.st_mode) or verified.get(path) == _signature(st):
                            continue
                        if _hash_at(fd, name) != digest:
                            found.append(path)
                            continue
                    except OSError:  # gone or replaced meanwhile (by a symlink, a directory): foreign_entries tells
                        continue
                    verified[path] = _signature(st)
            finally:
                os.close(fd)
        return found

    if len(batches) < 2:
        flagged = [edited(batch) for batch in batches]
    else:
        with ThreadPoolExecutor(HASHERS) as pool:
            flagged = list(pool.map(edited, batches))
    return sorted(path for found in flagged for path in found)


def refuse_foreign(
    out_dir: Path, shown_as: Path | None = None, verified: dict[str, tuple[int, ...]] | None = None
) -> None:
    """OutputError (`output-foreign`) listing what `out_dir` (named `shown_as`) holds that fabric did not write,
    if anything; else (`output-modified`) the files fabric wrote there that were edited since, if any (`verified`
    as modified_entries takes it)."""
    foreign = foreign_entries(out_dir, shown_as)
    if not foreign:
        edited = modified_entries(out_dir, verified)
        if edited:
            raise OutputError(
                f"{shown_as or out_dir} holds files fabric wrote that were changed since; a rebuild would replace "
                f"them: {_listed(edited)}",
                "output-modified",
                "keep your edits elsewhere (move the file out of the directory) or give them up (delete the file), "
                "or choose another -o directory; nothing was written",
            )
        return
    shown = _listed(foreign)
    if not (out_dir / MARKER).is_file():
        why = "is not empty and was not written by fabric"
    elif read_manifest(out_dir) is None:
        why = "was written by a fabric without an output manifest, so what it wrote is not known"
    else:
        why = "holds entries fabric did not write"
    raise OutputError(
        f"{shown_as or out_dir} {why}; a rebuild would remove them: {shown}",
        "output-foreign",
        "move the files you keep out of it (or remove it), or choose another -o directory; nothing was written",
    )


def _listed(paths: list[str]) -> str:
    """The first SHOWN_FOREIGN paths quoted, then how many more."""
    more = f" and {len(paths) - SHOWN_FOREIGN:,} more" if len(paths) > SHOWN_FOREIGN else ""
    return ", ".join(repr(name) for name in paths[:SHOWN_FOREIGN]) + more


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, _DIR_FLAGS)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_new_files(directory: Path, files: dict[str, bytes]) -> Path:
    """Write `files` (plain names) into `directory` (made if missing) without replacing anything: a file of the
    same bytes is left as it is, another one refused (OutputError, `output-foreign`) before anything is written.
    Each file appears whole (written aside, then hard-linked to its name, which fails rather than replace a file
    made meanwhile); nothing else in the directory is touched."""
    for name in files:
        if output_parts(name) != (name,) or name.startswith("."):
            raise OutputError(f"refusing to write {name!r}: not a plain file name")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory, _DIR_FLAGS)
    except OSError as exc:
        raise path_error(directory, exc) from None
    try:
        todo = {}
        for name, data in files.items():
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                todo[name] = data
                continue
            if not stat.S_ISREG(st.st_mode) or st.st_size != len(data) or _read_at(fd, name) != data:
                raise OutputError(
                    f"{directory / name} exists and is not the file this would write; it is left as it is",
                    "output-foreign",
                    "move or rename it, or write into another directory",
                )
        for name, data in todo.items():
            aside = f".{name}.new-{os.getpid()}"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(aside, dir_fd=fd)
            _write_file(fd, aside, data, 0o666)
            os.fsync(fd) if _SYNCFS is None else _sync(fd)
            try:
                os.link(aside, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
            except FileExistsError:
                raise OutputError(f"{directory / name} was made while this wrote it; it is left as it is") from None
            finally:
                os.unlink(aside, dir_fd=fd)
            os.fsync(fd)
    finally:
        os.close(fd)
    return directory


def _read_at(dir_fd: int, name: str) -> bytes:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)
