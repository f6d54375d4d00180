"""Realistic runs of a codebase whose families overlap literal rows and span segments.

The catalog below is shaped like verl's PPO/GRPO trainer: ``timing_s/{stage}`` (any
``marked_timer`` name) beside the specific ``timing_s/agent_loop/generate_sequences/max``,
enum families beside literal rows of the same shape (``response_length/{stat}`` and
``response_length/clip_ratio``), and validation keys whose data source spans path
segments (``val-core/openai/gsm8k/acc/mean-4``). verl writes ``mean@4``; a logger key
cannot hold ``@`` yet (the key format), so these runs write ``mean-4``.

Three runs are written with the runtime's real ``JsonlLogger``; live-check must report
no finding on them, and the real tee must record each key on the series live-check
counts it under, with the same captured attributes.
"""

from __future__ import annotations

import importlib
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codegen.catalog.matching import KeyMatcher
from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.live_check import check_file
from metric_catalog import vocabulary
from metric_catalog.loggers import JsonlLogger
from metric_catalog.tee import tee_metrics
from metric_catalog.vocabulary import MetricAttribute, TeedMetric
from tests.mlflow_stores import mlflow_template, sqlite_store, write_runs
from tests.otel_fixtures import clean_otel, installed_reader

__all__ = ["clean_otel", "mlflow_template"]  # fixtures used by name

CATALOG = """\
owner: verl.trainer.ppo.ray_trainer
module: verl_trainer
description: Metrics verl's PPO/GRPO trainer logs through Tracking.log.
prefix: ""
attributes:
  - name: rl.stage
    type: string
    description: A marked_timer stage name (gen, old_log_prob, update_actor).
    max_cardinality: "64"
  - name: rl.stat
    type: string
    description: Statistic over the batch.
    values:
      - value: mean
        description: Mean over the batch.
      - value: max
        description: Maximum over the batch.
      - value: min
        description: Minimum over the batch.
  - name: rl.data_source
    type: string
    description: Validation data source, possibly nested (openai/gsm8k).
    max_cardinality: "32"
    spans_segments: "true"
  - name: rl.var
    type: string
    description: Validation variable (acc, reward).
    max_cardinality: "16"
teed:
  - logger_key: "timing_s/{rl.stage}"
    name: rl.verl.timing
    kind: gauge
    unit: s
    description: Wall clock of one marked_timer stage in the step.
    attributes:
      - ref: rl.stage
  - logger_key: timing_s/agent_loop/generate_sequences/max
    name: rl.verl.agent_loop.generate_max
    kind: gauge
    unit: s
    description: Slowest generate_sequences call of the agent loop in the step.
  - logger_key: "timing_s/agent_loop/{rl.stage}/mean"
    name: rl.verl.agent_loop.stage_mean
    kind: gauge
    unit: s
    description: Mean wall clock of one agent-loop stage in the step.
    attributes:
      - ref: rl.stage
  - logger_key: "response_length/{rl.stat}"
    name: rl.verl.response_length.stat
    kind: gauge
    unit: "{token}"
    description: Response length statistic over the batch.
    attributes:
      - ref: rl.stat
  - logger_key: response_length/clip_ratio
    name: rl.verl.response_length.clip_ratio
    kind: gauge
    unit: "1"
    description: Share of responses clipped at the maximum length.
    range: {min: "0", max: "1"}
  - logger_key: "critic/score/{rl.stat}"
    name: rl.verl.score
    kind: gauge
    unit: "1"
    description: Sequence score statistic over the batch.
    attributes:
      - ref: rl.stat
  - logger_key: actor/pg_loss
    name: rl.verl.actor.pg_loss
    kind: gauge
    unit: "1"
    description: Policy-gradient loss of the actor update.
  - logger_key: "val-core/{rl.data_source}/{rl.var}/mean-4"
    name: rl.verl.val.mean
    kind: gauge
    unit: "1"
    description: Mean over 4 samples of a validation variable on one data source.
    attributes:
      - ref: rl.data_source
      - ref: rl.var
  - logger_key: "val-core/{rl.data_source}/{rl.var}/best-4/std"
    name: rl.verl.val.best_std
    kind: gauge
    unit: "1"
    description: Bootstrap std of the best of 4 samples on one data source.
    attributes:
      - ref: rl.data_source
      - ref: rl.var
  - logger_key: training/global_step
    name: rl.verl.global_step
    kind: gauge
    unit: "1"
    description: The trainer's global step.
"""

