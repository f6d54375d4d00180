"""examples/nemo_aligner, end to end: NeMo-Aligner's PPO keys declared, generated, teed, checked.

The example project declares the keys NeMo-Aligner's PPO actor (``PPOTrainer``) and critic
server (``CriticServerTrainer``) log through exp_manager's Lightning loggers (README.md
there cites the source of every key), written from this project's docs as an outside
adopter would. Its catalog must validate and lint clean with no rule silenced, generate
into a copy that ``check`` finds current, and the runs its generator writes (PPO with the
KL penalty, clipping and critic warm-up; PPO without either, validated once before its
first due step; the critic server) must be teed key by key to the right series with the
right attributes, unit and value through ``TeeLogger`` around NeMo-Aligner's
``CustomLoggerWrapper`` (which passes ``prefix="train_rollouts/"``), and live-check clean
in this project's JSONL, in TensorBoard event files written through tensorboardX as
Lightning's ``TensorBoardLogger`` writes them (hparams included), and in MLflow's file
store written by MLflow's client as Lightning's ``MLFlowLogger`` logs (params included).
A missing key, an undeclared key and a non-finite value must each fire, so "clean" is
not live-check seeing nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.live_check import LiveCheckReport, check_file, check_paths
from metric_catalog import vocabulary
from metric_catalog.loggers import JsonlLogger
from tests.example_projects import (
    ExampleProject,
    ImportedExample,
    Point,
    exported_units,
    recorded_points,
)
from tests.otel_fixtures import clean_otel, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

NEMO_ALIGNER = ExampleProject(
    "nemo_aligner",
    "nemo_aligner_metrics",
    ("common", "critic", "lightning", "optim", "rollouts", "timers", "validation"),
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/nemo_aligner with its package generated."""
    return NEMO_ALIGNER.generated_copy(tmp_path_factory)


@pytest.fixture(scope="module")
def aligner(project: Path) -> Iterator[ImportedExample]:
    """The example: the generated modules and ``nemo_aligner_metrics.runs`` imported from the
    copy."""
    with NEMO_ALIGNER.imported(project) as example:
        yield example


def test_example_catalog_validates_and_lints_clean() -> None:
    """No error, no warning, and no rule silenced anywhere in the catalog."""
    result = NEMO_ALIGNER.check()
    assert [str(d) for d in result.diagnostics] == []
    text = NEMO_ALIGNER.catalog_text()
    assert "no_lint" not in text


def test_generate_into_a_copy_is_current(project: Path, aligner: ImportedExample) -> None:
    """``check`` finds the copy's generated files current; the package declares every row."""
    assert main(["check", "--root", str(project)]) == 0
    assert sorted(row.name for row in aligner.rows) == sorted(
        row.name for _file, row in aligner.catalog.rows() if row.logger_key is not None
    )


def _recorded(collected: Any) -> dict[Point, tuple[Any, str]]:
    """(series, attributes) -> (value, exported unit) of every point the reader collected."""
    units = exported_units(collected)
    return {point: (value, units[point[0]]) for point, value in recorded_points(collected).items()}


# Keys a reader can get wrong, each as NeMo-Aligner passes it: (prefix, key) -> series.
TRICKY = [
    (
        "timers/",
        "generate",
        "rl.nemo_aligner.step_section.duration",
        {"nemo_aligner.timer": "generate"},
    ),
    ("timers/", "init_logprobs", "rl.nemo_aligner.init_logprobs.duration", {}),
    ("train/", "loss", "rl.nemo_aligner.critic.loss", {}),
    ("train_optim/", "loss", "rl.nemo_aligner.actor.loss", {}),
    ("train_rollouts/", "consumed_samples", "rl.nemo_aligner.rollout.consumed_samples", {}),
    ("val_rollouts/", "consumed_samples", "rl.nemo_aligner.validation.samples", {}),
    ("", "hp_metric", "rl.nemo_aligner.hp_metric", {}),
]


