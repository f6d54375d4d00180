"""The generator: render the loaded catalog (modules, docs, dashboards, outputs), write it.

:mod:`codegen.generate.plan` is the one plan ``generate`` and ``check`` share; the
renderers and the transactional writer sit beside it, one module each.
Names are imported on first use: ``codegen.generate.manifest`` alone imports no Jinja.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .plan import (
        MANAGED_DIRS,
        RENDERERS,
        PlanError,
        Planned,
        PlanResult,
        generation_diagnostics,
        load_plan,
        plan_changes,
        plan_project,
        render_all,
    )

__all__ = [
    "MANAGED_DIRS",
    "RENDERERS",
    "PlanError",
    "PlanResult",
    "Planned",
    "generation_diagnostics",
    "load_plan",
    "plan_changes",
    "plan_project",
    "render_all",
]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(".plan", __name__), name)
