"""examples/torchtitan, end to end: keys with '(', '%' and units in them, declared and checked.

torchtitan's ``MetricsProcessor`` logs keys such as ``throughput(tps)``, ``mfu(%)``,
``time_metrics/end_to_end(s)`` and ``memory/max_active(GiB)`` (README.md there cites the
source of every key). The example's catalog must validate, and lint with no finding but
the backend warning (true: W&B, MLflow and tensorboardX would mangle those keys); each
key must be teed to the series the table below names, with its attributes and its value
in the exported unit (GiB scaled to bytes, running totals exported as their last value);
live-check must find nothing, at full coverage, on each run in each format torchtitan's
runs come in (this project's JSONL with the configuration, flat JSONL, TensorBoard event
files as torch's SummaryWriter writes them); and a run that
drops or breaks a key must be reported in each format, so "clean" is not "saw nothing".
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.live_check import check_file
from metric_catalog.adapters import TrackingTee, tee_wandb_log
from tests.example_projects import ExampleProject, ImportedExample, Point, recorded_points
from tests.otel_fixtures import clean_otel, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

TITAN = ExampleProject(
    "torchtitan", "titan_metrics", ("common", "memory", "time", "trainer", "training", "validation")
)


GIB = 1024**3

# Every key torchtitan logs -> (series, attributes, factor to the exported unit), written
# out by hand rather than derived from the matcher under test.
EXPECTED: dict[str, tuple[str, dict[str, str], float]] = {
    "loss_metrics/global_avg_loss": ("rl.titan.loss.global_avg", {}, 1),
    "loss_metrics/global_max_loss": ("rl.titan.loss.global_max", {}, 1),
    "grad_norm": ("rl.titan.grad_norm", {}, 1),
    "throughput(tps)": ("rl.titan.throughput", {}, 1),
    "tflops": ("rl.titan.tflops", {}, 10**12),  # TFLOP/s exported in {FLOP}/s
    "mfu(%)": ("rl.titan.mfu", {}, 1),
    "time_metrics/end_to_end(s)": ("rl.titan.step.duration", {}, 1),
    "time_metrics/data_loading(s)": ("rl.titan.data_loading.duration", {}, 1),
    "time_metrics/data_loading(%)": ("rl.titan.data_loading.share", {}, 1),
    "memory/max_active(GiB)": ("rl.titan.memory.peak", {"titan.memory.pool": "active"}, GIB),
    "memory/max_active(%)": ("rl.titan.memory.peak_share", {"titan.memory.pool": "active"}, 1),
    "memory/max_reserved(GiB)": ("rl.titan.memory.peak", {"titan.memory.pool": "reserved"}, GIB),
    "memory/max_reserved(%)": (
        "rl.titan.memory.peak_share",
        {"titan.memory.pool": "reserved"},
        1,
    ),
    "memory/num_alloc_retries": ("rl.titan.memory.alloc_retries", {}, 1),
    "memory/num_ooms": ("rl.titan.memory.ooms", {}, 1),
    "n_tokens_seen": ("rl.titan.tokens_seen", {}, 1),
    "lr": ("rl.titan.learning_rate", {}, 1),
    "validation_metrics/loss": ("rl.titan.validation.loss", {}, 1),
    "validation_metrics/throughput(tps)": ("rl.titan.validation.throughput", {}, 1),
    "validation_metrics/memory/max_active(GiB)": (
        "rl.titan.validation.memory.peak",
        {"titan.memory.pool": "active"},
        GIB,
    ),
    "validation_metrics/memory/max_active(%)": (
        "rl.titan.validation.memory.peak_share",
        {"titan.memory.pool": "active"},
        1,
    ),
    "validation_metrics/memory/max_reserved(GiB)": (
        "rl.titan.validation.memory.peak",
        {"titan.memory.pool": "reserved"},
        GIB,
    ),
    "validation_metrics/memory/max_reserved(%)": (
        "rl.titan.validation.memory.peak_share",
        {"titan.memory.pool": "reserved"},
        1,
    ),
}
# Running totals: exported as the last value the process logged, not the sum of values.
CUMULATIVE = {"rl.titan.memory.alloc_retries", "rl.titan.memory.ooms", "rl.titan.tokens_seen"}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/torchtitan with its package generated."""
    return TITAN.generated_copy(tmp_path_factory)


