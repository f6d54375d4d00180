"""Load, validate and lint the catalog in one call: :func:`load_and_check`.

Every stage reports through :class:`~codegen.catalog.diagnostics.Diagnostic` and none
stops the others: all files are loaded, every valid row is built into the
:class:`~codegen.catalog.model.Catalog`, and the findings of the whole run come back
together, sorted by file and position.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..safe_text import describe, first_control, shown
from .builder import build_file, declared_names
from .crossfile import check_catalog
from .diagnostics import Diagnostic, Position, Severity, has_errors
from .lints import lint_catalog
from .loader import YMap, load_file
from .model import Catalog, CatalogFile
from .schema_check import check_schema

__all__ = ["CheckResult", "default_paths", "display_path", "gc_paused", "load_and_check"]


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What a check run found.

    ``catalog`` holds the rows that loaded cleanly (partial when there are
    errors); ``diagnostics`` is sorted by file and position; ``ok`` is true
    when no diagnostic is an error (warnings allowed).
    """

    catalog: Catalog
    diagnostics: tuple[Diagnostic, ...]
    ok: bool


def default_paths(root: Path) -> list[Path]:
    """``catalog/*.yaml`` under ``root``, sorted."""
    return sorted((root / "catalog").glob("*.yaml"))


def display_path(path: Path, root: Path) -> str:
    """How a path is shown in diagnostics: relative to ``root`` when possible, POSIX."""
    if path.is_absolute():
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            try:
                return path.resolve().relative_to(root.resolve()).as_posix()
            except (ValueError, OSError):
                return path.as_posix()
    return path.as_posix()


def _expand(paths: Iterable[Path], root: Path) -> list[Path]:
    """Directories stand for their ``*.yaml`` files; other paths are kept as given."""
    expanded: list[Path] = []
    for path in paths:
        full = path if path.is_absolute() else root / path
        if full.is_dir():
            expanded.extend(path / child.name for child in sorted(full.glob("*.yaml")))
        else:
            expanded.append(path)
    return expanded


def _file_name_problem(display: str) -> Diagnostic | None:
    """A FILE_NAME error when the file's path holds a control character, else ``None``.

    The path reaches generated files (their header line, docstrings, JSON) and
    terminals; a line break there (a lone ``\\r`` is one to Python) would turn
    the rest of the name into code. The file is not read: every message names
    it with the character escaped.
    """
    char = first_control(display)
    if char is None:
        return None
    message = (
        f"the file's path holds the control character {describe(char)}, which would break "
        "or disguise the header line of every file generated from it; rename the file (and "
        "its folders) without it"
    )
    return Diagnostic("FILE_NAME", Severity.ERROR, message, Position(shown(display)))


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (restored after, even on error).

    Loading builds a few hundred thousand acyclic objects (nodes, rows,
    positions) that all stay alive; each automatic collection would walk them
    again for nothing (about a tenth of a 10k-row validate). Reference counting
    still frees everything as usual. Rendering pauses it too
    (:func:`codegen.generate.plan.load_plan`), for the same objects.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_and_check(
    paths: Sequence[Path] | None = None,
    *,
    root: Path | None = None,
    lint: bool = True,
) -> CheckResult:
    """Load ``paths`` (default ``catalog/*.yaml`` under ``root``), validate and lint them.

    ``root`` defaults to the current directory; diagnostics name files relative
    to it when possible. Never raises for bad catalog input.
    """
    with gc_paused():
        return _load_and_check(paths, root=root, lint=lint)


def _load_and_check(paths: Sequence[Path] | None, *, root: Path | None, lint: bool) -> CheckResult:
    base = Path.cwd() if root is None else root
    if paths is None:
        # Relative to base, so a relative root is not joined onto the paths twice.
        chosen = [Path("catalog") / found.name for found in default_paths(base)]
    else:
        chosen = _expand(paths, base)
    diagnostics: list[Diagnostic] = []
    files: list[CatalogFile] = []
    names: set[str] = set()
    seen: set[str] = set()
    for path in chosen:
        display = display_path(path, base)
        if display in seen:
            continue
        seen.add(display)
        refused = _file_name_problem(display)
        if refused is not None:
            diagnostics.append(refused)
            continue
        loaded = load_file(path if path.is_absolute() else base / path, display)
        diagnostics.extend(loaded.diagnostics)
        if not isinstance(loaded.root, YMap):
            continue
        schema = check_schema(loaded.root)
        diagnostics.extend(schema.diagnostics)
        names |= declared_names(loaded.root)
        built = build_file(loaded.root, display, schema)
        diagnostics.extend(built.diagnostics)
        if built.catalog_file is not None:
            files.append(built.catalog_file)
    catalog = Catalog(tuple(files))
    diagnostics.extend(check_catalog(catalog, declared=names))
    if lint:
        diagnostics.extend(lint_catalog(catalog))
    ordered = tuple(sorted(set(diagnostics), key=Diagnostic.sort_key))
    return CheckResult(catalog, ordered, not has_errors(ordered))
