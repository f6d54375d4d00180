"""Bookkeeping keys: keys a run carries that are not metrics, each with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from metric_catalog.series_rules import bookkeeping_matches
from tests.catalog_projects import loaded_catalog

CATALOG = """\
owner: prime_rl.trainer
module: trainer
description: Metrics of the trainer process.
prefix: ""
bookkeeping:
  - key: time
    reason: Wall-clock timestamp the file logger writes on every line.
  - key: "timing/*/start"
    reason: Start timestamps of the timed phases.
teed:
  - logger_key: time/step
    name: rl.trainer.step.duration
    kind: gauge
    unit: s
    description: Seconds one trainer step took.
"""


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("time", True),
        ("timing/generate/start", True),
        ("timing/a/b/start", True),
        ("timing/start", False),
        ("time/step", False),
        ("_runtime", True),  # W&B's own, known without a declaration
        ("_step", True),
        ("system/cpu_utilization_percentage", False),  # a row could declare it
        ("times", False),
    ],
)
def test_the_catalog_says_which_keys_are_bookkeeping(
    tmp_path: Path, key: str, expected: bool
) -> None:
    """Declared keys and patterns, and the backends' underscore keys; never a metric's key."""
    assert loaded_catalog(tmp_path, CATALOG).is_bookkeeping(key) is expected


def test_a_bookkeeping_entry_keeps_its_reason_and_position(tmp_path: Path) -> None:
    """What the docs list: the key, the reason and where it is declared."""
    catalog = loaded_catalog(tmp_path, CATALOG)
    entry = catalog.bookkeeping_entry("time")
    assert entry is not None
    assert entry.reason.startswith("Wall-clock timestamp")
    assert (entry.position.line, entry.position.column) == (6, 10)


@pytest.mark.parametrize(
    ("pattern", "logged", "expected"),
    [
        ("a*b", "ab", True),
        ("a*b", "axxb", True),
        ("a*b*c", "abc", True),
        ("a*b*c", "acb", False),
        ("ab*ba", "aba", False),  # the head and tail may not share a character
        ("*", "", True),
        ("x", "x", True),
        ("x", "xy", False),
    ],
)
def test_a_star_stands_for_any_text(pattern: str, logged: str, expected: bool) -> None:
    """``*`` is the only wildcard; everything else is literal."""
    assert bookkeeping_matches(pattern, logged) is expected
