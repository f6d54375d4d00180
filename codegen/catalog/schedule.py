"""When a periodic row is logged: the one rule live-check's presence judge and emit share.

A row with ``every: n`` is logged at the steps equal to its ``phase`` modulo ``n``
(``phase: "0"``, the default: the multiples of ``n``; ``"-1"``: a 0-based loop's
``(step + 1) % n == 0``, steps ``n-1, 2n-1, ...``; ``"1"``: a value logged one step
late), never before its ``first_step``, and with ``at_last_step`` also at the run's
last step. A period that is not positive (a configuration's ``-1``: disabled) has no
step by this rule.
"""

from __future__ import annotations

__all__ = ["describe", "is_scheduled", "next_scheduled"]


def next_scheduled(every: int, phase: int, start: int) -> int | None:
    """The first step at or after ``start`` that the schedule holds; ``None`` when
    ``every`` is not positive (the row is never due by step)."""
    if every <= 0:
        return None
    # Python's % is never negative for a positive divisor: a negative phase works as is.
    return start + (phase - start) % every


def is_scheduled(step: int, every: int, phase: int) -> bool:
    """Whether ``step`` is a step of the schedule ``every``/``phase``."""
    return every > 0 and (step - phase) % every == 0


def describe(every: int | str, phase: int, at_last_step: bool) -> str:
    """``every 10 steps (phase -1) and at the last step``: a schedule as reports say it."""
    text = f"every {every} steps" + (f" (phase {phase})" if phase else "")
    return text + (" and at the last step" if at_last_step else "")
