"""live-check reads MLflow's SQLite store read-only, and hostile databases say what is wrong.

The databases are built with ``sqlite3`` in the layout of the tables MLflow 3.18 creates
(``metrics``: key, value, timestamp, run_uuid, step, is_nan; ``runs``; ``experiments``), so
these tests need no MLflow; ``test_live_check_mlflow.py`` reads stores MLflow itself wrote.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import tracemalloc
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.live_check import LiveCheckReport, Record, Source, check_file, current_limits
from codegen.runs.ingest import choose, mlflow_sqlite, read_source

REPO = Path(__file__).resolve().parents[2]
EVOLUTION = REPO / "tests" / "fixtures" / "evolution"


def judged(report: LiveCheckReport) -> tuple[set[tuple[str, str, int]], dict[str, int]]:
    """(kind, prefix/key, count) of every finding, and logged values per logged row."""
    findings = {(f.kind, f.qualified_key, f.count) for f in report.findings}
    return findings, {r.row.name: r.logged for r in report.rows if r.logged}


SCHEMA = """
CREATE TABLE experiments (experiment_id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(256) NOT NULL,
    lifecycle_stage VARCHAR(32));
CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL PRIMARY KEY, name VARCHAR(250),
    lifecycle_stage VARCHAR(20), experiment_id INTEGER);
CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL,
    run_uuid VARCHAR(32) NOT NULL, step BIGINT DEFAULT '0' NOT NULL,
    is_nan BOOLEAN DEFAULT '0' NOT NULL);
"""
"""The columns of MLflow 3.18's tables live-check reads (``mlflow.db`` as MLflow creates it)."""


def make_db(path: Path, rows: list[tuple[str, float, int, int]], run: str = "r1") -> Path:
    """An MLflow-shaped database holding ``(key, value, step, is_nan)`` rows of one run."""
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA)
        db.execute("INSERT INTO experiments VALUES (1, 'grpo', 'active')")
        db.execute("INSERT INTO runs VALUES (?, 'run one', 'active', 1)", (run,))
        db.executemany(
            "INSERT INTO metrics VALUES (?, ?, 0, ?, ?, ?)",
            ((key, value, run, step, is_nan) for key, value, step, is_nan in rows),
        )
    return path


def test_a_database_a_writer_is_using_is_still_read(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    """A job between commits holds a RESERVED lock (its transaction is open): readers go on."""
    db = make_db(tmp_path / "mlflow.db", [("train/loss", 0.5, 1, 0)])
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO metrics VALUES ('train/loss', 0.25, 1, 'r1', 2, 0)")
        report = check_file(str(db), evolution_catalog)
        assert judged(report)[1] == {"rl.policy.loss": 1}  # the committed value only
        writer.execute("COMMIT")
    finally:
        writer.close()


def test_a_database_locked_past_the_timeout_is_abandoned_with_the_reason(
    evolution_catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = make_db(tmp_path / "mlflow.db", [("train/loss", 0.5, 1, 0)])
    monkeypatch.setattr(mlflow_sqlite, "BUSY_TIMEOUT_S", 0.05)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        report = check_file(str(db), evolution_catalog)
    finally:
        writer.close()
    (why,) = report.abandoned
    assert "stayed locked by a writer" in why
    assert "check a copy" in why


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("other", "without MLflow's metrics and runs tables"),
        ("corrupt", "SQLite cannot read it"),
    ],
)
def test_a_database_that_is_not_mlflows_is_abandoned_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, why: str
) -> None:
    db = tmp_path / "x.db"
    if content == "other":
        with sqlite3.connect(db) as made:
            made.execute("CREATE TABLE notes (body TEXT)")
    else:
        db.write_bytes(mlflow_sqlite.HEADER + b"\x10\x00" + os.urandom(4000))
    assert choose(str(db), db.read_bytes()[:64]).name == "mlflow-sqlite"
    assert main(["live-check", str(db), "--root", str(EVOLUTION)]) == 2
    captured = capsys.readouterr()
    assert why in captured.err
    assert why in captured.out


