"""OTLP JSON files: one ``ExportMetricsServiceRequest`` per line.

This is what the OpenTelemetry Collector's ``file`` exporter writes (and what
``otlp-json`` tooling exchanges): each line a JSON object whose top-level key
is ``resourceMetrics``. Every data point becomes a point record (see
:func:`codegen.runs.telemetry.records_from_points`): the line number is
its step, so findings name the request they came from. Lines are read in
bounded memory, as for this project's JSONL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO, Final

from ..limits import Limits
from ..records import Item, Record, Source
from ..telemetry import decode_request_body, records_from_points
from .jsonl import read_lines

__all__ = ["INGESTER_NAME", "detect", "read"]

INGESTER_NAME: Final = "otlp-json"
_EXPECTED: Final = "an OTLP JSON request (ExportMetricsServiceRequest)"


def detect(path: str, head: bytes) -> bool:
    """A file whose first object starts with ``resourceMetrics``."""
    del path
    return head.lstrip()[:40].replace(b" ", b"").startswith(b'{"resourceMetrics"')


def _parse(raw: bytes, path: str, line: int) -> list[Record] | str:
    """The points of one request line as records, or why the line is not a request."""
    try:
        points = decode_request_body(raw, "application/json", f"{path}:{line}")
    except ValueError as exc:
        return str(exc)
    return list(records_from_points(points, line, path=path))


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Item]:
    """The points of every request line, malformed lines included, in order."""
    return read_lines(source, stream, limits, _parse, _EXPECTED)
