"""examples/openrlhf, end to end: OpenRLHF's PPO trainer keys declared, generated, teed, checked.

The example project declares the keys OpenRLHF's Ray PPO trainer logs to W&B and
TensorBoard (README.md there cites the source of every key), written from this
project's docs as an outside adopter would. Its catalog must validate and lint clean
with no rule silenced, generate into a copy that ``check`` finds current, and the runs
its generator writes (PPO with a critic and a frozen actor, GRPO evaluating on three
data sources, REINFORCE++-baseline with dynamic filtering) must be teed key by key to
the right series with the right attributes, through the generated package and
``tee_wandb_log``, and live-check clean in this project's JSONL (full coverage of what
the configuration implies), in flat per-step JSONL and in TensorBoard event files
written by tensorboardX. A missing key, a value of the
wrong kind and an undeclared key must each fire, so "clean" is not live-check seeing
nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tensorboardX import SummaryWriter

from codegen.cli import main
from codegen.live_check import check_file
from metric_catalog.loggers import JsonlLogger
from tests.example_projects import ExampleProject, ImportedExample, Point, recorded_points
from tests.otel_fixtures import clean_otel, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

OPENRLHF = ExampleProject(
    "openrlhf",
    "openrlhf_metrics",
    ("actor", "common", "critic", "evaluation", "experience", "reward_func", "trainer"),
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/openrlhf with its package generated."""
    return OPENRLHF.generated_copy(tmp_path_factory)


@pytest.fixture(scope="module")
def orlhf(project: Path) -> Iterator[ImportedExample]:
    """The example: the generated modules and ``openrlhf_metrics.runs`` imported from the copy."""
    with OPENRLHF.imported(project) as example:
        yield example


def test_example_catalog_validates_and_lints_clean() -> None:
    """No error, no warning, and no rule silenced anywhere in the catalog."""
    result = OPENRLHF.check()
    assert [str(d) for d in result.diagnostics] == []
    text = OPENRLHF.catalog_text()
    assert "no_lint" not in text


def test_generate_into_a_copy_is_current(project: Path, orlhf: ImportedExample) -> None:
    """``check`` finds the copy's generated files current; the package declares every row."""
    assert main(["check", "--root", str(project)]) == 0
    assert sorted(row.name for row in orlhf.rows) == sorted(
        row.name for _file, row in orlhf.catalog.rows() if row.logger_key is not None
    )


# Keys a reader can get wrong: a data source holding '_' or '/' before '_pass<k>', a
# literal row beside the family of the same shape, keys that are Python keywords.
TRICKY = [
    (
        "eval/math_500_pass1",
        "rl.openrlhf.eval.datasource_pass",
        {"openrlhf.datasource": "math_500", "openrlhf.k": 1},
    ),
    (
        "eval/openai/gsm8k_pass4",
        "rl.openrlhf.eval.datasource_pass",
        {"openrlhf.datasource": "openai/gsm8k", "openrlhf.k": 4},
    ),
    (
        "eval/aime24_reward_mean",
        "rl.openrlhf.eval.datasource_reward_mean",
        {"openrlhf.datasource": "aime24"},
    ),
    (
        "eval/math_500_response_length_mean",
        "rl.openrlhf.eval.datasource_response_length_mean",
        {"openrlhf.datasource": "math_500"},
    ),
    ("eval/pass1", "rl.openrlhf.eval.pass1", {}),
    ("eval/pass8", "rl.openrlhf.eval.pass_at_k", {"openrlhf.k": 8}),
    ("eval/reward_mean", "rl.openrlhf.eval.reward_mean", {}),
    ("eval/truncated_rate", "rl.openrlhf.eval.truncated_rate", {}),
    ("eval/global_step", "rl.openrlhf.eval.global_step", {}),
    ("train/return", "rl.openrlhf.rollout.return", {}),
    ("train/values", "rl.openrlhf.critic.values", {}),
    ("train/dynamic_filtering_pass_rate", "rl.openrlhf.train.dynamic_filtering_pass_rate", {}),
]


