"""The pre-commit hooks this repository offers, run by pre-commit itself on a scratch project.

``pre-commit try-repo`` installs this checkout as a hook repository (its own
venv, the package plus the hooks' additional dependencies) and runs the hooks
in a scratch git repository holding a copy of ``examples/adopter``.
Skipped locally without pre-commit; fails under ``CI`` (the dev extra has it).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "adopter"


def git(cwd: Path, *args: str) -> None:
    """Run git quietly, as a throwaway identity."""
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=60,
    )


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A git repository holding the example adopter with its generated files committed."""
    if importlib.util.find_spec("pre_commit") is None:
        if os.environ.get("CI"):
            pytest.fail("pre-commit is not installed, but CI must have it (the dev extra)")
        pytest.skip("pre-commit is not installed (pip install -e '.[dev]')")
    root = tmp_path / "project"
    shutil.copytree(EXAMPLE, root)
    subprocess.run(
        [sys.executable, "-m", "codegen", "generate", "--root", str(root)],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=120,
    )
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def try_repo(project: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``pre-commit try-repo <this checkout> --all-files`` (every hook, one venv) in ``project``."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["PRE_COMMIT_HOME"] = str(home)
    # try-repo commits uncommitted changes of this checkout into a shadow clone.
    for role in ("AUTHOR", "COMMITTER"):
        env.setdefault(f"GIT_{role}_NAME", "t")
        env.setdefault(f"GIT_{role}_EMAIL", "t@example.invalid")
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "--all-files"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )


def _status(out: str, name: str) -> str:
    line = next(line for line in out.splitlines() if line.startswith(name))
    return line.rsplit(".", 1)[-1].strip()


def test_the_hooks_pass_on_a_current_project_and_check_fails_on_a_changed_row(
    scratch: Path, tmp_path: Path
) -> None:
    home = tmp_path / "pre-commit-home"
    proc = try_repo(scratch, home)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _status(proc.stdout, "metric-catalog check") == "Passed"
    assert _status(proc.stdout, "metric-catalog validate") == "Passed"
    catalog = scratch / "myrl" / "telemetry" / "catalog" / "ppo.yaml"
    catalog.write_text(catalog.read_text().replace("Value-function loss", "Critic loss"))
    proc = try_repo(scratch, home)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _status(proc.stdout, "metric-catalog check") == "Failed"
    assert _status(proc.stdout, "metric-catalog validate") == "Passed"
    assert "myrl/telemetry/generated/ppo.py: stale or hand-edited" in proc.stdout
    assert "run `metric-catalog generate`" in proc.stdout


def test_check_runs_and_fails_when_only_a_generated_file_is_edited_by_hand(
    scratch: Path, tmp_path: Path
) -> None:
    generated = scratch / "myrl" / "telemetry" / "generated" / "ppo.py"
    generated.write_text(generated.read_text().replace("Value-function loss", "Critic loss"))
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    for role in ("AUTHOR", "COMMITTER"):
        env.setdefault(f"GIT_{role}_NAME", "t")
        env.setdefault(f"GIT_{role}_EMAIL", "t@example.invalid")
    # As at a commit that stages only that file: pre-commit hands the hook just it.
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "pre_commit", "try-repo", str(REPO)),
            *("metric-catalog-check", "--files", "myrl/telemetry/generated/ppo.py"),
        ],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _status(proc.stdout, "metric-catalog check") == "Failed"
    assert "myrl/telemetry/generated/ppo.py: stale or hand-edited" in proc.stdout
