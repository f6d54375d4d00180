"""examples/megatron, end to end: TensorBoard tags with spaces, hyphens and a second step axis.

Megatron-LM's ``training_log`` writes tags such as ``lm loss``, ``learning-rate`` and
``{timer}-time``, and each value again as ``"<tag> vs samples"`` at the consumed sample
count (README.md there cites the source of every tag). The example's catalog must
validate, and lint with no finding but the (true) backend warning on the keys with
spaces; every ``add_scalar`` of its runs, made to tee by ``tee_summary_writer``, must land
on the series the table below names with its attributes; live-check must find nothing,
at full coverage, though the sample counts pass the iteration at which validation is
first due; and a run that drops or breaks a tag must be reported.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.live_check import check_file
from metric_catalog.adapters import tee_summary_writer, tee_wandb_log
from metric_catalog.loggers import JsonlLogger
from tests.example_projects import ExampleProject, ImportedExample, Point, recorded_points
from tests.otel_fixtures import clean_otel, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

MEGATRON = ExampleProject(
    "megatron", "megatron_metrics", ("common", "timing", "training", "validation")
)


# Literal tags -> series, written out by hand rather than derived from the matcher.
LITERAL = {
    "learning-rate": "rl.megatron.learning_rate",
    "learning-rate vs samples": "rl.megatron.learning_rate_vs_samples",
    "batch-size": "rl.megatron.batch_size",
    "batch-size vs samples": "rl.megatron.batch_size_vs_samples",
    "grad-norm": "rl.megatron.grad_norm",
    "grad-norm vs samples": "rl.megatron.grad_norm_vs_samples",
    "loss-scale": "rl.megatron.loss_scale",
    "loss-scale vs samples": "rl.megatron.loss_scale_vs_samples",
    "params-norm": "rl.megatron.params_norm",
    "params-norm vs samples": "rl.megatron.params_norm_vs_samples",
    "mem-reserved-bytes": "rl.megatron.memory.reserved",
    "mem-allocated-bytes": "rl.megatron.memory.allocated",
    "mem-max-allocated-bytes": "rl.megatron.memory.max_allocated",
    "mem-allocated-count": "rl.megatron.memory.allocations",
    "iteration-time": "rl.megatron.iteration.duration",
    "throughput": "rl.megatron.throughput",
    "world-size": "rl.megatron.world_size",
    "world-size vs samples": "rl.megatron.world_size_vs_samples",
    "samples vs steps": "rl.megatron.consumed_samples",
    "max_attention_logit": "rl.megatron.attention.max_logit",
    "iter-energy/gpu": "rl.megatron.energy",
    "power/gpu": "rl.megatron.power",
    "grpo_collection_iteration": "rl.megatron.grpo.collection_iteration",
}
# The loss families, longest suffix first: "lm loss validation ppl vs samples" is not
# "lm loss validation" with a loss named "... ppl vs samples".
LOSS_SUFFIXES = (
    (" validation ppl vs samples", "rl.megatron.validation.perplexity_vs_samples"),
    (" validation ppl", "rl.megatron.validation.perplexity"),
    (" validation vs samples", "rl.megatron.validation.loss_vs_samples"),
    (" validation", "rl.megatron.validation.loss"),
    (" vs samples", "rl.megatron.loss_vs_samples"),
    ("", "rl.megatron.loss"),
)
LOSSES = ("lm loss", "sop loss")
# Factor from the unit a tag is logged in to the series' exported unit (TFLOP/s -> FLOP/s).
FACTOR = {"rl.megatron.throughput": 10**12}


def expected_series(tag: str) -> tuple[str, dict[str, Any]]:
    """The series and attributes a Megatron-LM tag belongs to."""
    if tag in LITERAL:
        return LITERAL[tag], {}
    # --multiple-validation-sets: "lm loss validation-1 ppl vs samples".
    for loss in LOSSES:
        head = f"{loss} validation-"
        if tag.startswith(head):
            index, _, rest = tag.removeprefix(head).partition(" ")
            series = {
                "": "loss",
                "vs samples": "loss_vs_samples",
                "ppl": "perplexity",
                "ppl vs samples": "perplexity_vs_samples",
            }[rest]
            attributes = {"megatron.loss": loss, "megatron.validation_set": int(index)}
            return f"rl.megatron.validation_set.{series}", attributes
    if tag.endswith("-time"):
        return "rl.megatron.timer.duration", {"megatron.timer": tag.removesuffix("-time")}
    for loss in LOSSES:
        for suffix, series in LOSS_SUFFIXES:
            if tag == loss + suffix:
                return series, {"megatron.loss": loss}
    raise AssertionError(f"no series for {tag!r}")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/megatron with its package generated."""
    return MEGATRON.generated_copy(tmp_path_factory)


