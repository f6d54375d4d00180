"""When a periodic row is logged: the series rules' schedule, and how reports say it.

A row with ``every: n`` is logged at the steps equal to its ``phase`` modulo ``n``
(``phase: "0"``, the default: the multiples of ``n``; ``"-1"``: a 0-based loop's
``(step + 1) % n == 0``, steps ``n-1, 2n-1, ...``; ``"1"``: a value logged one step
late), never before its ``first_step``, and with ``at_last_step`` also at the run's
last step. A period that is not positive (a configuration's ``-1``: disabled) has no
step by this rule. The rule itself is :func:`metric_catalog.series_rules.next_scheduled`
(the runtime's ``metric_catalog.testing`` reads it too).
"""

from __future__ import annotations

__all__ = ["describe"]


def describe(every: int | str, phase: int, at_last_step: bool) -> str:
    """``every 10 steps (phase -1) and at the last step``: a schedule as reports say it."""
    text = f"every {every} steps" + (f" (phase {phase})" if phase else "")
    return text + (" and at the last step" if at_last_step else "")
