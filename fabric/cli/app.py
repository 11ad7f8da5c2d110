"""The command line's frame: the one typer `app` every command registers on, the exit-code guard, the options
several commands share, and `main`. The commands live one module per command or group beside this one
(imported by `fabric.cli`, in the order `fabric --help` lists them); what they print that is more than a line
lives in `views/`.

Exit codes: 0 clean or warnings only; 1 design errors; 2 the spec is unreadable or invalid; 3 an internal
error (a bug in fabric: an exception no stage turned into a finding), never reported as a design error.
"""

# No `from __future__ import annotations`: typer would compile every parameter's annotation string at each start.
import os
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup


def _click_exception() -> type[Exception] | None:
    """click's exception base (older typer uses click itself; newer typer vendors it as TyperException)."""
    try:
        import click
    except ImportError:
        return None
    return click.ClickException


INTERNAL_ERROR = 3
# what the command-line framework raises on purpose (exit codes, usage errors): not internal errors
_FRAMEWORK = tuple(
    t for t in (typer.Exit, typer.Abort, getattr(typer, "TyperException", None), _click_exception()) if t is not None
)


class _Guarded(TyperGroup):
    """Every command runs inside this: an exception no stage turned into a finding is an internal error,
    exit 3, with a hint to report it — never a traceback with exit 1, the design-error code."""

    def invoke(self, ctx: Any) -> Any:
        _check_env_workers()
        try:
            return super().invoke(ctx)
        except _FRAMEWORK:
            raise
        except Exception as exc:
            report_internal_error(exc)
            raise typer.Exit(INTERNAL_ERROR) from None


def _check_env_workers() -> None:
    """$FABRIC_WORKERS, when set, is a count of processes (as --workers is): else exit 2 before any command runs."""
    from fabric.fast.parallel import WorkersError, env_workers

    try:
        env_workers()
    except WorkersError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None


def parse_workers_option(value: str | None) -> int | None:
    """--workers N: as $FABRIC_WORKERS is read (fabric/fast/parallel.py's parse_workers), with the same error."""
    from fabric.fast.parallel import WorkersError, parse_workers

    if value is None:
        return None
    try:
        return parse_workers(value, "--workers")
    except WorkersError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None


def report_internal_error(exc: BaseException) -> None:
    """Name the exception and where in fabric it was raised; not its message, which may quote input."""
    package = Path(__file__).resolve().parent.parent  # the fabric package
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename).resolve()
        if path.is_relative_to(package):
            where = f" at {path.relative_to(package.parent)}:{frame.lineno}"
    print(f"internal error: {type(exc).__name__}{where}", file=sys.stderr)
    print(
        "this is a bug in fabric, not a problem of your spec: please report it with the command line and the spec "
        "(FABRIC_TRACEBACK=1 prints the traceback)",
        file=sys.stderr,
    )
    if os.environ.get("FABRIC_TRACEBACK") == "1":
        traceback.print_exception(exc, file=sys.stderr)


app = typer.Typer(
    cls=_Guarded,
    add_completion=False,
    no_args_is_help=True,
    help="Compile a GPU-cluster fabric spec into a checked, addressed and cabled plan.",
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

SpecArg = Annotated[
    Path | None,
    typer.Argument(help="Spec file (YAML). Default: the bundled 4-SU DGX SuperPOD H100 design.", show_default=False),
]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Treat warnings as errors.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")]

# Commands whose process ends at once when they are done (fabric.fast.process.exit_now, which says why). Nothing
# is left to clean up by then: `build`'s outputs are in place (written atomically), the render workers have been
# joined; `validate` has printed its findings and its forked children are gone (fast/parallel.py's `beside`).
EXIT_AT_ONCE = frozenset({"build", "validate"})


def _exit_code(done: SystemExit) -> int:
    """The process's exit code for a SystemExit, as the interpreter would make it (a message is printed)."""
    code = done.code
    if isinstance(code, int):
        return code
    if code is not None:  # a message, as sys.exit prints it
        print(code, file=sys.stderr)
        return 1
    return 0


def main() -> None:
    # numpy's BLAS would start a thread per core that spins for a while when the figures load it: CPU the stages
    # and render workers need, for no matrix product (fabric makes none); a user's setting wins
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if sys.argv[1:2] and sys.argv[1] in EXIT_AT_ONCE:
        from fabric.fast.process import ends_at_once, exit_now

        ends_at_once()
        try:
            app()
        except SystemExit as done:
            code = _exit_code(done)
        else:
            code = 0
        exit_now(code)
    app()
