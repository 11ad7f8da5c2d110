"""The command line (`fabric`): `app.py` holds the typer app, the exit-code guard, the shared options and `main`;
a module per command or group registers its commands on that app (imported below, in the order `fabric --help`
lists them); `views/` holds what they print that is more than a line (the summary, plan and catalog tables, the
spec reference, the documentation's generated pages); `lock_choice.py` decides which earlier lock a build keeps.
"""

# isort: off
# imported for their commands' registration on `app`, which lists them in this order
from fabric.cli import validate, build, show, plan, reference, verify, diff, lab, traffic  # noqa: F401

# isort: on
from fabric.cli.app import INTERNAL_ERROR, app, main

__all__ = ["INTERNAL_ERROR", "app", "main"]
