"""glean_parser, the peer we measure against, in a venv of its own.

The venv lives in ``bench/out/venv-glean`` (ignored by git), is created on
first use with ``python -m venv`` and ``pip install glean-parser==22.0.1``, and
never touches the project's ``.venv``. When it cannot be made (offline, no
pip), :func:`ensure_glean` returns the reason instead of raising, and the glean
rows of the benchmarks are skipped with that note.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bench.measure import REPO

__all__ = ["GLEAN_REQUIREMENT", "GLEAN_VENV", "GleanEnv", "ensure_glean"]

GLEAN_REQUIREMENT: Final = "glean-parser==22.0.1"
"""The version the reference measurements used."""

GLEAN_VENV: Final = REPO / "bench" / "out" / "venv-glean"
"""Where the venv goes (``bench/out/`` is git-ignored)."""

_STAMP: Final = ".bench-installed"


@dataclass(frozen=True, slots=True)
class GleanEnv:
    """A ready glean_parser: the script to run and its version."""

    script: Path
    python: Path
    version: str


def _probe(venv: Path) -> GleanEnv | None:
    script = venv / "bin" / "glean_parser"
    python = venv / "bin" / "python"
    if not (venv / _STAMP).is_file() or not script.is_file():
        return None
    try:
        done = subprocess.run(
            [str(python), "-c", "import importlib.metadata as m; print(m.version('glean-parser'))"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return GleanEnv(script, python, done.stdout.strip())


def ensure_glean(*, install: bool = True, venv: Path = GLEAN_VENV) -> GleanEnv | str:
    """Return the glean venv, creating it if needed and allowed; else why it is missing.

    Set ``BENCH_NO_GLEAN_INSTALL=1`` to never create it (the glean rows are then
    skipped unless the venv already exists).
    """
    found = _probe(venv)
    if found is not None:
        return found
    if not install or os.environ.get("BENCH_NO_GLEAN_INSTALL") == "1":
        return f"glean_parser venv missing at {venv} and installing is switched off"
    print(f"bench: creating {venv} with {GLEAN_REQUIREMENT} (first run only) ...", flush=True)
    steps = [
        [sys.executable, "-m", "venv", "--clear", str(venv)],
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--retries",
            "1",
            "--timeout",
            "20",
            GLEAN_REQUIREMENT,
        ],
    ]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=600, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"could not create the glean venv ({' '.join(step[:3])}): {exc}"
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            return f"could not install {GLEAN_REQUIREMENT} (offline?): " + " / ".join(tail)
    (venv / _STAMP).write_text(GLEAN_REQUIREMENT + "\n", encoding="utf-8")
    found = _probe(venv)
    if found is None:
        return f"{GLEAN_REQUIREMENT} installed into {venv} but glean_parser does not run"
    return found