STAGES = ("gen", "old_log_prob", "ref", "adv", "update_actor", "testing")
SOURCES = ("openai/gsm8k", "lighteval/MATH", "gsm8k")


def _step_metrics(rng: random.Random, step: int, with_validation: bool) -> dict[str, float]:
    """One step's dict, as verl's compute_*_metrics and marked_timer produce it."""
    metrics: dict[str, float] = {"training/global_step": float(step)}
    metrics |= {f"timing_s/{stage}": rng.uniform(0.1, 9.0) for stage in STAGES}
    metrics["timing_s/agent_loop/generate_sequences/max"] = rng.uniform(1.0, 5.0)
    metrics["timing_s/agent_loop/generate_sequences/mean"] = rng.uniform(0.5, 1.0)
    metrics["timing_s/agent_loop/tool_calls/mean"] = rng.uniform(0.0, 0.5)
    metrics |= {f"response_length/{stat}": rng.uniform(10, 900) for stat in ("mean", "max", "min")}
    metrics["response_length/clip_ratio"] = rng.random()
    metrics |= {f"critic/score/{stat}": rng.random() for stat in ("mean", "max", "min")}
    metrics["actor/pg_loss"] = rng.uniform(-1, 1)
    if with_validation:
        for source in SOURCES:
            for var in ("acc", "reward"):
                metrics[f"val-core/{source}/{var}/mean-4"] = rng.random()
                metrics[f"val-core/{source}/{var}/best-4/std"] = rng.random()
    return metrics


def _write_run(path: Path, seed: int, steps: int) -> list[dict[str, float]]:
    rng = random.Random(seed)
    logger = JsonlLogger(path)
    logged = []
    try:
        for step in range(1, steps + 1):
            metrics = _step_metrics(rng, step, with_validation=step % 5 == 0)
            logger.log_metrics(metrics, step)
            logged.append(metrics)
    finally:
        logger.close()
    return logged


@pytest.fixture(scope="module")
def verl_trainer_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """verl's trainer rows of :data:`CATALOG`, loaded and linted clean."""
    root = tmp_path_factory.mktemp("verl")
    (root / "catalog").mkdir()
    (root / "catalog" / "verl_trainer.yaml").write_text(CATALOG, encoding="utf-8")
    result = load_and_check(root=root)
    assert [str(d) for d in result.diagnostics] == []
    return result.catalog


