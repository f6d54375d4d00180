"""examples/verl, end to end: verl's PPO/GRPO keys declared, generated, teed and live-checked.

The example project declares the keys verl's trainer logs (README.md there cites the
source of every family). Here its catalog must validate and lint clean, generate into
a copy that ``check`` then finds current, and the runs its generator writes (PPO with a
critic, GRPO with a KL loss, GRPO validating every 5 steps on a nested data source, a
multi-turn agent-loop run) must be teed key by key to the right series with the right
attributes, through the generated package and ``TrackingTee``, and live-check clean.
A run that drops a key its configuration requires must be reported, so "clean" is not
live-check seeing nothing.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from codegen.catalog.matching import KeyMatcher
from codegen.cli import main
from codegen.live_check import check_file
from metric_catalog.adapters import TrackingTee
from metric_catalog.loggers import JsonlLogger
from tests.example_projects import ExampleProject, ImportedExample, Point, recorded_points
from tests.otel_fixtures import clean_otel, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

VERL = ExampleProject(
    "verl",
    "verl_metrics",
    ("actor", "critic", "common", "data", "mismatch", "timing", "trainer", "validation"),
)


# What one logged unit is in the exported base unit: a row that states the unit verl
# logs (milliseconds, GiB) is exported in seconds and bytes, each value scaled.
LOGGED_UNIT_SCALE = {"ms": 1e-3, "GiBy": 1024**3}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/verl with its package generated."""
    return VERL.generated_copy(tmp_path_factory)


@pytest.fixture(scope="module")
def verl(project: Path) -> Iterator[ImportedExample]:
    """The example: the generated modules and ``verl_metrics.runs`` imported from the copy,
    then forgotten."""
    with VERL.imported(project) as example:
        yield example


def _logged_unit(example: ImportedExample, series: str) -> str:
    """The unit the catalog states for ``series``: the unit verl logs."""
    row = next(row for _f, row in example.catalog.rows() if row.name == series)
    return getattr(row, "logged_unit", "") or row.unit


def test_example_catalog_validates_and_lints_clean() -> None:
    """No error and no warning; no rule silenced but the backend warning on verl's '@' keys."""
    result = VERL.check()
    assert [str(d) for d in result.diagnostics] == []
    # The one escape: verl logs '@' (mean@4), which MLflow would refuse; verl's own
    # MLflow adapter rewrites it, so the rows keep verl's key and silence that rule alone.
    text = VERL.catalog_text()
    assert set(re.findall(r"no_lint: \[(.*)\]", text)) <= {"LOGGER_KEY_BACKEND_UNSAFE"}


def test_generate_into_a_copy_is_current(project: Path, verl: ImportedExample) -> None:
    """``check`` finds the copy's generated files current; the package declares every row."""
    assert main(["check", "--root", str(project)]) == 0
    result = VERL.check(project)
    assert result.catalog is not None
    assert sorted(row.name for row in verl.rows) == sorted(
        row.name for _file, row in result.catalog.rows() if row.logger_key is not None
    )


def _route(matcher: KeyMatcher, key: str) -> tuple[str, dict[str, Any]]:
    """The one row live-check counts a flat key under: the longest prefix that routes."""
    cut = len(key)
    while (cut := key.rfind("/", 0, cut)) > 0:
        matches = matcher.route(key[:cut], key[cut + 1 :])
        if matches:
            ((row, captured),) = matches
            return row.name, dict(captured)
    ((row, captured),) = matcher.route("", key)
    return row.name, dict(captured)


