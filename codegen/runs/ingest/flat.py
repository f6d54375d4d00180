"""Flat per-step JSONL: one object per step, keys without prefixes.

Two shapes, one per line:

- verl's file logger: ``{"step": 3, "data": {"actor/pg_loss": 0.1, "timing_s/gen": 2.5}}``;
- a bare dict with a step key: ``{"step": 3, "actor/pg_loss": 0.1, "timing_s/gen": 2.5}``.

A key carries no separate prefix: the checker splits it against the catalog
(the longest declared prefix under which a row matches the rest). Detected
when the first line is an object with an integer ``step`` and neither
``prefix``, ``metrics`` nor ``series`` (this project's JSONL); ``--input-format
flat-jsonl`` forces it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO, Final

from ..limits import Limits
from ..records import NO_STEP, Item, Record, Source
from ._json import loads
from .jsonl import first_line, read_lines

__all__ = ["INGESTER_NAME", "detect", "parse", "read"]

INGESTER_NAME: Final = "flat-jsonl"
_EXPECTED: Final = "a flat JSONL record"
_OURS: Final = frozenset({"prefix", "metrics", "series"})


def detect(path: str, head: bytes) -> bool:
    """Whether the input's first line is a flat per-step object."""
    del path
    first = first_line(head)
    if first is None:
        return False
    try:
        doc = loads(first)
    except (ValueError, RecursionError):
        return False
    if not isinstance(doc, dict) or _OURS & doc.keys():
        return False
    step = doc.get("step")
    return isinstance(step, int) and not isinstance(step, bool) and len(doc) > 1


def parse(raw: bytes, path: str, line: int) -> Record | str:
    """A record (its keys to be split against the catalog), or why the line is not one."""
    try:
        doc = loads(raw)
    except (ValueError, RecursionError) as exc:
        return f"invalid JSON ({exc})"
    if not isinstance(doc, dict):
        return f"expected an object, got a JSON {type(doc).__name__}"
    step = doc.get("step")
    if step is None and "step" not in doc:
        # A value logged outside the steps (a table at the end of the run): read and
        # judged, at no step (a loop's step key in the line may still give one).
        data = doc.get("data")
        metrics = data if isinstance(data, dict) and doc.keys() == {"data"} else doc
        return Record(NO_STEP, "", metrics, path, line, split=True)
    if isinstance(step, bool) or not isinstance(step, int):
        return '"step" must be an integer'
    data = doc.get("data")
    if isinstance(data, dict) and doc.keys() <= {"step", "data"}:
        metrics = data
    else:
        metrics = {key: value for key, value in doc.items() if key != "step"}
    return Record(step, "", metrics, path, line, split=True)


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Item]:
    """The records of one flat JSONL input, malformed lines included, in order."""
    return read_lines(source, stream, limits, parse, _EXPECTED)