class _Sink:
    """A ``wandb`` stand-in whose ``log`` drops the call (only the tee matters)."""

    def log(self, data: Any, step: int | None = None) -> None:
        """Drop the call."""


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize(("key", "series", "attributes"), TRICKY, ids=[k for k, *_ in TRICKY])
def test_a_tricky_openrlhf_key_is_teed_to_its_series(
    orlhf: ImportedExample, key: str, series: str, attributes: dict[str, Any]
) -> None:
    """The tee (through tee_wandb_log) and live-check's matcher put it on the expected series."""
    from metric_catalog.adapters import tee_wandb_log

    orlhf.register()
    with installed_reader() as reader:
        tee_wandb_log(_Sink())({key: 0.5})
        recorded = recorded_points(reader.get_metrics_data(), orlhf.catalog)
    assert recorded == {(series, frozenset(attributes.items())): 0.5}
    assert orlhf.route(key) == (series, attributes)


RUN_NAMES = OPENRLHF.run_names()


def _numbers(logged: list[tuple[int, dict[str, Any]]]) -> Iterator[tuple[str, Any]]:
    """Every numeric ``(key, value)`` the run logged (the samples table is media, no metric)."""
    for _step, data in logged:
        for key, value in data.items():
            if isinstance(value, (int, float)):
                yield key, value


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_key_of_an_openrlhf_run_is_teed_to_its_series(
    orlhf: ImportedExample, tmp_path: Path, name: str
) -> None:
    """Each key of every call lands on the series live-check counts it under, same attributes."""
    orlhf.register()
    with installed_reader() as reader:
        logged = orlhf.runs.write_run(orlhf.spec(name), tmp_path / "run.jsonl")
        recorded = recorded_points(reader.get_metrics_data(), orlhf.catalog)
    expected: dict[Point, Any] = {}
    for key, value in _numbers(logged):
        series, captured = orlhf.route(key)
        expected[(series, frozenset(captured.items()))] = pytest.approx(value)
    assert recorded == expected
    assert len(expected) >= 14