# Keys whose series a reader can get wrong: literal rows beside families, a spanning
# data source, the '@' statistics, prefixes that are prefixes of each other.
TRICKY = [
    ("timing_s/gen", "rl.verl.timing.stage", {"verl.stage": "gen"}),
    (
        "timing_s/agent_loop/slowest/prompt_length",
        "rl.verl.timing.agent_loop_slowest_prompt_length",
        {},
    ),
    (
        "timing_s/agent_loop/slowest/tool_calls",
        "rl.verl.timing.agent_loop_slowest",
        {"verl.agent_phase": "tool_calls"},
    ),
    (
        "timing_s/agent_loop/generate_sequences/max",
        "rl.verl.timing.agent_loop",
        {"verl.agent_phase": "generate_sequences", "verl.stat": "max"},
    ),
    (
        "timing_per_token_ms/update_actor",
        "rl.verl.timing.stage_per_token",
        {"verl.stage": "update_actor"},
    ),
    ("critic/vf_loss", "rl.verl.critic.vf_loss", {}),
    ("critic/values/min", "rl.verl.batch.value", {"verl.stat": "min"}),
    ("response_length/clip_ratio", "rl.verl.batch.response_clip_ratio", {}),
    (
        "response_length_non_aborted/mean",
        "rl.verl.batch.response_length_non_aborted",
        {"verl.stat": "mean"},
    ),
    ("perf/mfu/actor", "rl.verl.perf.mfu_actor", {}),
    (
        "val-core/openai/gsm8k/acc/mean@4",
        "rl.verl.val.core",
        {"verl.data_source": "openai/gsm8k", "verl.variable": "acc", "verl.n": 4},
    ),
    (
        "val-core/openai/gsm8k/acc/best@4/std",
        "rl.verl.val.core_bootstrap_std",
        {
            "verl.data_source": "openai/gsm8k",
            "verl.variable": "acc",
            "verl.val_kind": "best",
            "verl.n": 4,
        },
    ),
    (
        "val-aux/lighteval/MATH/reward/worst@2/mean",
        "rl.verl.val.aux_bootstrap_mean",
        {
            "verl.data_source": "lighteval/MATH",
            "verl.variable": "reward",
            "verl.val_kind": "worst",
            "verl.n": 2,
        },
    ),
    ("val-aux/num_turns/max", "rl.verl.val.num_turns", {"verl.stat": "max"}),
    (
        "val-aux/openai/gsm8k/reward/std@4",
        "rl.verl.val.aux",
        {
            "verl.data_source": "openai/gsm8k",
            "verl.variable": "reward",
            "verl.val_stat": "std",
            "verl.n": 4,
        },
    ),
    # Under timing_s but two segments deep, and a ratio beside the seconds.
    (
        "timing_s/generation_timing/max",
        "rl.verl.timing.generation_rank",
        {"verl.stat": "max"},
    ),
    ("timing_s/generation_timing/topk_ratio", "rl.verl.timing.generation_topk_ratio", {}),
    ("timing_s/generate_sequences", "rl.verl.timing.stage", {"verl.stage": "generate_sequences"}),
    # A family and literal rows sharing their start (rollout_is_{stat}, rollout_is_seq_{stat}).
    ("mismatch/rollout_is_max", "rl.verl.mismatch.is_weight", {"verl.stat": "max"}),
    ("mismatch/rollout_is_seq_min", "rl.verl.mismatch.is_weight_seq", {"verl.stat": "min"}),
    ("mismatch/rollout_is_seq_max_deviation", "rl.verl.mismatch.is_weight_seq_max_deviation", {}),
    ("mismatch/mismatch_kl", "rl.verl.mismatch.kl", {}),
    ("global_seqlen/mean", "rl.verl.balance.seqlen", {"verl.stat": "mean"}),
    ("global_seqlen/balanced_max", "rl.verl.balance.seqlen_balanced_max", {}),
    ("training/rollout_probs_diff_mean", "rl.verl.debug.rollout_probs_diff_mean", {}),
    ("perf/mfu/critic", "rl.verl.perf.mfu_critic", {}),
    ("critic/lr", "rl.verl.critic.lr", {}),
    ("tool_call_counts/mean", "rl.verl.batch.tool_call_counts", {"verl.stat": "mean"}),
]


class _NullWriter:
    """A ``log_metrics`` sink for the stub Tracking when only the tee matters."""

    def log_metrics(self, metrics: Mapping[str, Any], step: int, prefix: str = "") -> None:
        """Drop the call."""


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize(("key", "series", "attributes"), TRICKY, ids=[k for k, *_ in TRICKY])
def test_a_tricky_verl_key_is_teed_to_its_series(
    verl: ImportedExample, key: str, series: str, attributes: dict[str, str]
) -> None:
    """The tee (through TrackingTee) and live-check's matcher put it on the expected series."""
    verl.register()
    with installed_reader() as reader:
        TrackingTee(verl.runs.Tracking(_NullWriter())).log(data={key: 0.5}, step=3)
        recorded = recorded_points(reader.get_metrics_data())
    scale = LOGGED_UNIT_SCALE.get(_logged_unit(verl, series), 1)
    assert recorded == {(series, frozenset(attributes.items())): pytest.approx(0.5 * scale)}
    assert _route(verl.matcher, key) == (series, attributes)


