"""live-check on the shapes real jobs leave on disk: killed, restarted, still writing.

A job killed mid-write leaves its last line cut short (or, after a crash, zero bytes the
file system had reserved); a job restarted from a checkpoint appends to the same file,
right after that cut line, and logs again steps it had logged. None of this is a
finding: a cut record is an ``incomplete_record`` notice, a record appended after it is
read, and steps that go back are a restart (a running total that goes down is a reset).
The logs are written by this project's ``JsonlLogger`` and byte for byte as verl's file
logger and MLflow's file store write them; runs written by the real tracking libraries
are in ``test_live_check_run_shapes_real.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.live_check import (
    LiveCheckReport,
    LogInputError,
    check_file,
    check_paths,
    check_records,
)
from codegen.runs.ingest import mlflow
from codegen.runs.records import Record, RunConfig
from metric_catalog.loggers import JsonlLogger
from tests.catalog_projects import loaded_catalog, write_catalog

CATALOG = """\
owner: example.trainer
module: shapes_trainer
description: Metrics an RL trainer logs, for the run-shape tests.
prefix: train
teed:
  - logger_key: loss
    name: rl.shapes.loss
    kind: gauge
    unit: "1"
    description: Training loss.
    requirement_level: required
  - logger_key: tokens_total
    name: rl.shapes.tokens
    kind: counter
    temporality: cumulative
    unit: "{token}"
    description: Tokens consumed so far, a running total.
    requirement_level: required
  - logger_key: kl
    name: rl.shapes.kl
    kind: gauge
    unit: "1"
    description: KL divergence against the reference policy.
    requirement_level: conditionally_required
    condition: "config.use_kl"
"""


@pytest.fixture(scope="module")
def run_shapes_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """A required gauge, a required running total and a row the configuration decides."""
    return loaded_catalog(tmp_path_factory.mktemp("shapes-catalog"), CATALOG, "trainer.yaml")


def kinds(report: LiveCheckReport) -> list[str]:
    """The finding kinds, in order."""
    return [f.kind for f in report.findings]


def notices(report: LiveCheckReport, kind: str) -> list[str]:
    """The messages of the notices of ``kind``."""
    return [n.message for n in report.notices if n.kind == kind]


def logged(report: LiveCheckReport) -> dict[str, int]:
    """Values logged per row."""
    return {r.row.name: r.logged for r in report.rows if r.logged}


def steps(first: int, last: int) -> list[tuple[int, dict[str, float]]]:
    """Steps ``first..last`` of a run: its loss, its running total of tokens and its KL."""
    return [
        (step, {"loss": 1.0 / step, "tokens_total": 100.0 * step, "kl": 0.1})
        for step in range(first, last + 1)
    ]


def write_jsonl(path: Path, run: list[tuple[int, dict[str, float]]], *, append: bool) -> None:
    """The run as a ``JsonlLogger`` writes it, with its configuration header."""
    logger = JsonlLogger(path, append=append, worker="", config={"use_kl": True})
    for step, metrics in run:
        logger.log_metrics(metrics, step=step, prefix="train")
    logger.close()


def flat_line(step: int, metrics: dict[str, float]) -> str:
    """One line of verl's file logger: ``{"step": N, "data": {...}}``, keys whole."""
    return json.dumps({"step": step, "data": {f"train/{k}": v for k, v in metrics.items()}})


# --- a line cut short, and a restart appended after it ---------------------------------------

CUT_JSONL = '{"step": 8, "prefix": "train", "metrics": {"loss": 0.12'
CUT_FLAT = '{"step": 8, "data": {"train/lo'


@pytest.mark.parametrize(
    ("tail", "restart", "expected"),
    [
        pytest.param("", False, (7, 0), id="clean"),
        pytest.param(CUT_JSONL, False, (7, 1), id="killed-mid-line"),
        pytest.param('{"step": 8, "prefix": "tr', False, (7, 1), id="killed-in-a-key"),
        pytest.param("\x00" * 4096, False, (7, 1), id="zero-bytes-after-a-crash"),
        pytest.param(CUT_JSONL, True, (14, 1), id="killed-then-restarted"),
        pytest.param("\x00" * 512, True, (14, 1), id="zeros-then-restarted"),
        pytest.param("", True, (14, 0), id="restarted-after-a-whole-line"),
    ],
)
def test_a_killed_or_restarted_jsonl_log_has_no_finding(
    run_shapes_catalog: Catalog, tmp_path: Path, tail: str, restart: bool, expected: tuple[int, int]
) -> None:
    records, notes = expected
    log = tmp_path / "run.jsonl"
    write_jsonl(log, steps(1, 7), append=False)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(tail)
    if restart:
        write_jsonl(log, steps(5, 11), append=True)  # resumed from the step-4 checkpoint
    report = check_file(str(log), run_shapes_catalog)
    assert kinds(report) == []
    assert report.records == records
    assert len(notices(report, "incomplete_record")) == notes
    assert logged(report)["rl.shapes.loss"] == records


