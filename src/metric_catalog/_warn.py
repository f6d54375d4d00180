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

import logging
import os
import threading
import warnings
from collections.abc import Hashable
from typing import Final

__all__ = ["FAMILY_LIMIT", "MetricCatalogWarning", "warn_once"]

_LOGGER = logging.getLogger("metric_catalog")
_LOCK = threading.Lock()
_SEEN: set[Hashable] = set()
_FAMILY_COUNTS: dict[str, int] = {}

FAMILY_LIMIT: Final = 100
"""Distinct causes reported per family (e.g. undeclared keys) before the rest go quiet."""


class MetricCatalogWarning(UserWarning):
    """A telemetry failure that was contained instead of raised (bad value, exporter down)."""


def warn_once(cause: Hashable, message: str, *, family: str | None = None) -> bool:
    """Emit ``message`` as a :class:`MetricCatalogWarning` unless ``cause`` was already reported.

    ``cause`` identifies the failure, e.g. ``("non-finite", "train", "loss")``,
    so two different keys each get their own warning. Causes that come from
    unbounded input (keys the caller invents, such as ``f"reward_{step}"``)
    name a ``family``: after :data:`FAMILY_LIMIT` distinct causes in it, one
    last warning says so and the family goes quiet, so memory and output stay
    bounded. Returns whether a warning was emitted. Never raises.
    """
    with _LOCK:
        if cause in _SEEN:
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