class _Sink:
    """A Lightning logger stand-in whose ``log_metrics`` drops the call."""

    def log_metrics(self, metrics: Any, step: int | None = None) -> None:
        """Drop the call."""


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize(
    ("prefix", "key", "series", "attributes"), TRICKY, ids=[p + k for p, k, *_ in TRICKY]
)
def test_a_tricky_nemo_aligner_key_is_teed_to_its_series(
    aligner: ImportedExample, prefix: str, key: str, series: str, attributes: dict[str, Any]
) -> None:
    """TeeLogger around the wrapper, and live-check's matcher, put it on the expected series."""
    from metric_catalog.loggers import TeeLogger

    aligner.register()
    with installed_reader() as reader:
        wrapper = aligner.runs.CustomLoggerWrapper([_Sink()])
        TeeLogger(wrapper).log_metrics({key: 7.0}, step=3, prefix=prefix)
        recorded = _recorded(reader.get_metrics_data())
    assert {point: value for point, (value, _unit) in recorded.items()} == {
        (series, frozenset(attributes.items())): 7.0
    }
    assert aligner.route(prefix + key) == (series, attributes)


RUN_NAMES = NEMO_ALIGNER.run_names()


def _numbers(logged: list[tuple[int, dict[str, Any]]]) -> Iterator[tuple[str, float]]:
    """Every ``(key, value)`` the Lightning loggers received, in order."""
    for _step, data in logged:
        for key, value in data.items():
            assert isinstance(value, (int, float)), (key, value)
            yield key, value


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_key_of_a_nemo_aligner_run_is_teed_to_its_series(
    aligner: ImportedExample, tmp_path: Path, name: str
) -> None:
    """Each key lands on the series live-check counts it under, with its attributes, the
    row's exported unit and the value: a gauge's last one, a running total's last total
    (the tee adds what it grew by: ``consumed_samples``, ``optim_step``)."""
    aligner.register()
    with installed_reader() as reader:
        logged = aligner.runs.write_run(aligner.spec(name), tmp_path / "run.jsonl")
        recorded = _recorded(reader.get_metrics_data())
    expected: dict[Point, tuple[Any, str]] = {}
    for key, value in _numbers(logged):
        series, captured = aligner.route(key)
        row = aligner.row(series)
        expected[(series, frozenset(captured.items()))] = (pytest.approx(value), row.unit)
    assert recorded == expected
    assert len(expected) >= 4


