"""The public API is one list (`fabric._HOME`: name → module); the type checkers' imports must name the same."""

from __future__ import annotations

import ast
import importlib

import fabric
from tests.conftest import REPO


def test_the_public_api_is_one_list_and_each_name_resolves() -> None:
    assert fabric.__all__ == sorted(fabric._HOME)
    assert len(fabric.__all__) == 11
    for name, home in fabric._HOME.items():
        assert getattr(fabric, name) is getattr(importlib.import_module(home), name)


def test_the_type_checkers_imports_match_the_list() -> None:
    tree = ast.parse((REPO / "fabric" / "__init__.py").read_text(encoding="utf-8"))
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    imported = {
        alias.name: node.module for node in guarded.body if isinstance(node, ast.ImportFrom) for alias in node.names
    }
    assert imported == fabric._HOME