@pytest.mark.parametrize(("seed", "steps"), [(1, 12), (2, 20), (3, 7)])
def test_live_check_reports_no_false_finding_on_verl_style_runs(
    verl_trainer_catalog: Catalog, tmp_path: Path, seed: int, steps: int
) -> None:
    """Overlapping families, literal rows beside them and spanning data sources: clean."""
    path = tmp_path / "run.jsonl"
    _write_run(path, seed, steps)
    report = check_file(str(path), verl_trainer_catalog)
    assert [(f.kind, f.qualified_key, f.message()) for f in report.findings] == []
    logged = {summary.row.name: summary.logged for summary in report.rows}
    # The literal row takes its key; the family beside it keeps the others.
    assert logged["rl.verl.agent_loop.generate_max"] == steps
    assert logged["rl.verl.timing"] == steps * len(STAGES)
    assert logged["rl.verl.agent_loop.stage_mean"] == 2 * steps
    assert logged["rl.verl.response_length.stat"] == 3 * steps
    assert logged["rl.verl.response_length.clip_ratio"] == steps
    assert logged["rl.verl.val.mean"] == (steps // 5) * len(SOURCES) * 2


def _runtime_rows(catalog: Catalog) -> list[TeedMetric]:
    known = catalog.attributes()
    rows = []
    for _file, row in catalog.rows():
        attributes = tuple(
            MetricAttribute(
                ref.name,
                known[ref.name].type,
                values=known[ref.name].typed_values(),
                max_cardinality=known[ref.name].max_cardinality,
                requirement=ref.requirement_level,
                spans_segments=known[ref.name].spans_segments,
            )
            for ref in row.attributes
        )
        rows.append(
            TeedMetric(
                row.logger_key or "",
                row.name,
                unit=row.unit,
                prefix=row.prefixes[0],
                other_prefixes=row.prefixes[1:],
                attributes=attributes,
            )
        )
    return rows


def test_the_tee_routes_each_verl_key_as_live_check_counts_it(
    verl_trainer_catalog: Catalog, clean_otel: None, tmp_path: Path
) -> None:
    """Every key of a step goes to the series live-check counts it under, same attributes."""
    metrics = _step_metrics(random.Random(7), 5, with_validation=True)
    rows = [row for _f, row in verl_trainer_catalog.rows()]
    checker = KeyMatcher(rows, 1000, verl_trainer_catalog.attributes())
    expected: dict[tuple[str, frozenset[tuple[str, Any]]], float] = {}
    for key, value in metrics.items():
        ((row, captured),) = checker.route("", key)
        expected[(row.name, frozenset(captured.items()))] = value
    assert expected[("rl.verl.val.mean", frozenset({("rl.data_source", "openai/gsm8k"),
                                                     ("rl.var", "acc")}))] == (
        metrics["val-core/openai/gsm8k/acc/mean-4"]
    )  # fmt: skip
    vocabulary.register_teed_metrics(_runtime_rows(verl_trainer_catalog))
    with installed_reader() as reader:
        tee_metrics(metrics, "")
        data = reader.get_metrics_data()
    recorded: dict[tuple[str, frozenset[tuple[str, Any]]], float] = {}
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    attributes = frozenset((point.attributes or {}).items())
                    recorded[(metric.name, attributes)] = point.value
    assert recorded == expected


# --- verl's MLflow runs -------------------------------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "verl"
_REFUSED = re.compile(r"[^/\w.\- :]")


def verl_mlflow_key(key: str) -> str:
    """The key verl's MLflow adapter hands to ``mlflow.log_metrics``.

    ``_MlflowLoggingAdapter`` in ``verl/utils/tracking.py`` (volcengine/verl): ``@`` becomes
    ``_at_``, a run of ``/`` one ``/``, then every character outside MLflow's metric-name
    rule (``/``, word characters, ``.``, ``-``, space, ``:``) becomes ``_``.
    """
    return _REFUSED.sub("_", re.sub("/+", "/", key.replace("@", "_at_")))


@pytest.fixture(scope="module")
def verl_example() -> Iterator[tuple[Catalog, ModuleType]]:
    """examples/verl's catalog and its run generator (``verl_metrics.runs``)."""
    result = load_and_check(sorted((EXAMPLE / "verl_metrics/telemetry/catalog").glob("*.yaml")))
    assert result.catalog is not None
    sys.path.insert(0, str(EXAMPLE))
    try:
        yield result.catalog, importlib.import_module("verl_metrics.runs")
    finally:
        sys.path.remove(str(EXAMPLE))
        for name in [name for name in sys.modules if name.split(".")[0] == "verl_metrics"]:
            del sys.modules[name]


@pytest.mark.integration
def test_a_verl_mlflow_run_is_clean_with_the_at_rewrite(
    verl_example: tuple[Catalog, ModuleType], mlflow_template: Path, tmp_path: Path
) -> None:
    """verl's validation keys reach MLflow's SQLite store (verl's default backend) as
    ``mean_at_4``; ``--key-rewrite _at_=@`` checks the run against the catalog's ``mean@4``
    rows, unedited, with no finding. Without it, those keys are undeclared."""
    catalog, runs = verl_example
    (spec,) = [spec for spec in runs.RUNS if spec.name == "grpo_validation"]
    rng = random.Random(spec.seed)
    steps = [(step, runs.step_metrics(rng, spec, step)) for step in range(1, spec.steps + 1)]
    mangled = {verl_mlflow_key(k) for _, metrics in steps for k in metrics} - {
        k for _, metrics in steps for k in metrics
    }
    assert mangled
    assert all("_at_" in key for key in mangled)
    db = tmp_path / "mlruns.db"
    write_runs(sqlite_store(mlflow_template, db), {spec.name: steps}, keys=verl_mlflow_key)
    report = check_file(str(db), catalog, key_rewrites=(("_at_", "@"),))
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    assert report.rewritten_keys == len(mangled)
    logged = sum(len(metrics) for _, metrics in steps)
    assert sum(r.logged for r in report.rows) == logged
    bare = check_file(str(db), catalog)
    undeclared = {f.qualified_key for f in bare.findings if f.kind == "undeclared"}
    assert undeclared == mangled
