"""Flat per-step JSONL: one object per step, keys without prefixes.

Three shapes, one per line:

- verl's file logger: ``{"step": 3, "data": {"actor/pg_loss": 0.1, "timing_s/gen": 2.5}}``;
- a bare dict with a step key: ``{"step": 3, "actor/pg_loss": 0.1, "timing_s/gen": 2.5}``;
- W&B's history (the offline ``wandb-history.jsonl``, and what most hand-rolled loggers
  write): ``{"_step": 0, "_runtime": 1.5, "_timestamp": 1.7e9, "train/loss": 0.5}``, the
  step in ``_step`` (W&B's underscore keys are bookkeeping, never metrics).

A key carries no separate prefix: the checker splits it against the catalog
(``series_rules.split_flat_key``'s one rule, as the tee splits it). Detected
when the first line is an object with an integer ``step`` (or ``_step``) and
neither ``prefix``, ``metrics`` nor ``series`` (this project's JSONL);
``--input-format flat-jsonl`` forces it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO, Final

from ..limits import Limits
from ..records import NO_STEP, Item, Record, Source
from ._json import loads
from .jsonl import LINE_SHAPES, first_line, read_lines

__all__ = ["INGESTER_NAME", "STEP_FIELDS", "detect", "fits", "parse", "read"]

INGESTER_NAME: Final = "flat-jsonl"
_EXPECTED: Final = "a flat JSONL record"
_OURS: Final = frozenset({"prefix", "metrics", "series"})

STEP_FIELDS: Final = ("step", "_step")
"""Where a flat line holds its step: ``step``, else W&B's ``_step``."""


def _step_field(doc: dict[str, object]) -> str | None:
    """The field holding the line's step (the first of :data:`STEP_FIELDS` present)."""
    return next((name for name in STEP_FIELDS if name in doc), None)


def fits(doc: object) -> bool:
    """Whether a decoded line is a flat per-step object (this reader's shape)."""
    if not isinstance(doc, dict) or _OURS & doc.keys():
        return False
    field = _step_field(doc)
    step = None if field is None else doc[field]
    return isinstance(step, int) and not isinstance(step, bool) and len(doc) > 1


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
    return fits(doc)


LINE_SHAPES.append((INGESTER_NAME, fits))


def parse(raw: bytes, path: str, line: int) -> Record | str:
    """A record (its keys to be split against the catalog), or why the line is not one."""
    try:
        doc = loads(raw)
    except (ValueError, RecursionError) as exc:
        return f"invalid JSON ({exc})"
    if not isinstance(doc, dict):
        return f"expected an object, got a JSON {type(doc).__name__}"
    field = _step_field(doc)
    if field is None:
        # A value logged outside the steps (a table at the end of the run): read and
        # judged, at no step (a loop's step key in the line may still give one).
        data = doc.get("data")
        metrics = data if isinstance(data, dict) and doc.keys() == {"data"} else doc
        return Record(NO_STEP, "", metrics, path, line, split=True)
    step = doc[field]
    if isinstance(step, bool) or not isinstance(step, int):
        return f'"{field}" must be an integer'
    data = doc.get("data")
    if isinstance(data, dict) and doc.keys() <= {"step", "data"}:
        metrics = data
    else:
        # W&B's _step stays: an underscore key is built-in bookkeeping, left out by name.
        metrics = {key: value for key, value in doc.items() if key != "step"}
    return Record(step, "", metrics, path, line, split=True)


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Item]:
    """The records of one flat JSONL input, malformed lines included, in order."""
    return read_lines(source, stream, limits, parse, _EXPECTED)
