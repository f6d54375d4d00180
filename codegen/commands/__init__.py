"""One module per ``python -m codegen`` command; see :mod:`codegen.cli`.

This package holds what several commands share: the ``--root``, ``--catalog``
and ``--format`` arguments, and loading the catalog with its diagnostics
printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Catalog

__all__ = [
    "add_catalog_arguments",
    "add_format_argument",
    "add_no_warnings_argument",
    "add_root_argument",
    "load_or_report",
]


def add_root_argument(parser: argparse.ArgumentParser) -> None:
    """``--root``: the repository root holding ``catalog/`` and the generated folders."""
    parser.add_argument(
        "--root",
        type=Path,
        default=Path("."),
        help="repository root holding catalog/ and the generated folders (default: cwd)",
    )


def add_catalog_arguments(parser: argparse.ArgumentParser) -> None:
    """``--root`` and ``--catalog``, shared by the commands that read the catalog."""
    add_root_argument(parser)
    parser.add_argument(
        "--catalog",
        type=Path,
        nargs="+",
        metavar="PATH",
        help="catalog files or directories to read instead of ROOT/catalog/*.yaml",
    )


def add_format_argument(
    parser: argparse.ArgumentParser, help_text: str = "report format (default: text)"
) -> None:
    """``--format text|json``, text by default."""
    parser.add_argument("--format", choices=("text", "json"), default="text", help=help_text)


def add_no_warnings_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-warnings``: print the catalog's errors only (``make check`` lints first)."""
    parser.add_argument(
        "--no-warnings",
        action="store_true",
        help="do not repeat the catalog's warnings (errors are still printed); "
        "make check uses it after `lint` has shown them once",
    )


def load_or_report(
    paths: Sequence[Path] | None, root: Path, *, warnings: bool = True
) -> Catalog | None:
    """Load and validate the catalog; print its diagnostics and return None when it has errors.

    Warnings go to stderr too (unless ``warnings`` is false), but do not stop
    the command.
    """
    # Imported here so ``--help`` (and generate's no-op path) do not pay for YAML and jsonschema.
    from ..diagnostics import Severity, format_diagnostics  # noqa: PLC0415
    from ..pipeline import load_and_check  # noqa: PLC0415

    result = load_and_check(paths, root=root.resolve(), lint=False)
    shown = [d for d in result.diagnostics if warnings or d.severity is Severity.ERROR]
    if shown:
        print(format_diagnostics(shown), file=sys.stderr)
    return result.catalog if result.ok else None
