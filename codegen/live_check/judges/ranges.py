"""``out_of_range`` and ``not_integer``: a finite value its row's range does not allow.

The range is the row's declared ``range`` (in the unit the code logs), else the
one its unit implies (``%`` in [0, 100], durations, sizes and counts at least
0), with ``value_type: int`` asking for whole numbers
(:attr:`codegen.catalog.model.MetricRow.value_range`). A wrong but valid unit
shows here: ``perf/mfu`` logged as 38.2 under unit ``1`` with ``range: {max: "1"}``.
"""

from __future__ import annotations

from ..statistics import RowSummary, number_text

__all__ = ["judge_range"]


def judge_range(summary: RowSummary, number: float) -> tuple[str | None, str]:
    """``(kind, example)`` for a finite value against the row's range, counted on ``summary``.

    ``kind`` is ``None`` when the value fits (or the row has no range).
    """
    bounds = summary.value_range
    problem = None if bounds is None else bounds.judge(number)
    if problem is None or bounds is None:
        return None, ""
    if problem == "out_of_range":
        summary.out_of_range += 1
    else:
        summary.not_integer += 1
    return problem, f"{number_text(number)} (the row's range is {bounds.text()})"
