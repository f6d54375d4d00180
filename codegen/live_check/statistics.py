"""What the log showed per teed row (:class:`RowSummary`) and the presence states.

Coverage (which declared rows a run showed, by owner, family and enum value)
is computed from these summaries when a check finishes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

from metric_catalog.value_rules import ValueRange

from ..catalog.model import MetricRow
from .judges.shares import share_guess

__all__ = ["PRESENCE_STATES", "RowSummary", "json_number", "number_text"]

PRESENCE_STATES: Final[tuple[str, ...]] = (
    "logged",
    "missing",
    "not_due",
    "conditional",
    "not_applicable",
    "not_logged",
    "not_emitted",
    "undecided",
    "inactive_owner",
)
"""What the log showed for a teed row, as ``presence`` in the JSON report."""


@dataclass(slots=True)
class RowSummary:
    """What the log showed for one teed row."""

    row: MetricRow
    logged: int = 0
    non_finite: int = 0
    non_scalar: int = 0
    null: int = 0
    """Values logged as ``null`` (Python ``None``): "no value this step", skipped by the tee."""
    negative: int = 0
    resets: int = 0
    """Times a running total (``temporality: cumulative``) went down: restarts, not errors."""
    last_value: float | None = None
    last_step: int | None = None
    presence: str = "logged"
    """One of :data:`PRESENCE_STATES`, set when the log is finished."""
    out_of_range: int = 0
    """Finite values outside the row's range (declared, or its unit's default)."""
    not_integer: int = 0
    """Finite values with a fraction where the row declares ``value_type: int``."""
    value_range: ValueRange | None = field(default=None, init=False)
    """The row's range, looked up once (``None``: any finite value is fine)."""
    unit_suspect: int = 0
    """Values above 1 of a row in unit ``1`` with no range whose name says it is a share."""
    suspect_peak: float | None = None
    """The largest of those values (38.2: a percentage logged under unit ``1``)."""
    share_word: str | None = field(default=None, init=False)
    """The word that makes the row a share in live-check's eyes (see ``judges.ranges``)."""

    def __post_init__(self) -> None:
        self.value_range = self.row.value_range
        self.share_word = share_guess(self.row)

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict; non-finite last values become the strings ``NaN``, ``Infinity``.

        A running total's row (``temporality: cumulative``) also has ``resets``; a row
        with a range ``range``, ``out_of_range`` and ``not_integer``; a row live-check
        guesses a share (unit ``1``, no range) ``unit_suspect`` and ``unit_suspect_max``.
        """
        found: dict[str, object] = {
            "presence": self.presence,
            "requirement_level": self.row.requirement_level,
            "emitted_by": list(self.row.emitted_by),
            "series": self.row.name,
            "logger_key": self.row.qualified_logger_key,
            "kind": self.row.kind,
            "logged": self.logged,
            "non_finite": self.non_finite,
            "non_scalar": self.non_scalar,
            "null": self.null,
            "negative": self.negative,
            "last_value": json_number(self.last_value),
            "last_step": self.last_step,
        }
        if self.row.temporality == "cumulative":
            found["resets"] = self.resets
        if self.value_range is not None:
            found["range"] = self.value_range.text()
            found["out_of_range"] = self.out_of_range
            found["not_integer"] = self.not_integer
        if self.share_word is not None:
            found["unit_suspect"] = self.unit_suspect
            found["unit_suspect_max"] = json_number(self.suspect_peak)
        return found


def number_text(value: float) -> str:
    """A logged number as a message shows it (``0.5``, ``NaN``, ``-Infinity``)."""
    text = json_number(value)
    return f"{text:g}" if isinstance(text, float) else str(text)


def json_number(value: float | None) -> float | str | None:
    """``value``, or the JSON report's string for a non-finite one."""
    if value is None or math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
