"""A baseline checkout: this repository at another git ref, to time a command against.

``make bench`` compares some commands with the same command at a baseline ref
(default: the merge-base of ``HEAD`` with ``main``, i.e. the main a branch
started from; ``python -m bench --baseline-ref REF`` names another). The
baseline is exported with ``git archive`` into a scratch folder (no worktree,
no checkout: the repository is left alone) and run with the same interpreter,
``PYTHONPATH`` pointing at the export, so only the code differs.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bench.measure import REPO

__all__ = ["DEFAULT_BASE", "Baseline", "export_baseline"]

DEFAULT_BASE: Final = "main"
"""The branch whose merge-base with ``HEAD`` is the default baseline."""

_PATHS: Final = ("codegen", "src", "catalog", "pyproject.toml")
"""What a command of the baseline needs: the code, the runtime, the catalog, its config."""


@dataclass(frozen=True, slots=True)
class Baseline:
    """An exported baseline tree and what it is."""

    root: Path
    commit: str
    label: str
    """How reports name it, e.g. ``merge-base with main (2e1b90e)``."""

    @property
    def pythonpath(self) -> list[Path]:
        """What a child's ``PYTHONPATH`` starts with, so it imports the baseline's code."""
        return [self.root, self.root / "src"]


def _git(*args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise LookupError(done.stderr.strip() or f"git {' '.join(args)} failed")
    return done.stdout.strip()


def _resolve(ref: str | None) -> tuple[str, str]:
    """(commit, label) of ``ref``, or of the merge-base with main when ``ref`` is None."""
    if ref is None:
        commit = _git("merge-base", "HEAD", DEFAULT_BASE)
        return commit, f"merge-base with {DEFAULT_BASE} ({commit[:7]})"
    if ref.startswith("-"):
        raise LookupError("a ref does not start with '-'")  # never read as git's option
    commit = _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return commit, f"{ref} ({commit[:7]})"


def export_baseline(ref: str | None, work: Path) -> Baseline | str:
    """``ref``'s code, runtime and catalog exported under ``work``, or why it is unavailable.

    Unavailable (a shallow clone without ``main``, no git, an unknown ref) is said,
    never an error: the caller skips the comparison with the baseline only.
    """
    try:
        commit, label = _resolve(ref)
    except (LookupError, OSError) as exc:
        wanted = ref or f"the merge-base with {DEFAULT_BASE}"
        return f"{wanted} is unavailable: {str(exc) or 'git failed'}"
    root = work / f"baseline-{commit[:12]}"
    if (root / "codegen").is_dir():
        return Baseline(root, commit, label)
    work.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".baseline-", dir=work))
    try:
        with tempfile.TemporaryFile() as archive:
            done = subprocess.run(
                ["git", "-C", str(REPO), "archive", "--format=tar", commit, *_PATHS],
                stdout=archive,
                stderr=subprocess.PIPE,
                check=False,
            )
            if done.returncode != 0:
                return f"git archive {commit[:7]} failed: {done.stderr.decode(errors='replace')}"
            archive.seek(0)
            with tarfile.open(fileobj=archive) as tar:
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(staging, filter="data")
                else:  # pragma: no cover - Python before 3.11.4; our own repository's tar
                    tar.extractall(staging)
        staging.rename(root)
    except OSError as exc:
        return f"could not export {commit[:7]}: {exc}"
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Baseline(root, commit, label)
