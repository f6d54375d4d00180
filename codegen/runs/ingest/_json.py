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
from typing import Any, Final

__all__ = ["WIDE_DECODER", "loads", "wide_int"]


def wide_int(text: str) -> int | float:
    """A JSON integer; one past Python's integer-digits limit (4300) as the nearest float
    (an infinity), rather than the ``ValueError`` :func:`int` raises."""
    try:
        return int(text)
    except ValueError:
        return float(text)


WIDE_DECODER: Final = json.JSONDecoder(parse_int=wide_int)
"""What a line :func:`json.loads` refused for an over-long integer is decoded with."""


def _stdlib_loads(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer past the digits limit: decoded again, slower, once
        return WIDE_DECODER.decode(raw.decode("utf-8") if isinstance(raw, bytes) else raw)


def _with_fallback(fast: Callable[[bytes], Any], error: type[Exception]) -> Callable[[bytes], Any]:
    def loads(raw: bytes) -> Any:
        """``raw`` decoded; :class:`ValueError`/:class:`RecursionError` as :func:`json.loads`."""
        try:
            return fast(raw)
        except error:
            return _stdlib_loads(raw)

    return loads


try:
    import orjson
except ImportError:  # the live extra is not installed: the standard library alone
    loads: Callable[[bytes], Any] = _stdlib_loads
else:
    loads = _with_fallback(orjson.loads, orjson.JSONDecodeError)
