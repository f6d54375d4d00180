"""MLflow's file store: a run folder, an experiment folder or the whole ``mlruns/`` root.

MLflow's file store keeps one file per metric key under the run's
``metrics/`` folder (a key ``actor/pg_loss`` is the file
``metrics/actor/pg_loss``); each logged value is one line, ``"<timestamp>
<value> <step>"`` (timestamp in milliseconds; files of old MLflow versions
have no step, read as step 0; a value logged with a dataset has the dataset's
name and digest after the step). MLflow ends every line with a line break, so
a last line without one was cut short (a job killed mid-write, or one writing
it now): it is an ``incomplete_record`` notice, not read. MLflow writes a NaN as ``nan`` and the
infinities as ``inf`` and ``-inf``; a key keeps its spaces, ``:`` and ``.``
(MLflow's metric-name rule allows them) and its ``/`` becomes a sub-folder.
Keys carry no separate prefix: the checker splits them against the catalog.
MLflow's own system metrics (``mlflow.start_run(log_system_metrics=True)``:
``system/cpu_utilization_percentage``, ...) sit next to them: one no row declares
is not ``undeclared`` (the training code did not log it), only counted in a
``backend_metrics`` notice.

The input may be:

- a run folder (``mlruns/<experiment id>/<run id>``, detected by its ``metrics/``
  folder): read as it is, even when its ``meta.yaml`` says it was deleted;
- an experiment folder (``meta.yaml`` with an ``experiment_id``) or the store's
  root (``mlruns/``, whose folders are experiments): every run in it, each its
  own input (a worker of the check), in folder-name order. ``.trash`` (deleted
  experiments), folders holding only a ``meta.yaml`` (an experiment without
  runs), and runs or experiments whose ``meta.yaml`` says ``lifecycle_stage:
  deleted`` are skipped.

The run's params (``params/<key path>``, one file per key holding ``str(value)``) are
its configuration, for conditions over ``config.<path>`` (see :mod:`._params`: the
keys Lightning's ``MLFlowLogger.log_hyperparams`` flattened with ``/`` are nested
again, and ``"True"``, ``"None"``, ``"0.01"`` read back as a bool, null and number).

Files are read one at a time, in sorted key order, in bounded memory. MLflow 3
refuses to write this store unless ``MLFLOW_ALLOW_FILE_STORE=true`` (its
default is now a SQLite database, read by :mod:`.mlflow_sqlite`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import BinaryIO, Final

from ...safe_fs import open_input
from ..limits import Limits
from ..records import Item, Malformed, Note, Record, RunConfig, RunInfo, Source
from ._params import MAX_PARAM_BYTES, MAX_PARAMS, configuration
from .jsonl import LineReader

__all__ = [
    "INGESTER_NAME",
    "SYSTEM_PREFIX",
    "detect",
    "metric_files",
    "params",
    "parse",
    "read",
    "read_meta",
    "run_folders",
]

INGESTER_NAME: Final = "mlflow"
_EXPECTED: Final = "an MLflow metric line ('<timestamp> <value> <step>')"
SYSTEM_PREFIX: Final = "system/"
"""Where MLflow's system-metrics monitor (``log_system_metrics=True``) writes its keys
(``system/cpu_utilization_percentage``, ``system/gpu_0_memory_usage_megabytes``), in the
run's metrics next to the training code's."""
_META: Final = "meta.yaml"
_TRASH: Final = ".trash"
_META_BYTES: Final = 64 * 1024
"""A meta.yaml is a few hundred bytes; more is not MLflow's (read no further)."""


def read_meta(folder: str) -> dict[str, str]:
    """The top-level ``key: value`` scalars of ``folder/meta.yaml`` (empty when unreadable).

    MLflow writes these files with flat scalar keys (``run_id``, ``run_name``,
    ``experiment_id``, ``name``, ``lifecycle_stage``); quotes around a value are
    removed. Only the first 64 KiB are read.
    """
    path = os.path.join(folder, _META)
    if os.path.islink(path) or not os.path.isfile(path):
        return {}
    try:
        with open_input(path) as meta:
            text = meta.read(_META_BYTES).decode("utf-8", "replace")
    except OSError:
        return {}
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in " \t-#" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        found[key.strip()] = value
    return found


def _is_run(path: str) -> bool:
    return os.path.isdir(os.path.join(path, "metrics"))


def _is_experiment(path: str) -> bool:
    return not _is_run(path) and "experiment_id" in read_meta(path)


def _deleted(folder: str) -> bool:
    return read_meta(folder).get("lifecycle_stage") == "deleted"