@pytest.fixture(scope="module")
def titan(project: Path) -> Iterator[ImportedExample]:
    """The generated modules and ``titan_metrics.runs``, imported from the copy, then forgotten."""
    with TITAN.imported(project) as example:
        yield example


RUN_NAMES = TITAN.run_names()


def test_example_catalog_validates_and_lints_with_only_the_true_backend_warning() -> None:
    """No error; the only warning is LOGGER_KEY_BACKEND_UNSAFE, on exactly the keys it is true of.

    torchtitan logs to W&B (which cannot sort or filter keys with '(') and TensorBoard through
    torch's SummaryWriter (which keeps them); MLflow would refuse them. The catalog keeps the
    keys as torchtitan logs them and silences nothing.
    """
    result = TITAN.check()
    assert result.catalog is not None
    assert [d for d in result.diagnostics if d.code != "LOGGER_KEY_BACKEND_UNSAFE"] == []
    warned = sorted(d.message.split("'")[1] for d in result.diagnostics)
    unsafe = sorted(
        row.logger_key
        for _f, row in result.catalog.rows()
        if row.logger_key and ("(" in row.logger_key or "%" in row.logger_key)
    )
    assert warned == unsafe
    assert len(unsafe) == 10
    text = TITAN.catalog_text()
    assert "no_lint" not in text


def test_generate_into_a_copy_is_current(project: Path, titan: ImportedExample) -> None:
    """``check`` finds the copy's generated files current; the package declares every row."""
    assert main(["check", "--root", str(project)]) == 0
    assert sorted(row.name for row in titan.rows) == sorted(
        {series for series, _a, _f in EXPECTED.values()}
    )


def _expected(records: list[tuple[int, dict[str, float]]]) -> dict[Point, Any]:
    """What the tee must have recorded for ``records``: the last value of each point, scaled."""
    expected: dict[Point, Any] = {}
    for _step, metrics in records:
        for key, value in metrics.items():
            series, attributes, factor = EXPECTED[key]
            expected[(series, frozenset(attributes.items()))] = pytest.approx(value * factor)
    return expected


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_key_of_a_torchtitan_run_is_teed_to_its_series(
    titan: ImportedExample, tmp_path: Path, name: str
) -> None:
    """Through ``TrackingTee`` around torchtitan's ``BaseLogger.log(metrics, step)``."""
    titan.register()
    with installed_reader() as reader:
        records = titan.runs.write_run(titan.spec(name), tmp_path / "run.jsonl")
        recorded = recorded_points(reader.get_metrics_data(), titan.catalog)
    assert recorded == _expected(records)
    # The running totals' sums are their last logged values (n_tokens_seen of the last step).
    last = records[-1][1] if "n_tokens_seen" in records[-1][1] else records[-2][1]
    assert recorded[("rl.titan.tokens_seen", frozenset())] == last["n_tokens_seen"]


