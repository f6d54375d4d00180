"""Warn-once reporting for the telemetry layer.

Telemetry must never crash a training loop, so every failure it meets becomes
a warning instead of an exception. A step loop calls the tee thousands of
times, so each distinct cause is reported once per process: the first NaN loss
is news, the next ten thousand are noise.

Warnings (rather than ``logging``) because they carry a category users can
filter (``-W ignore::metric_catalog.tee.MetricCatalogWarning``) or promote
in tests, and pytest collects them. If the user's filters promote them to
errors, the warning is logged instead of raised: the promise that the tee
never raises wins.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
from collections.abc import Hashable
from typing import Final

__all__ = [
    "FAMILY_LIMIT",
    "REPR_LIMIT",
    "MetricCatalogWarning",
    "describe_error",
    "safe_repr",
    "safe_text",
    "type_name",
    "warn_once",
]

_LOGGER = logging.getLogger("metric_catalog")
_LOCK = threading.Lock()
_SEEN: set[Hashable] = set()
_FAMILY_COUNTS: dict[str, int] = {}

FAMILY_LIMIT: Final = 100
"""Distinct causes reported per family (e.g. undeclared keys) before the rest go quiet."""


REPR_LIMIT: Final = 120
"""Characters of an untrusted object's repr a warning shows at most."""

_UNTRUSTED_FAILED: Final = "?"


def type_name(value: object) -> str:
    """``type(value).__qualname__``, never raising (a metaclass may override it)."""
    try:
        name = type(value).__qualname__
    except Exception:  # noqa: BLE001 - a hostile metaclass: nothing to show
        return _UNTRUSTED_FAILED
    return str.__str__(name) if isinstance(name, str) else _UNTRUSTED_FAILED


def safe_text(value: object) -> str | None:
    """``value`` as an exact ``str`` when it is a ``str`` (subclasses copied), else None.

    A ``str`` subclass may override ``__hash__``, ``__eq__`` or ``__str__``;
    the copy carries only its characters, so hashing and comparing it is safe.
    """
    if type(value) is str:
        return value
    if issubclass(type(value), str):  # no __class__ lookup, unlike isinstance
        return str.__str__(value)
    return None


_CONTAINERS: Final = (list, tuple, dict, set, frozenset)
_CONTAINER_ITEMS_SHOWN: Final = 64


def safe_repr(value: object, limit: int = REPR_LIMIT) -> str:
    """A repr of an untrusted object for a message: capped, and never raising.

    Exact strings, numbers, ``None`` and small built-in containers show their
    repr; anything else is its type name plus its guarded repr, or ``<TypeName
    object>`` when the repr raises or is not a string. A repr longer than
    ``limit`` characters is cut and ends with ``...``.
    """
    kind = type(value)
    try:
        if kind is str or kind is float or kind is bool or value is None:
            text = repr(value)
        elif kind is int:
            bits = value.bit_length()  # type: ignore[attr-defined]
            text = repr(value) if bits <= 256 else f"<int of {bits} bits>"
        elif kind in _CONTAINERS:
            size = len(value)  # type: ignore[arg-type]
            if size > _CONTAINER_ITEMS_SHOWN:
                return f"<{kind.__name__} of {size} items>"
            text = str.__str__(repr(value))
        else:
            shown = repr(value)
            if not isinstance(shown, str):
                return f"<{type_name(value)} object>"
            shown = str.__str__(shown)
            text = shown if shown.startswith("<") else f"{type_name(value)} {shown}"
    except Exception:  # noqa: BLE001 - the repr of an untrusted object may raise anything
        return f"<{type_name(value)} object>"
    return text if len(text) <= limit else text[: max(limit - 3, 0)] + "..."


def describe_error(exc: BaseException) -> str:
    """``TypeName: message`` of an exception whose ``__str__`` may itself raise."""
    try:
        text = str(exc)
        text = str.__str__(text) if isinstance(text, str) else ""
    except Exception:  # noqa: BLE001 - an exception that cannot print itself
        return f"{type_name(exc)} (its message could not be formatted)"
    if len(text) > REPR_LIMIT:
        text = text[: REPR_LIMIT - 3] + "..."
    return f"{type_name(exc)}: {text}" if text else type_name(exc)


class MetricCatalogWarning(UserWarning):
    """A telemetry failure that was contained instead of raised (bad value, exporter down)."""


def warn_once(cause: Hashable, message: str, *, family: str | None = None) -> bool:
    """Emit ``message`` as a :class:`MetricCatalogWarning` unless ``cause`` was already reported.

    ``cause`` identifies the failure, e.g. ``("non-finite", "train", "loss")``,
    so two different keys each get their own warning. Causes that come from
    unbounded input (keys the caller invents, such as ``f"reward_{step}"``)
    name a ``family``: after :data:`FAMILY_LIMIT` distinct causes in it, one
    last warning says so and the family goes quiet, so memory and output stay
    bounded. Returns whether a warning was emitted. Never raises: a cause
    that cannot be hashed or compared (a caller's object inside it) counts
    as the one cause ``("unhashable-cause", family)``.
    """
    try:
        hash(cause)
    except Exception:  # noqa: BLE001 - the cause holds an object whose __hash__ raises
        cause = ("unhashable-cause", family)
    with _LOCK:
        try:
            seen = cause in _SEEN
        except Exception:  # noqa: BLE001 - an __eq__ raising on a hash collision
            cause = ("unhashable-cause", family)
            seen = cause in _SEEN
        if seen:
            return False
        if family is not None:
            count = _FAMILY_COUNTS.get(family, 0) + 1
            if count > FAMILY_LIMIT + 1:
                return False
            _FAMILY_COUNTS[family] = count
            if count == FAMILY_LIMIT + 1:
                message = (
                    f"{FAMILY_LIMIT} distinct {family} warnings issued; "
                    "further ones are not reported in this process"
                )
        _SEEN.add(cause)
    _emit(message)
    return True


def _emit(message: str) -> None:
    try:
        warnings.warn(message, MetricCatalogWarning, stacklevel=4)
    except Exception:  # noqa: BLE001 - filters set to "error" must not break the loop
        with contextlib.suppress(Exception):  # a broken log handler: nothing left to tell
            _LOGGER.warning("%s", message)


def _reinit_lock_after_fork() -> None:
    global _LOCK  # noqa: PLW0603 - a thread of the parent may have held it at fork time
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reinit_lock_after_fork)


def _reset_for_tests() -> None:
    """Forget which causes were reported. For test isolation only."""
    with _LOCK:
        _SEEN.clear()
        _FAMILY_COUNTS.clear()