def _children(folder: str) -> list[str]:
    """Sub-folders of ``folder`` (not links, not ``.trash``), sorted by name."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    paths = (os.path.join(folder, name) for name in names if name != _TRASH)
    return [p for p in paths if os.path.isdir(p) and not os.path.islink(p)]


def _runs_of(experiment: str) -> list[str]:
    return [p for p in _children(experiment) if _is_run(p) and not _deleted(p)]


def run_folders(path: str) -> list[str] | None:
    """The run folders ``path`` stands for, or ``None`` when it is no part of a file store.

    A run folder stands for itself; an experiment folder for its runs; the
    store's root for the runs of its experiments (see the module docstring for
    what is skipped). An experiment or root without runs gives ``[]``.
    """
    if _is_run(path):
        return [path]
    if _is_experiment(path):
        return [] if _deleted(path) else _runs_of(path)
    experiments = [p for p in _children(path) if _is_experiment(p)]
    if not experiments and not os.path.isdir(os.path.join(path, _TRASH)):
        return None
    return [run for e in experiments if not _deleted(e) for run in _runs_of(e)]


def detect(path: str, head: bytes) -> bool:
    """Whether ``path`` is a run folder, an experiment folder or the root of a file store."""
    del head
    return os.path.isdir(path) and run_folders(path) is not None


def _member_folder(run: str, name: str) -> str | None:
    """``run/name`` when it is a real folder of the run (not a link out of the store)."""
    root = os.path.join(run, name)
    if os.path.islink(root) or not os.path.isdir(root):
        return None
    return root


def metric_files(run: str) -> list[tuple[str, str]]:
    """``(key, file)`` of every metric of the run folder, sorted by key; links are not
    followed (a ``metrics`` folder that is a link is not read)."""
    root = _member_folder(run, "metrics")
    found: list[tuple[str, str]] = []
    for folder, dirs, files in os.walk(root) if root is not None else ():
        dirs.sort()
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            key = os.path.relpath(path, root).replace(os.sep, "/")
            found.append((key, path))
    return sorted(found)


def params(run: str) -> list[tuple[str, str]]:
    """``(key, value)`` of the run folder's params, sorted by key (at most
    :data:`~._params.MAX_PARAMS`, each value's first :data:`~._params.MAX_PARAM_BYTES`);
    unreadable files and links are skipped."""
    root = _member_folder(run, "params")
    found: list[tuple[str, str]] = []
    for folder, dirs, files in os.walk(root) if root is not None else ():
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            if len(found) >= MAX_PARAMS or os.path.islink(path) or not os.path.isfile(path):
                continue
            try:
                with open_input(path, root=root) as param:
                    value = param.read(MAX_PARAM_BYTES).decode("utf-8", "replace")
            except OSError:
                continue
            found.append((os.path.relpath(path, root).replace(os.sep, "/"), value))
    return sorted(found)


def parse(raw: bytes, key: str, path: str, line: int, run: str | None = None) -> Record | str:
    """One metric line as a record of ``key`` (of the run folder ``run``), or why it is not one."""
    try:
        fields = raw.decode("ascii").split()
    except UnicodeDecodeError:
        return "not ASCII text"
    if len(fields) not in (2, 3) and len(fields) < 5:
        return (
            "expected '<timestamp> <value> <step>' (or with a dataset's name and digest "
            f"after), got {len(fields)} field(s)"
        )
    try:
        int(fields[0])
        value = float(fields[1])  # MLflow writes NaN as "nan", the infinities as "inf", "-inf"
        # A value logged with a dataset has its name and digest after the step (MLflow's
        # own reader then says step 0; the step written is the one logged).
        step = int(fields[2]) if len(fields) >= 3 else 0
    except ValueError:
        return "the timestamp and step must be integers and the value a number"
    return Record(
        step, "", {key: value}, path, line, split=True, input=run, backend_prefix=SYSTEM_PREFIX
    )


def _torn(path: str, line: int, raw: bytes) -> str:
    return (
        f"{path}: the last line (line {line}, {len(raw)} bytes) ends without the line break "
        "MLflow writes after every value: the job was killed while writing it, or is still "
        "writing it; it was not read (its step may be cut short), the lines before it were"
    )


def _run_info(run: str) -> RunInfo:
    meta = read_meta(run)
    experiment = read_meta(os.path.dirname(os.path.normpath(run)))
    return RunInfo(
        run,
        meta.get("run_id") or os.path.basename(os.path.normpath(run)),
        meta.get("run_name") or None,
        experiment.get("name") or meta.get("experiment_id") or None,
    )


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Item]:
    """Every run's configuration (its params), then the values of each of its metrics,
    one file open at a time.

    Raises:
        OSError: a metric file cannot be read (``filename`` names it).
    """
    if stream is not None:
        msg = f"{source.path}: the {INGESTER_NAME} format reads a run folder, not a stream"
        raise IsADirectoryError(msg)
    total = 0
    for run in run_folders(source.path) or ():
        info = _run_info(run)
        if not source.wants(info):
            continue
        source.runs.append(info)
        logged = params(run)
        if logged:
            params_path = os.path.join(run, "params")
            yield RunConfig(configuration(logged), params_path, 0, run=info.run_id, input=run)
        for key, path in metric_files(run):
            with open_input(path, root=source.path) as metric:
                lines = LineReader(metric, limits)
                for line_no, raw in lines:
                    if raw is None:
                        why = f"longer than {limits.max_line_bytes} bytes"
                        yield Malformed(path, line_no, why, expected=_EXPECTED, input=run)
                        continue
                    if not raw.strip():
                        continue
                    if not raw.endswith(b"\n"):
                        # MLflow ends every line it appends with one: the job was killed
                        # while writing this one, or is writing it now.
                        yield Note("incomplete_record", _torn(path, line_no, raw), path, line_no)
                        continue
                    parsed = parse(raw, key, path, line_no, run)
                    if isinstance(parsed, str):
                        yield Malformed(path, line_no, parsed, expected=_EXPECTED, input=run)
                    else:
                        yield parsed
                total += lines.line
                source.lines = total
                if lines.abandoned is not None:
                    yield Malformed(path, lines.line, lines.abandoned, True, _EXPECTED, input=run)
