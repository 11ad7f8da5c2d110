"""Where the bundled templates and designs are: in the source tree, or inside an installed wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # the fabric package
_SOURCE_ROOT = _PACKAGE.parent

DEFAULT_DESIGN = "superpod-h100-4su.yaml"


def _first_dir(*candidates: Path) -> Path:
    for path in candidates:
        if path.is_dir():
            return path
    return candidates[0]


def templates_dir() -> Path:
    """`templates/` of a source checkout, else the copy a wheel carries as `fabric/_templates`."""
    return _first_dir(_SOURCE_ROOT / "templates", _PACKAGE / "_templates")


def designs_dir() -> Path:
    return _first_dir(_SOURCE_ROOT / "designs", _PACKAGE / "_designs")


def default_spec() -> Path:
    return designs_dir() / DEFAULT_DESIGN
