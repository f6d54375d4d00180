"""The public surface: every module says what it exports, and documents it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from types import ModuleType
from typing import Final

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


# --- one public home per name ---------------------------------------------------------------

DOCUMENTED_FACES: Final[dict[tuple[str, str], str]] = {
    # docs/api/vocabulary.md lists these vocabularies as vocabulary's (series_rules is their home).
    ("metric_catalog.vocabulary", "ATTRIBUTE_TYPES"): "docs/api/vocabulary.md",
    ("metric_catalog.vocabulary", "METRIC_KINDS"): "docs/api/vocabulary.md",
    ("metric_catalog.vocabulary", "REQUIREMENT_LEVELS"): "docs/api/vocabulary.md",
    ("metric_catalog.vocabulary", "TEMPORALITIES"): "docs/api/vocabulary.md",
    ("metric_catalog.vocabulary", "placeholders"): "docs/api/vocabulary.md",
    # Generated modules import it from vocabulary beside TeedMetric, whose field it is.
    ("metric_catalog.vocabulary", "ConfigChoice"): "docs/api/vocabulary.md",
    # live-check's entry points take, return and raise these (codegen.live_check's docstring).
    ("codegen.live_check", "CheckOptions"): "the options check_file & co. take",
    ("codegen.live_check", "Limits"): "the caps check_file & co. take",
    ("codegen.live_check", "LiveCheckReport"): "what check_file & co. return",
    ("codegen.live_check", "LogInputError"): "what check_paths raises",
    ("codegen.live_check", "Source"): "one input of check_paths",
    ("codegen.live_check", "FINDING_KINDS"): "the kinds --fail-on names",
    ("codegen.live_check", "KINDS"): "their severities and messages",
    ("codegen.live_check.findings", "KINDS"): "the kept name of FINDING_KIND_TABLE",
    # The catalog front end's package face (names imported on first use).
    ("codegen.catalog", "Catalog"): "codegen.catalog's docstring",
    ("codegen.catalog", "CheckResult"): "codegen.catalog's docstring",
    ("codegen.catalog", "MetricRow"): "codegen.catalog's docstring",
    ("codegen.catalog", "load_and_check"): "codegen.catalog's docstring",
}
"""Names public in a second module on purpose, each with where that face is documented."""


def _public_modules() -> list[ModuleType]:
    """Every importable public module of codegen and metric_catalog (no ``_`` part)."""
    import codegen
    import metric_catalog

    found = []
    for package in (codegen, metric_catalog):
        prefix = package.__name__ + "."
        for info in pkgutil.walk_packages(package.__path__, prefix):
            parts = info.name.split(".")
            if any(p.startswith("_") for p in parts) or "generated" in parts:
                continue
            if info.name.startswith("metric_catalog.codegen"):
                continue  # the generator shipped under the runtime's name: codegen itself
            try:
                module = importlib.import_module(info.name)
            except ImportError:  # an optional extra (sphinx, an exporter) is not installed
                continue
            if isinstance(getattr(module, "__all__", None), list | tuple):
                found.append(module)
        found.append(package)
    return found


def _exporters() -> dict[tuple[str, int], list[str]]:
    """(name, id of the object) -> the public modules whose ``__all__`` exports it.

    Small ints and strings are left out: equal literals may be one object without
    being one name.
    """
    by_object: dict[tuple[str, int], list[str]] = {}
    for module in _public_modules():
        for name in module.__all__:
            value = getattr(module, name, None)
            if value is None or isinstance(value, int | float | str | bool):
                continue
            by_object.setdefault((name, id(value)), []).append(module.__name__)
    return by_object


def test_a_name_is_public_in_exactly_one_module_unless_a_documented_face() -> None:
    twice = {
        name: sorted(modules)
        for (name, _), modules in _exporters().items()
        if len([m for m in modules if (m, name) not in DOCUMENTED_FACES]) > 1
    }
    assert not twice, (
        f"public in more than one module: {twice}; export each name from its home only, "
        "or list the other module in DOCUMENTED_FACES with where it is documented"
    )


def test_a_public_function_or_class_is_exported_by_its_home_or_a_documented_face() -> None:
    for module in _public_modules():
        for name in module.__all__:
            value = getattr(module, name)
            home = getattr(value, "__module__", None)
            if not (inspect.isclass(value) or inspect.isfunction(value)) or home is None:
                continue
            private_home = any(part.startswith("_") for part in home.split("."))
            assert (
                home == module.__name__
                or private_home
                or (module.__name__, name) in DOCUMENTED_FACES
            ), f"{module.__name__} exports {name} from {home}: export it from {home} only"


def test_every_documented_face_is_exported_by_its_module() -> None:
    for module_name, name in DOCUMENTED_FACES:
        assert name in importlib.import_module(module_name).__all__, (module_name, name)