def test_the_restart_record_after_a_cut_line_keeps_its_values(
    run_shapes_catalog: Catalog, tmp_path: Path
) -> None:
    """The record appended after the cut is read whole: here a header, then steps 5..11."""
    log = tmp_path / "run.jsonl"
    write_jsonl(log, steps(1, 7), append=False)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(CUT_JSONL)
    write_jsonl(log, steps(5, 11), append=True)
    report = check_file(str(log), run_shapes_catalog)
    (note,) = notices(report, "incomplete_record")
    assert "line 9 starts with a record cut short" in note
    tokens = next(r for r in report.rows if r.row.name == "rl.shapes.tokens")
    assert (tokens.last_value, tokens.last_step, tokens.resets) == (1100.0, 11, 1)


def test_a_line_ending_in_a_whole_record_then_the_restart_keeps_both(
    run_shapes_catalog: Catalog, tmp_path: Path
) -> None:
    """Killed between a record's closing brace and its line break: both records count."""
    log = tmp_path / "run.jsonl"
    write_jsonl(log, steps(1, 3), append=False)
    whole = log.read_text(encoding="utf-8")
    log.write_text(whole.rstrip("\n"), encoding="utf-8")
    write_jsonl(log, steps(3, 5), append=True)
    report = check_file(str(log), run_shapes_catalog)
    assert kinds(report) == []
    assert report.records == 6
    assert notices(report, "incomplete_record") == []


@pytest.mark.parametrize(
    ("runs", "restarts"),
    [
        pytest.param([(1, 7)], 0, id="one-job"),
        pytest.param([(1, 7), (5, 11)], 1, id="restarted-once"),
        pytest.param([(1, 7), (5, 9), (8, 12)], 2, id="restarted-twice"),
    ],
)
def test_a_restart_is_named_as_information(
    run_shapes_catalog: Catalog, tmp_path: Path, runs: list[tuple[int, int]], restarts: int
) -> None:
    """The step going back is a restart: one notice per input, never a finding."""
    log = tmp_path / "run.jsonl"
    for index, (first, last) in enumerate(runs):
        write_jsonl(log, steps(first, last), append=index > 0)
    report = check_file(str(log), run_shapes_catalog)
    assert kinds(report) == []
    found = notices(report, "restart")
    assert len(found) == (1 if restarts else 0)
    if restarts:
        assert f"went back {restarts} time(s), first to step {runs[1][0]}" in found[0]


def test_calls_on_their_own_step_axes_are_no_restart(
    run_shapes_catalog: Catalog, tmp_path: Path
) -> None:
    """Validation logged at its own counter between training steps keeps its own order."""
    log = tmp_path / "run.jsonl"
    logger = JsonlLogger(log, worker="")
    for step in range(1, 6):
        logger.log_metrics(
            {"loss": 1.0, "tokens_total": 10.0 * step}, step=10 * step, prefix="train"
        )
        logger.log_metrics({"loss": 0.5}, step=step, prefix="validation")
    logger.close()
    assert notices(check_file(str(log), run_shapes_catalog), "restart") == []


