"""The public surface: every module says what it exports, and documents it."""

from __future__ import annotations

import importlib
import inspect
from types import ModuleType

import pytest

PUBLIC_MODULES = [
    "metric_catalog",
    "metric_catalog.vocabulary",
    "metric_catalog.series_rules",
    "metric_catalog.otel",
    "metric_catalog.tee",
    "metric_catalog.loggers",
    "metric_catalog.exporters",
    "metric_catalog.identity",
    "metric_catalog.generated",
    "metric_catalog.generated.grpo",
    "codegen.diagnostics",
    "codegen.model",
    "codegen.naming",
    "codegen.pipeline",
    "codegen.generate",
]


def _defined_here(module: ModuleType) -> list[str]:
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == module.__name__
    ]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_names_real_documented_objects(name: str) -> None:
    """Every name in __all__ exists, once, and every class and function has a docstring.

    (ruff's RUF022 keeps each __all__ sorted.)
    """
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{name}.__all__ repeats a name"
    assert module.__doc__, f"{name} has no module docstring"
    for item in exported:
        value = getattr(module, item)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name}.{item} has no docstring"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_class_and_function_is_exported(name: str) -> None:
    """A public class or function defined in the module appears in __all__."""
    module = importlib.import_module(name)
    missing = sorted(set(_defined_here(module)) - set(module.__all__))
    assert missing == [], f"{name} defines public names missing from __all__: {missing}"
