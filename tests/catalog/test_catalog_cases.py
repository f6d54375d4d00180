"""The bad-input corpus: every ``tests/cases/<case>.yaml`` yields exactly its one diagnostic.

Each case file holds one defect; ``tests/cases/expected.toml`` gives the code,
line and column it must be reported with. The files live outside ``catalog/``
so no catalog glob ever picks them up.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from codegen.catalog.diagnostics import Severity
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "cases"
EXPECTED: dict[str, dict[str, Any]] = tomllib.loads(
    (CASES / "expected.toml").read_text(encoding="utf-8")
)


def test_corpus_is_large_and_fully_described() -> None:
    """Every case file has an expectation and every expectation a file; there are 40+."""
    files = {path.stem for path in CASES.glob("*.yaml")}
    assert files == set(EXPECTED)
    assert len(files) >= 40


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_case_yields_exactly_its_diagnostic(case: str) -> None:
    """The case's one defect is reported once, with its code and exact position."""
    expected = EXPECTED[case]
    result = load_and_check([Path("tests/cases") / f"{case}.yaml"], root=REPO, lint=True)
    found = [(d.code, d.position.line, d.position.column) for d in result.diagnostics if d.position]
    assert found == [(expected["code"], expected["line"], expected["column"])]
    (diagnostic,) = result.diagnostics
    assert diagnostic.position is not None
    assert diagnostic.position.path == f"tests/cases/{case}.yaml"
    assert result.ok is (diagnostic.severity is Severity.WARNING)
    # Messages say what is wrong and how to fix it, in one line.
    assert "\n" not in diagnostic.message
    assert ";" in diagnostic.message or "?" in diagnostic.message


@pytest.mark.parametrize(
    ("case", "command", "exit_code"),
    [
        ("load_python_tag", "validate", 1),
        ("implicit_unit_no", "validate", 1),
        ("schema_unknown_field_typo", "lint", 1),
        ("lint_description_no_period", "lint", 0),
        ("lint_description_no_period", "validate", 0),
        ("load_not_utf8", "lint", 1),
    ],
)
def test_cli_reports_case_in_process(
    case: str,
    command: str,
    exit_code: int,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CLI prints the case's diagnostic as file:line:col and exits 1 only on errors."""
    monkeypatch.chdir(REPO)
    expected = EXPECTED[case]
    path = f"tests/cases/{case}.yaml"
    assert main([command, path]) == exit_code
    out = capsys.readouterr().out
    if command == "validate" and case.startswith("lint_"):
        assert out == ""  # lints run only under `lint`
        return
    first = out.splitlines()[0]
    assert first.startswith(f"{path}:{expected['line']}:{expected['column']}: ")
    assert f"[{expected['code']}]: " in first
    assert "Traceback" not in out


def test_whole_corpus_at_once_reports_all_sorted(capsys: pytest.CaptureFixture[str]) -> None:
    """All cases in one run: every file reported, sorted by file (paths shown relative)."""
    result = load_and_check([Path("tests/cases")], root=REPO, lint=True)
    paths = [d.position.path for d in result.diagnostics if d.position]
    assert paths == sorted(paths)
    for case in EXPECTED:
        assert f"tests/cases/{case}.yaml" in paths
    assert not result.ok
    main(["lint", "--root", str(REPO), "--format", "json", str(CASES)])
    records = json.loads(capsys.readouterr().out)
    # Across files, rows meet each other: 'rl.reward.avg' exists in another case.
    assert {r["path"] for r in records} == {f"tests/cases/{case}.yaml" for case in EXPECTED}


@pytest.mark.parametrize(
    ("case", "unit"),
    [
        ("lint_unit_ms", "ms"),
        ("lint_unit_mib", "MiBy"),
        ("lint_unit_sec", "s"),
        ("lint_unit_tokens", "'{token}'"),
        ("lint_duration_prefixed_bytes", "ms"),
        ("lint_duration_unit", "min"),
    ],
)
def test_a_unit_case_written_in_the_ucum_unit_the_code_logs_is_clean(
    case: str, unit: str, tmp_path: Path
) -> None:
    """The near miss of each unit case: its unit line in UCUM (prefixed or not) lints clean."""
    lines = (CASES / f"{case}.yaml").read_text(encoding="utf-8").splitlines(keepends=True)
    line = EXPECTED[case]["line"] - 1
    lines[line] = lines[line].split("unit:")[0] + f"unit: {unit}\n"
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "grpo.yaml").write_text("".join(lines), encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=True)
    assert result.diagnostics == ()
