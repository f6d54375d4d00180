"""One fixture per way real trainers build the keys they log (tests/fixtures/scan/patterns).

Each fixture marks, on the line where a key is written, what scan must report there:
``# logs: KEY ...`` (a resolved key: ``SCAN_UNDECLARED`` against a catalog declaring
none of them), ``# unresolved: KEY`` (a key with a hole: ``SCAN_UNRESOLVED``, crediting
no row) or ``# unresolved`` (a dict the scanner cannot follow enters there). Whatever
is not marked must not be reported: the non-firing half (a list of episodes, a branch
the caller cannot take, a reader of a declared field). A fixture's
docstring may hold one ``scan-calls:`` entry as JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.scan.calls import merge_calls, parse_scan_call
from codegen.scan.scanner import scan

PATTERNS = Path(__file__).parents[1] / "fixtures" / "scan" / "patterns"
_MARK = re.compile(r"#\s*(logs|unresolved)(?::\s*(.+))?$")
_ENTRY = re.compile(r"^scan-calls:\s*(\{.*\})\s*$", re.MULTILINE)
_KEY = re.compile(r"key '(?P<key>[^']*)'(?: with prefix '(?P<prefix>[^']*)')?")

NOTHING_DECLARED = """\
owner: tests.patterns
module: patterns
description: One row no fixture logs, so every key a fixture logs is undeclared.
prefix: ""
teed:
  - logger_key: never_logged_by_a_fixture
    name: rl.patterns.unused
    kind: gauge
    unit: "1"
    description: A row the pattern fixtures never log.
    no_lint: [SCAN_UNLOGGED]
"""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """A catalog declaring none of the fixtures' keys."""
    folder = tmp_path_factory.mktemp("patterns")
    (folder / "patterns.yaml").write_text(NOTHING_DECLARED, encoding="utf-8")
    result = load_and_check([folder / "patterns.yaml"], root=folder, lint=False)
    assert result.ok, result.diagnostics
    return result.catalog


def _expected(folder: Path) -> set[tuple[str, str, int, str]]:
    found = set()
    for path in sorted(folder.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            mark = _MARK.search(line)
            if mark is None:
                continue
            code = "SCAN_UNDECLARED" if mark.group(1) == "logs" else "SCAN_UNRESOLVED"
            for key in (mark.group(2) or "-").split():
                found.add((code, path.relative_to(folder).as_posix(), number, key))
    return found


def _reported(folder: Path, catalog: Catalog) -> set[tuple[str, str, int, str]]:
    entries = [
        parse_scan_call(json.loads(m.group(1)))
        for path in folder.rglob("*.py")
        for m in _ENTRY.finditer(path.read_text(encoding="utf-8"))
    ]
    report = scan([folder], catalog, merge_calls(entries), cwd=folder, unlogged=False)
    found = set()
    for d in report.diagnostics:
        assert d.position is not None
        match = _KEY.search(d.message)
        key = "-"  # what is unresolved is a dict, not a key
        if match is not None:
            prefix = match.group("prefix")
            key = f"{prefix}/{match.group('key')}" if prefix else match.group("key")
        found.add((d.code, d.position.path, d.position.line, key))
    return found


@pytest.mark.parametrize("pattern", sorted(p.name for p in PATTERNS.iterdir() if p.is_dir()))
def test_each_pattern_reports_exactly_the_keys_its_fixture_marks(
    pattern: str, catalog: Catalog
) -> None:
    folder = PATTERNS / pattern
    expected = _expected(folder)
    assert expected, f"{pattern} marks no key"
    assert _reported(folder, catalog) == expected


def test_an_unresolved_origin_is_reported_once_for_two_calls_logging_it(
    catalog: Catalog,
) -> None:
    report = scan([PATTERNS / "unresolved_origin"], catalog, cwd=PATTERNS, unlogged=False)
    at = [
        d
        for d in report.diagnostics
        if d.code == "SCAN_UNRESOLVED" and d.position is not None and d.position.line == 15
    ]
    # The call the unknown dict comes from, once, though two calls log it via a helper.
    assert len(at) == 1
    assert "load_groups" in at[0].message
