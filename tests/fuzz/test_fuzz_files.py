"""Structure-aware fuzzing of the build's other inputs (issue 24): the lock and the directories `fabric diff`
compares are files a user (or a script, or an attacker) may edit, so they are input like the spec.

A real `allocations.lock.json` (of the lab and the InfiniBand lab, as `fabric build` writes it) is mutated by kind:
addresses (prefix lengths, scope ids with text, network and broadcast addresses, the other family), ASNs (reserved,
public, 32-bit edges, huge), ids and names (duplicated, hostile text with newlines), types, dropped keys and
entries, and the file's text itself (truncated, a 5,000-digit number, NaN). A rebuild with the mutant
(`fabric build --lock`) ends with exit 0, 1 or 2, never an internal error (exit 3) or a traceback, and prints no
input line on a line of its own.

An output directory pair is mutated the same way for `fabric diff`: cabling.csv and the other tables (columns
dropped, added, renamed; fields long, empty, with NUL, newline or formula text; rows cut), configs (binary,
NUL bytes, emptied, a directory or a symbolic link in place of a file): exit 0, 1 or 2 only.

Hypothesis runs derandomized (tests/conftest.py): `examples(n)` cases per test (ci: the full count; dev: a tenth).
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import shutil
from collections.abc import Iterator
from ipaddress import ip_interface
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fabric.cli import app
from tests.conftest import DESIGNS, examples

MARKER = "ZZINJECT"


def _files(full: int) -> settings:
    """`examples(full)` cases; fixtures are module-wide (built once), so no health check applies."""
    return settings(max_examples=examples(full), suppress_health_check=list(HealthCheck), deadline=None)


_serial = count()

HOSTILE_TEXT = [
    "",
    " ",
    "x\n" + MARKER + " evil",
    "x\r\n" + MARKER,
    "a\x00b",
    "\u202eevil",
    "\u00a0x",
    "=cmd|' /C calc'!A0",
    "../../etc/passwd",
    "{index}",
    "x" * 5000,
    "名前",
    "fd00::1%x remote-as 666",
]
ADDRESS_EDITS = [
    lambda a: f"{a.ip}/0",
    lambda a: f"{a.ip}/{a.max_prefixlen + 1}",
    lambda a: f"{a.ip}%x remote-as 666/{a.network.prefixlen}",
    lambda a: f"{a.ip}%eth0",
    lambda a: f"{a.network.network_address}/{a.network.prefixlen}",
    lambda a: f"{a.network.broadcast_address}/{a.network.prefixlen}",
    lambda a: f"{a.ip} extra",
    lambda a: f"{a.ip}/{a.network.prefixlen}\n{MARKER}",
    lambda a: "8.8.8.8/32" if a.version == 4 else "2001:4860::8888/128",
    lambda a: "fd00::1/64" if a.version == 4 else "10.0.0.1/24",
    lambda a: str(a.ip),
    lambda a: str(a.ip).upper() + "/" + str(a.network.prefixlen),
    lambda a: "0" + str(a),
    lambda a: str(a)[: len(str(a)) // 2],
]
NUMBERS = [0, -1, 1, 23456, 15169, 64511, 64512, 65535, 65536, 4199999999, 4294967295, 2**32, 2**63, 2**70, 0.5, True]


def _lock_of(design: str, root: Path) -> dict[str, Any]:
    out = root / f"base-{design}"
    result = CliRunner().invoke(app, ["build", str(DESIGNS / f"{design}.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads((out / "allocations.lock.json").read_text())
    return data


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-files")


@pytest.fixture(scope="module")
def locks(root: Path) -> dict[str, dict[str, Any]]:
    found = {design: _lock_of(design, root) for design in ("lab", "lab-ib")}
    assert found["lab"]["addresses"] and found["lab"]["asns"] and found["lab-ib"]["guids"]  # every kind is mutated
    return found


@pytest.fixture(scope="module", autouse=True)
def _sources_only() -> Iterator[None]:
    """Diagrams as DOT sources only (as tests/fuzz/test_fuzz.py): a `dot` run per case would cost a second."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("fabric.render.outputs.diagrams.have_dot", lambda: False)
        yield