@pytest.mark.parametrize(
    ("text", "records", "notes"),
    [
        pytest.param([flat_line(*s) for s in steps(1, 5)], 5, 0, id="clean"),
        pytest.param([*(flat_line(*s) for s in steps(1, 5)), CUT_FLAT], 5, 1, id="killed"),
        pytest.param(
            [*(flat_line(*s) for s in steps(1, 5)), CUT_FLAT + flat_line(*steps(3, 3)[0])]
            + [flat_line(*s) for s in steps(4, 7)],
            10,
            1,
            id="killed-then-restarted",
        ),
    ],
)
def test_verls_file_log_killed_or_restarted_has_no_finding(
    run_shapes_catalog: Catalog, tmp_path: Path, text: list[str], records: int, notes: int
) -> None:
    log = tmp_path / "verl.jsonl"
    body = "\n".join(text)
    log.write_text(body if text[-1] == CUT_FLAT else body + "\n", encoding="utf-8")
    report = check_file(str(log), run_shapes_catalog)
    assert report.inputs[0].format == "flat-jsonl"
    assert kinds(report) == []
    assert report.records == records
    assert len(notices(report, "incomplete_record")) == notes


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b'{"step": 3, "prefix": "train", "metrics": {"loss": oops}}\n', id="bad-json"),
        pytest.param(b'{"step": "3", "prefix": "train", "metrics": {}}\n', id="bad-step"),
        pytest.param(b'{"step": 3, "prefix": "train", "metrics": {"loss": 1}\n', id="unclosed"),
        pytest.param(b'garbage {"loss": 1.0}\n', id="an-object-that-is-no-record"),
    ],
)
def test_a_bad_line_in_the_middle_is_still_malformed(
    run_shapes_catalog: Catalog, tmp_path: Path, line: bytes
) -> None:
    """Only a line that goes on with a whole record is read as a restart's."""
    log = tmp_path / "run.jsonl"
    good = b'{"step": 1, "prefix": "train", "metrics": {"loss": 1.0}}\n'
    log.write_bytes(good + line + good)
    report = check_file(str(log), run_shapes_catalog)
    assert [k for k in kinds(report) if k != "missing"] == ["malformed"]
    assert report.records == 2


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cut=st.integers(min_value=0, max_value=10_000), restart=st.booleans())
def test_a_log_cut_at_any_byte_and_restarted_loses_only_the_cut_record(
    run_shapes_catalog: Catalog, tmp_path_factory: pytest.TempPathFactory, cut: int, restart: bool
) -> None:
    """Wherever the kill cut the log: no finding, every whole line read, the restart read."""
    folder = tmp_path_factory.mktemp("cut")
    log = folder / "run.jsonl"
    write_jsonl(log, steps(1, 6), append=False)
    data = log.read_bytes()
    cut %= len(data) + 1
    log.write_bytes(data[:cut])
    whole = data[:cut].count(b"\n") - 1  # lines ended before the cut, less the header
    if restart:
        write_jsonl(log, steps(4, 9), append=True)
    report = check_file(str(log), run_shapes_catalog)
    assert [k for k in kinds(report) if k != "missing"] == []
    expected = max(whole, 0) + (6 if restart else 0)
    # A cut just before a line break leaves that line whole: one more record.
    assert report.records in (expected, expected + 1)


# --- MLflow's file store ---------------------------------------------------------------------


def test_an_mlflow_value_logged_with_a_dataset_is_read_at_its_step(
    run_shapes_catalog: Catalog, tmp_path: Path
) -> None:
    """MLflow writes '<ts> <value> <step> <dataset name> <digest>' (a name may hold spaces)."""
    run = tmp_path / "run"
    (run / "metrics" / "train").mkdir(parents=True)
    (run / "metrics" / "train" / "loss").write_bytes(
        b"1796377130538 0.5 1 gsm8k abc123\n1796377130539 0.25 2 gsm8k eval 9f8e7d\n"
    )
    report = check_file(str(run), run_shapes_catalog)
    assert [k for k in kinds(report) if k != "missing"] == []
    loss = next(r for r in report.rows if r.row.name == "rl.shapes.loss")
    assert (loss.logged, loss.last_step, loss.last_value) == (2, 2, 0.25)


@pytest.mark.parametrize(
    ("line", "step"),
    [
        (b"1700000000000 0.5 3 gsm8k abc123\n", 3),
        (b"1700000000000 0.5 3 my eval set abc123\n", 3),
    ],
)
def test_mlflow_dataset_lines_parse_at_their_step(line: bytes, step: int) -> None:
    parsed = mlflow.parse(line, "train/loss", "loss", 1)
    assert not isinstance(parsed, str)
    assert parsed.step == step


@pytest.mark.parametrize(
    "tail",
    [
        pytest.param(b"1700000000004 0.9 4", id="cut-before-its-line-break"),
        pytest.param(b"1700000000004 0.9 1", id="cut-inside-the-step"),
        pytest.param(b"17000000", id="cut-inside-the-timestamp"),
    ],
)
def test_an_mlflow_metric_file_cut_short_is_a_notice(
    run_shapes_catalog: Catalog, tmp_path: Path, tail: bytes
) -> None:
    """MLflow ends every value's line with a line break: a line without one was cut short,
    and its step may be too (step 12 cut to 1), so it is not read."""
    run = tmp_path / "run"
    (run / "metrics" / "train").mkdir(parents=True)
    whole = b"1700000000001 1.0 1\n1700000000002 0.5 2\n1700000000003 0.3 3\n"
    (run / "metrics" / "train" / "loss").write_bytes(whole + tail)
    report = check_file(str(run), run_shapes_catalog)
    assert [k for k in kinds(report) if k != "missing"] == []
    loss = next(r for r in report.rows if r.row.name == "rl.shapes.loss")
    assert (loss.logged, loss.last_step) == (3, 3)
    (note,) = notices(report, "incomplete_record")
    assert "ends without the line break MLflow writes" in note


