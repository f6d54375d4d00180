"""CSV metric logs in live-check: Lightning's ``CSVLogger`` (``metrics.csv`` and
``hparams.yaml`` in a version folder) and any CSV with a ``step`` column.

Lightning is not installed here (it needs torch); :func:`lightning_csv` writes what its
``_ExperimentWriter`` writes, through the same standard-library calls: every call's
dict with ``step`` added, saved as ``csv.DictWriter(fieldnames=<every key, in
first-logged order>)``, ``writeheader()``, ``writerows(...)`` (the file is rewritten
whole when a key first appears), and the hyperparameters as YAML.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.live_check import LiveCheckReport, check_file, check_stream
from codegen.runs.ingest import csv_log
from tests.catalog_projects import loaded_catalog, write_catalog

CATALOG = """\
owner: lit
module: lit
description: Keys a Lightning module logs with self.log.
prefix: ""
teed:
  - logger_key: train/loss
    name: rl.lit.train_loss
    kind: gauge
    unit: "1"
    description: Training loss.
    requirement_level: required
  - logger_key: val_loss
    name: rl.lit.val_loss
    kind: gauge
    unit: "1"
    description: Validation loss, every val_every steps.
    requirement_level: required
    every: "config.val_every"
  - logger_key: epoch
    name: rl.lit.epoch
    kind: gauge
    unit: "1"
    description: The Trainer's epoch, logged with every call.
    requirement_level: required
  - logger_key: "kl(ref)"
    name: rl.lit.kl
    kind: gauge
    unit: "1"
    description: KL to the reference policy, with a KL penalty.
    requirement_level: conditionally_required
    condition: "config.model.kl_coef > 0"
"""


@pytest.fixture(scope="module")
def lightning_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The rows of :data:`CATALOG` a Lightning module logs with ``self.log``."""
    return loaded_catalog(tmp_path_factory.mktemp("csv"), CATALOG, "lit.yaml")


def lightning_csv(
    folder: Path, calls: list[tuple[int, dict[str, Any]]], hparams: dict[str, Any] | None
) -> Path:
    """A version folder as CSVLogger leaves it: metrics.csv (and hparams.yaml)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{**metrics, "step": step} for step, metrics in calls]
    keys: dict[str, None] = {}
    for row in rows:
        keys.update(dict.fromkeys(row))
    with open(folder / "metrics.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(keys))
        writer.writeheader()
        writer.writerows(rows)
    if hparams is not None:
        (folder / "hparams.yaml").write_text(yaml.dump(hparams), encoding="utf-8")
    return folder


def calls(steps: int, *, val_every: int = 2, kl: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """A training loop's self.log calls: one per step, a validation call every few."""
    out: list[tuple[int, dict[str, Any]]] = []
    for step in range(1, steps + 1):
        metrics: dict[str, Any] = {"train/loss": 1.0 / step, "epoch": 0}
        if kl:
            metrics["kl(ref)"] = 0.01 * step
        out.append((step, metrics))
        if step % val_every == 0:
            out.append((step, {"val_loss": 0.5, "epoch": 0}))
    return out


def kinds(report: LiveCheckReport) -> list[tuple[str, str]]:
    return sorted((f.kind, f.qualified_key) for f in report.findings)


@pytest.mark.parametrize("kl", [False, True], ids=["no-kl", "kl"])
def test_a_lightning_version_folder_is_clean_and_its_hparams_decide_conditions(
    lightning_catalog: Catalog, tmp_path: Path, *, kl: bool
) -> None:
    config = {"val_every": 2, "model": {"kl_coef": 0.1 if kl else 0.0}}
    folder = lightning_csv(tmp_path / "version_0", calls(6, kl=kl), config)
    report = check_file(str(folder), lightning_catalog)
    assert report.inputs[0].format == "csv"
    assert kinds(report) == []
    logged = {s.row.name: s.logged for s in report.rows if s.logged}
    expected = {"rl.lit.train_loss": 6, "rl.lit.val_loss": 3, "rl.lit.epoch": 9}
    assert logged == expected | ({"rl.lit.kl": 6} if kl else {})
    kl_row = next(s for s in report.rows if s.row.name == "rl.lit.kl")
    assert kl_row.presence == ("logged" if kl else "not_applicable")
    assert report.coverage.overall == 1.0


def test_a_missing_row_and_bad_values_are_found_at_their_lines(
    lightning_catalog: Catalog, tmp_path: Path
) -> None:
    rows = calls(4)
    rows[0][1]["train/loss"] = float("nan")
    rows[1][1]["train/loss"] = "oops"
    folder = lightning_csv(tmp_path / "v", rows, {"val_every": 2, "model": {"kl_coef": 0.5}})
    report = check_file(str(folder), lightning_catalog)
    assert kinds(report) == [
        ("missing", "kl(ref)"),
        ("non_finite", "train/loss"),
        ("non_scalar", "train/loss"),
    ]
    (nan,) = [f for f in report.findings if f.kind == "non_finite"]
    assert (nan.line, nan.step) == (2, 1)  # line 1 is the header


