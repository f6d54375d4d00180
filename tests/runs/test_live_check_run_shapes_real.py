"""live-check on runs the real tracking libraries leave: resumed, several in one folder.

W&B (offline, in a child process: ``tests/wandb_runs.py``) writes a resumed run into a
second run folder with the same id, under the project folder's ``wandb/``; MLflow appends a
resumed run's values to the same run (file store and SQLite). Each run's configuration
decides its own rows, a restart is not a finding, and ``--run`` judges one run alone.

Integration: wandb starts its ``wandb-core`` service, MLflow migrates its schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.live_check import LiveCheckReport, check_file
from codegen.runs.ingest.wandb_run import folder_run_id
from tests.mlflow_stores import mlflow_template, sqlite_store, write_runs
from tests.runs.test_live_check_run_shapes import (
    CATALOG,
    kinds,
    notices,
    run_shapes_catalog,
    steps,
)
from tests.runs.test_live_check_wandb import write_runs as write_wandb_runs

__all__ = ["mlflow_template", "run_shapes_catalog"]  # fixtures used by name

pytestmark = pytest.mark.integration


def missing(report: LiveCheckReport) -> list[str]:
    """The keys of the ``missing`` findings."""
    return [f.qualified_key for f in report.findings if f.kind == "missing"]


def flat(first: int, last: int, keys: tuple[str, ...]) -> list[list[Any]]:
    """Steps of the run with only ``keys``, as flat ``train/...`` keys."""
    return [
        [step, {f"train/{k}": v for k, v in metrics.items() if k in keys}]
        for step, metrics in steps(first, last)
    ]


@pytest.fixture(scope="module")
def wandb_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder: run 'full' killed at step 7 and resumed from 5 (same id, a second
    folder), and run 'short' (its configuration rules the KL out; no running total)."""
    pytest.importorskip("wandb")
    project = tmp_path_factory.mktemp("wandb-project")
    every = ("loss", "tokens_total", "kl")
    specs = [
        {
            "dir": str(project),
            "id": "fullrun1",
            "config": {"use_kl": True},
            "steps": flat(1, 7, every),
        },
        {
            "dir": str(project),
            "id": "fullrun1",
            "config": {"use_kl": True},
            "steps": flat(5, 11, every),
        },
        {
            "dir": str(project),
            "id": "shortrun",
            "config": {"use_kl": False},
            "steps": flat(1, 3, ("loss",)),
        },
    ]
    folders = write_wandb_runs(project, specs)
    assert len({folder.name for folder in folders}) == 3
    return project


def test_the_project_folder_above_wandb_is_read(
    run_shapes_catalog: Catalog, wandb_project: Path
) -> None:
    report = check_file(str(wandb_project), run_shapes_catalog)
    assert report.inputs[0].format == "wandb"
    assert sorted(run.run_id for run in report.inputs[0].runs) == [
        "fullrun1",
        "fullrun1",
        "shortrun",
    ]
    assert kinds(report) == []
    (note,) = notices(report, "several_runs")
    assert note.startswith("2 runs were read")  # the resumed run is one run
    (conflict,) = notices(report, "config_conflict")
    assert "'shortrun'" in conflict


def test_a_resumed_wandb_run_is_one_run_and_no_finding(
    run_shapes_catalog: Catalog, wandb_project: Path
) -> None:
    report = check_file(str(wandb_project / "wandb"), run_shapes_catalog, runs=("fullrun1",))
    assert kinds(report) == []
    assert notices(report, "several_runs") == []
    assert len(report.inputs[0].runs) == 2  # its two folders
    loss = next(r for r in report.rows if r.row.name == "rl.shapes.loss")
    assert (loss.logged, loss.last_step) == (14, 11)