# --- several runs in one input ----------------------------------------------------------------


def mlflow_run(experiment: Path, run_id: str, name: str, files: dict[str, bytes]) -> Path:
    """A run folder as MLflow's file store lays it out: meta.yaml and metrics/<key path>."""
    run = experiment / run_id
    (run / "metrics").mkdir(parents=True)
    (run / "meta.yaml").write_text(
        f"run_id: {run_id}\nrun_name: {name}\nexperiment_id: '1'\nlifecycle_stage: active\n",
        encoding="utf-8",
    )
    for key, text in files.items():
        path = run / "metrics" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text)
    return run


@pytest.fixture
def two_runs(tmp_path: Path) -> Path:
    """An ``mlruns/`` root: run 'full' logs every required key, run 'short' no running total."""
    root = tmp_path / "mlruns"
    experiment = root / "1"
    experiment.mkdir(parents=True)
    (experiment / "meta.yaml").write_text("experiment_id: '1'\nname: grpo\n", encoding="utf-8")
    lines = b"1700000000001 1.0 1\n1700000000002 0.5 2\n"
    mlflow_run(experiment, "a1", "full", {"train/loss": lines, "train/tokens_total": lines})
    mlflow_run(experiment, "b2", "short", {"train/loss": lines})
    return root


def test_several_runs_judged_together_say_so_and_name_the_flag(
    run_shapes_catalog: Catalog, two_runs: Path
) -> None:
    report = check_file(str(two_runs), run_shapes_catalog)
    assert kinds(report) == []  # 'full' logged the running total: nothing is missing
    (note,) = notices(report, "several_runs")
    assert "2 runs were read ('full' (a1), 'short' (b2))" in note
    assert "--run a1" in note


@pytest.mark.parametrize(
    ("selector", "missing"),
    [
        pytest.param("short", ["train/tokens_total"], id="by-name"),
        pytest.param("b2", ["train/tokens_total"], id="by-id"),
        pytest.param("full", [], id="the-other-run"),
    ],
)
def test_run_selects_one_run_of_a_store_and_judges_it_alone(
    run_shapes_catalog: Catalog, two_runs: Path, selector: str, missing: list[str]
) -> None:
    report = check_file(str(two_runs), run_shapes_catalog, runs=(selector,))
    assert [f.qualified_key for f in report.findings if f.kind == "missing"] == missing
    assert len(report.inputs[0].runs) == 1
    assert notices(report, "several_runs") == []
    assert len(json.loads(report.render("json"))["run_selection"]["left_out"]) == 1


