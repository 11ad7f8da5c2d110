"""No error message contains bytes of a file it rejected (issue 7): files of random secret-like tokens
(base64 with `+/=$%`, the shape of hashes and environment values) in several layouts are fed as a spec, a
part file, a GUID inventory, a cabling CSV, a secret file, an ibnetdiscover file and LLDP data; the output
must name the file and what was expected, and hold no token, not even its first 8 characters."""

from __future__ import annotations

import random
import string
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli import app
from tests.conftest import DESIGNS

ALPHABET = string.ascii_letters + string.digits + "+/=$%"
LAYOUTS = ("words", "lines", "pairs", "csv")
INPUTS = ("spec", "part", "inventory", "csv", "secret", "ibnetdiscover", "lldp")


def _token(rng: random.Random) -> str:
    body = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(12, 24)))
    return body[:4] + rng.choice("+/=$%") + body[4:]  # never a plausible identifier


def _tokens_file(path: Path, layout: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    tokens = [_token(rng) for _ in range(60)]
    if layout == "words":
        text = " ".join(tokens) + "\n"
    elif layout == "lines":
        text = "\n".join(tokens) + "\n"
    elif layout == "pairs":  # YAML would read these as keys and values
        text = "".join(f"{a}: {b}\n" for a, b in zip(tokens[::2], tokens[1::2], strict=True))
    else:
        text = "".join(",".join(tokens[i : i + 4]) + "\n" for i in range(0, len(tokens), 4))
    path.write_text(text)
    return tokens


def _spec(kind: str) -> str:
    eth = (DESIGNS / "lab.yaml").read_text()
    ib = (DESIGNS / "lab-ib.yaml").read_text()
    if kind == "part":
        return eth.replace("name: lab\n", "name: lab\ncatalog: [tokens.txt]\n")
    if kind == "inventory":
        return ib.replace("      sm: {hosts:", "      inventory: tokens.txt\n      sm: {hosts:")
    if kind == "csv":
        return eth.replace(
            "topology: {kind: spine-leaf, leaves: 4, spines: 2, uplinks: 2}",
            "topology: {kind: cabling-csv, file: tokens.txt}",
        )
    if kind == "secret":
        return eth + "management:\n  snmp_community: {file: tokens.txt}\n"
    return eth if kind == "lldp" else ib


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", INPUTS)
def test_rejected_files_are_never_echoed(
    kind: str, layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens = _tokens_file(tmp_path / "tokens.txt", layout, seed=zlib.crc32(f"{kind}/{layout}".encode()))
    (tmp_path / "spec.yaml").write_text(_spec(kind))
    monkeypatch.chdir(tmp_path)
    args = {
        "spec": ["validate", "tokens.txt"],
        "ibnetdiscover": ["verify", "spec.yaml", "--ibnetdiscover", "tokens.txt"],
        "lldp": ["verify", "spec.yaml", "--lldp", "tokens.txt"],
    }.get(kind, ["validate", "spec.yaml"])
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (1, 2), result.output
    assert "tokens.txt" in result.output  # the finding names the file
    leaked = [t for t in tokens if t[:8] in result.output]
    assert not leaked, f"{kind}/{layout} printed {leaked[:3]}:\n{result.output}"
