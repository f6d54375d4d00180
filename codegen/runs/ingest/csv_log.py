"""CSV metric logs: a header of key names with a ``step`` column, then one row per call.

Lightning's ``CSVLogger`` (``lightning.fabric.loggers.csv_logs._ExperimentWriter``)
writes ``<save_dir>/<name>/version_<n>/metrics.csv`` with the standard library's
``csv.DictWriter``: the header is every key logged so far, in first-logged order, with
``step`` among them; each row is one ``log_metrics`` call, a cell per key it logged and
empty cells for the rest (the file is rewritten with a wider header when a new key
appears). Its ``hparams.yaml`` beside it (``log_hyperparams``) is the run's configuration.
Any CSV of that shape reads the same: the Trainer's ``epoch`` is a key like the others.

A key carries no separate prefix: the checker splits it against the catalog. Detected for
a file named ``*.csv`` or whose first line is a header naming ``step``, and for a folder
holding ``metrics.csv`` (a Lightning version folder) or version folders up to two levels
below it (``lightning_logs/``: each version folder one run); ``--input-format csv`` forces it.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator, Mapping
from typing import BinaryIO, Final

import yaml

from ...safe_fs import open_input, read_input
from ...safe_yaml import YamlBombError, load_bounded
from ..limits import Limits
from ..records import Item, Note, Record, RunConfig, RunInfo, Source
from ._params import param_value
from .jsonl import first_line, read_lines

__all__ = ["INGESTER_NAME", "METRICS_FILE", "detect", "read", "run_folders"]

INGESTER_NAME: Final = "csv"
METRICS_FILE: Final = "metrics.csv"
HPARAMS_FILE: Final = "hparams.yaml"
STEP_COLUMN: Final = "step"
MAX_RUN_FOLDERS: Final = 10_000
"""Most folders a log root is searched through for version folders."""
MAX_HPARAMS_BYTES: Final = 1024 * 1024
"""A larger ``hparams.yaml`` is not read as the configuration (it is noted instead)."""
_EXPECTED: Final = "a CSV row (one cell per header column)"


def _cells(text: str) -> list[str] | None:
    """One CSV line's cells (``None``: not one well-formed line)."""
    try:
        rows = list(csv.reader([text.rstrip("\r\n")], strict=True))
    except csv.Error:
        return None
    return rows[0] if len(rows) == 1 else None


def run_folders(folder: str) -> list[str]:
    """The folders holding ``metrics.csv``: ``folder`` itself (a version folder), else its
    subfolders two levels down at most (``lightning_logs/version_<n>``, ``<save_dir>/<name>/
    version_<n>``), sorted; links are not followed, and at most :data:`MAX_RUN_FOLDERS`."""
    if os.path.isfile(os.path.join(folder, METRICS_FILE)):
        return [folder]
    found: list[str] = []
    level = [folder]
    for _ in range(2):
        below: list[str] = []
        for parent in level:
            try:
                entries = sorted(os.scandir(parent), key=lambda entry: entry.name)
            except OSError:
                continue
            for entry in entries:
                if not entry.is_dir(follow_symlinks=False):
                    continue
                if os.path.isfile(os.path.join(entry.path, METRICS_FILE)):
                    found.append(entry.path)
                else:
                    below.append(entry.path)
                if len(found) + len(below) >= MAX_RUN_FOLDERS:
                    return sorted(found)
        level = below
    return sorted(found)


def detect(path: str, head: bytes) -> bool:
    """A ``*.csv`` file or a CSV header naming ``step``; a folder of version folders."""
    if not head:
        return os.path.isdir(path) and bool(run_folders(path))
    if path.endswith(".csv"):
        return True
    first = first_line(head)
    if first is None or first.lstrip().startswith((b"{", b"[", b"#")):
        return False
    header = _cells(first.decode("utf-8", "replace"))
    return header is not None and len(header) > 1 and STEP_COLUMN in header