def test_run_naming_no_run_is_refused_with_the_runs_held(
    run_shapes_catalog: Catalog, two_runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_catalog(two_runs.parent, CATALOG, "trainer.yaml")
    code = main(["live-check", "--root", str(root), str(two_runs), "--run", "nope"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--run 'nope' names none of the runs read: 'full' (a1), 'short' (b2)" in err


def test_run_on_inputs_without_runs_is_refused(run_shapes_catalog: Catalog, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    write_jsonl(log, steps(1, 2), append=False)
    with pytest.raises(LogInputError, match="hold no runs to choose from"):
        check_file(str(log), run_shapes_catalog, runs=("a1",))


@pytest.mark.parametrize(
    ("second", "conflict", "kl_presence"),
    [
        pytest.param(("b", {"use_kl": False}), True, "conditional", id="another-run-differs"),
        pytest.param(("b", {"use_kl": True}), False, "missing", id="another-run-agrees"),
        pytest.param(("a", {"use_kl": False}), False, "missing", id="the-same-run-resumed"),
        pytest.param((None, {"use_kl": False}), False, "missing", id="a-restart-header"),
    ],
)
def test_runs_that_logged_different_configurations_decide_no_condition(
    run_shapes_catalog: Catalog,
    second: tuple[str | None, dict[str, object]],
    conflict: bool,
    kl_presence: str,
) -> None:
    """The first run's configuration must not decide another run's rows."""
    run, config = second
    records = [
        RunConfig({"use_kl": True}, "a.wandb", 1, run="a"),
        Record(1, "train", {"loss": 1.0, "tokens_total": 10.0}, "a.wandb", 2),
        RunConfig(config, "b.wandb", 1, run=run),
        Record(1, "train", {"loss": 1.0, "tokens_total": 10.0}, "b.wandb", 2),
    ]
    report = check_records(records, run_shapes_catalog, multi=True)
    assert bool(notices(report, "config_conflict")) is conflict
    kl = next(r for r in report.rows if r.row.name == "rl.shapes.kl")
    assert kl.presence == kl_presence


def test_mlflow_runs_with_other_params_decide_no_condition_together(
    run_shapes_catalog: Catalog, two_runs: Path
) -> None:
    """Each MLflow run's params are its configuration: one run's must not decide another's."""
    for run, use_kl in (("a1", "True"), ("b2", "False")):
        (two_runs / "1" / run / "params").mkdir()
        (two_runs / "1" / run / "params" / "use_kl").write_text(use_kl, encoding="utf-8")
    together = check_file(str(two_runs), run_shapes_catalog)
    (conflict,) = notices(together, "config_conflict")
    assert "'b2'" in conflict
    kl = next(r for r in together.rows if r.row.name == "rl.shapes.kl")
    assert kl.presence == "conditional"  # a1's use_kl: True would call it missing
    alone = check_file(str(two_runs), run_shapes_catalog, runs=("full",))
    assert [f.qualified_key for f in alone.findings if f.kind == "missing"] == ["train/kl"]
    short = check_file(str(two_runs), run_shapes_catalog, runs=("short",))
    assert next(r for r in short.rows if r.row.name == "rl.shapes.kl").presence == (
        "not_applicable"
    )


# --- TensorBoard: a log folder of runs, a restart's second file, ranks' files -----------------


def tensorboard_run(folder: Path, first: int, last: int, *, suffix: str = "") -> None:
    """Steps ``first..last`` as tensorboardX's ``SummaryWriter.add_scalar`` writes them."""
    tensorboardx = pytest.importorskip("tensorboardX")
    writer = tensorboardx.SummaryWriter(str(folder), filename_suffix=suffix)
    for step, metrics in steps(first, last):
        writer.add_scalar("train/loss", metrics["loss"], step)
        writer.add_scalar("train/tokens_total", metrics["tokens_total"], step)
    writer.close()


def test_a_tensorboard_folder_of_runs_restarts_and_ranks_has_no_finding(
    run_shapes_catalog: Catalog, tmp_path: Path
) -> None:
    pytest.importorskip("tensorboard")
    logdir = tmp_path / "runs"
    tensorboard_run(logdir / "a", 1, 7, suffix=".first")
    tensorboard_run(logdir / "a", 5, 11, suffix=".restart")  # a second file, steps again
    for rank in range(2):
        tensorboard_run(logdir / "b", 1, 4, suffix=f".rank{rank}")
    report = check_file(str(logdir), run_shapes_catalog)
    assert kinds(report) == []
    assert [run.run_id for run in report.inputs[0].runs] == ["a", "b"]
    (note,) = notices(report, "several_runs")
    assert "--run a" in note
    loss = next(r for r in report.rows if r.row.name == "rl.shapes.loss")
    assert loss.logged == 7 + 7 + 4 + 4
    only = check_file(str(logdir), run_shapes_catalog, runs=("b",))
    assert [run.run_id for run in only.inputs[0].runs] == ["b"]
    assert only.records == 2 * 8  # add_scalar writes one event per value


# --- a Trainer's output folder: one trainer_state.json per checkpoint -----------------------


def trainer_output(folder: Path, checkpoints: tuple[int, ...], *, final: bool = False) -> None:
    """States as a transformers Trainer saves them: ``checkpoint-N/trainer_state.json``, each
    holding the log history up to step N (and the folder's own after training)."""
    transformers = pytest.importorskip("transformers")

    def save(step: int, path: Path) -> None:
        state = transformers.TrainerState(global_step=step, max_steps=40, logging_steps=5)
        state.log_history = [
            {"epoch": at / 40, "train/loss": 1.0 / at, "step": at} for at in range(5, step + 1, 5)
        ]
        path.parent.mkdir(parents=True, exist_ok=True)
        state.save_to_json(str(path))

    for step in checkpoints:
        save(step, folder / f"checkpoint-{step}" / "trainer_state.json")
    if final:
        save(max(checkpoints), folder / "trainer_state.json")


def test_a_trainer_output_folder_is_read_as_its_latest_state(
    run_shapes_catalog: Catalog, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    trainer_output(out, (10, 20, 30))
    report = check_file(str(out), run_shapes_catalog)
    assert report.inputs[0].format == "hf-trainer-state"
    loss = next(r for r in report.rows if r.row.name == "rl.shapes.loss")
    assert (loss.logged, loss.last_step) == (6, 30)  # each value once: the latest state
    (note,) = notices(report, "latest_state")
    assert "checkpoint-30" in note


def test_the_folders_own_state_is_read_unless_a_checkpoint_is_newer(
    run_shapes_catalog: Catalog, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    trainer_output(out, (10, 20), final=True)
    (note,) = notices(check_file(str(out), run_shapes_catalog), "latest_state")
    assert f"; {out / 'trainer_state.json'} was read" in note
    old = out / "trainer_state.json"
    os.utime(old, (1, 1))  # a state saved by an earlier run in the same folder
    report = check_file(str(out), run_shapes_catalog)
    (note,) = notices(report, "latest_state")
    assert "checkpoint-20" in note


def test_several_states_of_one_output_folder_say_they_count_values_again(
    run_shapes_catalog: Catalog, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    trainer_output(out, (10, 20))
    paths = sorted(str(p) for p in out.glob("checkpoint-*/trainer_state.json"))
    report = check_paths(paths, run_shapes_catalog)
    assert [k for k in kinds(report) if k not in {"missing", "undeclared"}] == []
    (note,) = notices(report, "several_states")
    assert f"pass the folder ({out})" in note


def test_an_output_folder_with_tensorboard_logs_is_read_as_tensorboard(
    run_shapes_catalog: Catalog, tmp_path: Path
) -> None:
    pytest.importorskip("tensorboard")
    out = tmp_path / "out"
    trainer_output(out, (10,))
    tensorboard_run(out / "runs" / "Dec04_10-00-00_host", 1, 3)  # report_to="tensorboard"
    assert check_file(str(out), run_shapes_catalog).inputs[0].format == "tensorboard"


# --- a logging backend's own metrics next to the run's ---------------------------------------


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        pytest.param("system/cpu_utilization_percentage", None, id="system-metric"),
        pytest.param("system/node_0/gpu_0_memory_usage_megabytes", None, id="a-nodes-metric"),
        pytest.param("systems/made_up", "undeclared", id="not-under-system"),
        pytest.param("train/made_up", "undeclared", id="the-codes-own-key"),
    ],
)
def test_mlflows_system_metrics_are_not_undeclared(
    run_shapes_catalog: Catalog, tmp_path: Path, key: str, kind: str | None
) -> None:
    """``log_system_metrics=True`` writes ``system/...`` into the run: not the code's keys."""
    run = tmp_path / "run"
    (run / "metrics").mkdir(parents=True)
    lines = b"1700000000001 1.0 1\n1700000000002 0.5 2\n"
    for name in ("train/loss", "train/tokens_total", key):
        (run / "metrics" / name).parent.mkdir(parents=True, exist_ok=True)
        (run / "metrics" / name).write_bytes(lines)
    report = check_file(str(run), run_shapes_catalog)
    assert kinds(report) == ([] if kind is None else [kind])
    assert len(notices(report, "backend_metrics")) == (kind is None)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cut=st.integers(min_value=1, max_value=100_000))
@example(cut=0)  # cut before its first byte: an empty file, still a notice
def test_a_trainer_state_cut_at_any_byte_is_information(
    run_shapes_catalog: Catalog, tmp_path_factory: pytest.TempPathFactory, cut: int
) -> None:
    """``save_to_json`` rewrites the file in place: wherever a reader or a kill cuts it, the
    entries before the cut are read and nothing is malformed or abandoned."""
    out = tmp_path_factory.mktemp("state")
    trainer_output(out, (30,))
    path = out / "checkpoint-30" / "trainer_state.json"
    data = path.read_bytes()
    cut %= len(data)
    path.write_bytes(data[:cut])
    report = check_file(str(path), run_shapes_catalog)
    assert report.abandoned == []
    assert "malformed" not in kinds(report)
    whole = data[:cut].rstrip() == data.rstrip()  # only the final line break was cut
    assert len(notices(report, "incomplete_record")) == (0 if whole else 1)
    assert report.records <= 6
