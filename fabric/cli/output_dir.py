"""The output directory of a command (`-o`, `--write`) checked before anything is written: a path the filesystem
can hold, and no input of the build inside it (a rebuild replaces the directory; the spec it was built from must
not go with it). A refusal is a finding, exit 2."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

if TYPE_CHECKING:
    from fabric.model.findings import Finding
    from fabric.spec.loader import Design
    from fabric.write.atomic import OutputError

NAME_MAX = 255  # bytes a name (ext4, XFS, btrfs, tmpfs)
PATH_MAX = 4095  # bytes a path (Linux's PATH_MAX, 4,096 with the final NUL)


def finding(exc: OutputError) -> Finding:
    """A refused write as the finding it is reported as."""
    from fabric.model.findings import error
    from fabric.model.text import printable

    return error(exc.code, "", printable(str(exc)), exc.hint)


def refuse(exc: OutputError) -> NoReturn:
    """Print a refused write as its finding, exit 2."""
    from fabric.cli.views.findings import print_findings

    print_findings([finding(exc)])
    print("nothing was written", file=sys.stderr)
    raise typer.Exit(2)


def check_out_path(out: Path) -> None:
    """Refuse (exit 2, `output-path`) an output path with a name or a length the filesystem cannot hold."""
    problem = out_path_problem(out)
    if problem is not None:
        refuse(problem)


def out_path_problem(out: Path) -> OutputError | None:
    """Why the filesystem cannot hold output path `out` (a name or the path too long), if it cannot."""
    from fabric.write.atomic import path_error

    absolute = os.fsencode(os.path.abspath(out))
    if len(absolute) > PATH_MAX or any(len(part) > NAME_MAX for part in absolute.split(b"/")):
        return path_error(out, OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG)))
    try:
        os.stat(out, follow_symlinks=False)
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno != errno.ENOTDIR:
            return path_error(out, exc)
    return None


def design_inputs(design: Design, spec: Path) -> list[Path]:
    """Every file the build of `design` (loaded from `spec`) read: the spec, part files, cabling CSVs, GUID
    inventories and secret files."""
    from fabric.spec.schema import CsvTopology

    base = design.base_dir
    paths = [spec, *(base / part for part in design.spec.catalog)]
    secrets = [design.spec.management.snmp_community]
    for fabric in design.spec.fabrics.values():
        if isinstance(fabric.topology, CsvTopology):
            paths.append(base / fabric.topology.file)
        ib = fabric.infiniband
        if ib is not None and ib.inventory is not None:
            paths.append(base / ib.inventory)
        if fabric.routing is not None:
            secrets.append(fabric.routing.bgp_password)
    paths.extend(base / secret.file for secret in secrets if secret is not None and secret.file is not None)
    return paths


def check_inputs_outside(out: Path, inputs: Iterable[Path], lock: Path | None = None) -> None:
    """Refuse (exit 2, `output-holds-input`) an output directory that holds (or is) an input of the build."""
    problem = inputs_inside(out, inputs, lock)
    if problem is not None:
        refuse(problem)


def inputs_inside(out: Path, inputs: Iterable[Path], lock: Path | None = None) -> OutputError | None:
    """Why `out` may not be the output directory: it holds (or is) an input of the build, which its replacement
    would remove. The lock the output holds itself is the exception: a rebuild keeps its assignments and writes
    it again (the default when no --lock is given)."""
    from fabric.model.lock_format import LOCK_FILE
    from fabric.write.atomic import OutputError

    roots = {os.path.abspath(out), os.path.realpath(out)}
    own_lock = os.path.realpath(Path(out) / LOCK_FILE)
    inside = []
    for path in [*inputs, *([lock] if lock is not None else [])]:
        if path == lock and os.path.realpath(path) == own_lock:
            continue
        for candidate in {os.path.abspath(path), os.path.realpath(path)}:
            if any(candidate == root or candidate.startswith(root.rstrip("/") + "/") for root in roots):
                inside.append(str(path))
                break
    if not inside:
        return None
    listed = ", ".join(repr(p) for p in sorted(set(inside))[:20])
    return OutputError(
        f"the output directory {str(out)!r} holds input(s) of the build: {listed}; a rebuild replaces the "
        "directory and would remove them",
        "output-holds-input",
        "choose an output directory (-o) that holds none of the build's files",
    )
