"""What creating a file costs on the disk a benchmark writes to. Plain stdlib (build.py and floor.py use it).

Why it varies: an ext4 filesystem without a journal (this machine's root: `/sys/fs/ext4/<dev>/journal_task` is
`<none>`) avoids reusing an inode freed in the last 60 s, or 360 s while its inode table block is dirty (a block
a create has just written to is): to allocate one it walks the free bits of the block group, reading each
candidate's deletion time, and takes a recently freed one only when the group has nothing else (Linux
fs/ext4/ialloc.c: `find_inode_bit`, `recently_deleted`, RECENTCY_MIN and RECENTCY_DIRTY). A build started
within minutes of the removal of a tree as large as its own lands in the groups just freed, and every file it
creates walks a whole group: 0.35–0.6 ms of kernel CPU a file instead of 20–30 µs (`perf record` of 5,000
creates: 85 % of the samples in `find_inode_bit` and what it calls, `find_get_block_common` 33 % and
`recently_deleted` 26 %). That is a cost of the removal, not of the build timed after it. A journalled ext4 or
XFS (what servers run) does no such walk. Keeping a benchmark's trees until its last run needs the disk for all
of them (a 1M-GPU build writes 7.8 GB)."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

PROBE_FILES = 256


def create_us(parent: Path, files: int = PROBE_FILES) -> float:
    """µs of wall time to create (and write 1 KiB into) one file, in a new directory under `parent` that is left
    there (removing it would free inodes for the next creates to walk past)."""
    probe = Path(tempfile.mkdtemp(prefix="create-probe-", dir=parent))
    start = time.perf_counter()
    for i in range(files):
        fd = os.open(probe / f"f{i}", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        os.write(fd, b"x" * 1024)
        os.close(fd)
    return (time.perf_counter() - start) / files * 1e6
