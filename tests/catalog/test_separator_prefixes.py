"""A ``log_metrics`` prefix passed with its separator: ``prefix="train/"`` names ``train``.

NeMo-Aligner's ``CustomLoggerWrapper.log_metrics(metrics, step, prefix)`` joins
``f"{prefix}{key}"`` and its trainers pass ``prefix="train_rollouts/"``, so the backends
get ``train_rollouts/rewards``: the key a row declared under the prefix
``train_rollouts`` names (a declared prefix may not end in ``/``). The adapters of such
a call, ``TeeLogger``, live-check (a ``JsonlLogger`` line holds the prefix as the call
passed it) and ``scan`` (the literal prefix of the call), read such a prefix as the one
without the ``/``; before, ``TeeLogger`` dropped every key of the call silently,
live-check reported each key missing, and scan reported each key undeclared under a
prefix no row may declare. ``tee_metrics`` itself still takes a declared prefix as is.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.live_check import check_file
from codegen.scan.scanner import scan
from metric_catalog import vocabulary
from metric_catalog.loggers import JsonlLogger, TeeLogger
from metric_catalog.series_rules import namespace_prefix, qualified_key
from metric_catalog.tee import tee_metrics
from metric_catalog.vocabulary import TeedMetric
from tests.otel_fixtures import clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

CATALOG = """\
owner: nemo_aligner.algorithms.ppo
module: ppo
description: Rows the trainer logs with a prefix it passes with its separator.
prefix: train_rollouts
teed:
  - logger_key: rewards
    name: rl.na.rollout.reward
    kind: gauge
    unit: ""
    description: Mean reward of the rollout batch.
    requirement_level: required
  - logger_key: "{na.timer}"
    prefix: timers
    name: rl.na.section.duration
    kind: gauge
    unit: s
    description: Wall clock of one timed section of the step.
    requirement_level: required
    attributes: [{ref: na.timer}]
attributes:
  - name: na.timer
    type: string
    description: A timed section of the step.
    max_cardinality: "8"
"""

ROWS = (
    TeedMetric("rewards", "rl.na.rollout.reward", "gauge", "", "Reward", prefix="train_rollouts"),
)


@pytest.mark.parametrize(
    ("given", "names"),
    [
        ("train/", "train"),
        ("timing/train/", "timing/train"),
        ("train", "train"),
        ("", ""),
        ("/", "/"),  # "/" + "k" is "/k", not "k"
        ("eval_/", "eval_/"),  # "eval_/loss" is not the glued "eval_loss"
        ("a//", "a//"),
    ],
)
def test_a_prefix_ending_in_its_separator_names_the_prefix_without_it(
    given: str, names: str
) -> None:
    """``prefix + key`` as the caller joins it is ``qualified_key`` of the namespace."""
    assert namespace_prefix(given) == names
    if names != given:
        assert given + "loss" == qualified_key(names, "loss")


class _Sink:
    """A logger whose ``log_metrics`` drops the call (only the tee matters)."""

    def log_metrics(self, metrics: dict[str, float], step: int, prefix: str = "") -> None:
        """Drop the call."""


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("prefix", ["train_rollouts/", "train_rollouts"])
def test_tee_logger_routes_a_prefix_given_with_its_separator(prefix: str) -> None:
    """``TeeLogger.log_metrics(..., prefix="train_rollouts/")`` records on the row under
    ``train_rollouts``; ``tee_metrics`` itself keeps matching the exact declared prefix."""
    vocabulary.register_teed_metrics(ROWS)
    with installed_reader() as reader:
        TeeLogger(_Sink()).log_metrics({"rewards": 0.5}, 3, prefix=prefix)
        tee_metrics({"rewards": 9.0}, "train_rollouts//")
        assert {name: s.value for name, s in collect(reader).items()} == {
            "rl.na.rollout.reward": 0.5
        }


class _Wrapper:
    """NeMo-Aligner's ``CustomLoggerWrapper``: the prefix glued to each key, then the loggers."""

    def __init__(self, *loggers: JsonlLogger) -> None:
        self.loggers = loggers

    def log_metrics(self, metrics: dict[str, float], step: int, prefix: str = "") -> None:
        joined = {f"{prefix}{key}": value for key, value in metrics.items()}
        for logger in self.loggers:
            logger.log_metrics(joined, step)


@pytest.fixture
def separator_prefix_catalog(tmp_path: Path) -> Catalog:
    """The catalog of :data:`CATALOG`."""
    path = tmp_path / "ppo.yaml"
    path.write_text(CATALOG, encoding="utf-8")
    result = load_and_check([path], root=tmp_path)
    assert result.ok, [str(d) for d in result.diagnostics]
    assert result.catalog is not None
    return result.catalog


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("through", ["wrapper", "tee_logger"])
def test_live_check_reads_a_prefix_given_with_its_separator(
    separator_prefix_catalog: Catalog, tmp_path: Path, through: str
) -> None:
    """The flat keys the wrapper writes, and a ``TeeLogger(JsonlLogger)`` line whose
    ``"prefix"`` is ``"train_rollouts/"``, are judged clean and counted on their rows."""
    path = tmp_path / "run.jsonl"
    with JsonlLogger(path) as jsonl:
        logger = TeeLogger(_Wrapper(jsonl) if through == "wrapper" else jsonl)
        for step in range(3):
            logger.log_metrics({"rewards": 0.5}, step, prefix="train_rollouts/")
            logger.log_metrics({"generate": 1.5, "train_time": 3.0}, step, prefix="timers/")
    if through == "tee_logger":
        assert '"prefix":"train_rollouts/"' in path.read_text(encoding="utf-8")
    report = check_file(str(path), separator_prefix_catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    assert {s.row.name: s.logged for s in report.rows} == {
        "rl.na.rollout.reward": 3,
        "rl.na.section.duration": 6,
    }


def test_scan_reads_a_literal_prefix_given_with_its_separator(
    separator_prefix_catalog: Catalog, tmp_path: Path
) -> None:
    """``log_metrics(metrics, step, prefix="timers/")`` logs ``timers/<key>``: declared."""
    code = """\
        def fit(self, a, b):
            metrics = {"rewards": a}
            self.logger.log_metrics(metrics, step=self.step, prefix="train_rollouts/")
            timing = {}
            timing["generate"] = b
            self.logger.log_metrics(timing, step=self.step, prefix="timers/")
        """
    (tmp_path / "ppo.py").write_text(textwrap.dedent(code), encoding="utf-8")
    report = scan([tmp_path / "ppo.py"], separator_prefix_catalog, cwd=tmp_path)
    assert [d.code for d in report.diagnostics if d.severity.value == "error"] == []


@pytest.mark.parametrize(
    ("line", "fix"),
    [
        ('prefix: "train_rollouts/"', "'train_rollouts'"),
        ('prefixes: ["", "timers/"]', "'timers'"),
    ],
)
def test_validate_says_to_declare_a_prefix_without_its_separator(
    tmp_path: Path, line: str, fix: str
) -> None:
    """A declared prefix ending in '/' is refused, naming the prefix to declare instead."""
    text = CATALOG.replace("prefix: train_rollouts", line, 1)
    path = tmp_path / "ppo.yaml"
    path.write_text(text, encoding="utf-8")
    result = load_and_check([path], root=tmp_path)
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "INVALID_FORMAT"
    assert f"declared without it: {fix}" in diagnostic.message
