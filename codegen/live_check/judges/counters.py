"""``counter_decrease``: a teed counter logged negative.

Teed counters are per-step deltas added to a cumulative OpenTelemetry
counter, so a negative delta is the only way the exported counter could go
backwards (and the SDK drops it). A delta smaller than the previous step's is
normal and not reported.
"""

from __future__ import annotations

from ...catalog.model import MetricRow
from ..statistics import number_text

__all__ = ["judge_counter"]


def judge_counter(row: MetricRow, number: float) -> str | None:
    """The finding's example (the value) when ``number`` is a negative counter delta."""
    if row.kind == "counter" and number < 0:
        return number_text(number)
    return None
