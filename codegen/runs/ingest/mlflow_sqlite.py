"""MLflow's SQLite tracking store (``mlflow.db``, MLflow 3's default backend).

MLflow 3 writes runs to a SQLite database by default (``sqlite:///mlflow.db``;
its file store is in maintenance mode). Its ``metrics`` table holds one row per
logged value: ``(key, value, timestamp, run_uuid, step, is_nan)``; ``runs``
names each run (``run_uuid``, ``name``, ``experiment_id``,
``lifecycle_stage``) and ``experiments`` each experiment. MLflow stores a NaN
as ``value = 0`` with ``is_nan = 1`` and an infinity as the largest double
(``±1.7976931348623157e308``, as SQL has no infinity): both are read back as
what was logged (a NaN, an infinity). Keys carry no separate prefix: the
checker splits them against the catalog; MLflow's own system metrics (``system/...``)
that no row declares are counted, not ``undeclared`` (see :mod:`.mlflow`).

Detected by the SQLite file header; a SQLite file without MLflow's ``metrics``
and ``runs`` tables, or one SQLite cannot read (corrupt, encrypted), is
abandoned with a message saying so. Every run that is not deleted (neither it
nor its experiment has ``lifecycle_stage = 'deleted'``) is its own input (a
worker of the check), in run-id order; its values are streamed ordered by
step, then timestamp, one run's query at a time, in bounded memory, and the
values of one step are one record (like one ``log_metrics`` call). The run's
``params`` rows are its configuration (see :mod:`._params`), as in the file store.

The database is opened read-only (``mode=ro``): nothing is written and no
journal is created (a WAL-mode database missing its ``-wal`` or ``-shm`` file, which no
writer has open, is opened ``immutable``, since even a read-only open would
create them). A database a running job is writing to stays readable
(a write locks it only while committing); when it stays locked longer than
:data:`BUSY_TIMEOUT_S` the input is abandoned with a message saying so.
"""

from __future__ import annotations

import math
import os
import sqlite3
import urllib.parse
from collections.abc import Iterator
from contextlib import closing
from typing import BinaryIO, Final

from ...safe_fs import open_input
from ..limits import Limits
from ..records import Malformed, Record, RunConfig, RunInfo, Source
from ._params import MAX_PARAM_BYTES, MAX_PARAMS, configuration
from .mlflow import SYSTEM_PREFIX

__all__ = [
    "BUSY_TIMEOUT_S",
    "HEADER",
    "INGESTER_NAME",
    "MAX_KEY_CHARS",
    "MAX_STEP_KEYS",
    "detect",
    "read",
]

INGESTER_NAME: Final = "mlflow-sqlite"
HEADER: Final = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

BUSY_TIMEOUT_S: Final = 10.0
"""How long a read waits for a writer's lock before the input is abandoned."""

MAX_STEP_KEYS: Final = 10_000
"""Most keys one record holds: a step with more is split into several records."""

_EXPECTED: Final = "an MLflow tracking database (the metrics and runs tables of mlflow.db)"
_ROW: Final = "an MLflow metric row (a text key, a numeric value, an integer step)"
_LARGEST: Final = 1.7976931348623157e308
_RUNS: Final = (
    "SELECT r.run_uuid, r.name, e.name FROM runs AS r "
    "LEFT JOIN experiments AS e ON e.experiment_id = r.experiment_id "
    "WHERE coalesce(r.lifecycle_stage, 'active') != 'deleted' "
    "AND coalesce(e.lifecycle_stage, 'active') != 'deleted' ORDER BY r.run_uuid"
)
_RUNS_NO_EXPERIMENTS: Final = (
    "SELECT run_uuid, name, NULL FROM runs "
    "WHERE coalesce(lifecycle_stage, 'active') != 'deleted' ORDER BY run_uuid"
)
MAX_KEY_CHARS: Final = 4096
"""Longest metric key read (MLflow itself stores at most 250 characters); a longer one
is reported malformed with its start, and only its first characters ever leave SQLite
(a generated column can make a 1 MB file hold keys of millions of characters)."""

_METRICS: Final = (
    f"SELECT substr(key, 1, {MAX_KEY_CHARS + 1}), value, step, is_nan FROM metrics "
    f"WHERE run_uuid = ? ORDER BY step, timestamp, substr(key, 1, {MAX_KEY_CHARS + 1}), value"
)


def detect(path: str, head: bytes) -> bool:
    """Whether the input is a SQLite database (its tables are checked when it is read)."""
    del path
    return head.startswith(HEADER)


def _idle_wal(path: str) -> bool:
    """Whether ``path`` is a WAL-mode database lacking its ``-wal`` or its ``-shm`` file.

    Opening such a database, even read-only, creates the missing one beside the
    user's file (a ``-wal`` left without its ``-shm`` by a killed job included); it
    is opened ``immutable`` instead: nothing is created, and no writer is running
    (a live writer keeps both files).
    """
    try:
        with open_input(path) as db:
            header = db.read(20)
    except OSError:
        return False
    if header[18:20] != b"\x02\x02":
        return False
    return not (os.path.exists(path + "-wal") and os.path.exists(path + "-shm"))


def _connect(path: str) -> sqlite3.Connection:
    """``path`` opened read-only: no write, no journal, no database created when missing."""
    mode = "mode=ro&immutable=1" if _idle_wal(path) else "mode=ro"
    uri = "file:" + urllib.parse.quote(path) + "?" + mode
    connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)
    connection.execute("PRAGMA query_only = ON")
    return connection


