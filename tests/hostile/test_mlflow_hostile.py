"""MLflow stores as an attacker writes them: links out of the store, a WAL database left
without its shared-memory file, numbers past Python's digits limit, keys of millions of
characters.

What an attacker controls: every entry of a file store (``meta.yaml``, ``metrics/``,
``params/``, each a file, a folder or a symlink), and every row and column of an
``mlflow.db`` (a generated column can make a 20 KB file hold 20-million-character keys).
Each run is a child process bounded by a deadline and 300 MiB of peak RSS.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from codegen.runs.ingest import mlflow
from tests.hostile_runs import REPO, run_cli

EVOLUTION = REPO / "tests" / "fixtures" / "evolution"
MEMORY_MIB = 300


def file_store(root: Path) -> Path:
    """``root/mlruns`` with experiment 0 and its run ``run1``; returns the run folder."""
    run = root / "mlruns" / "0" / "run1"
    run.mkdir(parents=True)
    (root / "mlruns" / "0" / "meta.yaml").write_text('experiment_id: "0"\nname: exp\n')
    (run / "meta.yaml").write_text("run_id: run1\n")
    return run


def test_a_metrics_folder_linked_outside_the_store_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "SECRET_TOKEN").write_text("1700000000000 42.0 1\n")
    run = file_store(tmp_path)
    (run / "metrics").symlink_to(secret)

    done = run_cli(
        "live-check", "--root", str(EVOLUTION), "--format", "json", str(run), tmp=tmp_path
    )

    assert "SECRET_TOKEN" not in done.stdout + done.stderr
    assert done.peak_mib < MEMORY_MIB


def test_a_params_folder_linked_outside_the_store_gives_no_configuration(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "PARAM_SECRET").write_text("leaked_value\n")
    run = file_store(tmp_path)
    (run / "metrics").mkdir()
    (run / "params").symlink_to(secret)

    assert mlflow.params(str(run)) == []


def test_a_metric_file_linked_outside_the_store_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("1700000000000 42.0 1\n")
    run = file_store(tmp_path)
    (run / "metrics").mkdir()
    (run / "metrics" / "leak").symlink_to(tmp_path / "secret")

    assert mlflow.metric_files(str(run)) == []


def sqlite_store(path: Path, *, wal: bool = False, param: str = "1") -> None:
    """A minimal MLflow-shaped ``mlflow.db`` (with its ``-wal`` left beside it, no ``-shm``)."""
    build = path.parent / "build"
    build.mkdir()
    connection = sqlite3.connect(build / "mlflow.db")
    if wal:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA wal_autocheckpoint=0")
    connection.executescript(
        """
        CREATE TABLE experiments(experiment_id INTEGER PRIMARY KEY, name TEXT,
            lifecycle_stage TEXT);
        CREATE TABLE runs(run_uuid TEXT PRIMARY KEY, name TEXT, experiment_id INTEGER,
            lifecycle_stage TEXT);
        CREATE TABLE metrics(key TEXT, value REAL, timestamp INTEGER, run_uuid TEXT,
            step INTEGER, is_nan INTEGER);
        CREATE TABLE params(key TEXT, value TEXT, run_uuid TEXT);
        INSERT INTO experiments VALUES (0, 'Default', 'active');
        INSERT INTO runs VALUES ('r1', 'run', 0, 'active');
        INSERT INTO metrics VALUES ('loss', 1.0, 1, 'r1', 1, 0);
        """
    )
    connection.execute("INSERT INTO params VALUES ('lr', ?, 'r1')", (param,))
    connection.commit()
    shutil.copy(build / "mlflow.db", path)
    if wal:  # copied while the writer holds it: the database and its -wal, no -shm
        shutil.copy(build / "mlflow.db-wal", f"{path}-wal")
    connection.close()
    shutil.rmtree(build)


def test_a_wal_database_without_its_shm_file_gets_no_file_created_beside_it(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    sqlite_store(store / "mlflow.db", wal=True)
    before = sorted(p.name for p in store.iterdir())
    assert before == ["mlflow.db", "mlflow.db-wal"]

    done = run_cli("live-check", "--root", str(EVOLUTION), str(store / "mlflow.db"), tmp=tmp_path)

    assert sorted(p.name for p in store.iterdir()) == before
    assert "its -wal file was not read" in done.stderr + done.stdout
    assert done.peak_mib < MEMORY_MIB


def test_a_param_of_5000_digits_is_kept_as_text_without_a_traceback(tmp_path: Path) -> None:
    sqlite_store(tmp_path / "mlflow.db", param="9" * 5000)

    done = run_cli(
        "live-check",
        "--root",
        str(EVOLUTION),
        "--format",
        "json",
        str(tmp_path / "mlflow.db"),
        tmp=tmp_path,
    )

    assert done.code in (0, 1), done.stderr
    assert json.loads(done.stdout)["records"] == 1


@pytest.mark.integration
def test_keys_of_20_million_characters_give_a_small_report_in_bounded_memory(
    tmp_path: Path,
) -> None:
    db = tmp_path / "mlflow.db"
    connection = sqlite3.connect(db)
    connection.executescript(
        """
        CREATE TABLE experiments(experiment_id INTEGER PRIMARY KEY, name TEXT,
            lifecycle_stage TEXT);
        CREATE TABLE runs(run_uuid TEXT PRIMARY KEY, name TEXT, experiment_id INTEGER,
            lifecycle_stage TEXT);
        CREATE TABLE metrics(seed INTEGER,
            key TEXT GENERATED ALWAYS AS (printf('%.*c', 20000000, 'k') || seed) VIRTUAL,
            value REAL, timestamp INTEGER, run_uuid TEXT, step INTEGER, is_nan INTEGER);
        INSERT INTO experiments VALUES (0, 'Default', 'active');
        INSERT INTO runs VALUES ('r1', 'run', 0, 'active');
        INSERT INTO metrics(seed, value, timestamp, run_uuid, step, is_nan)
            VALUES (0, 1.0, 1, 'r1', 0, 0), (1, 1.0, 1, 'r1', 1, 0), (2, 1.0, 1, 'r1', 2, 0);
        """
    )
    connection.commit()
    connection.close()
    assert db.stat().st_size < 1024 * 1024

    done = run_cli("live-check", "--root", str(EVOLUTION), str(db), tmp=tmp_path, deadline=120)

    assert len(done.stdout.encode()) < 1024 * 1024  # the docs promise a report under 1 MB
    assert "is over 4096 characters" in done.stdout
    assert done.peak_mib < 200  # bound: 200 MiB (it took 261 MiB and wrote 60 MB before)
