"""Ingesters: one module per input format, each turning an input into records.

An ingester is an :class:`Ingester`: a ``name`` (what ``--input-format``
takes), a ``detect(path, head)`` hook (``head``: the input's first bytes,
through its first non-blank line for a file, empty for a folder) and a
``read(source, stream, limits)`` generator yielding
:class:`~codegen.runs.records.Record` and
:class:`~codegen.runs.records.Malformed` items with their positions.
:func:`read_source` picks the ingester (the one named, else the first
registered whose ``detect`` says yes; ``jsonl`` is the default) and reads one
input with at most one file open.

Adding an input format:

1. write ``codegen/runs/ingest/<format>.py`` with ``detect`` and
   ``read`` functions (see :mod:`.jsonl`), yielding records with their
   source positions;
2. add it to :data:`_BUILTIN` below (after ``jsonl``, which accepts anything and
   so is tried last).

Nothing else changes: the judges, the report and the CLI's
``--input-format`` choices read the registry.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Final

from ...safe_fs import open_input
from ..limits import Limits
from ..records import Item, Source
from . import (
    csv_log,
    flat,
    jsonl,
    mlflow,
    mlflow_sqlite,
    otlp,
    prometheus,
    tensorboard,
    trainer_state,
    wandb_run,
)

__all__ = [
    "HEAD_BYTES",
    "INGESTERS",
    "Ingester",
    "choose",
    "read_source",
    "register",
]

HEAD_BYTES: Final = 4096
"""Bytes of a file's start ``detect`` sees (peeked, not consumed: stdin works too)."""

_HEAD_CHUNK: Final = 64 * 1024
"""How much more of a file is read while its first record is longer than the head."""


def _has_whole_line(head: bytes) -> bool:
    """Whether ``head`` holds a whole non-blank line (one a line-based ``detect`` can parse)."""
    return any(line.strip() and line.endswith(b"\n") for line in head.splitlines(keepends=True))


def _file_head(stream: BinaryIO, limit: int) -> bytes:
    """A file's first bytes for ``detect``: ``HEAD_BYTES``, or through its first non-blank
    line when that line is longer (a tracker's step with hundreds of keys), up to ``limit``.

    A file that cannot seek (a named pipe) gets what can be peeked, as stdin does.
    """
    if not stream.seekable():
        peek = getattr(stream, "peek", None)
        return peek(HEAD_BYTES)[:HEAD_BYTES] if callable(peek) else b""
    head = stream.read(HEAD_BYTES)
    while not _has_whole_line(head) and len(head) < limit:
        more = stream.read(min(_HEAD_CHUNK, limit - len(head)))
        if not more:
            break
        head += more
    stream.seek(0)
    return head


@dataclass(frozen=True, slots=True)
class Ingester:
    """One input format: its name, how to recognise it and how to read it."""

    name: str
    description: str
    detect: Callable[[str, bytes], bool]
    read: Callable[[Source, BinaryIO | None, Limits], Iterator[Item]]


INGESTERS: Final[dict[str, Ingester]] = {}
"""Format name -> ingester, in the order ``detect`` is tried."""


def register(ingester: Ingester) -> None:
    """Add an input format (tried before the ones registered earlier, ``jsonl`` last)."""
    INGESTERS.pop(ingester.name, None)
    items = list(INGESTERS.items())
    INGESTERS.clear()
    INGESTERS[ingester.name] = ingester
    INGESTERS.update(items)