@pytest.mark.usefixtures("clean_otel")
def test_wandb_log_wrapper_tees_torchtitan_keys(titan: ImportedExample) -> None:
    """torchtitan's ``WandBLogger.log`` calls ``wandb.log(metrics, step=step)``: wrapped, teed."""

    class Run:
        def __init__(self) -> None:
            self.calls: list[tuple[dict[str, Any], int]] = []

        def log(self, data: dict[str, Any], step: int) -> None:
            self.calls.append((data, step))

    titan.register()
    run = Run()
    records = titan.runs.run_records(titan.spec("llama3_8b_validation"))
    with installed_reader() as reader:
        log = tee_wandb_log(run)
        for step, metrics in records:
            log(metrics, step=step)
        recorded = recorded_points(reader.get_metrics_data(), titan.catalog)
    assert recorded == _expected(records)
    assert len(run.calls) == len(records)


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_at_full_coverage_on_a_jsonl_run(
    titan: ImportedExample, tmp_path: Path, name: str
) -> None:
    """This project's JSONL, with torchtitan's configuration in its header."""
    titan.register()
    path = tmp_path / f"{name}.jsonl"
    with installed_reader():
        records = titan.runs.write_run(titan.spec(name), path)
    report = check_file(str(path), titan.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    assert report.coverage.overall == 1.0
    assert report.inactive_owners == {}
    counts: dict[str, int] = {}
    for _step, metrics in records:
        for key in metrics:
            counts[EXPECTED[key][0]] = counts.get(EXPECTED[key][0], 0) + 1
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts


@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_on_a_tensorboard_run(
    titan: ImportedExample, tmp_path: Path, name: str
) -> None:
    """Event files as torch's SummaryWriter writes them: every tag split against the catalog.

    Like flat JSONL, an event file holds no configuration.
    """
    pytest.importorskip("tensorboardX")
    records = titan.runs.write_tensorboard_log(titan.spec(name), tmp_path / "tb")
    report = check_file(str(tmp_path / "tb"), titan.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    keys = {key for _step, metrics in records for key in metrics}
    assert {s.row.name for s in report.rows if s.logged} == {EXPECTED[k][0] for k in keys}
    counts: dict[str, int] = {}
    for _step, metrics in records:
        for key in metrics:
            counts[EXPECTED[key][0]] = counts.get(EXPECTED[key][0], 0) + 1
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts
    if any(key.startswith("validation_metrics/") for key in keys):
        assert report.coverage.overall == 1.0


@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_on_a_flat_jsonl_run(
    titan: ImportedExample, tmp_path: Path, name: str
) -> None:
    """One bare object a logged dict, ``step`` inside: every key split against the catalog.

    Flat JSONL carries no configuration, so the validation rows of a run without
    validation stay conditional information; a run that validates covers every row.
    """
    path = tmp_path / f"{name}.jsonl"
    records = titan.runs.write_flat_log(titan.spec(name), path)
    report = check_file(str(path), titan.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    keys = {key for _step, metrics in records for key in metrics}
    assert {s.row.name for s in report.rows if s.logged} == {EXPECTED[k][0] for k in keys}
    if any(key.startswith("validation_metrics/") for key in keys):
        assert report.coverage.overall == 1.0


def _mangle(records: list[tuple[int, dict[str, float]]], fault: str) -> None:
    """Break ``records`` in place: drop a required key, or log a NaN loss once."""
    for step, metrics in records:
        if fault == "missing":
            del metrics["grad_norm"]
        elif fault == "non_finite" and step == records[-1][0]:
            metrics["loss_metrics/global_avg_loss"] = math.nan
        elif fault == "undeclared":
            # A key no row declares, in every format. (tensorboardX's spelling of "mfu(%)",
            # "mfu___", would count under mfu(%)'s row in a TensorBoard run.)
            metrics["mfu_percent"] = metrics.pop("mfu(%)")


FAULTS = [
    ("missing", "rl.titan.grad_norm"),
    ("non_finite", "rl.titan.loss.global_avg"),
    ("undeclared", "mfu_percent"),
]


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("run_format", ["jsonl", "flat-jsonl", "tensorboard"])
@pytest.mark.parametrize(("fault", "what"), FAULTS)
def test_a_broken_torchtitan_run_is_reported_in_each_format(
    titan: ImportedExample, tmp_path: Path, run_format: str, fault: str, what: str
) -> None:
    """Each fault gives exactly its finding, whatever format the run came in."""
    spec = titan.spec("llama3_8b_fsdp")
    records = titan.runs.run_records(spec)
    _mangle(records, fault)
    path = tmp_path / "run.jsonl"
    if run_format == "jsonl":
        from metric_catalog.loggers import JsonlLogger

        titan.register()
        with installed_reader():
            backend = TrackingTee(titan.runs.JsonlBackend(JsonlLogger(path, config=spec.config)))
            for step, metrics in records:
                backend.log(metrics, step)
            backend.close()
    elif run_format == "tensorboard":
        pytest.importorskip("tensorboardX")
        path = tmp_path / "tb"
        titan.runs.write_tensorboard_events(records, path)
    else:
        with path.open("w", encoding="utf-8") as out:
            for step, metrics in records:
                out.write(json.dumps({"step": step, **metrics}) + "\n")
    report = check_file(str(path), titan.catalog)
    found = [
        (f.kind, f.series if f.kind != "undeclared" else f.qualified_key) for f in report.findings
    ]
    missing_too = [("missing", "rl.titan.mfu")] if fault == "undeclared" else []
    assert sorted(found) == sorted([(fault, what), *missing_too])


@pytest.mark.usefixtures("clean_otel")
def test_validation_enabled_but_not_logged_is_missing(
    titan: ImportedExample, tmp_path: Path
) -> None:
    """``validation.enabled`` and past ``validation.freq``: the validation rows are required."""
    from metric_catalog.loggers import JsonlLogger

    spec = titan.spec("llama3_8b_validation")
    records = [
        (step, metrics)
        for step, metrics in titan.runs.run_records(spec)
        if "validation_metrics/loss" not in metrics
    ]
    path = tmp_path / "run.jsonl"
    titan.register()
    with installed_reader():
        backend = TrackingTee(titan.runs.JsonlBackend(JsonlLogger(path, config=spec.config)))
        for step, metrics in records:
            backend.log(metrics, step)
        backend.close()
    report = check_file(str(path), titan.catalog)
    assert sorted((f.kind, f.series) for f in report.findings) == [
        ("missing", "rl.titan.validation.loss"),
        ("missing", "rl.titan.validation.memory.peak"),
        ("missing", "rl.titan.validation.memory.peak_share"),
        ("missing", "rl.titan.validation.throughput"),
    ]


@pytest.fixture(scope="module")
def wandb_runs(titan: ImportedExample, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each run as torchtitan's ``WandBLogger`` writes it, by the real wandb library (offline):
    ``wandb.init(config=job_config.to_dict())``, then ``wandb.log(metrics, step=step)``."""
    pytest.importorskip("wandb")
    from tests.runs.test_live_check_wandb import write_runs

    root = tmp_path_factory.mktemp("torchtitan-wandb")
    specs = []
    for name in RUN_NAMES:
        spec = titan.spec(name)
        config = json.loads(json.dumps(spec.config))
        config["metrics"] |= {"enable_wandb": True, "enable_tensorboard": False}
        steps = [[step, metrics] for step, metrics in titan.runs.run_records(spec)]
        specs.append({"dir": str(root / name), "config": config, "steps": steps})
    return dict(zip(RUN_NAMES, write_runs(root, specs), strict=True))


@pytest.mark.integration
@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_at_full_coverage_on_a_wandb_run(
    titan: ImportedExample, wandb_runs: dict[str, Path], name: str
) -> None:
    """Keys with '(' and '%' kept by W&B, the configuration from ``wandb.init``: no finding,
    every row the configuration implies logged, each as often as torchtitan logged it."""
    report = check_file(str(wandb_runs[name]), titan.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    assert report.coverage.overall == 1.0
    counts: dict[str, int] = {}
    for _step, metrics in titan.runs.run_records(titan.spec(name)):
        for key in metrics:
            counts[EXPECTED[key][0]] = counts.get(EXPECTED[key][0], 0) + 1
    assert {s.row.name: s.logged for s in report.rows if s.logged} == counts
    assert report.last_step == titan.spec(name).config["training"]["steps"]
