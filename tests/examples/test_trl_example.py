"""examples/trl, end to end: TRL's trainers' keys declared, generated, teed and live-checked.

The example project declares the keys Hugging Face TRL's ``GRPOTrainer``, ``RLOOTrainer``,
``DPOTrainer``, ``KTOTrainer`` and ``OnlineDPOTrainer`` and the transformers ``Trainer``
under them log (README.md there cites the source of every family),
written from this project's docs only. Its catalog must validate and lint clean with no
rule silenced and generate into a copy that ``check`` finds current; every key of its runs
must be teed through ``TrainerCallbackTee`` (called by transformers' real
``CallbackHandler``) to the series live-check counts it under, with the same attributes;
live-check must find nothing in both formats the Trainer writes (``trainer_state.json``,
and what ``on_log`` received written by a ``JsonlLogger``), and must fire when a run drops
a required key or logs a value of the wrong kind, so "clean" is not "saw nothing". The
runs logged through transformers' own W&B, TensorBoard and MLflow callbacks must read back
clean too, the way the docs say.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.live_check import LiveCheckReport, check_file
from codegen.live_check.checker import Checker
from codegen.live_check.coverage import NOT_APPLICABLE
from codegen.runs.rewrites import PREFIX_TABLES
from metric_catalog.adapters import TrainerCallbackTee
from tests.example_projects import ExampleProject, ImportedExample, Point, recorded_points
from tests.otel_fixtures import clean_otel, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

TRL = ExampleProject(
    "trl",
    "trl_metrics",
    ("common", "dpo", "grpo", "kto", "online_dpo", "trainer"),
    ignore=("__pycache__", ".cache", "docs", "runs"),
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/trl with its package generated."""
    return TRL.generated_copy(tmp_path_factory)


@pytest.fixture(scope="module")
def trl(project: Path) -> Iterator[ImportedExample]:
    """The example: the generated modules and ``trl_metrics.runs`` imported from the copy,
    then forgotten."""
    with TRL.imported(project) as example:
        yield example


def _route(example: ImportedExample, logged: str) -> tuple[str, dict[str, Any]]:
    """The one row live-check counts a flat key under, and what it captured."""
    matcher = Checker(example.catalog, "run").matcher
    prefix, key = matcher.split(logged)
    ((row, captured),) = matcher.route(prefix, key)
    return row.name, dict(captured)


RUN_NAMES = TRL.run_names()


def _dispatch() -> Any:
    """transformers' own CallbackHandler when installed (it imports without torch)."""
    try:
        from transformers.trainer_callback import CallbackHandler
    except ImportError:  # pragma: no cover - the dev extra installs transformers
        return None

    def build(callbacks: list[Any]) -> Any:
        return CallbackHandler(callbacks, None, None, None, None)

    return build


def test_example_catalog_validates_and_lints_clean_with_no_rule_silenced() -> None:
    result = TRL.check()
    assert [str(d) for d in result.diagnostics] == []
    text = TRL.catalog_text()
    assert "no_lint" not in text


def test_generate_into_a_copy_is_current(project: Path, trl: ImportedExample) -> None:
    assert main(["check", "--root", str(project)]) == 0
    assert sorted(row.name for row in trl.rows) == sorted(
        row.name for _file, row in trl.catalog.rows() if row.logger_key is not None
    )


