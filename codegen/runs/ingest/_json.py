"""One JSON decoder for the line-based ingesters: ``orjson`` when installed, else :mod:`json`.

``orjson`` (the ``live`` extra) parses a log line several times faster. It is
strict JSON, so a line it refuses (the ``NaN``/``Infinity`` tokens
``JsonlLogger`` writes for non-finite values, lone surrogate escapes) is parsed
again by :func:`json.loads`, which accepts them or raises the error the
ingesters report. One difference is kept on purpose: an integer past 64 bits
comes back as the float nearest to it (what the tee exports for it anyway),
and one past the float range is refused by orjson and read by :mod:`json`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["loads"]


def _with_fallback(fast: Callable[[bytes], Any], error: type[Exception]) -> Callable[[bytes], Any]:
    def loads(raw: bytes) -> Any:
        """``raw`` decoded; :class:`ValueError`/:class:`RecursionError` as :func:`json.loads`."""
        try:
            return fast(raw)
        except error:
            return json.loads(raw)

    return loads


try:
    import orjson
except ImportError:  # the live extra is not installed: the standard library alone
    loads: Callable[[bytes], Any] = json.loads
else:
    loads = _with_fallback(orjson.loads, orjson.JSONDecodeError)
