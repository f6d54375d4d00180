"""The example projects under ``examples/`` as their end-to-end tests use them.

:class:`ExampleProject` names one (its folder, package and generated modules) and does
what every example's test does: load and lint its catalog, copy it to a temporary folder
and generate its package there, read its runs' names, and import the generated package
(:class:`ImportedExample`: its runs module, rows and catalog).

An example's generated modules register their rows at import. An earlier test may have
left rows declared (the repository's own ``train/reward``) or the registry frozen by a
tee, and either makes that import raise (a clash, or a row declared after the freeze).
:func:`imported_example` empties the registry before the import as well as after it.
"""

from __future__ import annotations

import importlib
import shutil
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import pytest

from codegen.catalog.matching import KeyMatcher
from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import CheckResult, load_and_check
from codegen.cli import main
from metric_catalog import vocabulary
from metric_catalog.vocabulary import TeedMetric

__all__ = [
    "EXAMPLES",
    "ExampleProject",
    "ImportedExample",
    "Point",
    "declared_units",
    "exported_units",
    "forget_package",
    "imported_example",
    "recorded_points",
]

EXAMPLES: Final = Path(__file__).resolve().parents[1] / "examples"
"""The folder of the example projects."""

Point = tuple[str, frozenset[tuple[str, Any]]]
"""A point an in-memory reader collected: its series and its attributes."""


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


def recorded_points(collected: Any, catalog: Catalog | None = None) -> dict[Point, Any]:
    """(series, attributes) -> value of every point an in-memory reader collected; with
    ``catalog``, each series is checked to be exported in the unit the catalog says (the
    logged unit scaled away)."""
    if catalog is not None:
        units = exported_units(collected)
        assert units == declared_units(catalog, units)
    recorded: dict[Point, Any] = {}
    for resource in collected.resource_metrics if collected else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    attributes = frozenset((point.attributes or {}).items())
                    recorded[(metric.name, attributes)] = point.value
    return recorded


@dataclass(frozen=True)
class ImportedExample:
    """An example as its tests use it: the runs module, the generated rows and the catalog.

    ``modules`` are the generated modules by name. ``matcher`` is live-check's key
    matcher over the catalog, built when first used.
    """

    runs: ModuleType
    rows: list[TeedMetric]
    catalog: Catalog
    modules: dict[str, ModuleType] = field(default_factory=dict)

    def spec(self, name: str) -> Any:
        """The run named ``name``."""
        return next(spec for spec in self.runs.RUNS if spec.name == name)

    def register(self) -> None:
        """Declare the generated rows (the registry is emptied between tests)."""
        vocabulary.register_teed_metrics(self.rows)

    @cached_property
    def matcher(self) -> KeyMatcher:
        """Live-check's matcher of the catalog's rows (with its default family budget)."""
        rows = [row for _f, row in self.catalog.rows()]
        return KeyMatcher(rows, 1000, self.catalog.attributes())

    def routed_row(self, key: str) -> tuple[Any, dict[str, Any]]:
        """The one row live-check counts a flat key under (the longest prefix that routes)
        and what it captured."""
        prefix, rest = self.matcher.split(key)
        ((row, captured),) = self.matcher.match(prefix, rest)
        return row, dict(captured)

    def route(self, key: str) -> tuple[str, dict[str, Any]]:
        """The series of :meth:`routed_row` and what it captured."""
        row, captured = self.routed_row(key)
        return row.name, captured

    def row(self, series: str) -> TeedMetric:
        """The generated row of ``series``."""
        return next(row for row in self.rows if row.name == series)


@dataclass(frozen=True)
class ExampleProject:
    """One project under ``examples/``: its folder, its package and the modules generated
    into ``<package>/telemetry/generated`` from the catalog in ``<package>/telemetry/catalog``."""

    folder: str
    """The folder under ``examples/``, e.g. ``verl``."""
    package: str
    """The project's Python package, e.g. ``verl_metrics``."""
    modules: tuple[str, ...]
    """The generated modules, one per catalog file."""
    ignore: tuple[str, ...] = ("__pycache__", ".cache", "docs")
    """What is not copied with the project (glob patterns)."""

    @property
    def source(self) -> Path:
        """The example's folder in this repository."""
        return EXAMPLES / self.folder

    def catalog_paths(self, root: Path | None = None) -> list[Path]:
        """The catalog files of the project at ``root`` (default: the example itself)."""
        folder = (root or self.source) / self.package / "telemetry" / "catalog"
        return sorted(folder.glob("*.yaml"))

    def catalog_text(self) -> str:
        """The example's catalog files, one after the other."""
        return "".join(path.read_text(encoding="utf-8") for path in self.catalog_paths())

    def check(self, root: Path | None = None) -> CheckResult:
        """The catalog of the project at ``root`` (default: the example) loaded and linted."""
        where = root or self.source
        return load_and_check(self.catalog_paths(where), root=where)

    def catalog(self) -> Catalog:
        """The example's catalog; the test fails with the diagnostics when it has errors."""
        result = self.check()
        assert result.catalog is not None, [d.format() for d in result.diagnostics]
        return result.catalog

    def generated_copy(self, tmp_path_factory: pytest.TempPathFactory) -> Path:
        """A copy of the example whose package ``generate`` wrote afresh (the committed
        generated modules are removed first, so none survives by accident)."""
        root = tmp_path_factory.mktemp(self.folder) / self.folder
        shutil.copytree(self.source, root, ignore=shutil.ignore_patterns(*self.ignore))
        generated = root / self.package / "telemetry" / "generated"
        for module in self.modules:
            (generated / f"{module}.py").unlink(missing_ok=True)
        assert main(["generate", "--root", str(root)]) == 0
        return root

    def run_names(self) -> list[str]:
        """The names of the example's runs, read from the example itself (at collection, for
        the test ids, before any fixture made a copy)."""
        sys.path.insert(0, str(self.source))
        try:
            return [spec.name for spec in importlib.import_module(f"{self.package}.runs").RUNS]
        finally:
            sys.path.remove(str(self.source))
            forget_package(self.package)

    @contextmanager
    def imported(self, project: Path) -> Iterator[ImportedExample]:
        """``project``'s generated package and runs module imported on an empty registry (see
        :func:`imported_example`), with the example's catalog; forgotten on exit."""
        with imported_example(project, self.package, self.modules) as (modules, runs):
            rows = [
                value
                for module in modules
                for value in vars(module).values()
                if isinstance(value, TeedMetric)
            ]
            by_name = dict(zip(self.modules, modules, strict=True))
            yield ImportedExample(runs, rows, self.catalog(), by_name)