def test_a_csv_file_is_read_by_its_name_or_its_header(
    lightning_catalog: Catalog, tmp_path: Path
) -> None:
    folder = lightning_csv(tmp_path / "v", calls(2), None)
    renamed = tmp_path / "log.txt"
    renamed.write_bytes((folder / "metrics.csv").read_bytes())
    for path in (folder / "metrics.csv", renamed):
        report = check_file(str(path), lightning_catalog)
        assert report.inputs[0].format == "csv", path
        assert {s.row.name for s in report.rows if s.logged} >= {"rl.lit.train_loss"}
    raw = (folder / "metrics.csv").read_bytes()
    stdin = io.BufferedReader(io.BytesIO(raw))  # peekable, as sys.stdin.buffer is
    assert check_stream(stdin, lightning_catalog).inputs[0].format == "csv"


@pytest.mark.parametrize(
    ("head", "csv_like"),
    [
        (b"epoch,step,train/loss\n0,1,0.5\n", True),
        (b"step\n1\n", False),  # one column: nothing logged
        (b'{"step": 1, "data": {"a,b": 1}}\n', False),  # flat JSONL
        (b"loss,acc\n0.5,0.1\n", False),  # no step column
        (b"# comment,step\n", False),
    ],
)
def test_detection_wants_a_header_naming_step(head: bytes, *, csv_like: bool) -> None:
    assert csv_log.detect("run.log", head) is csv_like


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("epoch,step,train/loss\n0,1\n", "2 cell(s) for a header of 3 column(s)"),
        ("epoch,step,train/loss\n0,first,0.5\n", "'step' cell 'first' is not an integer"),
        ('epoch,step,train/loss\n0,1,"0.5\n', "not one CSV line"),
        ("epoch,step,step\n0,1,1\n", "the header names a column twice"),
    ],
)
def test_a_malformed_row_names_its_line_and_why(
    lightning_catalog: Catalog, tmp_path: Path, body: str, why: str
) -> None:
    path = tmp_path / "metrics.csv"
    path.write_text(body + "0,2,0.25\n", encoding="utf-8")
    report = check_file(str(path), lightning_catalog)
    malformed = [f for f in report.findings if f.kind == "malformed"]
    assert malformed, kinds(report)
    assert why in malformed[0].message()


def test_an_hparams_file_with_python_tags_is_information_not_a_finding(
    lightning_catalog: Catalog, tmp_path: Path
) -> None:
    """Lightning dumps some values with yaml.dump: a tuple becomes !!python/tuple, which a
    safe loader refuses. The run is judged as one without a configuration."""
    folder = lightning_csv(tmp_path / "v", calls(4), None)
    (folder / "hparams.yaml").write_text(
        yaml.dump({"betas": (0.9, 0.95), "val_every": 2}), encoding="utf-8"
    )
    report = check_file(str(folder), lightning_catalog)
    assert kinds(report) == []
    (note,) = [n.message for n in report.notices if n.kind == "unread_config"]
    assert "hparams.yaml was not read as the run's configuration" in note
    assert "--run-config" in note


def test_a_row_cut_short_by_a_killed_job_is_information(
    lightning_catalog: Catalog, tmp_path: Path
) -> None:
    folder = lightning_csv(tmp_path / "v", calls(4), {"val_every": 2, "model": {"kl_coef": 0}})
    with open(folder / "metrics.csv", "a", encoding="utf-8") as handle:
        handle.write('0,5,"0.')
    report = check_file(str(folder), lightning_catalog)
    assert kinds(report) == []
    assert [n.kind for n in report.notices if n.kind == "incomplete_record"] == [
        "incomplete_record"
    ]


def test_the_cli_reads_a_version_folder(
    lightning_catalog: Catalog, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_catalog(tmp_path / "project", CATALOG, "lit.yaml")
    folder = lightning_csv(tmp_path / "lightning_logs" / "version_0", calls(4), {"val_every": 2})
    args = ["live-check", str(folder), "--root", str(root), "--format", "json"]
    assert main([*args, "--fail-on", "missing,undeclared,malformed"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["inputs"][0]["format"] == "csv"
    assert doc["findings"] == []


def test_a_log_root_of_version_folders_is_several_runs_and_run_picks_one(
    lightning_catalog: Catalog, tmp_path: Path
) -> None:
    """``lightning_logs/`` after two fits: version_0 with a KL penalty, version_1 without."""
    root = tmp_path / "lightning_logs"
    lightning_csv(root / "version_0", calls(4, kl=True), {"val_every": 2, "model": {"kl_coef": 1}})
    lightning_csv(root / "version_1", calls(4), {"val_every": 2, "model": {"kl_coef": 0}})
    together = check_file(str(root), lightning_catalog)
    assert [run.run_id for run in together.inputs[0].runs] == ["version_0", "version_1"]
    assert kinds(together) == []
    notes = {n.kind for n in together.notices}
    assert {"several_runs", "config_conflict"} <= notes  # neither configuration decides
    one = check_file(str(root), lightning_catalog, runs=("version_1",))
    assert [run.run_id for run in one.inputs[0].runs] == ["version_1"]
    kl_row = next(s for s in one.rows if s.row.name == "rl.lit.kl")
    assert kl_row.presence == "not_applicable"
    assert kinds(one) == []
