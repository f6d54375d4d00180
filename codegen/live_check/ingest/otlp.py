"""OTLP JSON files: one ``ExportMetricsServiceRequest`` per line.

This is what the OpenTelemetry Collector's ``file`` exporter writes (and what
``otlp-json`` tooling exchanges): each line a JSON object whose top-level key
is ``resourceMetrics``. Every data point becomes a point record (see
:func:`codegen.live_check.telemetry.records_from_points`): the line number is
its step, so findings name the request they came from. Lines are read in
bounded memory, as for this project's JSONL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO, Final

from ..limits import Limits
from ..records import Malformed, Record, Source
from ..telemetry import decode_request_body, records_from_points
from .jsonl import LineReader

__all__ = ["INGESTER_NAME", "detect", "read"]

INGESTER_NAME: Final = "otlp-json"
_EXPECTED: Final = "an OTLP JSON request (ExportMetricsServiceRequest)"


def detect(path: str, head: bytes) -> bool:
    """A file whose first object starts with ``resourceMetrics``."""
    del path
    return head.lstrip()[:40].replace(b" ", b"").startswith(b'{"resourceMetrics"')


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Record | Malformed]:
    """The points of every request line, malformed lines included, in order."""
    if stream is None:
        msg = f"{source.path} is not a file; the {INGESTER_NAME} format reads a file or stdin"
        raise IsADirectoryError(msg)
    lines = LineReader(stream, limits)
    path = source.path
    for line_no, raw in lines:
        source.lines = line_no
        if raw is None:
            why = f"longer than {limits.max_line_bytes} bytes"
            yield Malformed(path, line_no, why, expected=_EXPECTED)
            continue
        if not raw.strip():
            continue
        try:
            points = decode_request_body(raw, "application/json", f"{path}:{line_no}")
        except ValueError as exc:
            yield Malformed(path, line_no, str(exc), expected=_EXPECTED)
            continue
        yield from records_from_points(points, line_no, path=path)
    source.lines = lines.line
    if lines.abandoned is not None:
        yield Malformed(path, lines.line, lines.abandoned, fatal=True, expected=_EXPECTED)
