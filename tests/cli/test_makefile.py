"""Real ``make`` runs on a copy of the repo: piped targets print only their output.

``make resolve > catalog.json`` must be valid JSON, so targets meant to be piped
do not echo their commands, and the ``.venv`` bootstrap writes to stderr. The
runs use this interpreter (``PY=``) and a fresh stamp file (``STAMP=``), so make
never creates a virtual environment here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_COPIED = (
    "Makefile",
    "pyproject.toml",
    "catalog",
    "codegen",
    "src/metric_catalog/generated",
    "docs/metrics",
    "docs/dashboards",
)

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    """The parts of the repo that make's catalog targets read, copied into ``tmp_path/repo``."""
    root = tmp_path / "repo"
    for name in _COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, root / name)
    stamp = tmp_path / "stamp"
    stamp.touch()
    # Newer than pyproject.toml, so the bootstrap recipe does not run.
    os.utime(stamp, (os.stat(root / "pyproject.toml").st_mtime + 10,) * 2)
    return root


def _make(root: Path, *args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """``make ARGS`` in ``root`` with this interpreter, at most 120 s."""
    settings = {"PY": sys.executable, "STAMP": str(root.parent / "stamp"), **variables}
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.run(
        ["make", *args, *(f"{k}={v}" for k, v in settings.items())],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _codegen(root: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "codegen", *args],
        cwd=root,
        capture_output=True,
        timeout=120,
        check=True,
    )


def test_make_resolve_stdout_is_exactly_the_json(repo_copy: Path) -> None:
    """``make resolve > catalog.json`` yields JSON holding every catalog row."""
    done = _make(repo_copy, "resolve")
    assert done.returncode == 0, done.stderr
    resolved = json.loads(done.stdout)
    assert "codegen" not in done.stdout.splitlines()[0]
    assert resolved["files"]


def test_make_diff_format_json_stdout_is_exactly_the_json(repo_copy: Path) -> None:
    """``make diff AGAINST=dir FORMAT=json`` prints the report alone."""
    done = _make(repo_copy, "diff", AGAINST="catalog", FORMAT="json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert report["summary"]["added"] == 0


def test_make_live_check_format_json_stdout_is_exactly_the_json(repo_copy: Path) -> None:
    """``make live-check RUN=... FORMAT=json`` prints the report alone."""
    run = repo_copy.parent / "run.jsonl"
    run.write_text(
        json.dumps({"step": 1, "prefix": "train", "metrics": {"not_a_declared_key": 1.0}}) + "\n",
        encoding="utf-8",
    )
    done = _make(repo_copy, "live-check", RUN=str(run), FORMAT="json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert "not_a_declared_key" in json.dumps(report)


def test_make_bootstrap_writes_to_stderr_only(repo_copy: Path) -> None:
    """A stale stamp runs the bootstrap; its lines go to stderr, stdout keeps the target's output.

    ``PYTHON`` and ``PY`` are ``echo``, so nothing is installed: stdout holds what the
    resolve recipe itself printed, the bootstrap's commands and output went to stderr.
    """
    os.utime(repo_copy.parent / "stamp", (1, 1))
    done = _make(repo_copy, "resolve", PYTHON="echo", PY="echo")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "-m codegen resolve --format json\n"
    assert "creating .venv" in done.stderr
    assert "-m pip install" in done.stderr


def test_make_check_prints_each_warning_once(repo_copy: Path) -> None:
    """``make check`` lints once; ``check`` and ``diff`` do not repeat the warnings."""
    common = repo_copy / "catalog" / "common.yaml"
    text = common.read_text(encoding="utf-8")
    # A lint warning (description not a sentence) and a cross-file warning (namespace).
    extra = (
        "  - logger_key: edges_probe\n"
        "    name: rl.edges_probe\n"
        "    kind: gauge\n"
        '    unit: "1"\n'
        "    description: probe value without a period\n"
        "  - logger_key: edges_probe_inner\n"
        "    name: rl.edges_probe.inner\n"
        "    kind: gauge\n"
        '    unit: "1"\n'
        "    description: Inner probe value of the test.\n"
    )
    head, sep, tail = text.partition("teed:\n")
    assert sep
    common.write_text(head + sep + extra + tail, encoding="utf-8")
    _codegen(repo_copy, "generate")
    done = _make(repo_copy, "check", CATALOG_BASELINE="catalog")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout + done.stderr
    for code in ("DESCRIPTION_FORMAT", "NAME_IS_NAMESPACE"):
        assert out.count(f"warning[{code}]") == 1, out
    assert "generated files are current" in out
