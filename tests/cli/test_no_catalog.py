"""A catalog that matches no file is a usage error (exit 2) in every command, never "no problems".

Each case runs the real command line (``python -m codegen`` and, when the venv
has it, the installed ``metric-catalog`` console command) in a separate process.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adopter_project import ADOPTER_TABLE, adopter

REPO = Path(__file__).resolve().parents[2]
CONSOLE = Path(sys.executable).with_name("metric-catalog")

# Every command that reads the catalog, with the arguments it needs besides --root.
COMMANDS: dict[str, tuple[str, ...]] = {
    "validate": (),
    "lint": (),
    "generate": (),
    "check": (),
    "resolve": ("--format", "json"),
    "dashboards": (),
    "live-check": ("run.jsonl",),
    "diff": ("--against", "HEAD"),
}

ENTRIES = [
    pytest.param((sys.executable, "-m", "codegen"), id="python-m-codegen"),
    pytest.param(
        (str(CONSOLE),),
        id="metric-catalog",
        marks=pytest.mark.skipif(
            not CONSOLE.is_file(), reason="metric-catalog is not installed in this venv"
        ),
    ),
]


def run(entry: tuple[str, ...], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the command line in ``cwd`` with this repo's ``codegen`` importable."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [*entry, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def project(root: Path, glob: str = "myrl/telemetry/catalog/*.yaml") -> Path:
    """An adopter project whose table lists ``glob``, with one catalog file in its usual place."""
    root.mkdir(parents=True, exist_ok=True)
    table = ADOPTER_TABLE.replace(
        'catalog = ["myrl/telemetry/catalog/*.yaml"]', f'catalog = ["{glob}"]'
    )
    return adopter(root, table=table)


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` (but the catalog) with a digest of its bytes."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_wrong_root_exits_2_naming_the_root_the_globs_and_the_fixes(
    tmp_path: Path, entry: tuple[str, ...], command: str
) -> None:
    """``--root`` at a folder without catalog or table: exit 2, nothing on stdout, how to fix."""
    wrong = tmp_path / "not-the-project"
    wrong.mkdir()
    proc = run(entry, command, *COMMANDS[command], "--root", str(wrong), cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    err = proc.stderr
    assert "no catalog files" in err
    assert wrong.resolve().as_posix() in err  # the root used
    assert "'catalog/*.yaml'" in err  # the glob tried
    assert "no pyproject.toml with [tool.metric-catalog]" in err  # no config file was found
    for fix in ("--root", "`catalog` key of [tool.metric-catalog]", "metric-catalog init"):
        assert fix in err
    assert "no problems found" not in err
    assert sorted(p.name for p in wrong.iterdir()) == []  # nothing was written there


@pytest.mark.parametrize("command", COMMANDS)
def test_a_configured_glob_matching_nothing_exits_2_naming_the_table(
    tmp_path: Path, command: str
) -> None:
    """A table whose ``catalog`` globs match nothing: the file, the key, the glob and the fix."""
    root = project(tmp_path, glob="myrl/telemetry/catalogue/*.yaml")  # a typo in the folder
    proc = run((sys.executable, "-m", "codegen"), command, *COMMANDS[command], cwd=root)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    err = proc.stderr
    assert "`catalog = ['myrl/telemetry/catalogue/*.yaml']` of [tool.metric-catalog]" in err
    assert "pyproject.toml:5" in err  # the line of the catalog key
    assert root.resolve().as_posix() in err
    assert "metric-catalog init" in err


def test_generate_after_the_catalog_vanished_keeps_every_generated_file(tmp_path: Path) -> None:
    """Bad input never corrupts what was there: no deletion, no emptied package, manifest kept."""
    root = project(tmp_path)
    entry = (sys.executable, "-m", "codegen")
    first = run(entry, "generate", cwd=root)
    assert first.returncode == 0, first.stderr
    generated = root / "myrl" / "telemetry" / "generated"
    assert (generated / "ppo.py").is_file()
    (root / "myrl" / "telemetry" / "catalog" / "ppo.yaml").unlink()
    before = snapshot(root)
    for args in (("generate",), ("generate", "--no-cache"), ("dashboards",)):
        proc = run(entry, *args, cwd=root)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "no catalog files" in proc.stderr
        assert snapshot(root) == before


def test_generate_with_a_wrong_root_leaves_the_real_project_alone(tmp_path: Path) -> None:
    """Running from inside the project but with ``--root`` elsewhere touches neither folder."""
    root = project(tmp_path / "real")
    entry = (sys.executable, "-m", "codegen")
    assert run(entry, "generate", cwd=root).returncode == 0
    before = snapshot(root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run(entry, "generate", "--root", str(elsewhere), cwd=root)
    assert proc.returncode == 2
    assert snapshot(root) == before
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("command", ["validate", "lint"])
def test_paths_holding_no_catalog_file_exit_2(tmp_path: Path, command: str) -> None:
    """``validate EMPTY_DIR`` is not "0 file(s), no problems"."""
    root = project(tmp_path)
    (root / "empty").mkdir()
    proc = run((sys.executable, "-m", "codegen"), command, "empty", cwd=root)
    assert proc.returncode == 2, proc.stderr
    assert "the paths given on the command line ('empty') hold no catalog file" in proc.stderr


@pytest.mark.parametrize("command", ["resolve", "generate", "check"])
def test_a_catalog_flag_matching_nothing_names_the_flag(tmp_path: Path, command: str) -> None:
    """``--catalog`` overriding the table: the error names the flag, not the table."""
    root = project(tmp_path)
    proc = run((sys.executable, "-m", "codegen"), command, "--catalog", "nowhere", cwd=root)
    assert proc.returncode == 2, proc.stderr
    assert "--catalog (catalog = ['nowhere'])" in proc.stderr
    assert "pyproject.toml" not in proc.stderr.split(";")[0]


def test_a_partly_missing_catalog_still_reports_the_missing_file(tmp_path: Path) -> None:
    """Only a catalog with no file at all is exit 2; a listed file that is missing is a finding."""
    root = project(tmp_path)
    table = (root / "pyproject.toml").read_text(encoding="utf-8")
    table = table.replace(
        'catalog = ["myrl/telemetry/catalog/*.yaml"]',
        'catalog = ["myrl/telemetry/catalog/*.yaml", "myrl/telemetry/extra.yaml"]',
    )
    (root / "pyproject.toml").write_text(table, encoding="utf-8")
    proc = run((sys.executable, "-m", "codegen"), "validate", cwd=root)
    assert proc.returncode == 1, proc.stderr
    assert "myrl/telemetry/extra.yaml" in proc.stdout + proc.stderr