@pytest.fixture(scope="module")
def megatron(project: Path) -> Iterator[ImportedExample]:
    """The generated modules and ``megatron_metrics.runs``, imported from the copy."""
    with MEGATRON.imported(project) as example:
        yield example


RUN_NAMES = ["gpt_detailed", "gpt_defaults", "gpt_multi_validation"]
UNSEEN = {
    "gpt_detailed": {"rl.megatron.skipped_train_samples": "not_logged"},
    "gpt_defaults": {
        "rl.megatron.skipped_train_samples": "not_logged",
        # Validation every 1000 iterations: the run's 60 are short of it, though its
        # vs-samples records reach 15,360.
        "rl.megatron.validation.loss": "not_due",
        "rl.megatron.validation.loss_vs_samples": "not_due",
    },
    "gpt_multi_validation": {"rl.megatron.skipped_train_samples": "not_logged"},
}


def test_example_catalog_validates_and_lints_with_only_the_true_backend_warning() -> None:
    """No error; LOGGER_KEY_BACKEND_UNSAFE exactly on the keys that log a space (in the key or
    in a value of its ``{megatron.loss}`` enum, 'lm loss'), nothing silenced."""
    result = MEGATRON.check()
    assert result.catalog is not None
    assert [d for d in result.diagnostics if d.code != "LOGGER_KEY_BACKEND_UNSAFE"] == []
    warned = sorted(d.message.split("'")[1] for d in result.diagnostics)
    spaced = sorted(
        row.logger_key
        for _f, row in result.catalog.rows()
        if row.logger_key and (" " in row.logger_key or "{megatron.loss}" in row.logger_key)
    )
    assert warned == spaced
    text = MEGATRON.catalog_text()
    assert "no_lint" not in text


def test_generate_into_a_copy_is_current(project: Path, megatron: ImportedExample) -> None:
    """``check`` finds the copy's generated files current."""
    assert main(["check", "--root", str(project)]) == 0
    assert len(megatron.rows) == len(list(megatron.catalog.rows()))


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_tag_of_a_megatron_run_is_teed_to_its_series(
    megatron: ImportedExample, tmp_path: Path, name: str
) -> None:
    """Through ``tee_summary_writer`` around the run's SummaryWriter."""
    megatron.register()
    with installed_reader() as reader:
        calls = megatron.runs.write_run(megatron.spec(name), tmp_path / "run.jsonl")
        recorded = recorded_points(reader.get_metrics_data(), megatron.catalog)
    expected: dict[Point, Any] = {}
    for tag, value, _step in calls:
        series, attributes = expected_series(tag)
        expected[(series, frozenset(attributes.items()))] = pytest.approx(
            value * FACTOR.get(series, 1)
        )
    assert recorded == expected


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_on_a_megatron_run(
    megatron: ImportedExample, tmp_path: Path, name: str
) -> None:
    """No finding; ``gpt_defaults`` logs 15,360 samples but only 60 of 1000 iterations."""
    megatron.register()
    path = tmp_path / f"{name}.jsonl"
    with installed_reader():
        calls = megatron.runs.write_run(megatron.spec(name), path)
    report = check_file(str(path), megatron.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    # Every row the arguments enable is logged, but the ones not yet due and the
    # recommended skipped-sample count (written only once a sample was skipped).
    unseen = {s.row.name: s.presence for s in report.rows if not s.logged}
    assert {row: state for row, state in unseen.items() if state != "not_applicable"} == (
        UNSEEN[name]
    )
    assert report.last_step == megatron.spec(name).args["train_iters"]
    counts: dict[str, int] = {}
    for tag, _value, _step in calls:
        series = expected_series(tag)[0]
        counts[series] = counts.get(series, 0) + 1
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts


@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_on_a_megatron_tensorboard_run(
    megatron: ImportedExample, tmp_path: Path, name: str
) -> None:
    """The event file torch's SummaryWriter writes: each tag once per add_scalar, steps as given.

    The arguments are in it as text (``write_args_to_tensorboard``), skipped; rows whose
    flag decides them are conditional information, or judged with ``--run-config``; the
    sample-count steps still leave the run's last step at its iterations.
    """
    pytest.importorskip("tensorboardX")
    spec = megatron.spec(name)
    calls = megatron.runs.run_scalars(spec)
    megatron.runs.write_tensorboard_events(calls, tmp_path / "tb", spec.args)
    report = check_file(str(tmp_path / "tb"), megatron.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    judged = check_file(str(tmp_path / "tb"), megatron.catalog, run_config=dict(spec.args))
    assert [(f.kind, f.qualified_key) for f in judged.findings] == []
    states = {s.row.name: s.presence for s in judged.rows}
    assert states["rl.megatron.consumed_samples"] == "not_applicable"  # W&B only
    assert report.last_step == megatron.spec(name).args["train_iters"]
    counts: dict[str, int] = {}
    for tag, _value, _step in calls:
        series = expected_series(tag)[0]
        counts[series] = counts.get(series, 0) + 1
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts


def test_a_tensorboard_run_missing_a_required_tag_is_reported(
    megatron: ImportedExample, tmp_path: Path
) -> None:
    """Required rows need no arguments to be judged: a dropped tag is missing."""
    pytest.importorskip("tensorboardX")
    calls = megatron.runs.run_scalars(megatron.spec("gpt_defaults"))
    calls = [c for c in calls if c[0] != "grad-norm vs samples"]
    megatron.runs.write_tensorboard_events(calls, tmp_path / "tb")
    report = check_file(str(tmp_path / "tb"), megatron.catalog)
    assert [(f.kind, f.series) for f in report.findings] == [
        ("missing", "rl.megatron.grad_norm_vs_samples")
    ]


def _write(megatron: ImportedExample, path: Path, spec: Any, calls: list[Any]) -> None:
    megatron.register()
    with installed_reader():
        writer = tee_summary_writer(
            megatron.runs.JsonlSummaryWriter(JsonlLogger(path, config=spec.args))
        )
        for tag, value, step in calls:
            writer.add_scalar(tag, value, step)
        writer.close()


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("grad-norm", [("missing", "rl.megatron.grad_norm")]),
        ("lm loss validation", [("missing", "rl.megatron.validation.loss")]),
        ("nan", [("non_finite", "rl.megatron.loss")]),
    ],
)
def test_a_broken_megatron_run_is_reported(
    megatron: ImportedExample, tmp_path: Path, fault: str, expected: list[tuple[str, str]]
) -> None:
    """A dropped tag the arguments require is missing; a NaN loss is non-finite."""
    spec = megatron.spec("gpt_detailed")
    calls = megatron.runs.run_scalars(spec)
    if fault == "nan":
        last = max(i for i, (tag, _v, _s) in enumerate(calls) if tag == "lm loss")
        calls[last] = ("lm loss", math.nan, calls[last][2])
    else:
        calls = [call for call in calls if call[0] != fault]
    path = tmp_path / "run.jsonl"
    _write(megatron, path, spec, calls)
    report = check_file(str(path), megatron.catalog)
    assert [(f.kind, f.series) for f in report.findings] == expected