def value_of(value: object, is_nan: object) -> object:
    """The value MLflow was given: NaN for ``is_nan``, an infinity for the stored largest double."""
    if is_nan:
        return math.nan
    if isinstance(value, float) and abs(value) == _LARGEST:
        return math.copysign(math.inf, value)
    return value


def _why(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return (
            f"the database stayed locked by a writer for over {BUSY_TIMEOUT_S:g} s ({text}); "
            "check it again when the job that writes it is between steps, or check a copy"
        )
    if "no such column" in text:
        return (
            f"its tables are not MLflow's ({text}); pass the mlflow.db an MLflow tracking URI "
            "(sqlite:///...) names"
        )
    return f"SQLite cannot read it ({text}): a corrupt, truncated or encrypted database?"


def _tables(connection: sqlite3.Connection) -> set[str]:
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {str(name) for (name,) in rows}


def _runs(connection: sqlite3.Connection, path: str, tables: set[str]) -> list[RunInfo]:
    query = _RUNS if "experiments" in tables else _RUNS_NO_EXPERIMENTS
    runs = []
    for run_id, name, experiment in connection.execute(query):
        named = f" {name!r}" if name else ""
        label = f"{path} run{named} ({run_id})"
        if experiment is not None:
            label += f" in experiment {experiment!r}"
        runs.append(
            RunInfo(
                label,
                str(run_id),
                None if name is None else str(name),
                None if experiment is None else str(experiment),
            )
        )
    return runs


_PARAMS: Final = (
    f"SELECT substr(key, 1, {MAX_KEY_CHARS}), substr(value, 1, {MAX_PARAM_BYTES}) FROM params "
    f"WHERE run_uuid = ? ORDER BY substr(key, 1, {MAX_KEY_CHARS}) LIMIT {MAX_PARAMS}"
)


def _params(connection: sqlite3.Connection, run: RunInfo) -> list[tuple[str, str]]:
    """``(key, value)`` of the run's params (text rows only; others are not MLflow's)."""
    with closing(connection.execute(_PARAMS, (run.run_id,))) as cursor:
        return [(k, v) for k, v in cursor if isinstance(k, str) and isinstance(v, str)]


def _values(
    connection: sqlite3.Connection, source: Source, run: RunInfo
) -> Iterator[Record | Malformed]:
    """The values of one run, one record per step (split past :data:`MAX_STEP_KEYS` keys).

    A record's ``line`` is the number of its first row among the rows read from
    the database; ``source.lines`` counts them. A row whose key is not text or
    whose step is not an integer (not a database MLflow wrote) is malformed.
    """
    path = source.path
    metrics: dict[str, object] = {}
    step = line = 0
    with closing(connection.execute(_METRICS, (run.run_id,))) as cursor:
        for key, value, at, is_nan in cursor:
            source.lines += 1
            if not isinstance(key, str) or type(at) is not int:
                shown = repr(key)[:100]
                why = f"key {shown} at step {at!r}: the key must be text and the step an integer"
                yield Malformed(path, source.lines, why, expected=_ROW, input=run.input)
                continue
            if len(key) > MAX_KEY_CHARS:
                why = (
                    f"key {key[:80]!r}... is over {MAX_KEY_CHARS} characters (MLflow stores "
                    "at most 250); not read"
                )
                yield Malformed(path, source.lines, why, expected=_ROW, input=run.input)
                continue
            name = key
            if metrics and (at != step or name in metrics or len(metrics) >= MAX_STEP_KEYS):
                yield Record(
                    step,
                    "",
                    metrics,
                    path,
                    line,
                    split=True,
                    input=run.input,
                    backend_prefix=SYSTEM_PREFIX,
                )
                metrics = {}
            if not metrics:
                step, line = at, source.lines
            metrics[name] = value_of(value, is_nan)
    if metrics:
        yield Record(
            step, "", metrics, path, line, split=True, input=run.input, backend_prefix=SYSTEM_PREFIX
        )


def read(
    source: Source, stream: BinaryIO | None, limits: Limits
) -> Iterator[Record | RunConfig | Malformed]:
    """Every run's configuration (its params) and values, run by run; ``line`` counts the
    metric rows read.

    A database SQLite cannot read, or that holds no MLflow tables, is
    abandoned (a fatal :class:`~codegen.runs.records.Malformed` saying why).
    """
    del limits
    path = source.path
    if stream is not None and getattr(stream, "name", None) != path:
        msg = f"{path}: the {INGESTER_NAME} format reads a database file, not a stream"
        raise IsADirectoryError(msg)
    try:
        with closing(_connect(path)) as connection:
            tables = _tables(connection)
            if not {"metrics", "runs"} <= tables:
                why = (
                    "a SQLite database without MLflow's metrics and runs tables; pass the "
                    "mlflow.db an MLflow tracking URI (sqlite:///...) names"
                )
                if os.path.exists(path + "-wal") and not os.path.exists(path + "-shm"):
                    why += (
                        " (its -wal file was not read: reading it would create a -shm file "
                        "beside it; open the database once with sqlite3 to fold it in, or "
                        "check a copy)"
                    )
                yield Malformed(path, 0, why, fatal=True, expected=_EXPECTED)
                return
            for run in _runs(connection, path, tables):
                if not source.wants(run):
                    continue
                source.runs.append(run)
                logged = _params(connection, run) if "params" in tables else []
                if logged:
                    yield RunConfig(configuration(logged), path, 0, run=run.run_id, input=run.input)
                yield from _values(connection, source, run)
    except sqlite3.Error as exc:
        yield Malformed(path, source.lines, _why(exc), fatal=True, expected=_EXPECTED)