def test_run_judges_a_wandb_run_by_its_own_configuration(
    run_shapes_catalog: Catalog, wandb_project: Path
) -> None:
    report = check_file(str(wandb_project), run_shapes_catalog, runs=("shortrun",))
    assert missing(report) == ["train/tokens_total"]
    kl = next(r for r in report.rows if r.row.name == "rl.shapes.kl")
    assert kl.presence == "not_applicable"


def test_the_latest_run_link_reads_the_run_it_names(
    run_shapes_catalog: Catalog, wandb_project: Path
) -> None:
    latest = wandb_project / "wandb" / "latest-run"
    assert latest.is_symlink()
    report = check_file(str(latest), run_shapes_catalog)
    assert [run.run_id for run in report.inputs[0].runs] == ["shortrun"]


def test_the_cli_judges_one_run_of_a_wandb_project(
    wandb_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "trainer.yaml").write_text(CATALOG, encoding="utf-8")
    args = ["live-check", "--root", str(tmp_path), str(wandb_project), "--fail-on", "missing"]
    assert main(args) == 0
    assert "info[SEVERAL_RUNS]" in capsys.readouterr().out
    assert main([*args, "--run", "shortrun"]) == 1


@pytest.mark.parametrize("store", ["file", "sqlite"])
def test_an_mlflow_run_resumed_into_the_same_run_is_no_finding(
    run_shapes_catalog: Catalog, mlflow_template: Path, tmp_path: Path, store: str
) -> None:
    """``mlflow.start_run(run_id=...)`` appends the resumed steps to the run's values; the
    system metrics MLflow writes next to them are not the code's keys."""
    mlflow = pytest.importorskip("mlflow")
    if store == "file":
        path = tmp_path / "mlruns"
        uri = path.as_uri()
    else:
        path = tmp_path / "mlflow.db"
        uri = sqlite_store(mlflow_template, path)
    every = {f"train/{k}": v for k, v in steps(1, 1)[0][1].items()}
    # What MLflow's system-metrics monitor (log_system_metrics=True) writes into the run.
    every["system/cpu_utilization_percentage"] = 12.5
    (run_id,) = write_runs(uri, {"full": [(1, every)]})
    (short_id,) = write_runs(uri, {"short": [(1, {"train/loss": 0.5})]})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        previous = mlflow.get_tracking_uri()
        mlflow.set_tracking_uri(uri)
        try:
            for first, last in ((2, 7), (5, 11)):  # the job, then its restart from step 4
                with mlflow.start_run(run_id=run_id):
                    for step, metrics in steps(first, last):
                        mlflow.log_metrics({f"train/{k}": v for k, v in metrics.items()}, step=step)
        finally:
            mlflow.set_tracking_uri(previous)
    report = check_file(str(path), run_shapes_catalog, runs=("full",))
    assert kinds(report) == []
    assert notices(report, "backend_metrics")
    tokens = next(r for r in report.rows if r.row.name == "rl.shapes.tokens")
    assert (tokens.logged, tokens.last_value) == (1 + 6 + 7, 1100.0)
    assert missing(check_file(str(path), run_shapes_catalog, runs=(short_id,))) == [
        "train/tokens_total"
    ]
    together = check_file(str(path), run_shapes_catalog)
    assert missing(together) == []
    assert notices(together, "several_runs")


@pytest.mark.parametrize(
    ("folder", "files", "run_id"),
    [
        ("offline-run-20261204_135911-abc123", ["run-abc123.wandb"], "abc123"),
        # wandb's name for a second folder of the run started in the same second
        ("offline-run-20261204_135911-abc123-1", ["run-abc123.wandb"], "abc123"),
        ("run-20261204_135911-my-id", [], "my-id"),  # no file yet: the name's id
        ("odd-folder", [], "odd-folder"),
    ],
)
def test_a_run_folders_id_is_its_run_files(
    tmp_path: Path, folder: str, files: list[str], run_id: str
) -> None:
    path = tmp_path / folder
    path.mkdir()
    for name in files:
        (path / name).write_bytes(b"")
    assert folder_run_id(str(path)) == run_id
