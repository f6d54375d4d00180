"""Importing an example project's generated package in a test, isolated from the others.

An example's generated modules register their rows at import. An earlier test may have
left rows declared (the repository's own ``train/reward``) or the registry frozen by a
tee, and either makes that import raise (a clash, or a row declared after the freeze).
:func:`imported_example` empties the registry before the import as well as after it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from codegen.catalog.model import Catalog
from metric_catalog import vocabulary

__all__ = [
    "declared_units",
    "exported_units",
    "forget_package",
    "imported_example",
]


def forget_package(package: str) -> None:
    """Drop ``package`` and its submodules from ``sys.modules`` (a copy may be imported next)."""
    for name in [name for name in sys.modules if name.split(".")[0] == package]:
        del sys.modules[name]


@contextmanager
def imported_example(
    project: Path, package: str, modules: Sequence[str]
) -> Iterator[tuple[list[ModuleType], ModuleType]]:
    """``project``'s generated ``modules`` and its ``runs`` module, imported on an empty registry.

    Yields ``(generated modules, runs)`` with the registry emptied again (each test
    registers the rows itself); on exit the package is forgotten and the registry emptied.
    """
    forget_package(package)
    vocabulary._reset_for_tests()
    sys.path.insert(0, str(project))
    try:
        generated = [
            importlib.import_module(f"{package}.telemetry.generated.{name}") for name in modules
        ]
        runs = importlib.import_module(f"{package}.runs")
        vocabulary._reset_for_tests()
        yield generated, runs
    finally:
        sys.path.remove(str(project))
        forget_package(package)
        vocabulary._reset_for_tests()


def exported_units(collected: Any) -> dict[str, str]:
    """Series name -> unit of every metric an in-memory OpenTelemetry reader collected."""
    return {
        metric.name: metric.unit
        for resource in (collected.resource_metrics if collected else ())
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }


def declared_units(catalog: Catalog, names: Iterable[str]) -> dict[str, str]:
    """Series name -> the unit the catalog says each of ``names`` is exported in."""
    by_name = {row.name: row for _file, row in catalog.rows()}
    return {name: by_name[name].unit for name in names}
