"""This project's JSONL (``JsonlLogger``): one ``log_metrics`` call or one point per line.

A ``log_metrics`` line::

    {"step": 12, "prefix": "train", "metrics": {"loss": 0.41, "reward": NaN}}

A point line (``JsonlLogger.record_metrics`` / ``log_point``)::

    {"step": 3, "series": "rl.vllm.batch.duration", "value": 0.25, "attributes": {...}}

Values are JSON numbers, the ``NaN``/``Infinity``/``-Infinity`` tokens Python's
:mod:`json` writes, bools, strings, lists, or ``{"__type__": "<type>"}`` for
objects the logger could not convert. Both shapes may carry ``"loop"``,
``"worker"`` and ``"attributes"``.

Lines are read in bounded memory: a line longer than ``max_line_bytes`` is
``malformed`` and its rest skipped in bounded chunks; the input is abandoned
(a fatal :class:`~codegen.runs.records.Malformed` naming the file) at
its ``max_overlong_lines``-th such line, or when one line of a stream (a pipe,
a device: not a regular file, which ends) runs on past ``max_skipped_bytes``
without a line break (``/dev/zero``). The messages name the format read (a CSV
log is not told it is not JSONL).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, Final

from metric_catalog.series_rules import namespace_prefix

from ..limits import Limits
from ..records import Item, Malformed, Note, Record, RunConfig, Source
from ._json import loads

__all__ = [
    "INGESTER_NAME",
    "LINE_SHAPES",
    "MAX_TORN_STARTS",
    "LineReader",
    "bounded_lines",
    "detect",
    "first_line",
    "parse",
    "read",
    "read_lines",
]

INGESTER_NAME: Final = "jsonl"


JSONL_KIND: Final = "a JSONL log"
JSONL_FIX: Final = "pass the file JsonlLogger wrote"

_KINDS: Final = {
    "csv": ("a CSV log", "pass the metrics.csv a CSVLogger wrote"),
    "flat-jsonl": ("a flat JSONL log", "pass the file the trainer's file logger wrote"),
    "otlp-json": ("an OTLP JSON log", "pass the file the Collector's file exporter wrote"),
}
"""What each line-based format's input is, for the message abandoning one (else JSONL's)."""


LINE_SHAPES: Final[list[tuple[str, Callable[[object], bool]]]] = []
"""Other line-based formats, by ``--input-format`` name, and whether a decoded line is of
that shape: a line this format refuses that fits one says which flag reads it. Each
format's module adds itself (it imports this one, so this one cannot import it)."""


def _read_as(doc: object) -> str:
    """``; ...pass --input-format NAME`` for the first other format ``doc`` fits, else ``""``."""
    for name, fits in LINE_SHAPES:
        if fits(doc):
            return f"; the line is {name} (a flat dict of whole keys): pass --input-format {name}"
    return ""


def _is_regular(stream: BinaryIO) -> bool:
    """Whether ``stream`` reads a regular file (not a pipe, a device or a socket)."""
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, AttributeError, ValueError):  # an in-memory stream: it ends too
        return hasattr(stream, "getbuffer")


class LineReader:
    """``(line number, raw line)`` of a stream in bounded memory; ``None`` for an overlong line.

    Iteration stops early when the input is abandoned; :attr:`abandoned` then says why.
    """

    def __init__(
        self, stream: BinaryIO, limits: Limits, kind: str = JSONL_KIND, fix: str = JSONL_FIX
    ) -> None:
        self.stream = stream
        self.limits = limits
        self.line = 0
        self.overlong = 0
        self.abandoned: str | None = None
        self.kind, self.fix = kind, fix
        """What the input should have been and how to get it, for the abandon message."""
        self.finite = _is_regular(stream)
        """A regular file ends: an overlong line in it is skipped to its end however long
        (:attr:`Limits.max_skipped_bytes` bounds only a stream, which may never end)."""

    def __iter__(self) -> Iterator[tuple[int, bytes | None]]:
        limit = self.limits.max_line_bytes
        readline = self.stream.readline
        while True:
            raw = readline(limit + 1)
            if not raw:
                return
            self.line += 1
            if len(raw) <= limit or raw.endswith(b"\n"):
                yield self.line, raw
                continue
            self.overlong += 1
            ended = self._skip_rest(len(raw))
            yield self.line, None
            if not ended:
                return
            if self.overlong >= self.limits.max_overlong_lines:
                self.abandoned = (
                    f"{self.overlong} lines longer than {limit} bytes (the last at line "
                    f"{self.line}); this is not {self.kind}: {self.fix}"
                )
                return

    def _skip_rest(self, read: int) -> bool:
        """Skip the rest of an overlong line; ``False`` when it never ends within the bound."""
        limit, bound = self.limits.max_line_bytes, self.limits.max_skipped_bytes
        while rest := self.stream.readline(limit):
            read += len(rest)
            if rest.endswith(b"\n"):
                return True
            if read > bound and not self.finite:
                self.abandoned = (
                    f"line {self.line} runs on past {bound} bytes without a line break; "
                    f"this is not {self.kind} (an endless stream such as /dev/zero?): "
                    f"{self.fix}"
                )
                return False
        return True  # the input ended mid-line