def _leaves(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if path else []
    if isinstance(data, dict):
        for key, value in data.items():
            out.extend(_leaves(value, (*path, key)))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            out.extend(_leaves(value, (*path, index)))
    return out


def _address(value: Any) -> Any:
    if not isinstance(value, str) or "/" not in value:
        return None
    try:
        return ip_interface(value)
    except ValueError:
        return None


def _edit(draw: st.DrawFn, value: Any, siblings: list[Any]) -> Any:
    """A mutation of the same kind as `value` (an address, a number, an id or name), or of another kind."""
    address = _address(value)
    if address is not None and draw(st.booleans()):
        return draw(st.sampled_from(ADDRESS_EDITS))(address)
    if isinstance(value, int) and not isinstance(value, bool) and draw(st.booleans()):
        return draw(st.sampled_from(NUMBERS) | st.integers(min_value=-(2**40), max_value=2**40))
    if isinstance(value, str) and siblings and draw(st.booleans()):
        return draw(st.sampled_from(siblings))  # another entry's value: a duplicated id, name or address
    return draw(
        st.one_of(
            st.sampled_from(HOSTILE_TEXT).map(lambda s: f"{value}{s}" if isinstance(value, str) else s),
            st.sampled_from(NUMBERS),
            st.sampled_from([None, [], {}, [value, value], {"a": value}, str(value), float("nan")]),
        )
    )


@st.composite
def lock_mutants(draw: st.DrawFn, bases: dict[str, dict[str, Any]]) -> str:
    """The text of a mutated lock."""
    data = copy.deepcopy(bases[draw(st.sampled_from(sorted(bases)))])
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _leaves(data)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent: Any = data
        for part in path[:-1]:
            parent = parent[part]
        original = parent[path[-1]]
        op = draw(st.sampled_from(["edit", "edit", "edit", "drop", "duplicate", "truncate"]))
        if op == "drop":
            del parent[path[-1]]
        elif op == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(original))  # an entry twice: two cables with one id, two GUIDs …
        elif op == "truncate" and isinstance(original, list):
            del original[draw(st.integers(min_value=0, max_value=len(original))) :]
        else:
            siblings = []
            if isinstance(parent, dict) and len(path) >= 3 and isinstance(path[-2], int):
                siblings = [e.get(path[-1]) for e in data[path[0]] if isinstance(e, dict)][:50]
            parent[path[-1]] = _edit(draw, original, [s for s in siblings if isinstance(s, str)])
    text = json.dumps(data, indent=1, allow_nan=True)
    whole = draw(st.sampled_from(["as-is"] * 6 + ["cut", "huge-number", "nan", "bom", "duplicate-key"]))
    if whole == "cut":
        text = text[: draw(st.integers(min_value=0, max_value=len(text)))]
    elif whole == "huge-number":
        text = text.replace('"version": 1', '"version": 1' + "0" * 5000, 1)
    elif whole == "nan":
        text = text.replace('"version": 1', '"version": NaN', 1)
    elif whole == "bom":
        text = "\ufeff" + text
    elif whole == "duplicate-key":
        text = text.replace('"design":', '"design": "other", "design":', 1)
    return text


def _check(args: list[str], fuzzed: bool = True) -> int:
    result = CliRunner().invoke(app, args)
    output = result.output
    assert result.exit_code in (0, 1, 2), f"exit {result.exit_code}: {output[-2000:]}"
    assert "Traceback" not in output and "internal error" not in output, output[-2000:]
    for line in output.splitlines():
        assert not line.lstrip().startswith(MARKER), f"an input value starts a line: {line!r}"
    if fuzzed:
        event(f"exit {result.exit_code}")  # --hypothesis-show-statistics: how far the mutants get
    return result.exit_code


@_files(500)
@given(data=st.data())
def test_a_rebuild_with_a_mutated_lock_ends_cleanly(data: st.DataObject, locks: dict[str, Any], root: Path) -> None:
    text = data.draw(lock_mutants(locks))
    case = root / f"lock-{next(_serial)}"
    case.mkdir()
    lock = case / "allocations.lock.json"
    lock.write_text(text, encoding="utf-8", errors="surrogatepass")
    design = json.loads(text).get("design") if text.startswith("{") and _json(text) else "lab"
    spec = DESIGNS / ("lab-ib.yaml" if design == "lab-ib" else "lab.yaml")
    _check(["build", str(spec), "--lock", str(lock), "-o", str(case / "out")])
    shutil.rmtree(case)


