"""The command line (`fabric`): `app.py` holds the commands, `views/` what they print that is more than a line
(the catalog tables, the spec reference, the documentation's generated pages)."""

from fabric.cli.app import INTERNAL_ERROR, app, main

__all__ = ["INTERNAL_ERROR", "app", "main"]