# Keys whose series a reader can get wrong: glued eval_ prefixes, a set name holding '_',
# a literal row beside a family of the same text, '/' inside a glued key, a model's name.
TRICKY = [
    ("loss", "rl.hf.loss", {}),
    ("eval_loss", "rl.hf.loss", {"hf.split": "eval"}),
    ("eval_math_500_loss", "rl.hf.loss", {"hf.split": "eval", "hf.eval_dataset": "math_500"}),
    ("train_loss", "rl.hf.train.loss_average", {}),
    ("train_runtime", "rl.hf.runtime", {"hf.split": "train"}),
    (
        "eval_gsm8k_samples_per_second",
        "rl.hf.sample.rate",
        {"hf.split": "eval", "hf.eval_dataset": "gsm8k"},
    ),
    ("reward_std", "rl.trl.reward.group_std", {}),
    ("eval_reward_std", "rl.trl.reward.group_std", {"hf.split": "eval"}),
    ("eval_frac_reward_zero_std", "rl.trl.reward.zero_std_fraction", {"hf.split": "eval"}),
    (
        "rewards/Qwen2.5-0.5B-Reward/mean",
        "rl.trl.reward_func.mean",
        {"trl.reward_func": "Qwen2.5-0.5B-Reward"},
    ),
    (
        "eval_rewards/accuracy_reward/std",
        "rl.trl.reward_func.std",
        {"trl.reward_func": "accuracy_reward", "hf.split": "eval"},
    ),
    (
        "completions/mean_terminated_length",
        "rl.trl.completion.terminated_length",
        {"trl.stat": "mean"},
    ),
    (
        "eval_completions/max_length",
        "rl.trl.completion.length",
        {"trl.stat": "max", "hf.split": "eval"},
    ),
    (
        "eval_clip_ratio/region_mean",
        "rl.trl.clip_ratio",
        {"trl.clip": "region_mean", "hf.split": "eval"},
    ),
    ("epoch", "rl.hf.epoch", {}),
    # The other trainers: a family beside literal rows under one segment (rewards/margins),
    # GRPO's conditional keys, online DPO's training-only ones.
    ("rewards/chosen", "rl.trl.preference.reward", {"trl.preference": "chosen"}),
    ("rewards/margins", "rl.trl.preference.reward_margin", {}),
    ("eval_rewards/accuracies", "rl.trl.preference.reward_accuracy", {"hf.split": "eval"}),
    (
        "eval_logps/rejected",
        "rl.trl.preference.logp",
        {"trl.preference": "rejected", "hf.split": "eval"},
    ),
    ("logits/chosen", "rl.trl.preference.logit", {"trl.preference": "chosen"}),
    ("mean_token_accuracy", "rl.trl.preference.token_accuracy", {}),
    (
        "sampling/importance_sampling_ratio/min",
        "rl.trl.sampling.importance_ratio",
        {"trl.reduce": "min"},
    ),
    ("eval_cispo_clip_ratio", "rl.trl.cispo.clip_ratio", {"hf.split": "eval"}),
    ("step_time", "rl.trl.step.duration", {}),
    ("entropy_coef", "rl.trl.entropy_coef", {}),
    ("objective/rlhf_reward", "rl.trl.online_dpo.rlhf_reward", {}),
    ("val/contain_eos_token", "rl.trl.online_dpo.eos_ratio", {}),
    ("beta", "rl.trl.online_dpo.beta", {}),
]


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize(("key", "series", "attributes"), TRICKY, ids=[k for k, *_ in TRICKY])
def test_a_tricky_trl_key_is_teed_to_its_series(
    trl: ImportedExample, key: str, series: str, attributes: dict[str, str]
) -> None:
    """The tee (through TrainerCallbackTee) and live-check put it on the same series."""
    trl.register()
    with installed_reader() as reader:
        TrainerCallbackTee().on_log(None, None, None, logs={key: 0.5})
        recorded = recorded_points(reader.get_metrics_data())
    assert recorded == {(series, frozenset(attributes.items())): pytest.approx(0.5)}
    assert _route(trl, key) == (series, attributes)


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_key_of_a_trl_run_is_teed_to_its_series(
    trl: ImportedExample, tmp_path: Path, name: str
) -> None:
    """Through the real CallbackHandler: each key on the series live-check counts it under."""
    trl.register()
    dispatch = _dispatch()
    kwargs = {"dispatch": dispatch} if dispatch is not None else {}
    with installed_reader() as reader:
        logged = trl.runs.write_callback_log(trl.spec(name), tmp_path / "run.jsonl", **kwargs)
        recorded = recorded_points(reader.get_metrics_data())
    expected: dict[Point, Any] = {}
    for _step, logs in logged:
        for key, value in logs.items():
            series, captured = _route(trl, key)
            # Gauges keep the last value; the counters here are running totals (the last).
            # A None is no value: the series keeps the one before.
            if value is not None:
                expected[(series, frozenset(captured.items()))] = pytest.approx(value)
    assert recorded == expected
    assert min(len(logs) for _step, logs in logged) >= 6


def _findings(report: LiveCheckReport) -> list[tuple[str, str]]:
    return [(f.kind, f.qualified_key or f.series or "") for f in report.findings]


