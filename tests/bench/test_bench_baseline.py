"""bench: the baseline tree a command is timed against (``--baseline-ref``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.baseline import Baseline, export_baseline
from bench.measure import REPO


def _head() -> str | None:
    done = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


@pytest.mark.parametrize("ref", ["no-such-ref-for-the-bench", "HEAD~999999", "-x"])
def test_an_unavailable_ref_is_said_not_raised(ref: str, tmp_path: Path) -> None:
    """An unknown ref (or one that reads as an option) skips the comparison with a reason."""
    found = export_baseline(ref, tmp_path)
    assert isinstance(found, str)
    assert "unavailable" in found
    assert not any(tmp_path.iterdir())


def test_a_ref_is_exported_with_its_code_runtime_and_catalog(tmp_path: Path) -> None:
    """The export holds what a command needs and imports from itself first."""
    head = _head()
    if head is None:
        pytest.skip("not a git checkout")
    found = export_baseline("HEAD", tmp_path)
    assert isinstance(found, Baseline)
    assert found.commit == head
    assert found.label == f"HEAD ({head[:7]})"
    for part in ("codegen/__main__.py", "src/metric_catalog/vocabulary.py", "pyproject.toml"):
        assert (found.root / part).is_file()
    assert any((found.root / "catalog").glob("*.yaml"))
    assert found.pythonpath == [found.root, found.root / "src"]
    assert export_baseline("HEAD", tmp_path) == found  # exported once, then reused
