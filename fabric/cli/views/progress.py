"""The progress display of a long build: one step per stage, on stderr's terminal only."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def stages(quiet: bool, total: Callable[[], int]) -> Iterator[Callable[[str], None]]:
    """A progress display per stage on a terminal, shown once a build has taken a second (gone when done);
    silent when stderr is not a terminal or with --quiet. Yields `step(description)`. `total()`: the steps."""
    if quiet:  # nothing to show: rich is not even loaded, nor the outputs counted (a refused spec never renders)
        yield lambda description: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    err = Console(stderr=True)
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )
    task = progress.add_task("checking the design", total=total())
    timer = threading.Timer(1.0, progress.start)
    timer.daemon = True
    if not progress.disable:
        timer.start()
    try:
        yield lambda description: progress.update(task, advance=1, description=description)
    finally:
        timer.cancel()
        if timer.is_alive():
            timer.join()
        progress.stop()