def bounded_lines(
    stream: BinaryIO, limits: Limits | None = None
) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, raw line)`` of a JSONL stream, in bounded memory.

    A line longer than ``max_line_bytes`` comes back as ``None``: its rest is
    skipped in bounded chunks instead of being held. Iteration stops when the
    input would be abandoned (see the module docstring).
    """
    yield from LineReader(stream, limits or Limits())


def parse(raw: bytes, path: str, line: int) -> Record | RunConfig | str:
    """A record, or why the line is not one.

    A ``log_metrics`` line has ``step``, ``prefix`` and ``metrics``; a point line
    has ``step``, ``series`` and ``value`` instead. Both may carry ``"loop"``
    (the training loop's name), ``"worker"`` and ``"attributes"`` (an object).
    """
    try:
        doc = loads(raw)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return f"invalid JSON ({exc})"
    if not isinstance(doc, dict):
        return f"expected an object, got a JSON {type(doc).__name__}"
    if "config" in doc and "step" not in doc:
        config, loop = doc["config"], doc.get("loop")
        if not isinstance(config, dict):
            return '"config" (the run\'s configuration header) must be an object'
        worker = doc.get("worker")
        return RunConfig(
            config,
            path,
            line,
            loop if isinstance(loop, str) else None,
            worker if isinstance(worker, str) else None,
        )
    step = doc.get("step")
    if isinstance(step, bool) or not isinstance(step, int):
        return '"step" must be an integer' + _read_as(doc)
    loop = doc.get("loop")
    if loop is not None and not isinstance(loop, str):
        return '"loop" must be a string (the training loop\'s name) when present'
    attributes = doc.get("attributes", {})
    if not isinstance(attributes, dict):
        return '"attributes" must be an object (attribute name -> value) when present'
    worker = doc.get("worker")
    named = str(worker) if isinstance(worker, (str, int)) and not isinstance(worker, bool) else None
    if "series" in doc:
        series = doc["series"]
        if "metrics" in doc:
            return 'a line has "metrics" (a log_metrics call) or "series" (a point), not both'
        if not isinstance(series, str) or not series:
            return '"series" must be a non-empty string (a declared series name)'
        if "value" not in doc:
            return 'a point line ("series") needs a "value"'
        return Record(step, "", {}, path, line, loop, attributes, series, doc["value"], named)
    prefix, metrics = doc.get("prefix"), doc.get("metrics")
    if not isinstance(prefix, str):
        return '"prefix" must be a string' + _read_as(doc)
    if not isinstance(metrics, dict):
        return '"metrics" must be an object' + _read_as(doc)
    # A prefix given with its separator ("train/", NeMo-Aligner's) names "train", as in the tee.
    prefix = namespace_prefix(prefix)
    return Record(step, prefix, metrics, path, line, loop, attributes, worker=named)


def detect(path: str, head: bytes) -> bool:
    """Every file may be this format: it is the default, tried last."""
    del path, head
    return True


def first_line(head: bytes) -> bytes | None:
    """The first non-blank line of ``head`` with its line break (``None``: the head holds
    no whole one), for a line-based format's ``detect``."""
    for raw in head.splitlines(keepends=True):
        if raw.strip():
            return raw if raw.endswith(b"\n") else None
    return None


def read_lines(
    source: Source,
    stream: BinaryIO | None,
    limits: Limits,
    parse_line: Callable[[bytes, str, int], Item | Iterable[Item] | str],
    expected: str = "a JSONL record",
) -> Iterator[Item]:
    """The items of a line-based input, each line given to ``parse_line``, in order.

    ``parse_line(raw, path, line)`` returns an item, several (a request of many
    points), or why the line is not one (a ``malformed`` item naming ``expected``).
    Overlong lines and an abandoned input are reported the same way for every
    line-based format.
    """
    if stream is None:
        msg = f"{source.path} is not a file; the {source.format} format reads a file or stdin"
        raise IsADirectoryError(msg)
    kind, fix = _KINDS.get(source.format or "", (JSONL_KIND, JSONL_FIX))
    lines = LineReader(stream, limits, kind, fix)
    path = source.path
    for line_no, raw in lines:
        source.lines = line_no
        if raw is None:
            why = f"longer than {limits.max_line_bytes} bytes"
            yield Malformed(path, line_no, why, expected=expected)
            continue
        if not raw.strip():
            continue
        parsed = parse_line(raw, path, line_no)
        if isinstance(parsed, str):
            if not raw.endswith(b"\n"):
                # The input ends inside this line: a job killed mid-write, or one still
                # writing it. The lines before it are whole; this one is not an error.
                yield Note("incomplete_record", _torn_last(path, line_no, raw), path, line_no)
                continue
            after = _after_torn(raw, path, line_no, parse_line)
            if after is None:
                yield Malformed(path, line_no, parsed, expected=expected)
                continue
            start, parsed = after
            head = parse_line(raw[:start], path, line_no)
            if isinstance(head, str):
                yield Note("incomplete_record", _torn_inside(path, line_no, start), path, line_no)
            else:
                # Killed right after a whole record, before its line break: both are records.
                yield from (head,) if isinstance(head, _ONE) else head
        if isinstance(parsed, _ONE):
            yield parsed
        else:
            yield from parsed
    source.lines = lines.line
    if lines.abandoned is not None:
        yield Malformed(path, lines.line, lines.abandoned, fatal=True, expected=expected)


_ONE: Final = (Record, RunConfig, Malformed, Note)
"""What a line parser returns for one item (else an iterable of them)."""

MAX_TORN_STARTS: Final = 64
"""Most places a line that does not parse is tried again from (see :func:`_after_torn`)."""


def _torn_last(path: str, line: int, raw: bytes) -> str:
    zeros = (
        ", all zero bytes, as a file system leaves after a crash" if not raw.strip(b"\0") else ""
    )
    return (
        f"{path}: the last line (line {line}, {len(raw)} bytes{zeros}) ends without a line "
        "break and is not a whole record: the job was killed while writing it, or is still "
        "writing it; the lines before it were read"
    )


def _torn_inside(path: str, line: int, start: int) -> str:
    return (
        f"{path}: line {line} starts with a record cut short ({start} bytes: the job was "
        "killed while writing it) and goes on with a whole record (the restarted job "
        f"appended from byte {start} on); that record was read"
    )


def _after_torn(
    raw: bytes,
    path: str,
    line: int,
    parse_line: Callable[[bytes, str, int], Item | Iterable[Item] | str],
) -> tuple[int, Item | Iterable[Item]] | None:
    """The record a restarted job appended to a line a killed job left cut short.

    A job killed mid-write leaves its last line without a line break (or zero bytes,
    after a crash); the restarted job appends its first line right after it. The
    record is the first object, from the left, that runs to the end of the line and
    parses; ``None`` when there is none (the line is malformed, as before).
    """
    start = 0
    for _ in range(MAX_TORN_STARTS):
        start = raw.find(b"{", start + 1)
        if start < 0:
            return None
        parsed = parse_line(raw[start:], path, line)
        if not isinstance(parsed, str):
            return start, parsed
    return None


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Item]:
    """The records of one JSONL input, malformed lines included, in order."""
    return read_lines(source, stream, limits, parse)
