"""The catalog front end: load -> schema -> build -> cross-file -> lints.

It imports nothing of the stages above it (generate, runs, the run checkers, the
CLI). :func:`load_and_check` is its entry point; :class:`Catalog` what it returns.
Names are imported on first use, so ``codegen.catalog.model`` alone stays cheap
(the cached ``generate`` path imports no YAML parser).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Catalog, MetricRow
    from .pipeline import CheckResult, load_and_check

__all__ = ["Catalog", "CheckResult", "MetricRow", "load_and_check"]

_HOMES = {"Catalog": "model", "MetricRow": "model", "CheckResult": "pipeline"}


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES.get(name, 'pipeline')}", __name__), name)
