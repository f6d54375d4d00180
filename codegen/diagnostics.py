"""Diagnostics: one finding about the catalog, where it is, and how to fix it.

Every stage (load, schema, cross-file checks, lints, diff, live-check) reports
through :class:`Diagnostic`, so the CLI prints them all the same way, sorted by
file and line, as text for people or JSON for machines.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Diagnostic", "Position", "Severity", "format_diagnostics", "has_errors"]


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """A place in a catalog file: path as given (POSIX, relative), 1-based line and column."""

    path: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.path
        return f"{self.path}:{self.line}:{self.column}"


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


def format_diagnostics(diagnostics: Sequence[Diagnostic], fmt: str = "text") -> str:
    """Render diagnostics sorted by position, as ``text`` lines or a ``json`` array."""
    ordered = sorted(diagnostics, key=Diagnostic.sort_key)
    if fmt == "json":
        return json.dumps([d.to_json() for d in ordered], indent=2)
    lines = [d.format() for d in ordered]
    errors = sum(d.severity is Severity.ERROR for d in ordered)
    warnings = len(ordered) - errors
    if ordered:
        lines.append(f"{errors} error(s), {warnings} warning(s)")
    return "\n".join(lines)