def test_a_huge_table_is_streamed_in_bounded_memory(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    """150,000 values (3 keys x 50,000 steps): a record per step, never the table at once."""
    steps = 50_000
    rows = [
        (key, float(step), step, 0)
        for step in range(steps)
        for key in ("train/loss", "train/reward", "elsewhere/x")
    ]
    db = make_db(tmp_path / "big.db", rows)
    del rows
    tracemalloc.start()
    try:
        report = check_file(str(db), evolution_catalog)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.records == steps
    assert report.lines == 3 * steps
    assert judged(report) == (
        {("undeclared", "elsewhere/x", steps)},
        {"rl.policy.loss": steps, "rl.reward.mean": steps},
    )
    assert peak < 8 * 1024 * 1024  # the rows alone would take tens of MB


def test_one_steps_values_are_one_record_and_a_repeated_key_starts_another(
    tmp_path: Path,
) -> None:
    db = make_db(
        tmp_path / "mlflow.db",
        [("a", 1.0, 1, 0), ("b", 2.0, 1, 0), ("a", 3.0, 1, 0), ("a", 0.0, 2, 1)],
    )
    source = Source(str(db))
    records = [r for r in read_source(source, current_limits()) if isinstance(r, Record)]
    shown = [(r.step, dict(r.metrics), r.line) for r in records]
    assert [(step, m) for step, m, _ in shown[:2]] == [(1, {"a": 1.0}), (1, {"a": 3.0, "b": 2.0})]
    assert shown[2][0] == 2
    assert math.isnan(shown[2][1]["a"])
    assert [line for _, _, line in shown] == [1, 2, 4]
    assert source.lines == 4


def test_a_key_with_control_characters_stays_printable_in_the_reports(
    evolution_catalog: Catalog, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "evil\x1b[2J\rkey\x85"
    db = make_db(tmp_path / "mlflow.db", [(key, 1.0, 1, 0)])
    report = check_file(str(db), evolution_catalog)
    assert [f.key for f in report.findings if f.kind == "undeclared"] == [key]
    text = report.render("text")
    for char in "\x1b\r\x85":
        assert char not in text
    assert "evil\\x1b[2J\\rkey\\x85" in text
    doc = json.loads(report.render("json"))
    assert doc["findings"][0]["key"] == key  # JSON escapes it and keeps it exact


def test_deleted_runs_and_experiments_of_a_database_are_skipped(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    db = make_db(tmp_path / "mlflow.db", [("train/loss", 0.5, 1, 0)])
    with sqlite3.connect(db) as made:
        made.execute("INSERT INTO experiments VALUES (2, 'gone', 'deleted')")
        made.execute("INSERT INTO runs VALUES ('r2', 'deleted run', 'deleted', 1)")
        made.execute("INSERT INTO runs VALUES ('r3', 'in deleted experiment', 'active', 2)")
        made.executemany(
            "INSERT INTO metrics VALUES ('made/up', 1.0, 0, ?, 1, 0)", [("r2",), ("r3",)]
        )
    report = check_file(str(db), evolution_catalog)
    assert report.findings == []
    assert [run.run_id for run in report.inputs[0].runs] == ["r1"]


def test_a_missing_database_named_with_the_format_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.db"
    source = Source(str(missing))
    with pytest.raises(OSError, match="No such file"):
        list(read_source(source, current_limits(), "mlflow-sqlite"))
    assert not missing.exists()


def test_an_idle_wal_database_is_read_without_creating_its_wal_files(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    db = make_db(tmp_path / "mlflow.db", [("train/loss", 0.5, 1, 0)])
    with sqlite3.connect(db) as made:
        made.execute("PRAGMA journal_mode = wal")
    before = sorted(os.listdir(tmp_path))
    report = check_file(str(db), evolution_catalog)
    assert judged(report)[1] == {"rl.policy.loss": 1}
    assert sorted(os.listdir(tmp_path)) == before == ["mlflow.db"]


def test_a_row_mlflow_would_not_write_is_malformed_and_the_rest_is_read(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    db = make_db(tmp_path / "mlflow.db", [("train/loss", 0.5, 1, 0), ("train/loss", 0.25, 3, 0)])
    with sqlite3.connect(db) as made:
        made.execute("INSERT INTO metrics VALUES ('train/loss', 1.0, 0, 'r1', 'two', 0)")
    report = check_file(str(db), evolution_catalog)  # text sorts after numbers: the 3rd row
    assert judged(report) == ({("malformed", "#3", 1)}, {"rl.policy.loss": 2})
    (bad,) = report.findings
    assert "the key must be text and the step an integer" in bad.message()


def test_tables_without_mlflows_columns_are_abandoned_saying_so(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    db = tmp_path / "mlflow.db"
    with sqlite3.connect(db) as made:
        made.execute("CREATE TABLE runs (id TEXT)")
        made.execute("CREATE TABLE metrics (name TEXT)")
    (why,) = check_file(str(db), evolution_catalog).abandoned
    assert "its tables are not MLflow's (no such column" in why
