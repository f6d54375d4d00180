"""The example tests' import helper: an example imports cleanly whatever an earlier test left."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from metric_catalog import vocabulary
from metric_catalog.vocabulary import TeedMetric
from tests.example_projects import imported_example

ROW = 'TeedMetric("reward", "rl.reward.mean", "gauge", "", "Mean reward.", "train")'


def _project(root: Path) -> Path:
    """A package ``isolated_example`` whose one generated module declares ``train/reward``."""
    generated = root / "isolated_example" / "telemetry" / "generated"
    generated.mkdir(parents=True)
    for folder in (generated, generated.parent, generated.parent.parent):
        (folder / "__init__.py").write_text("", encoding="utf-8")
    (generated / "rows.py").write_text(
        "from metric_catalog.vocabulary import TeedMetric, register_teed_metrics\n"
        f"REWARD = {ROW}\nregister_teed_metrics([REWARD])\n",
        encoding="utf-8",
    )
    (root / "isolated_example" / "runs.py").write_text("RUNS = []\n", encoding="utf-8")
    return root


def _clashing_row() -> None:
    vocabulary.register_teed_metrics(
        [TeedMetric("reward", "rl.other.reward", "gauge", "", "Another.", "train")]
    )


def _frozen() -> None:
    vocabulary.register_teed_metrics(
        [TeedMetric("loss", "rl.other.loss", "gauge", "", "Another.", "train")]
    )
    vocabulary.freeze_metrics()


@pytest.mark.parametrize("left_behind", [_clashing_row, _frozen], ids=["clash", "frozen"])
def test_an_example_imports_whatever_an_earlier_test_left_in_the_registry(
    tmp_path: Path, left_behind: Callable[[], None]
) -> None:
    """A clashing row or a frozen registry left by an earlier test does not break the import."""
    project = _project(tmp_path)
    vocabulary._reset_for_tests()
    left_behind()
    try:
        with imported_example(project, "isolated_example", ["rows"]) as (modules, runs):
            assert modules[0].REWARD.name == "rl.reward.mean"
            assert runs.RUNS == []
            assert not vocabulary.is_frozen()
            assert vocabulary.teed_metrics() == ()
    finally:
        vocabulary._reset_for_tests()