# --- W&B: Megatron-LM's wandb_writer.log({tag: value}, iteration) ----------------------------


class _Sink:
    """A ``wandb`` stand-in whose ``log`` drops the call (only the tee matters)."""

    def log(self, data: Any, step: int | None = None) -> None:
        """Drop the call."""


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_wandb_key_of_a_megatron_run_is_teed_to_its_series(
    megatron: ImportedExample, name: str
) -> None:
    """Through ``tee_wandb_log`` around the run's ``wandb_writer``."""

    megatron.register()
    calls = megatron.runs.wandb_calls(megatron.spec(name))
    with installed_reader() as reader:
        log = tee_wandb_log(_Sink())
        for tag, value, step in calls:
            log({tag: value}, step)
        recorded = recorded_points(reader.get_metrics_data(), megatron.catalog)
    expected: dict[Point, Any] = {}
    for tag, value, _step in calls:
        series, attributes = expected_series(tag)
        expected[(series, frozenset(attributes.items()))] = pytest.approx(
            value * FACTOR.get(series, 1)
        )
    assert recorded == expected


@pytest.fixture(scope="module")
def wandb_runs(
    megatron: ImportedExample, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """Each run's W&B calls written by the real wandb library (offline), by run name."""
    pytest.importorskip("wandb")
    from tests.runs.test_live_check_wandb import write_runs

    root = tmp_path_factory.mktemp("megatron-wandb")
    specs = [
        {
            "dir": str(root / name),
            "config": dict(megatron.spec(name).args),  # wandb.init(config=vars(args))
            "steps": [
                [step, {tag: value}]
                for tag, value, step in megatron.runs.wandb_calls(megatron.spec(name))
            ],
        }
        for name in RUN_NAMES
    ]
    return dict(zip(RUN_NAMES, write_runs(root, specs), strict=True))


@pytest.mark.integration
@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_on_a_megatron_wandb_run(
    megatron: ImportedExample, wandb_runs: dict[str, Path], name: str
) -> None:
    """No finding: the TensorBoard-only tags (vs samples, memory, perplexity) are not
    applicable in a W&B run (``run.format != 'wandb'``), ``samples vs steps`` is logged."""
    report = check_file(str(wandb_runs[name]), megatron.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    calls = megatron.runs.wandb_calls(megatron.spec(name))
    counts: dict[str, int] = {}
    for tag, _value, _step in calls:
        series = expected_series(tag)[0]
        counts[series] = counts.get(series, 0) + 1
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts
    states = {s.row.name: s.presence for s in report.rows}
    assert states["rl.megatron.loss_vs_samples"] == "not_applicable"
    assert report.last_step == megatron.spec(name).args["train_iters"]