def _counts(
    trl: ImportedExample,
    logged: list[tuple[int, dict[str, Any]]],
    skip: frozenset[str] = frozenset(),
    *,
    nulls: bool = True,
) -> dict[str, int]:
    """Values logged per series (a None too, unless ``nulls`` is false: a store that drops it)."""
    counts: dict[str, int] = {}
    for _step, logs in logged:
        for key, value in logs.items():
            if (value is None and not nulls) or key in skip:
                continue
            series = _route(trl, key)[0]
            counts[series] = counts.get(series, 0) + 1
    return counts


# What each run cannot show, in both formats: the end-of-training keys a checkpoint's
# state never holds. Rows of the other trainers (emitted_by), rows the configuration rules
# out and rows whose condition cannot be decided (prose, or no configuration in a
# trainer_state.json) are not counted against a run.
UNSEEN = {"grpo_checkpoint": {"rl.hf.train.loss_average", "rl.hf.flos"}}
# The loop each run is inferred to be, from its signature keys.
LOOPS = {
    "rloo_kl": "grpo",  # RLOOTrainer logs GRPO's keys: one loop
    "dpo_eval": "dpo",
    "kto_eval": "kto",
    "online_dpo_reward_funcs": "online_dpo",
}


def _unseen(report: LiveCheckReport) -> set[str]:
    return {s.row.name for s in report.rows if not s.logged and s.presence not in NOT_APPLICABLE}


@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_reports_no_finding_on_a_trl_trainer_state(
    trl: ImportedExample, tmp_path: Path, name: str
) -> None:
    """The trainer_state.json a run leaves: detected, every key split and counted, clean."""
    spec = trl.spec(name)
    path = trl.runs.write_trainer_state(spec, tmp_path)
    assert path.name == "trainer_state.json"
    report = check_file(str(path), trl.catalog)
    assert _findings(report) == []
    logged = trl.runs.run_logs(spec)
    assert {s.row.name: s.logged for s in report.rows if s.logged} == _counts(trl, logged)
    assert _unseen(report) == UNSEEN.get(name, set())
    assert report.loop.name == LOOPS.get(name, "grpo")


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_reports_no_finding_on_a_trl_callback_log(
    trl: ImportedExample, tmp_path: Path, name: str
) -> None:
    """What on_log received, written through TrainerCallbackTee(logger=JsonlLogger(...))."""
    trl.register()
    path = tmp_path / f"{name}.jsonl"
    with installed_reader():
        logged = trl.runs.write_callback_log(trl.spec(name), path)
    report = check_file(str(path), trl.catalog)
    assert _findings(report) == []
    assert {s.row.name: s.logged for s in report.rows if s.logged} == _counts(trl, logged)
    unseen = _unseen(report)
    assert unseen == UNSEEN.get(name, set())
    if not unseen:
        assert report.coverage.overall == 1.0


def test_the_trainer_state_is_what_transformers_writes(
    trl: ImportedExample, tmp_path: Path
) -> None:
    """transformers' TrainerState.save_to_json writes the example's file byte for byte."""
    transformers = pytest.importorskip("transformers")
    for spec in trl.runs.RUNS:
        path = trl.runs.write_trainer_state(spec, tmp_path / spec.name)
        doc = json.loads(path.read_text(encoding="utf-8"))
        fields = {f.name for f in dataclasses.fields(transformers.TrainerState)}
        assert set(doc) == fields
        again = tmp_path / "again.json"
        transformers.TrainerState(**doc).save_to_json(str(again))
        assert again.read_bytes() == path.read_bytes()


def _drop(logged: list[tuple[int, dict[str, Any]]], key: str) -> None:
    for _step, logs in logged:
        for logged_key in [k for k in logs if k in {key, f"eval_{key}"}]:
            del logs[logged_key]


def _mangle(logged: list[tuple[int, dict[str, Any]]], key: str) -> None:
    for _step, logs in logged:
        if key in logs:
            logs[key] = "n/a"


@dataclass(frozen=True)
class Firing:
    """A run changed so live-check must fire, and what it must report in each format."""

    run: str
    change: Any
    key: str
    in_state: list[tuple[str, str]]
    """The findings in the run's trainer_state.json."""
    in_jsonl: list[tuple[str, str]]
    """The findings in what on_log received, written with the run's configuration."""