def _counts(orlhf: ImportedExample, logged: list[tuple[int, dict[str, Any]]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key, _value in _numbers(logged):
        series = orlhf.route(key)[0]
        counts[series] = counts.get(series, 0) + 1
    return counts


# What each run leaves unseen though it applies: the truncated rates are logged only
# when eval samples carry a truncated flag (recommended rows, not a configuration value).
# The custom reward function's extra_logs are logged only by the run that uses it.
REWARD_FUNC = {"rl.openrlhf.reward_func.format_reward", "rl.openrlhf.reward_func.answer_reward"}
UNSEEN = {
    "ppo_gae_frozen_actor": {
        "rl.openrlhf.eval.truncated_rate",
        "rl.openrlhf.eval.datasource_truncated_rate",
        *REWARD_FUNC,
    },
    "grpo_eval": {
        "rl.openrlhf.eval.truncated_rate",
        "rl.openrlhf.eval.datasource_truncated_rate",
        *REWARD_FUNC,
    },
    "reinforce_dynamic_filtering": set(),
}


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_at_full_coverage_on_an_openrlhf_run(
    orlhf: ImportedExample, tmp_path: Path, name: str
) -> None:
    """No finding; every row the configuration implies is seen, counted as the tee routed it."""
    orlhf.register()
    path = tmp_path / f"{name}.jsonl"
    with installed_reader():
        logged = orlhf.runs.write_run(orlhf.spec(name), path)
    report = check_file(str(path), orlhf.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    assert {s.row.name: s.logged for s in report.rows if s.logged} == _counts(orlhf, logged)
    applicable_unseen = {
        s.row.name for s in report.rows if not s.logged and s.presence != "not_applicable"
    }
    assert applicable_unseen == UNSEEN[name]
    if not UNSEEN[name]:
        assert report.coverage.overall == 1.0


@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_reads_an_openrlhf_run_as_flat_per_step_jsonl_cleanly(
    orlhf: ImportedExample, tmp_path: Path, name: str
) -> None:
    """``{"step": N, "data": {...}}`` a ``wandb.log`` call: detected, split, no finding."""
    path = tmp_path / f"{name}.jsonl"
    logged = orlhf.runs.write_flat_log(orlhf.spec(name), path)
    report = check_file(str(path), orlhf.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    assert {s.row.name: s.logged for s in report.rows if s.logged} == _counts(orlhf, logged)


def _spoiled(step_data: dict[str, Any], case: str) -> dict[str, Any]:
    """One call's data with the case's fault: a key dropped, a string value, a key added."""
    data = {k: v.reference(k, 0) if hasattr(v, "reference") else v for k, v in step_data.items()}
    if case == "missing":
        data.pop("train/policy_loss", None)
    elif case == "non_scalar" and "train/policy_loss" in data:
        data["train/policy_loss"] = "0.25"
    elif case == "undeclared" and "train/global_step" in data:
        data["train/ppo_loss"] = 0.25
    return data


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("fmt", ["jsonl", "flat-jsonl"])
@pytest.mark.parametrize(
    ("case", "finding"),
    [
        ("missing", ("missing", "train/policy_loss")),
        ("non_scalar", ("non_scalar", "train/policy_loss")),
        ("undeclared", ("undeclared", "train/ppo_loss")),
    ],
)
def test_a_fault_in_an_openrlhf_run_fires_in_each_format(
    orlhf: ImportedExample, tmp_path: Path, fmt: str, case: str, finding: tuple[str, str]
) -> None:
    """The one fault is reported, nothing else (flat JSONL has no configuration: a row whose
    first step is a configuration value is undecided there, so its absence cannot fire)."""
    spec = orlhf.spec("reinforce_dynamic_filtering")
    calls = orlhf.runs.write_flat_log(spec, tmp_path / "clean.jsonl")
    path = tmp_path / "run.jsonl"
    if fmt == "jsonl":
        with JsonlLogger(path, config=spec.config) as writer:
            for step, data in calls:
                writer.log_metrics(_spoiled(data, case), step, "")
    else:
        lines = [json.dumps({"step": step, "data": _spoiled(data, case)}) for step, data in calls]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = check_file(str(path), orlhf.catalog)
    found = [(f.kind, f.qualified_key) for f in report.findings]
    expected = [] if (fmt, case) == ("flat-jsonl", "missing") else [finding]
    assert found == expected


def test_a_frozen_actors_rows_are_not_due_before_freezing_actor_steps_plus_one(
    orlhf: ImportedExample, tmp_path: Path
) -> None:
    """``first_step: config.freezing_actor_steps + 1``: a run stopped while frozen lacks nothing."""
    spec = orlhf.spec("ppo_gae_frozen_actor")
    short = type(spec)(spec.name, spec.config, steps=int(spec.config["freezing_actor_steps"]))
    path = tmp_path / "run.jsonl"
    with installed_reader():
        orlhf.runs.write_run(short, path)
    report = check_file(str(path), orlhf.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    states = {s.row.name: s.presence for s in report.rows}
    # Not missing: not yet due (or its owner, the actor, logged nothing at all).
    assert states["rl.openrlhf.actor.policy_loss"] in {"not_due", "inactive_owner"}


@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_reads_an_openrlhf_run_as_tensorboard_event_files_cleanly(
    orlhf: ImportedExample, tmp_path: Path, name: str
) -> None:
    """Event files tensorboardX wrote as OpenRLHF's TensorboardLogger does: no finding.

    The samples preview is text (not judged); ``train/global_step`` is the event's step,
    not a key, and its row (``config.use_wandb``) is conditional information here.
    """
    logged = orlhf.runs.write_tensorboard(orlhf.spec(name), tmp_path)
    report = check_file(str(tmp_path / name), orlhf.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    # With the run's arguments (--run-config): W&B is on, but train/global_step is
    # TensorBoard's event step, never a tag ("run.format != 'tensorboard'").
    config = dict(orlhf.spec(name).config)
    judged = check_file(str(tmp_path / name), orlhf.catalog, run_config=config)
    assert [(f.kind, f.qualified_key) for f in judged.findings] == []
    states = {s.row.name: s.presence for s in judged.rows}
    assert states["rl.openrlhf.train.global_step"] == "not_applicable"
    assert {s.row.name: s.logged for s in report.rows if s.logged} == _counts(orlhf, logged)
    assert "rl.openrlhf.train.global_step" not in _counts(orlhf, logged)


@pytest.mark.parametrize(
    ("tag", "value", "finding"),
    [
        ("train/ppo_loss", 0.25, ("undeclared", "train/ppo_loss")),
        ("train/policy_loss", float("nan"), ("non_finite", "train/policy_loss")),
    ],
    ids=["undeclared", "non-finite"],
)
def test_a_fault_in_an_openrlhf_tensorboard_run_fires(
    orlhf: ImportedExample, tmp_path: Path, tag: str, value: float, finding: tuple[str, str]
) -> None:
    """One bad scalar among a clean run's is the one finding (event files hold no
    configuration, so an absent row whose first step is a configuration value is undecided)."""
    spec = orlhf.spec("reinforce_dynamic_filtering")
    orlhf.runs.write_tensorboard(spec, tmp_path)
    writer = SummaryWriter(logdir=str(tmp_path / spec.name / "extra"))
    writer.add_scalar(tag, value, spec.steps)
    writer.close()
    report = check_file(str(tmp_path / spec.name), orlhf.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == [finding]


# --- W&B: OpenRLHF's WandbLogger, by the real wandb library -----------------------------


@pytest.fixture(scope="module")
def wandb_runs(orlhf: ImportedExample, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each run as OpenRLHF's ``WandbLogger`` writes it (offline): ``wandb.init(config=
    args.__dict__)``, its ``define_metric`` calls, then ``wandb.log(data)`` without a step."""
    pytest.importorskip("wandb")
    from tests.runs.test_live_check_wandb import write_runs

    root = tmp_path_factory.mktemp("openrlhf-wandb")
    specs = []
    for name in RUN_NAMES:
        calls = orlhf.runs.write_flat_log(orlhf.spec(name), root / f"{name}.jsonl")
        steps = [
            [
                None,
                {
                    k: "<table>" if isinstance(v, (dict, orlhf.runs.SamplesTable)) else v
                    for k, v in data.items()
                },
            ]
            for _step, data in calls
        ]
        specs.append(
            {
                "dir": str(root / name),
                "config": dict(orlhf.spec(name).config),
                "define_metric": [list(pair) for pair in orlhf.runs.DEFINE_METRIC],
                "steps": steps,
            }
        )
    return dict(zip(RUN_NAMES, write_runs(root, specs), strict=True))


@pytest.mark.integration
@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_on_an_openrlhf_wandb_run(
    orlhf: ImportedExample, wandb_runs: dict[str, Path], tmp_path: Path, name: str
) -> None:
    """Two wandb.log calls a step (the samples table, then the metrics), read against
    train/global_step; eval/epoch, W&B's own writing, no finding; every key counted as
    logged (train/global_step also on the table's records, where step_sync copies it)."""
    report = check_file(str(wandb_runs[name]), orlhf.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    spec = orlhf.spec(name)
    assert report.last_step == spec.steps
    calls = orlhf.runs.write_flat_log(spec, tmp_path / "run.jsonl")
    counts = _counts(orlhf, calls)
    counts["rl.openrlhf.train.global_step"] += spec.steps  # one synced copy per table
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts
    applicable_unseen = {
        s.row.name for s in report.rows if not s.logged and s.presence != "not_applicable"
    }
    assert applicable_unseen == UNSEEN[name]