# Registered in this order, so detection tries them in reverse: jsonl (which accepts
# anything) last.
_BUILTIN: Final = (
    Ingester(
        jsonl.INGESTER_NAME,
        "this project's JSONL (JsonlLogger): log_metrics lines and point lines",
        jsonl.detect,
        jsonl.read,
    ),
    Ingester(
        otlp.INGESTER_NAME,
        "OTLP JSON lines (the OpenTelemetry Collector's file exporter)",
        otlp.detect,
        otlp.read,
    ),
    Ingester(
        prometheus.INGESTER_NAME,
        "a Prometheus text exposition saved to a file (curl .../metrics > scrape.prom)",
        prometheus.detect,
        prometheus.read,
    ),
    Ingester(
        flat.INGESTER_NAME,
        "flat per-step JSONL: {'step': N, 'data': {...}} (verl's file logger) or a bare dict",
        flat.detect,
        flat.read,
    ),
    Ingester(
        csv_log.INGESTER_NAME,
        "a CSV metrics log with a step column (Lightning's CSVLogger metrics.csv), or a "
        "Lightning version folder holding it (hparams.yaml: the configuration)",
        csv_log.detect,
        csv_log.read,
    ),
    Ingester(
        tensorboard.INGESTER_NAME,
        "TensorBoard event files (events.out.tfevents.*) or a log folder of them: the scalars",
        tensorboard.detect,
        tensorboard.read,
    ),
    Ingester(
        mlflow.INGESTER_NAME,
        "MLflow's file store: a run folder (mlruns/<experiment>/<run>, metrics/<key path>), "
        "an experiment folder or the mlruns/ root (each run an input)",
        mlflow.detect,
        mlflow.read,
    ),
    Ingester(
        mlflow_sqlite.INGESTER_NAME,
        "MLflow's SQLite tracking store (mlflow.db, MLflow 3's default): each run an input, "
        "read-only",
        mlflow_sqlite.detect,
        mlflow_sqlite.read,
    ),
    Ingester(
        trainer_state.INGESTER_NAME,
        "a Hugging Face trainer_state.json (a transformers Trainer's log_history), or a "
        "Trainer's output folder (its latest state)",
        trainer_state.detect,
        trainer_state.read,
    ),
    Ingester(
        wandb_run.INGESTER_NAME,
        "a W&B run: a run folder (wandb/offline-run-<time>-<id>), its .wandb file, the "
        "wandb/ folder of several runs or the project folder above it (history and "
        "configuration)",
        wandb_run.detect,
        wandb_run.read,
    ),
)
for _ingester in _BUILTIN:
    register(_ingester)


def choose(path: str, head: bytes, name: str | None = None) -> Ingester:
    """The ingester named ``name``, else the first whose ``detect`` accepts the input.

    Raises:
        ValueError: ``name`` is not a registered format; the message lists them.
    """
    if name is not None:
        found = INGESTERS.get(name)
        if found is None:
            listed = ", ".join(INGESTERS)
            msg = f"unknown input format {name!r}; choose from {listed}"
            raise ValueError(msg)
        return found
    for ingester in INGESTERS.values():
        if ingester.detect(path, head):
            return ingester
    return INGESTERS[jsonl.INGESTER_NAME]


def read_source(source: Source, limits: Limits, input_format: str | None = None) -> Iterator[Item]:
    """The records of one input, read by its ingester; the file is closed when done.

    Raises:
        OSError: the input cannot be opened or read (``filename`` names it).
        ValueError: ``input_format`` is unknown.
    """
    if source.stream is not None:
        stream = source.stream
        peek = getattr(stream, "peek", None)
        head = peek(HEAD_BYTES)[:HEAD_BYTES] if callable(peek) else b""
        ingester = choose(source.path, head, input_format)
        source.format = ingester.name
        yield from ingester.read(source, stream, limits)
        return
    if os.path.isdir(source.path):
        ingester = choose(source.path, b"", input_format)
        source.format = ingester.name
        yield from ingester.read(source, None, limits)
        return
    # A path named as a log may be a FIFO or a device (``<(zcat log.gz)``): a stream, read
    # in bounded lines; every member of a folder is opened as a regular file only.
    with open_input(source.path, stream=True) as stream:
        head = _file_head(stream, limits.max_line_bytes + 1)
        ingester = choose(source.path, head, input_format)
        source.format = ingester.name
        yield from ingester.read(source, stream, limits)
