"""Prometheus text exposition files: what a scrape endpoint serves, saved to a file.

A file whose first lines are ``# HELP`` / ``# TYPE`` comments (``curl
host:9464/metrics > scrape.prom``, a node_exporter textfile) is read whole, up
to :data:`~codegen.runs.telemetry.MAX_SCRAPE_BYTES`, and parsed with
``prometheus_client``'s parser; each series' sample becomes a point record
(step 1, the file as its source), judged like a live ``--scrape``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO, Final

from ..limits import Limits
from ..records import Malformed, Record, Source
from ..telemetry import MAX_SCRAPE_BYTES, parse_exposition, records_from_points

__all__ = ["INGESTER_NAME", "detect", "read"]

INGESTER_NAME: Final = "prometheus"
_EXPECTED: Final = "a Prometheus text exposition"


def detect(path: str, head: bytes) -> bool:
    """A file that starts with a ``# HELP`` or ``# TYPE`` comment."""
    del path
    start = head.lstrip()[:7]
    return start in (b"# HELP ", b"# TYPE ")


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Record | Malformed]:
    """The points of one exposition (one malformed item if it does not parse)."""
    del limits
    if stream is None:
        msg = f"{source.path} is not a file; the {INGESTER_NAME} format reads a file or stdin"
        raise IsADirectoryError(msg)
    body = stream.read(MAX_SCRAPE_BYTES + 1)
    if len(body) > MAX_SCRAPE_BYTES:
        why = f"the exposition is over {MAX_SCRAPE_BYTES} bytes; it was not read"
        yield Malformed(source.path, 1, why, fatal=True, expected=_EXPECTED)
        return
    text = body.decode("utf-8", errors="replace")
    source.lines = text.count("\n")
    try:
        points = list(parse_exposition(text, source.path))
    except ValueError as exc:
        yield Malformed(source.path, 1, str(exc), expected=_EXPECTED)
        return
    yield from records_from_points(points, 1, path=source.path)
