"""An MLflow file-store run folder: ``mlruns/<experiment>/<run>/metrics/<key path>``.

MLflow's file store keeps one file per metric key under the run's
``metrics/`` folder (a key ``actor/pg_loss`` is the file
``metrics/actor/pg_loss``); each logged value is one line, ``"<timestamp>
<value> <step>"`` (timestamp in milliseconds; files of old MLflow versions
have no step, read as step 0). Keys carry no separate prefix: the checker
splits them against the catalog. The input is the run folder (detected by its
``metrics/`` folder); files are read one at a time, in sorted key order, in
bounded memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import BinaryIO, Final

from ..limits import Limits
from ..records import Malformed, Record, Source
from .jsonl import LineReader

__all__ = ["INGESTER_NAME", "detect", "metric_files", "parse", "read"]

INGESTER_NAME: Final = "mlflow"
_EXPECTED: Final = "an MLflow metric line ('<timestamp> <value> <step>')"


def detect(path: str, head: bytes) -> bool:
    """Whether ``path`` is a run folder of MLflow's file store (it holds ``metrics/``)."""
    del head
    return os.path.isdir(os.path.join(path, "metrics"))


def metric_files(run: str) -> list[tuple[str, str]]:
    """``(key, file)`` of every metric of the run folder, sorted by key; links are not followed."""
    root = os.path.join(run, "metrics")
    found: list[tuple[str, str]] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            key = os.path.relpath(path, root).replace(os.sep, "/")
            found.append((key, path))
    return sorted(found)


def parse(raw: bytes, key: str, path: str, line: int, run: str | None = None) -> Record | str:
    """One metric line as a record of ``key`` (of the run folder ``run``), or why it is not one."""
    try:
        fields = raw.decode("ascii").split()
    except UnicodeDecodeError:
        return "not ASCII text"
    if len(fields) not in (2, 3):
        return f"expected '<timestamp> <value> <step>', got {len(fields)} field(s)"
    try:
        int(fields[0])
        value = float(fields[1])
        step = int(fields[2]) if len(fields) == 3 else 0
    except ValueError:
        return "the timestamp and step must be integers and the value a number"
    return Record(step, "", {key: value}, path, line, split=True, input=run)


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Record | Malformed]:
    """The values of every metric of one run folder, one file open at a time.

    Raises:
        OSError: a metric file cannot be read (``filename`` names it).
    """
    if stream is not None:
        msg = f"{source.path}: the {INGESTER_NAME} format reads a run folder, not a stream"
        raise IsADirectoryError(msg)
    total = 0
    for key, path in metric_files(source.path):
        with open(path, "rb") as metric:
            lines = LineReader(metric, limits)
            for line_no, raw in lines:
                if raw is None:
                    why = f"longer than {limits.max_line_bytes} bytes"
                    yield Malformed(path, line_no, why, expected=_EXPECTED, input=source.path)
                    continue
                if not raw.strip():
                    continue
                parsed = parse(raw, key, path, line_no, source.path)
                if isinstance(parsed, str):
                    yield Malformed(path, line_no, parsed, expected=_EXPECTED, input=source.path)
                else:
                    yield parsed
            total += lines.line
            source.lines = total
            if lines.abandoned is not None:
                yield Malformed(
                    path, lines.line, lines.abandoned, True, _EXPECTED, input=source.path
                )