FIRING = [
    Firing(
        "grpo_kl_eval",
        _drop,
        "entropy",
        [("missing", "rl.trl.entropy")],
        [("missing", "rl.trl.entropy")],
    ),
    # kl's presence depends on beta: only the JSONL carries the configuration to decide it.
    Firing("grpo_kl_eval", _drop, "kl", [], [("missing", "rl.trl.kl")]),
    Firing(
        "grpo_two_rewards",
        _mangle,
        "reward",
        [("non_scalar", "reward")],
        [("non_scalar", "reward")],
    ),
    Firing(
        "dpo_eval",
        _drop,
        "rewards/margins",
        [("missing", "rl.trl.preference.reward_margin")],
        [("missing", "rl.trl.preference.reward_margin")],
    ),
    # KTO's kl depends on beta too (and is still inferred KTO from rewards/chosen).
    Firing("kto_eval", _drop, "kl", [], [("missing", "rl.trl.kl")]),
    Firing(
        "online_dpo_reward_funcs",
        _drop,
        "objective/kl",
        [("missing", "rl.trl.online_dpo.kl")],
        [("missing", "rl.trl.online_dpo.kl")],
    ),
]


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize(
    "case", FIRING, ids=[f"{c.run}-{c.change.__name__}-{c.key}" for c in FIRING]
)
def test_a_dropped_or_wrong_kind_key_fires_in_each_format(
    trl: ImportedExample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: Firing
) -> None:
    runs = trl.runs
    original = runs.run_logs

    def changed(spec: Any) -> list[tuple[int, dict[str, Any]]]:
        logged = original(spec)
        case.change(logged, case.key)
        return logged

    monkeypatch.setattr(runs, "run_logs", changed)
    spec = trl.spec(case.run)
    state = check_file(str(runs.write_trainer_state(spec, tmp_path)), trl.catalog)
    trl.register()
    with installed_reader():
        runs.write_callback_log(spec, tmp_path / "run.jsonl")
    jsonl = check_file(str(tmp_path / "run.jsonl"), trl.catalog)

    def kinds(report: LiveCheckReport) -> list[tuple[str, str]]:
        return [
            (f.kind, f.series if f.kind == "missing" else f.qualified_key) for f in report.findings
        ]

    assert kinds(state) == case.in_state
    assert kinds(jsonl) == case.in_jsonl


@pytest.mark.usefixtures("clean_otel")
def test_num_tokens_is_exported_as_the_running_total_trl_logs(
    trl: ImportedExample, tmp_path: Path
) -> None:
    """``num_tokens`` is state.num_input_tokens_seen: a cumulative counter, its sum the last."""
    from opentelemetry.sdk.metrics.export import Sum

    spec = trl.spec("grpo_two_rewards")
    trl.register()
    with installed_reader() as reader:
        logged = trl.runs.write_callback_log(spec, tmp_path / "run.jsonl")
        collected = reader.get_metrics_data()
    (metric,) = [
        metric
        for resource in (collected.resource_metrics if collected else ())
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "rl.trl.tokens"
    ]
    assert isinstance(metric.data, Sum)
    last = [logs["num_tokens"] for _step, logs in logged if "num_tokens" in logs][-1]
    assert [point.value for point in metric.data.data_points] == [last]


# transformers' TensorBoard and W&B callbacks log every key through rewrite_logs:
# loss -> train/loss, eval_loss -> eval/loss. The 'transformers' prefix table reads them back.
BACKEND_REWRITES = PREFIX_TABLES["transformers"]


@pytest.mark.parametrize("name", RUN_NAMES)
def test_a_tensorboard_run_of_the_trainers_callback_is_clean_with_the_prefix_table(
    trl: ImportedExample, tmp_path: Path, name: str
) -> None:
    """Scalars as TensorBoardCallback writes them: prefixed keys, read back by the table."""
    pytest.importorskip("tensorboard")
    writer_module = pytest.importorskip("tensorboardX")
    integrations = pytest.importorskip("transformers.integrations.integration_utils")
    spec = trl.spec(name)
    logged = trl.runs.run_logs(spec)
    writer = writer_module.SummaryWriter(str(tmp_path / name))
    for step, logs in logged:
        for tag, value in integrations.rewrite_logs(logs).items():
            if isinstance(value, (int, float)):  # TensorBoardCallback drops the rest (None)
                writer.add_scalar(tag, value, step)
    writer.close()
    plain = check_file(str(tmp_path / name), trl.catalog)
    assert {f.kind for f in plain.findings} >= {"undeclared"}  # train/loss, eval/loss as read
    report = check_file(str(tmp_path / name), trl.catalog, key_prefix_rewrites=BACKEND_REWRITES)
    assert _findings(report) == []
    counts = _counts(trl, logged, nulls=False)
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts


