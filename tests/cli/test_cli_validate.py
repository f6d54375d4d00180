"""``python -m codegen validate`` and ``lint``: output formats, paths and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.cli import main

REPO = Path(__file__).resolve().parents[2]

CLEAN = """\
owner: nemo_rl.algorithms.grpo
module: grpo
description: Metrics logged by the GRPO training loop.
teed:
  - logger_key: reward
    name: rl.reward.mean
    kind: gauge
    unit: "1"
    description: Mean rollout reward over the batch.
"""
WARNING_ONLY = CLEAN.replace("over the batch.", "over the batch")
ERROR = CLEAN.replace('unit: "1"', "unit: no")
LINT_ERROR = CLEAN.replace('unit: "1"', "unit: msec")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with an empty ``catalog/``."""
    (tmp_path / "catalog").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(repo: Path, text: str, name: str = "grpo.yaml") -> None:
    """Put ``text`` into ``catalog/<name>``."""
    (repo / "catalog" / name).write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "command", "extra", "exit_code"),
    [
        (CLEAN, "validate", [], 0),
        (CLEAN, "lint", [], 0),
        (WARNING_ONLY, "lint", [], 0),  # warnings alone pass
        (WARNING_ONLY, "lint", ["--warnings-as-errors"], 1),
        (ERROR, "validate", [], 1),
        (ERROR, "lint", [], 1),
        (LINT_ERROR, "validate", [], 0),  # lints are not run by validate
        (LINT_ERROR, "lint", [], 1),
    ],
)
def test_exit_codes(repo: Path, text: str, command: str, extra: list[str], exit_code: int) -> None:
    """0 with no errors (warnings allowed), 1 with any error."""
    write(repo, text)
    assert main([command, *extra]) == exit_code


def test_default_paths_are_catalog_yaml_relative_to_cwd(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no PATHS, ``catalog/*.yaml`` is checked and shown relative."""
    write(repo, ERROR)
    write(repo, CLEAN.replace("module: grpo", "module: other").replace("reward", "r2"), "b.yaml")
    (repo / "catalog" / "notes.txt").write_text("not yaml", encoding="utf-8")
    assert main(["validate"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("catalog/grpo.yaml:8:11: error[IMPLICIT_NON_STRING]: ")
    assert out[-1] == "1 error(s), 0 warning(s)"


def test_clean_run_says_so_on_stderr(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A clean run prints a one-line summary, keeping stdout empty."""
    write(repo, CLEAN)
    assert main(["lint"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == "1 file(s), 1 row(s): no problems found."


def test_json_format_is_a_sorted_array_of_records(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--format json``: code, severity, message, path, line and column for each finding."""
    write(repo, WARNING_ONLY.replace("rl.reward.mean", "rl.reward.gauge"))
    assert main(["lint", "--format", "json"]) == 1
    records = json.loads(capsys.readouterr().out)
    assert [(r["code"], r["severity"], r["line"], r["column"]) for r in records] == [
        ("TYPE_IN_NAME", "error", 6, 11),
        ("DESCRIPTION_FORMAT", "warning", 9, 18),
    ]
    assert all(r["path"] == "catalog/grpo.yaml" for r in records)
    assert set(records[0]) == {"code", "severity", "message", "path", "line", "column"}


def test_json_of_a_clean_catalog_is_an_empty_array(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Machines always get JSON, even when there is nothing to say."""
    write(repo, CLEAN)
    assert main(["validate", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_explicit_paths_and_directories(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PATHS may be files or directories; a missing file is an error, not a crash."""
    write(repo, ERROR)
    assert main(["validate", "catalog"]) == 1
    assert capsys.readouterr().out.startswith("catalog/grpo.yaml:8:11:")
    assert main(["validate", "./catalog/grpo.yaml", "missing.yaml"]) == 1
    out = capsys.readouterr().out
    assert "catalog/grpo.yaml:8:11:" in out
    assert "missing.yaml: error[FILE_UNREADABLE]" in out


def test_root_option_shows_paths_relative_to_root(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--root`` picks the catalog and the base of the shown paths."""
    write(repo, ERROR)
    monkeypatch.chdir(repo.parent)
    assert main(["lint", "--root", str(repo)]) == 1
    assert capsys.readouterr().out.startswith("catalog/grpo.yaml:8:11:")


def test_repository_catalog_passes_lint(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repo's own catalog is clean under ``lint`` (what ``make check`` runs)."""
    monkeypatch.chdir(REPO)
    assert main(["lint", "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r for r in records if r["severity"] == "error"] == []


def test_module_entry_point_runs_in_a_subprocess(repo: Path) -> None:
    """``python -m codegen validate`` works end to end, with no traceback."""
    write(repo, ERROR)
    env_path = f"{REPO}:{REPO / 'src'}"
    proc = subprocess.run(
        [sys.executable, "-m", "codegen", "validate"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": env_path, "PATH": ""},
        check=False,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stdout.startswith("catalog/grpo.yaml:8:11: error[IMPLICIT_NON_STRING]")


def test_validate_and_lint_take_catalog_as_resolve_scan_and_infer_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--catalog`` points validate at other files than the configured ones."""
    root = tmp_path / "proj"
    (root / "elsewhere").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[tool.metric-catalog]\ncatalog = ["missing/*.yaml"]\n', encoding="utf-8"
    )
    (root / "elsewhere" / "bad.yaml").write_text("owner: x\nmodule: x\n", encoding="utf-8")
    for command in ("validate", "lint"):
        code = main([command, "--root", str(root), "--catalog", str(root / "elsewhere")])
        assert code == 1
        assert "bad.yaml" in capsys.readouterr().out