def _json(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


# ---------------------------------------------------------------------------------------------- fabric diff


@pytest.fixture(scope="module")
def outputs(root: Path, locks: dict[str, Any]) -> Path:
    """The lab's output directory (built by `locks`)."""
    return root / "base-lab"


def _table_mutant(draw: st.DrawFn, text: str) -> str:
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error:  # an earlier mutation's 200 KB field is over the csv module's limit
        return text[: len(text) // 2]
    if not rows or not rows[0]:
        return text + draw(st.sampled_from(HOSTILE_TEXT))  # an earlier mutation emptied it
    header, body = rows[0], rows[1:]
    op = draw(st.sampled_from(["field", "field", "drop-column", "add-column", "rename-column", "cut", "rows"]))
    if op == "field" and body:
        row = draw(st.integers(min_value=0, max_value=len(body) - 1))
        if not body[row]:
            body[row] = [""]
        column = draw(st.integers(min_value=0, max_value=len(body[row]) - 1))
        extra = ["9" * 200_000, "1e400", "-1", "nan", "\x00\x00", "\ud800"]
        body[row][column] = draw(st.sampled_from(HOSTILE_TEXT + extra))
    elif op == "drop-column":
        column = draw(st.integers(min_value=0, max_value=len(header) - 1))
        header = header[:column] + header[column + 1 :]
        body = [r[:column] + r[column + 1 :] for r in body] if draw(st.booleans()) else body
    elif op == "add-column":
        header = [*header, draw(st.sampled_from(["extra", header[0], ""]))]
    elif op == "rename-column":
        column = draw(st.integers(min_value=0, max_value=len(header) - 1))
        header[column] = draw(st.sampled_from(HOSTILE_TEXT))
    elif op == "rows" and body:
        body = [*body, body[0]] if draw(st.booleans()) else [body[0][: len(body[0]) // 2]]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *body])
    result = out.getvalue()
    if op == "cut":
        result = text[: draw(st.integers(min_value=0, max_value=len(text)))]
    return result


def _config_mutant(draw: st.DrawFn, path: Path) -> None:
    op = draw(st.sampled_from(["binary", "nul", "empty", "directory", "link-out", "link-in", "append", "huge"]))
    text = path.read_bytes().decode("utf-8", "replace")  # an earlier mutation may have made it binary
    path.unlink()
    if op == "binary":
        path.write_bytes(b"\xff\xfe\x00\x01" * 64)
    elif op == "nul":
        path.write_text(text.replace("\n", "\0\n", 1))
    elif op == "empty":
        path.write_text("")
    elif op == "directory":
        path.mkdir()
    elif op == "link-out":
        path.symlink_to("/etc/hostname")
    elif op == "link-in":
        path.symlink_to(os.path.relpath(path.parent.parent, path.parent))
    elif op == "append":
        path.write_text(text + draw(st.sampled_from(HOSTILE_TEXT)) + "\n", errors="surrogatepass")
    else:
        path.write_text(text + "x" * 3_000_000)


@_files(1000)
@given(data=st.data())
def test_diff_of_mutated_output_directories_ends_cleanly(data: st.DataObject, outputs: Path, root: Path) -> None:
    case = root / f"diff-{next(_serial)}"
    old, new = case / "old", case / "new"
    for side in (old, new):
        shutil.copytree(outputs, side, ignore=shutil.ignore_patterns("*.xlsx", "*.png", "*.svg", "netbox", "k8s"))
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        side = data.draw(st.sampled_from([new, new, old]))
        target = data.draw(st.sampled_from(["cabling.csv", "cabling.csv", "inventory.csv", "ip-plan.csv", "config"]))
        if target == "config":
            configs = sorted(p for p in (side / "configs").rglob("*") if p.is_file() and not p.is_symlink())
            if configs:
                _config_mutant(data.draw, data.draw(st.sampled_from(configs)))
        elif (side / target).is_file():
            text = (side / target).read_bytes().decode("utf-8", "replace")
            (side / target).write_text(_table_mutant(data.draw, text), errors="surrogatepass")
    _check(["diff", str(old), str(new)])
    shutil.rmtree(case)


def test_the_unmutated_inputs_are_clean(locks: dict[str, Any], outputs: Path, root: Path) -> None:
    """The bases build and diff with exit 0: what the mutants change is what the fuzzer tests."""
    lock = root / "lab.lock.json"
    lock.write_text(json.dumps(locks["lab"]))
    assert _check(["build", str(DESIGNS / "lab.yaml"), "--lock", str(lock), "-o", str(root / "clean")], False) == 0
    assert _check(["diff", str(outputs), str(outputs)], False) == 0