RUN_NAMES = VERL.run_names()


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_key_of_a_verl_run_is_teed_to_its_series(
    verl: ImportedExample, tmp_path: Path, name: str
) -> None:
    """Each key of every step lands on the series live-check counts it under, same attributes."""
    verl.register()
    with installed_reader() as reader:
        logged = verl.runs.write_run(verl.spec(name), tmp_path / "run.jsonl")
        recorded = recorded_points(reader.get_metrics_data())
    expected: dict[Point, Any] = {}
    for _step, metrics in logged:
        for key, value in metrics.items():
            series, captured = _route(verl.matcher, key)
            scale = LOGGED_UNIT_SCALE.get(_logged_unit(verl, series), 1)
            expected[(series, frozenset(captured.items()))] = pytest.approx(value * scale)
    assert recorded == expected
    assert min(len(metrics) for _step, metrics in logged) >= 40


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_reports_no_finding_on_a_verl_run(
    verl: ImportedExample, tmp_path: Path, name: str
) -> None:
    """Every finding would be false: the runs log exactly what their configuration implies,
    every row the configuration does not rule out (coverage 100%)."""
    verl.register()
    path = tmp_path / f"{name}.jsonl"
    with installed_reader():
        logged = verl.runs.write_run(verl.spec(name), path)
    report = check_file(str(path), verl.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    unseen = [s.row.name for s in report.rows if not s.logged and s.presence != "not_applicable"]
    assert (unseen, report.coverage.overall) == ([], 1.0)
    counts: dict[str, int] = {}
    for _step, metrics in logged:
        for key in metrics:
            series = _route(verl.matcher, key)[0]
            counts[series] = counts.get(series, 0) + 1
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts


# (run, key or family the configuration requires, its series): dropped at every step
# (a family with all its keys), it is missing.
DROPPED = [
    ("grpo_kl_loss", "actor/kl_loss", "rl.verl.actor.kl_loss"),
    ("ppo_gae_critic", "critic/vf_loss", "rl.verl.critic.vf_loss"),
    ("ppo_gae_critic", "actor/pg_loss", "rl.verl.actor.pg_loss"),
    ("grpo_multiturn", "num_turns", "rl.verl.batch.num_turns"),
    ("grpo_multiturn", "tool_call_counts", "rl.verl.batch.tool_call_counts"),
    ("ppo_gae_critic", "critic/lr", "rl.verl.critic.lr"),
    ("ppo_gae_critic", "perf/mfu/critic", "rl.verl.perf.mfu_critic"),
    ("ppo_gae_critic", "global_seqlen/balanced_min", "rl.verl.balance.seqlen_balanced_min"),
    (
        "grpo_kl_loss",
        "timing_s/generation_timing/topk_ratio",
        "rl.verl.timing.generation_topk_ratio",
    ),
    ("grpo_rollout_is", "mismatch/mismatch_kl", "rl.verl.mismatch.kl"),
    (
        "grpo_rollout_is",
        "mismatch/rollout_is_masked_fraction",
        "rl.verl.mismatch.is_masked_fraction",
    ),
    ("grpo_rollout_is", "training/rollout_probs_diff_max", "rl.verl.debug.rollout_probs_diff_max"),
]


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize(("name", "dropped", "series"), DROPPED)
def test_a_key_the_run_configuration_requires_is_reported_missing(
    verl: ImportedExample, tmp_path: Path, name: str, dropped: str, series: str
) -> None:
    """The conditions and first steps are live: a missing key fires, nothing else does."""
    spec = verl.spec(name)
    verl.register()
    path = tmp_path / "run.jsonl"
    rng = random.Random(spec.seed)
    with installed_reader(), JsonlLogger(path, config=spec.config) as writer:
        tracking = verl.runs.Tracking(writer)
        for step in range(1, spec.steps + 1):
            metrics = verl.runs.step_metrics(rng, spec, step)
            for key in [k for k in metrics if k == dropped or k.startswith(f"{dropped}/")]:
                del metrics[key]
            tracking.log(metrics, step)
    report = check_file(str(path), verl.catalog)
    assert [(f.kind, f.series) for f in report.findings] == [("missing", series)]


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize(
    ("name", "absent"),
    [
        ("grpo_kl_loss", "rl.verl.batch.value"),
        ("grpo_kl_loss", "rl.verl.timing.agent_loop"),
        ("ppo_gae_critic", "rl.verl.actor.kl_loss"),
        ("grpo_validation", "rl.verl.batch.num_turns"),
        ("grpo_validation", "rl.verl.val.num_turns"),
        ("grpo_kl_loss", "rl.verl.critic.lr"),
        ("grpo_kl_loss", "rl.verl.perf.mfu_critic"),
        ("grpo_kl_loss", "rl.verl.mismatch.kl"),
        ("grpo_kl_loss", "rl.verl.debug.rollout_probs_diff_valid"),
        ("grpo_kl_loss", "rl.verl.val.aux"),
        ("grpo_rollout_is", "rl.verl.balance.seqlen"),
        ("grpo_validation", "rl.verl.batch.tool_call_counts"),
        ("grpo_multiturn", "rl.verl.timing.generation_rank"),
    ],
)
def test_a_row_the_run_configuration_rules_out_is_not_applicable(
    verl: ImportedExample, tmp_path: Path, name: str, absent: str
) -> None:
    """A conditional row whose condition is false for the run is judged not applicable."""
    verl.register()
    path = tmp_path / "run.jsonl"
    with installed_reader():
        verl.runs.write_run(verl.spec(name), path)
    report = check_file(str(path), verl.catalog)
    (summary,) = [s for s in report.rows if s.row.name == absent]
    assert (summary.logged, summary.presence) == (0, "not_applicable")


@pytest.mark.usefixtures("clean_otel")
def test_global_step_is_exported_as_the_running_total_verl_logs(
    verl: ImportedExample, tmp_path: Path
) -> None:
    """``training/global_step`` is a cumulative counter: its sum is the last step, not 1+2+..."""
    from opentelemetry.sdk.metrics.export import Sum

    spec = verl.spec("ppo_gae_critic")
    verl.register()
    with installed_reader() as reader:
        verl.runs.write_run(spec, tmp_path / "run.jsonl")
        collected = reader.get_metrics_data()
    (metric,) = [
        metric
        for resource in (collected.resource_metrics if collected else ())
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "rl.verl.training.global_step"
    ]
    assert isinstance(metric.data, Sum)
    assert metric.data.is_monotonic
    assert [point.value for point in metric.data.data_points] == [spec.steps]


@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_reads_a_run_in_verls_own_file_logger_format_cleanly(
    verl: ImportedExample, tmp_path: Path, name: str
) -> None:
    """``{"step": N, "data": {...}}`` lines: detected, split against the catalog, no finding."""
    path = tmp_path / f"{name}.jsonl"
    logged = verl.runs.write_file_log(verl.spec(name), path)
    report = check_file(str(path), verl.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    counts: dict[str, int] = {}
    for _step, metrics in logged:
        for key in metrics:
            series = _route(verl.matcher, key)[0]
            counts[series] = counts.get(series, 0) + 1
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts


@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_reads_a_run_written_as_verls_tensorboard_adapter_writes_it(
    verl: ImportedExample, tmp_path: Path, name: str
) -> None:
    """``_TensorboardAdapter.log``: ``SummaryWriter.add_scalar(key, value, step)`` per key;
    the event files live-check clean with no key rewrite, every key on its series.

    tensorboardX's ``add_scalar`` writes ``mean@4`` as ``mean_4`` (TF's ``clean_tag``):
    live-check matches a TensorBoard tag against each row's key written that way.
    """
    tensorboard_x = pytest.importorskip("tensorboardX")
    spec = verl.spec(name)
    rng = random.Random(spec.seed)
    folder = tmp_path / "tensorboard_log" / "verl_examples" / name
    writer = tensorboard_x.SummaryWriter(str(folder))
    logged = []
    for step in range(1, spec.steps + 1):
        metrics = verl.runs.step_metrics(rng, spec, step)
        for key, value in metrics.items():
            writer.add_scalar(key, value, step)
        logged.append((step, metrics))
    writer.close()
    report = check_file(str(folder), verl.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    counts: dict[str, int] = {}
    for _step, metrics in logged:
        for key in metrics:
            series = _route(verl.matcher, key)[0]
            counts[series] = counts.get(series, 0) + 1
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts
    if spec.data_sources:
        # The file holds the cleaned spelling, and each counts under the '@' row.
        assert b"mean_" in b"".join(p.read_bytes() for p in folder.glob("events.out.tfevents.*"))