HERE = Path(__file__).resolve().parent
# One run per shape a store can get wrong (None values, several evaluation sets and the
# end-of-training keys, GRPO's conditional keys, each other trainer): a W&B run costs
# seconds to start, so not all nine.
CALLBACK_RUNS = [
    "grpo_two_rewards",
    "grpo_eval_sets_no_clip",
    "grpo_cispo_vllm_entropy",
    "dpo_eval",
    "kto_eval",
    "online_dpo_reward_funcs",
]
# WandbCallback puts these in the run's summary, not its history (single_value_scalars).
WANDB_SUMMARY_KEYS = frozenset(
    {
        "train_runtime",
        "train_samples_per_second",
        "train_steps_per_second",
        "train_loss",
        "total_flos",
    }
)


@pytest.fixture(scope="module")
def callback_stores(
    trl: ImportedExample, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Path]]:
    """Each run logged through transformers' real W&B, TensorBoard and MLflow callbacks."""
    for module in ("wandb", "tensorboardX", "mlflow", "transformers"):
        pytest.importorskip(module)
    root = tmp_path_factory.mktemp("hf-callbacks")
    spec = {
        "dir": str(root),
        "runs": [
            {"name": name, "config": dict(trl.spec(name).config),
             "logs": trl.runs.run_logs(trl.spec(name))}
            for name in CALLBACK_RUNS
        ],
    }  # fmt: skip
    (root / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "MLFLOW_"))}
    done = subprocess.run(
        [sys.executable, str(HERE.parent / "hf_callback_runs.py"), str(root / "spec.json")],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    stores = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {
        name: {kind: Path(where) for kind, where in store.items()}
        for name, store in zip(CALLBACK_RUNS, stores, strict=True)
    }


@pytest.mark.integration
@pytest.mark.parametrize("name", CALLBACK_RUNS)
@pytest.mark.parametrize("store", ["wandb", "tensorboard", "mlflow"])
def test_a_run_logged_through_the_trainers_own_callback_is_clean(
    trl: ImportedExample, callback_stores: dict[str, dict[str, Path]], name: str, store: str
) -> None:
    """What report_to=["wandb", "tensorboard", "mlflow"] stores, read back as the docs say.

    W&B and TensorBoard hold rewrite_logs' keys (train/loss, eval/loss): the prefix table
    reads them back; W&B's train/global_step is the run's step metric, not a key. MLflow
    holds the keys as logged. None values never reach TensorBoard or MLflow (the callbacks
    drop them); W&B stores them as null, no value that step.
    """
    spec = trl.spec(name)
    rewrites = () if store == "mlflow" else BACKEND_REWRITES
    report = check_file(
        str(callback_stores[name][store]), trl.catalog, key_prefix_rewrites=rewrites
    )
    assert _findings(report) == []
    logged = trl.runs.run_logs(spec)
    skip = WANDB_SUMMARY_KEYS if store == "wandb" else frozenset()
    counts = _counts(trl, logged, skip, nulls=store == "wandb")
    nulls_expected = {
        series: count - _counts(trl, logged, skip, nulls=False).get(series, 0)
        for series, count in counts.items()
    }
    if store == "wandb":
        counts["rl.hf.global_step"] = len(logged)  # WandbCallback's train/global_step, each call
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts
    nulls = {s.row.name: s.null for s in report.rows if s.null}
    assert nulls == {series: n for series, n in nulls_expected.items() if n}
    if store != "tensorboard" and spec.trainer in {"grpo", "rloo", "kto"}:
        # The run's configuration (args.to_dict(): W&B's config, MLflow's parameters)
        # decides kl's condition, as a header does.
        kl = next(s for s in report.rows if s.row.name == "rl.trl.kl")
        assert (kl.presence == "not_applicable") == (spec.config["beta"] == 0.0)
    if store == "wandb":
        # Every record is at state.global_step, as in trainer_state.json.
        steps = sorted({step for step, logs in logged if set(logs) - WANDB_SUMMARY_KEYS})
        assert report.last_step == steps[-1]
