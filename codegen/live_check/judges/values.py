"""``non_scalar`` and ``non_finite``: a logged value the tee cannot export, or NaN/infinity."""

from __future__ import annotations

import math

from ..statistics import number_text

__all__ = ["as_number", "describe", "judge_value"]


def as_number(value: object) -> float | None:
    """The float the tee would export, mirroring ``as_scalar`` on decoded JSON values."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer too large for a float
        return None


def describe(value: object) -> str:
    """A non-scalar JSON value as a message names it (``a JSON array``, ``null``)."""
    if isinstance(value, dict) and isinstance(value.get("__type__"), str):
        return f"an unconvertible {value['__type__']} object"
    if isinstance(value, (list, dict)):
        return f"a JSON {'array' if isinstance(value, list) else 'object'}"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"a string ({value[:20]!r})"
    if isinstance(value, bool):
        return f"a bool ({'true' if value else 'false'})"
    if isinstance(value, int):
        return "an integer too large for a float"
    return f"a {type(value).__name__}"


def judge_value(value: object) -> tuple[float | None, str | None, str]:
    """``(number, kind, example)``: the exported number (``None``: dropped) and the problem."""
    number = as_number(value)
    if number is None:
        return None, "non_scalar", describe(value)
    if not math.isfinite(number):
        return number, "non_finite", number_text(number)
    return number, None, ""
