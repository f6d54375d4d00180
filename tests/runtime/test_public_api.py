"""The public surface: every module says what it exports, and documents it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
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
    "codegen.catalog.diagnostics",
    "codegen.catalog.model",
    "codegen.catalog.naming",
    "codegen.catalog.pipeline",
    "codegen.generate.plan",
    "codegen.catalog.lints",
    "codegen.config",
    "codegen.codes",
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


# --- the exception hierarchy, drawn once -----------------------------------------------------

_DRAWN = re.compile(r"^(?P<indent>[\s│├└─]*)(?P<name>[A-Za-z_.]+)\b")


def _drawing() -> list[tuple[int, str]]:
    """(depth, dotted name) of each line of the drawing in ``codegen``'s docstring."""
    import codegen

    doc = codegen.__doc__ or ""
    block = doc.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    entries = []
    for line in block.splitlines():
        match = _DRAWN.match(line)
        assert match, line
        entries.append((len(match.group("indent")), match.group("name")))
    return entries


def _codegen_exceptions() -> set[type[BaseException]]:
    import codegen

    found: set[type[BaseException]] = set()
    for info in pkgutil.walk_packages(codegen.__path__, "codegen."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, Exception)
                and value.__module__ == module.__name__
            ):
                found.add(value)
    return found


def test_codegens_docstring_draws_every_exception_under_its_base() -> None:
    """httpx-style: one drawing of the hierarchy, checked against the classes themselves."""
    entries = _drawing()
    drawn: dict[str, str] = {}
    for index, (depth, name) in enumerate(entries):
        parents = [n for d, n in entries[:index] if d < depth]
        if "." not in name:  # a built-in at the root
            assert depth == entries[0][0]
            continue
        module, _, attr = name.rpartition(".")
        cls = getattr(importlib.import_module(f"codegen.{module}"), attr)
        assert cls.__bases__[0].__name__ == parents[-1].rpartition(".")[2], name
        drawn[cls.__qualname__] = name
    missing = {cls.__name__ for cls in _codegen_exceptions()} - set(drawn)
    assert not missing, f"draw these in codegen/__init__.py: {sorted(missing)}"


def test_codegens_docstring_names_the_runtimes_exceptions_and_their_bases() -> None:
    import codegen

    named = re.findall(r":class:`~([\w.]+)`\s+\(``(\w+)``\)", codegen.__doc__ or "")
    assert len(named) == 4
    for dotted, base in named:
        module, _, attr = dotted.rpartition(".")
        cls = getattr(importlib.import_module(module), attr)
        assert cls.__bases__[0].__name__ == base, dotted
