"""The documentation site (docs/, mkdocs.yml) and README.md: generated pages are fresh, every relative link
resolves, the README stays short, the site builds in strict mode, and the tutorial's spec builds."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from fabric import build_fabric, load_spec
from fabric.cli.views.reference_pages import GENERATED, pages
from fabric.model.findings import Severity
from tests.conftest import DESIGNS, REPO

DOCS = REPO / "docs"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)


@cache
def _pages() -> dict[str, str]:
    return pages()


def _markdown_files() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def _links(text: str) -> list[str]:
    text = FENCE.sub("", text)  # a code block's brackets are no links
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


def _generated_on_disk() -> list[str]:
    """The generated pages in docs/, by their first line (the spec reference, also `fabric schema --markdown`'s
    output, has no marker line): a listing, so collecting renders no page."""
    found = ["spec/reference.md"]
    for path in sorted(DOCS.rglob("*.md")):
        with path.open(encoding="utf-8") as file:
            if file.readline() == GENERATED:
                found.append(str(path.relative_to(DOCS)))
    return sorted(found)


@pytest.mark.parametrize("page", _generated_on_disk(), ids=str)
def test_generated_page_is_fresh(page: str) -> None:
    assert page in _pages(), f"docs/{page} is no longer generated: delete it"
    assert (DOCS / page).read_text(encoding="utf-8") == _pages()[page], f"docs/{page} is stale: run `./dev docs`"


def test_every_generated_page_is_in_docs() -> None:
    missing = sorted(set(_pages()) - set(_generated_on_disk()))
    assert missing == [], f"generated pages missing from docs/: {missing}; run `./dev docs`"


@pytest.mark.parametrize("source", _markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(source: Path) -> None:
    broken = []
    for target in _links(source.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # an absolute URL (http:, mailto:) or an anchor of the same page
        path = target.split("#", 1)[0]
        if not (source.parent / path).exists():
            broken.append(target)
    assert broken == [], f"{source.relative_to(REPO)} links to files that do not exist: {broken}"


def test_readme_is_short_and_starts_with_the_set_up_commands() -> None:
    readme = (REPO / "README.md").read_bytes()
    assert len(readme) <= 8192, f"README.md is {len(readme)} bytes: move detail into docs/"
    text = readme.decode("utf-8")
    first_block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    assert first_block.startswith("./dev build") and "\n./dev test" in first_block
    assert "fabric-netcompiler" in text and "SSH" in text


def test_every_page_is_in_the_nav() -> None:
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [str(p.relative_to(DOCS)) for p in sorted(DOCS.rglob("*.md")) if str(p.relative_to(DOCS)) not in config]
    assert missing == [], f"pages not in mkdocs.yml's nav: {missing}"


def _mkdocs() -> list[str]:
    beside = Path(sys.executable).parent / "mkdocs"  # the venv's script
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "mkdocs"]


def test_the_site_builds_in_strict_mode(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        if os.environ.get("FABRIC_REQUIRE_REAL") == "1":
            pytest.fail("mkdocs-material is not installed (pip install mkdocs-material)")
        pytest.skip("mkdocs-material is not installed (pip install mkdocs-material)")
    result = subprocess.run(
        [*_mkdocs(), "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").exists()


def test_the_tutorial_shows_its_spec_and_the_spec_builds_clean() -> None:
    spec = DESIGNS / "tutorial-256.yaml"
    page = (DOCS / "tutorial.md").read_text(encoding="utf-8")
    shown = page.split("<!-- tutorial spec: designs/tutorial-256.yaml -->\n```yaml\n", 1)[1].split("```", 1)[0]
    assert shown == spec.read_text(encoding="utf-8"), "docs/tutorial.md's final spec differs from the design"
    build = build_fabric(load_spec(spec))
    assert build.errors == []
    assert [f.code for f in build.findings if f.severity == Severity.WARNING] == [
        "no-subnet-manager",
        "placeholder-guids",
    ]
    compute = build.figures["compute"]  # the figures the tutorial quotes
    assert compute.switches == {"leaf": 8, "spine": 4, "core": 0}
    assert compute.links == {"node-leaf": 256, "leaf-spine": 256, "spine-core": 0}
    assert compute.endpoints == 256 and compute.bisection_pct == 100.0 and compute.min_ecmp_width == 32
    assert len(build.allocation.cables) == 512