class _Rows:
    """Parses a CSV log line by line: the first line is the header, each next one a row."""

    def __init__(self, run: str | None = None) -> None:
        self.header: list[str] | None = None
        self.step_at = -1
        self.run = run
        """The run folder the rows belong to (their worker), when one of several."""

    def parse(self, raw: bytes, path: str, line: int) -> Item | list[Item] | str:
        text = raw.decode("utf-8", "replace")
        cells = _cells(text)
        if cells is None:
            return "not one CSV line (an unclosed quote, or a quoted line break)"
        if self.header is None:
            if STEP_COLUMN not in cells:
                return f"the header names no {STEP_COLUMN!r} column (the step of each row)"
            if len(set(cells)) != len(cells):
                return "the header names a column twice"
            self.header, self.step_at = cells, cells.index(STEP_COLUMN)
            return []
        if len(cells) != len(self.header):
            return f"{len(cells)} cell(s) for a header of {len(self.header)} column(s)"
        step = param_value(cells[self.step_at])
        if isinstance(step, float) and step.is_integer():
            step = int(step)  # a pandas round trip writes 3.0
        if isinstance(step, bool) or not isinstance(step, int):
            return f"the {STEP_COLUMN!r} cell {cells[self.step_at]!r} is not an integer"
        metrics = {
            key: param_value(cell)
            for at, (key, cell) in enumerate(zip(self.header, cells, strict=True))
            if at != self.step_at and cell != ""
        }
        return Record(step, "", metrics, path, line, split=True, input=self.run)


def _hparams(folder: str) -> Iterator[Item]:
    """``hparams.yaml`` beside ``metrics.csv`` as the run's configuration, if it is one.

    A file that is not plain YAML (Lightning dumps some values with Python tags, such as
    ``!!python/tuple``) or too large is noted and left out: information, not a finding.
    """
    path = os.path.join(folder, HPARAMS_FILE)
    if not os.path.lexists(path):
        return
    try:
        data = read_input(path, MAX_HPARAMS_BYTES, root=folder)
    except OSError as exc:
        text = exc.strerror or str(exc)
        why = f"it {text}" if text.startswith(("is ", "resolves ")) else f"unreadable ({text})"
        yield Note("unread_config", _unread(path, why), path, 0)
        return
    try:
        loaded = load_bounded(data.decode("utf-8"))
    except YamlBombError as exc:
        yield Note("unread_config", _unread(path, f"it is refused: {exc}"), path, 1)
        return
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        yield Note("unread_config", _unread(path, f"it is not plain YAML ({exc})"), path, 1)
        return
    if isinstance(loaded, Mapping) and loaded:
        config = {str(key): value for key, value in loaded.items()}
        yield RunConfig(config, path, 1, run=folder, input=folder)


def _unread(path: str, why: str) -> str:
    return (
        f"{path} was not read as the run's configuration: {why}; rows whose condition "
        "names config.<path> are judged as for a run that logged none (pass --run-config "
        "with a plain YAML or JSON copy)"
    )


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Item]:
    """The rows of a CSV log, or of each version folder's ``metrics.csv`` (each one run).

    Raises:
        OSError: a file cannot be opened (``filename`` names it).
    """
    if stream is not None:
        yield from read_lines(source, stream, limits, _Rows().parse, _EXPECTED)
        return
    lines = 0
    for folder in run_folders(source.path):
        relative = os.path.relpath(folder, source.path)
        name = os.path.basename(os.path.normpath(folder)) if relative == os.curdir else relative
        run = RunInfo(folder, name.replace(os.sep, "/"))
        if not source.wants(run):
            continue
        source.runs.append(run)
        yield from _hparams(folder)
        inner = Source(os.path.join(folder, METRICS_FILE))
        inner.format = source.format
        with open_input(inner.path, root=source.path) as handle:
            yield from read_lines(inner, handle, limits, _Rows(folder).parse, _EXPECTED)
        lines += inner.lines
    source.lines = lines
