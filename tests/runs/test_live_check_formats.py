"""live-check reads other log formats: flat per-step JSONL (verl's file logger, a bare dict)
and an MLflow file-store run folder; keys without prefixes are split against the catalog.

The fixtures under ``tests/fixtures/live_check_formats/`` follow each format byte for byte:
``verl_file.jsonl`` as verl's file logger writes ``{"step": N, "data": {...}}`` per
``Tracking.log(data, step)`` call, ``bare.jsonl`` a dict per step with a ``step`` key, and
``mlruns/1/<run>/`` a file-store run (``meta.yaml``, ``params/``, ``tags/`` and one
``metrics/<key path>`` file per key of ``"<timestamp ms> <value> <step>"`` lines). The
three hold the same run.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.live_check import (
    LiveCheckReport,
    LogInputError,
    Source,
    check_file,
    check_paths,
    check_stream,
    current_limits,
    expand_inputs,
)
from codegen.live_check.checker import Checker
from codegen.runs.ingest import HEAD_BYTES, choose, flat, jsonl, mlflow, read_source

REPO = Path(__file__).resolve().parents[2]
EVOLUTION = REPO / "tests" / "fixtures" / "evolution"
FORMATS = REPO / "tests" / "fixtures" / "live_check_formats"
RUN = FORMATS / "mlruns" / "1" / "5f0c3e2a9b8d4c61a7e2f1d0c9b8a7e6"
INPUTS = {
    "flat-jsonl": [FORMATS / "verl_file.jsonl", FORMATS / "bare.jsonl"],
    "mlflow": [RUN],
    "hf-trainer-state": [FORMATS / "trainer_state.json"],
}


def judged(report: LiveCheckReport) -> tuple[set[tuple[str, str, int]], dict[str, int]]:
    """(kind, prefix/key, count) of every finding, and logged values per logged row."""
    findings = {(f.kind, f.qualified_key, f.count) for f in report.findings}
    return findings, {r.row.name: r.logged for r in report.rows if r.logged}


EXPECTED = (
    {
        ("undeclared", "train/made_up", 1),
        ("non_finite", "train/reward", 1),
        ("counter_decrease", "train/global_valid_toks", 1),
    },
    {
        "rl.reward.mean": 3,
        "rl.policy.loss": 3,
        "rl.train.valid_tokens": 2,
        "rl.step.duration": 2,
    },
)


@pytest.mark.parametrize(
    ("fmt", "path"), [(fmt, path) for fmt, paths in INPUTS.items() for path in paths]
)
def test_each_format_is_detected_and_judged_like_the_same_run_in_jsonl(
    evolution_catalog: Catalog, fmt: str, path: Path
) -> None:
    source = Source(str(path))
    items = list(read_source(source, current_limits()))
    assert source.format == fmt
    assert items
    report = check_file(str(path), evolution_catalog)
    assert judged(report) == EXPECTED


def test_a_finding_of_an_mlflow_run_points_at_the_metric_file_and_line(
    evolution_catalog: Catalog,
) -> None:
    report = check_file(str(RUN), evolution_catalog)
    (nan,) = [f for f in report.findings if f.kind == "non_finite"]
    assert str(report.where(nan)) == f"{RUN}/metrics/train/reward:3:1"
    assert report.lines == 11


def test_many_mlflow_runs_are_workers_of_one_run(evolution_catalog: Catalog) -> None:
    inputs = expand_inputs([str(RUN)])
    assert inputs.paths == [str(RUN)]
    report = check_paths(inputs.paths, evolution_catalog)
    assert judged(report) == EXPECTED
    assert report.source == str(RUN)  # one worker: the run folder, not one per metric file


def test_a_folder_that_no_format_reads_is_still_refused(tmp_path: Path) -> None:
    with pytest.raises(LogInputError, match="is a folder"):
        expand_inputs([str(tmp_path)])


@pytest.mark.parametrize(
    ("logged", "split"),
    [
        ("timing/train/total_step_time", ("timing/train", "total_step_time")),
        ("train/reward", ("train", "reward")),
        ("validation/val_loss", ("validation", "val_loss")),
        ("train/made_up", ("", "train/made_up")),
        ("reward", ("", "reward")),
        ("", ("", "")),
        ("/", ("", "/")),
    ],
)
def test_a_key_without_prefix_is_split_at_the_longest_declared_prefix_that_fits(
    evolution_catalog: Catalog, logged: str, split: tuple[str, str]
) -> None:
    assert Checker(evolution_catalog, "run").matcher.split(logged) == split


def test_the_longest_prefix_wins_when_two_fit(tmp_path: Path) -> None:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "t.yaml").write_text(
        "owner: t\nmodule: t\ndescription: Timing.\nprefix: timing\nteed:\n"
        "  - logger_key: train/step\n    name: rl.t.outer\n    kind: gauge\n    unit: s\n"
        "    description: The outer one.\n"
        "  - logger_key: step\n    prefix: timing/train\n    name: rl.t.inner\n    kind: gauge\n"
        "    unit: s\n    description: The inner one.\n",
        encoding="utf-8",
    )
    result = load_and_check(root=tmp_path, lint=False)
    assert result.ok, [d.format() for d in result.diagnostics]
    raw = b'{"step": 1, "timing/train/step": 2.0}\n'
    report = check_stream(io.BytesIO(raw), result.catalog, input_format="flat-jsonl")
    assert {r.row.name for r in report.rows if r.logged} == {"rl.t.inner"}


@pytest.mark.parametrize(
    ("head", "flat_detected"),
    [
        (b'{"step":1,"data":{"actor/loss":0.1}}\n', True),
        (b'{"step": 3, "actor/loss": 0.1}\n', True),
        # W&B's history (wandb-history.jsonl) and most hand-rolled loggers: the step in _step.
        (b'{"_step": 0, "_runtime": 1.5, "_timestamp": 1.7e9, "train/loss": 0.5}\n', True),
        (b'{"_step": "0", "train/loss": 0.5}\n', False),
        (b'\n\n{"step": 3, "actor/loss": 0.1}\n', True),
        (b'{"step": 1, "prefix": "train", "metrics": {"loss": 1}}\n', False),
        (b'{"step": 1, "series": "rl.x", "value": 1}\n', False),
        (b'{"step": 1}\n', False),
        (b'{"step": "1", "loss": 1}\n', False),
        (b'{"step": 1, "data": {"a": ', False),  # a first line longer than the head
        (b"[1, 2]\n", False),
        (b"", False),
    ],
)
def test_flat_jsonl_is_detected_by_its_first_line(head: bytes, flat_detected: bool) -> None:
    assert flat.detect("x.jsonl", head) is flat_detected


def test_a_wandb_history_file_is_read_with_its_underscore_step_and_no_malformed_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "t.yaml").write_text(
        "owner: t\nmodule: t\ndescription: Training.\nprefix: train\nteed:\n"
        "  - logger_key: loss\n    name: rl.t.loss\n    kind: gauge\n    unit: '1'\n"
        "    description: The loss.\n    requirement_level: required\n",
        encoding="utf-8",
    )
    result = load_and_check(root=tmp_path, lint=False)
    lines = [
        {"_step": step, "_runtime": 1.5 * step, "_timestamp": 1.7e9 + step, "train/loss": 0.5}
        for step in range(4)
    ]
    raw = "".join(json.dumps(line) + "\n" for line in lines).encode()
    stream = io.BufferedReader(io.BytesIO(raw))  # peekable, as a file is: detected
    report = check_stream(stream, result.catalog, source="wandb-history.jsonl")
    assert report.count("malformed") == 0
    assert report.findings == []
    assert {r.row.name: r.logged for r in report.rows} == {"rl.t.loss": 4}
    assert report.last_step == 3


def test_a_flat_line_inside_this_projects_jsonl_names_the_flag_that_reads_it() -> None:
    why = jsonl.parse(b'{"_step": 1, "train/loss": 0.5}', "x.jsonl", 2)
    assert isinstance(why, str)
    assert "--input-format flat-jsonl" in why
    other = jsonl.parse(b'{"step": 1, "prefix": 3, "metrics": {}}', "x.jsonl", 2)
    assert isinstance(other, str)
    assert "--input-format" not in other


def test_this_projects_jsonl_is_still_detected_as_jsonl() -> None:
    head = (EVOLUTION / "run.jsonl").read_bytes()[:4096]
    assert choose("run.jsonl", head).name == "jsonl"


def test_input_format_overrides_detection(
    evolution_catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = str(FORMATS / "bare.jsonl")
    args = ["live-check", bare, "--root", str(EVOLUTION), "--format", "json"]
    assert main([*args, "--input-format", "jsonl"]) == 1  # no line is a JsonlLogger record
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"]["malformed"] == 3
    assert doc["saw_nothing"] == "nothing was seen: none of the input's 3 line(s) is a record"
    assert main([*args, "--input-format", "flat-jsonl"]) == 0
    capsys.readouterr()
    raw = (FORMATS / "verl_file.jsonl").read_bytes()
    report = check_stream(io.BytesIO(raw), evolution_catalog, input_format="flat-jsonl")
    assert judged(report) == EXPECTED


def test_an_unknown_input_format_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["live-check", "x.jsonl", "--input-format", "parquet"])
    assert "invalid choice: 'parquet'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"1700000000000 0.5 3\n", None),
        (b"1700000000000 0.5\n", None),  # MLflow before steps: step 0
        (b"1700000000000 nan 3\n", None),
        (b"1700000000000 0.5 3 4\n", "got 4 field(s)"),
        (b"soon 0.5 3\n", "must be integers"),
        (b"1700000000000 high 3\n", "must be integers"),
        (b"\xff\xfe\n", "not ASCII text"),
    ],
)
def test_mlflow_metric_lines_parse_or_say_why(line: bytes, why: str | None) -> None:
    parsed = mlflow.parse(line, "train/loss", "loss", 1)
    if why is None:
        assert not isinstance(parsed, str)
        assert parsed.metrics.keys() == {"train/loss"}
        assert parsed.split
    else:
        assert isinstance(parsed, str)
        assert why in parsed


def test_a_malformed_mlflow_line_is_reported_in_its_file(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    (run / "metrics" / "train").mkdir(parents=True)
    (run / "metrics" / "train" / "reward").write_bytes(b"1 0.5 1\nbroken\n")
    report = check_file(str(run), evolution_catalog)
    (bad,) = [f for f in report.findings if f.kind == "malformed"]
    assert str(report.where(bad)) == f"{run}/metrics/train/reward:2:1"
    assert "is not an MLflow metric line" in bad.message()


def test_flat_keys_logged_under_the_empty_prefix_split_as_the_adapter_does(
    tmp_path: Path,
) -> None:
    """A tracker's flat dict teed through adapters.tee_flat and written by a JsonlLogger under
    prefix "" is judged where the tee sends each key: the longest declared prefix that fits."""
    from codegen.catalog.pipeline import load_and_check
    from codegen.live_check import check_file

    root = Path(__file__).resolve().parents[2]
    catalog = load_and_check(root=root).catalog
    assert catalog is not None
    path = tmp_path / "flat.jsonl"
    metrics = {"timing/train/generation": 1.5, "train/loss": 0.25, "nowhere/declared": 1.0}
    path.write_text(json.dumps({"step": 1, "prefix": "", "metrics": metrics}) + "\n")
    report = check_file(str(path), catalog)
    logged = {s.row.name for s in report.rows if s.logged}
    assert {"rl.generation.duration", "rl.policy.loss"} <= logged
    undeclared = [f.qualified_key for f in report.findings if f.kind == "undeclared"]
    assert undeclared == ["nowhere/declared"]


@pytest.mark.parametrize(
    ("bare_row", "counted_under"),
    [(True, "rl.t.bare"), (False, "rl.t.prefixed")],
)
def test_a_row_declared_under_the_empty_prefix_wins_over_the_split(
    tmp_path: Path, bare_row: bool, counted_under: str
) -> None:
    """In this project's JSONL, ``train/loss`` under prefix "" is the row declared with prefix
    "" when there is one; only a key no such row takes is split at the longest prefix."""
    rows = (
        "  - logger_key: loss\n    name: rl.t.prefixed\n    kind: gauge\n    unit: '1'\n"
        "    description: The loss under train.\n"
    )
    if bare_row:
        rows += (
            "  - logger_key: train/loss\n    prefix: ''\n    name: rl.t.bare\n    kind: gauge\n"
            "    unit: '1'\n    description: The same text logged bare.\n"
        )
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "t.yaml").write_text(
        f"owner: t\nmodule: t\ndescription: Loss.\nprefix: train\nteed:\n{rows}", encoding="utf-8"
    )
    result = load_and_check(root=tmp_path, lint=False)
    assert result.ok, [d.format() for d in result.diagnostics]
    raw = b'{"step": 1, "prefix": "", "metrics": {"train/loss": 0.5}}\n'
    report = check_stream(io.BytesIO(raw), result.catalog)
    assert report.findings == []
    assert {r.row.name for r in report.rows if r.logged} == {counted_under}


def _padded(line: dict[str, object], width: int) -> str:
    """``line`` as JSON padded with whitespace (still the same object) to ``width`` bytes."""
    text = json.dumps(line)
    cut = text.index('"data"')
    return text[:cut] + " " * max(0, width - len(text)) + text[cut:]


@pytest.mark.parametrize("width", [HEAD_BYTES // 2, HEAD_BYTES * 3, 300_000])
def test_a_first_record_longer_than_the_head_is_still_detected(
    evolution_catalog: Catalog, tmp_path: Path, width: int
) -> None:
    """A verl step logs hundreds of keys: a first line past the sniffed head keeps its format."""
    lines = [json.loads(raw) for raw in (FORMATS / "verl_file.jsonl").read_text().splitlines()]
    path = tmp_path / "verl.jsonl"
    path.write_text("\n" + "".join(_padded(line, width) + "\n" for line in lines))
    source = Source(str(path))
    list(read_source(source, current_limits()))
    assert source.format == "flat-jsonl"
    assert judged(check_file(str(path), evolution_catalog)) == EXPECTED


def test_this_projects_jsonl_with_a_long_first_line_is_still_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    metrics = {f"k{i}": 0.5 for i in range(2000)}
    path.write_text(json.dumps({"step": 1, "prefix": "train", "metrics": metrics}) + "\n")
    source = Source(str(path))
    list(read_source(source, current_limits()))
    assert source.format == "jsonl"
