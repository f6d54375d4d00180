"""``out_of_range``, ``not_integer`` and ``unit_suspect``: a finite value its row refuses.

The range is the row's declared ``range`` (in the unit the code logs), else the
one its unit implies (``%`` in [0, 100], durations, sizes and counts at least
0), with ``value_type: int`` asking for whole numbers
(:attr:`codegen.catalog.model.MetricRow.value_range`). A wrong but valid unit
shows here: ``perf/mfu`` logged as 38.2 under unit ``1`` with ``range: {max: "1"}``.

Unit ``1`` implies no range, so a row in ``1`` that declares none, whose name or
key says it is a share (:func:`.shares.share_guess`: ``perf/mfu``,
``clip_frac``, ``eval/accuracy``), is judged in live-check only against [0, 1]:
a value above 1 is ``unit_suspect`` (percent logged under ``1``). The generated
code never judges that guess.
"""

from __future__ import annotations

import math
import sys
from typing import Final

from ..statistics import RowSummary, number_text

__all__ = ["accepts", "judge_range", "quiet_interval"]

# Units whose fractional values say the code logs a prefixed size (GiB) or bits.
_WHOLE_SIZE_UNITS: Final = frozenset({"By", "bit"})


def judge_range(summary: RowSummary, number: float) -> tuple[str | None, str]:
    """``(kind, example)`` for a finite value against the row's range, counted on ``summary``.

    ``kind`` is ``None`` when the value fits (or the row has no range).
    """
    bounds = summary.value_range
    problem = None if bounds is None else bounds.judge(number)
    if problem is None or bounds is None:
        return _judge_share(summary, number)
    if problem == "out_of_range":
        summary.out_of_range += 1
        return problem, f"{number_text(number)} (the row's range is {bounds.text()})"
    summary.not_integer += 1
    unit = summary.row.declared_unit
    if unit in _WHOLE_SIZE_UNITS and summary.row.value_type != "int":
        why = (
            f"a size in {unit!r} is whole: logged in GiB/MB? declare the unit the code "
            "logs (GiBy, MBy)"
        )
    else:
        why = f"the row's range is {bounds.text()}"
    return problem, f"{number_text(number)} ({why})"


def _judge_share(summary: RowSummary, number: float) -> tuple[str | None, str]:
    """``unit_suspect`` for a value above 1 of a row guessed a share (see module doc)."""
    word = summary.share_word
    if word is None or number <= 1.0:
        return None, ""
    summary.unit_suspect += 1
    if summary.suspect_peak is None or number > summary.suspect_peak:
        summary.suspect_peak = number
    return "unit_suspect", f"{number_text(number)} (a {word} by its name, declared in unit '1')"


_FINITE_MAX: Final = sys.float_info.max


def quiet_interval(summary: RowSummary) -> tuple[float, float] | None:
    """The closed interval of values the row takes with nothing to note or keep, or ``None``.

    A value inside it is finite (the interval's ends are), fits the row's range and
    its share guess, and is no negative counter delta: counting it is all the checks
    would do, so live-check's record loop counts it without calling them. ``None``
    when no such shortcut holds (whole numbers asked for, a running total to track, a
    row that is not a number).
    """
    row = summary.row
    if row.temporality == "cumulative" or not row.is_scalar:
        return None
    low, high = -_FINITE_MAX, _FINITE_MAX
    bounds = summary.value_range
    if bounds is not None:
        if bounds.integer:
            return None
        if bounds.low is not None:
            low = max(low, math.nextafter(bounds.low, math.inf) if bounds.low_open else bounds.low)
        if bounds.high is not None:
            end = math.nextafter(bounds.high, -math.inf) if bounds.high_open else bounds.high
            high = min(high, end)
    if summary.share_word is not None:
        high = min(high, 1.0)
    if row.kind == "counter":
        low = max(low, 0.0)
    return (low, high) if low <= high else None


def accepts(summary: RowSummary, value: object) -> bool:
    """Whether the row takes ``value`` with no value finding (range, share guess, counter
    sign, NaN): of rows sharing a key under exclusive conditions, a run whose configuration
    does not decide credits a value to those that take it (a value no row takes is judged
    by every row). Anything but a number is left to the rows' own judgement (``True``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return True
    row = summary.row
    try:
        number = float(value)
    except OverflowError:  # an int past a float's range: out of any range a row declares
        return False
    if not math.isfinite(number):
        return row.non_finite == "allowed"
    if row.kind == "counter" and number < 0:
        return False
    bounds = summary.value_range
    if bounds is not None and bounds.judge(number) is not None:
        return False
    return summary.share_word is None or number <= 1.0