def _counts(aligner: ImportedExample, logged: list[tuple[int, dict[str, Any]]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key, _value in _numbers(logged):
        series = aligner.route(key)[0]
        counts[series] = counts.get(series, 0) + 1
    return counts


def _unseen(report: LiveCheckReport) -> set[str]:
    """Rows the run's loop and configuration call for that it never logged."""
    return {
        s.row.name
        for s in report.rows
        if not s.logged and s.presence not in {"not_applicable", "not_emitted"}
    }


HP_METRIC = "rl.nemo_aligner.hp_metric"


def _clean(report: LiveCheckReport, counts: dict[str, int], unseen: set[str]) -> None:
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts
    assert _unseen(report) == unseen


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_on_a_nemo_aligner_jsonl_run(
    aligner: ImportedExample, tmp_path: Path, name: str
) -> None:
    """No finding; every row the loop, configuration and format call for is seen
    (``hp_metric``, which only Lightning's TensorBoard logger adds, is not applicable)."""
    aligner.register()
    path = tmp_path / f"{name}.jsonl"
    with installed_reader():
        logged = aligner.runs.write_run(aligner.spec(name), path)
    report = check_file(str(path), aligner.catalog)
    _clean(report, _counts(aligner, logged), set())
    assert report.coverage.overall == 1.0


@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_at_full_coverage_on_a_nemo_aligner_tensorboard_run(
    aligner: ImportedExample, tmp_path: Path, name: str
) -> None:
    """Event files as Lightning's TensorBoardLogger writes them: ``hp_metric`` at step 0,
    the hparams summaries (the configuration, so conditions are decided), a scalar per key."""
    logged = aligner.runs.write_tensorboard(aligner.spec(name), tmp_path)
    report = check_file(str(tmp_path / name), aligner.catalog)
    counts = _counts(aligner, logged)
    counts[HP_METRIC] = 1
    _clean(report, counts, set())
    assert report.coverage.overall == 1.0


@pytest.mark.integration
@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_on_a_nemo_aligner_mlflow_run(
    aligner: ImportedExample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A run folder of MLflow's file store as Lightning's MLFlowLogger logs it (the params
    are the configuration): no finding, every row that applies seen."""
    pytest.importorskip("mlflow", reason="the dev extra installs mlflow-skinny")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    run_id, logged = aligner.runs.write_mlflow(aligner.spec(name), (tmp_path / "mlruns").as_uri())
    (folder,) = (tmp_path / "mlruns").glob(f"*/{run_id}")
    report = check_file(str(folder), aligner.catalog)
    _clean(report, _counts(aligner, logged), set())
    assert report.coverage.overall == 1.0


def _spoiled(step: int, logged: dict[str, Any], case: str) -> dict[str, Any]:
    """One call's dict with the case's fault."""
    data = dict(logged)
    if case == "missing":
        data.pop("train_optim/ppo_ratio", None)
    elif case == "undeclared" and "train_optim/loss" in data:
        data["train_optim/kl_loss"] = 0.1
    elif case == "non_finite" and "train_optim/loss" in data and step == 2:
        data["train_optim/loss"] = math.nan
    elif case == "clip_without_grad_norm":
        data.pop("train_optim/grad_norm", None)
    return data


@pytest.mark.parametrize(
    ("case", "finding"),
    [
        ("missing", ("missing", "train_optim/ppo_ratio")),
        ("undeclared", ("undeclared", "train_optim/kl_loss")),
        ("non_finite", ("non_finite", "train_optim/loss")),
        ("clip_without_grad_norm", ("missing", "train_optim/grad_norm")),
    ],
)
@pytest.mark.parametrize("fmt", ["jsonl", "tensorboard"])
def test_a_fault_in_a_nemo_aligner_run_fires(
    aligner: ImportedExample, tmp_path: Path, fmt: str, case: str, finding: tuple[str, str]
) -> None:
    """One fault in a clean run's calls is the one finding, in each format (the last: a run
    configured with clipping that never logged ``grad_norm``, decided by its hparams too)."""
    spec = aligner.spec("ppo_kl_clipped")
    calls = aligner.runs.write_run(spec, tmp_path / "clean.jsonl")
    spoiled = [(step, _spoiled(step, data, case)) for step, data in calls]
    if fmt == "jsonl":
        path = tmp_path / "run.jsonl"
        with JsonlLogger(path, config=spec.config) as jsonl:
            for step, data in spoiled:
                jsonl.log_metrics(data, step)
    else:
        path = tmp_path / "run" / "version_0"
        tensorboard = aligner.runs.TensorBoardLogger(path)
        tensorboard.log_hyperparams(spec.config)
        for step, data in spoiled:
            tensorboard.log_metrics(data, step)
        tensorboard.finalize("success")
    report = check_file(str(path), aligner.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == [finding]


def test_validation_before_its_first_due_step_and_a_short_run_are_clean(
    aligner: ImportedExample, tmp_path: Path
) -> None:
    """Validation runs at the last step (4) of a run due to validate every 10 steps:
    logged before its ``first_step``, which is no finding (the clean runs); a job of
    ``max_steps: 20`` stopped after 3 steps never validated, and its validation rows are
    not due."""
    spec = aligner.spec("ppo_no_kl_unclipped")
    config = {**spec.config, "trainer": {**spec.config["trainer"]}}
    config["trainer"]["ppo"] = {**config["trainer"]["ppo"], "max_steps": 20}
    short = type(spec)(spec.name, spec.process, config, steps=3)
    logged = aligner.runs.write_tensorboard(short, tmp_path)
    assert not any(key.startswith("val_rollouts/") for _s, d in logged for key in d)
    report = check_file(str(tmp_path / spec.name), aligner.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    states = {s.row.name: s.presence for s in report.rows}
    assert states["rl.nemo_aligner.validation.reward.mean"] == "not_due"


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_lightning_loggers_teed_with_the_mixin_record_what_tee_logger_records(
    aligner: ImportedExample, tmp_path: Path, name: str
) -> None:
    """The other place to tee NeMo-Aligner: each Lightning logger, through
    ``LightningTeeMixin`` (flat keys split at the longest declared prefix). The series,
    attributes and values match the ``TeeLogger`` run's, ``hp_metric`` (which only the
    TensorBoard logger logs) aside."""
    from metric_catalog.adapters import LightningTeeMixin

    class TeedTensorBoard(LightningTeeMixin, aligner.runs.TensorBoardLogger):  # type: ignore[misc,name-defined]
        """Lightning's TensorBoard logger, teed."""

    spec = aligner.spec(name)
    aligner.register()
    with installed_reader() as reader:
        aligner.runs.write_run(spec, tmp_path / "run.jsonl")
        expected = _recorded(reader.get_metrics_data())
    vocabulary._reset_for_tests()
    aligner.register()
    with installed_reader() as reader:
        teed = TeedTensorBoard(tmp_path / "tensorboard")
        play = aligner.runs.play_actor if spec.process == "actor" else aligner.runs.play_critic
        play(spec, aligner.runs.CustomLoggerWrapper([teed]))
        recorded = _recorded(reader.get_metrics_data())
    assert recorded.pop((HP_METRIC, frozenset()))[0] == -1
    assert recorded == expected


JOBS = [("ppo_kl_clipped", "critic_server"), ("ppo_no_kl_unclipped", "critic_server")]


def _job_clean(report: LiveCheckReport) -> None:
    """No finding, each process judged as its own loop, neither loop's rows out of place."""
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    assert {loop.name for loop in report.job_loops} == {"ppo_actor", "ppo_critic"}
    kinds = {n.kind for n in report.notices}
    assert not kinds & {"unexpected_loop", "config_conflict"}, kinds


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("names", JOBS, ids=["-".join(job) for job in JOBS])
def test_the_actors_and_the_critic_servers_jsonl_logs_checked_together_are_clean(
    aligner: ImportedExample, tmp_path: Path, names: tuple[str, str]
) -> None:
    """One job, two processes: each log judged as its own loop, by its own steps and its
    own configuration (the critic's clipping does not make the unclipped actor's
    grad_norm required, its step count does not make validation due)."""
    aligner.register()
    paths = []
    with installed_reader():
        for name in names:
            path = tmp_path / f"{name}.jsonl"
            aligner.runs.write_run(aligner.spec(name), path)
            paths.append(str(path))
    for order in (paths, paths[::-1]):
        _job_clean(check_paths(order, aligner.catalog))


@pytest.mark.parametrize("names", JOBS, ids=["-".join(job) for job in JOBS])
def test_a_tensorboard_folder_holding_the_actor_and_the_critic_server_is_clean(
    aligner: ImportedExample, tmp_path: Path, names: tuple[str, str]
) -> None:
    """Lightning's TensorBoard logger in both processes, one log folder: each run's loop
    inferred from its own tags, judged by its own hparams."""
    for name in names:
        aligner.runs.write_tensorboard(aligner.spec(name), tmp_path)
    report = check_file(str(tmp_path), aligner.catalog)
    _job_clean(report)
    (several,) = [n.message for n in report.notices if n.kind == "several_runs"]
    assert several.endswith("judged over the runs of the loops that emit it (see several_loops)")


@pytest.mark.integration
def test_an_mlflow_experiment_holding_the_actor_and_the_critic_server_is_clean(
    aligner: ImportedExample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both processes log into one MLflow experiment: each run judged by its own params."""
    pytest.importorskip("mlflow", reason="the dev extra installs mlflow-skinny")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    for name in JOBS[1]:
        aligner.runs.write_mlflow(aligner.spec(name), (tmp_path / "mlruns").as_uri())
    (experiment,) = [p for p in (tmp_path / "mlruns").iterdir() if p.name not in (".trash", "0")]
    _job_clean(check_file(str(experiment), aligner.catalog))
