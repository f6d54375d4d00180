"""Diagnostics: one finding about the catalog, where it is, and how to fix it.

Every stage (load, schema, cross-file checks, lints, diff, live-check) reports
through :class:`Diagnostic`, so the CLI prints them all the same way, sorted by
file and line, as text for people or JSON for machines.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Diagnostic",
    "Position",
    "Severity",
    "format_diagnostics",
    "has_errors",
    "position_text",
    "position_texts",
    "shown_path",
]


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """A place in a catalog file: path as given (POSIX, relative), 1-based line and column."""

    path: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        return position_text(self.path, self.line, self.column)


def position_texts(path: str, marks: Mapping[str, tuple[int, int]]) -> dict[str, str]:
    """:func:`position_text` of each ``(line, column)`` in ``path``, by name in sorted order."""
    if all(line > 0 for line, _column in marks.values()):
        return {name: f"{path}:{line}:{column}" for name, (line, column) in sorted(marks.items())}
    return {name: position_text(path, *mark) for name, mark in sorted(marks.items())}


def position_text(path: str, line: int, column: int) -> str:
    """A :class:`Position` as text: ``path:line:column``, ``path`` alone when no line."""
    if line <= 0:
        return path
    return f"{path}:{line}:{column}"


class Severity(enum.Enum):
    """How bad a finding is: errors fail the run (exit 1), warnings do not."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: a stable SCREAMING code, a severity, a message and a position.

    ``message`` says what is wrong and how to fix it, as one sentence or two.
    """

    code: str
    severity: Severity
    message: str
    position: Position | None = None

    def sort_key(self) -> tuple[str, int, int, str, str]:
        """Order by file, line, column, then code and message, for stable output."""
        pos = self.position or Position("")
        return (pos.path, pos.line, pos.column, self.code, self.message)

    def format(self) -> str:
        """``catalog/grpo.yaml:14:5: error[CODE]: message``."""
        where = f"{self.position}: " if self.position is not None else ""
        return f"{where}{self.severity.value}[{self.code}]: {self.message}"

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict with stable keys."""
        pos = self.position
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "path": pos.path if pos else None,
            "line": pos.line if pos else None,
            "column": pos.column if pos else None,
        }


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    """True when any diagnostic is an error."""
    return any(d.severity is Severity.ERROR for d in diagnostics)


def _rebase(root: Path | None) -> Callable[[str], str] | None:
    """Root-relative path -> cwd-relative path, when the cwd is below ``root``; else None."""
    if root is None:
        return None
    here = Path.cwd().resolve()
    root = root.resolve()
    if here == root or not here.is_relative_to(root):
        return None

    @functools.cache
    def rebase(path: str) -> str:
        if not path or Path(path).is_absolute():
            return path
        return Path(os.path.relpath(root / path, here)).as_posix()

    return rebase


def shown_path(path: str, root: Path | None) -> str:
    """A root-relative ``path`` as a person in the cwd can open it.

    Run from a folder below the project root, it is relative to that folder
    (``../catalog/grpo.yaml``), so a terminal or editor can follow it; from the
    root, from elsewhere, or for an absolute path, it stays as it is.
    """
    rebase = _rebase(root)
    return path if rebase is None else rebase(path)


def format_diagnostics(
    diagnostics: Sequence[Diagnostic], fmt: str = "text", *, root: Path | None = None
) -> str:
    """Render diagnostics sorted by position, as ``text`` lines or a ``json`` array.

    With the project ``root``, text names files relative to the cwd when it is
    below the root (:func:`shown_path`); JSON keeps root-relative paths, the
    report's stable field.
    """
    ordered = sorted(diagnostics, key=Diagnostic.sort_key)
    if fmt == "json":
        return json.dumps([d.to_json() for d in ordered], indent=2)
    rebase = _rebase(root)
    shown = ordered
    if rebase is not None:
        shown = [
            d
            if d.position is None
            else dataclasses.replace(
                d, position=dataclasses.replace(d.position, path=rebase(d.position.path))
            )
            for d in ordered
        ]
    lines = [d.format() for d in shown]
    errors = sum(d.severity is Severity.ERROR for d in ordered)
    warnings = len(ordered) - errors
    if ordered:
        lines.append(f"{errors} error(s), {warnings} warning(s)")
    return "\n".join(lines)
