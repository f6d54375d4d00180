"""``python -m codegen resolve``: the whole resolved catalog, stable for other tools."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from codegen.diagnostics import format_diagnostics
from codegen.model import Catalog
from codegen.resolve import render_resolved

__all__ = ["HELP", "add_catalog_arguments", "configure", "load_or_report", "run"]

HELP = "Print the resolved catalog (derived names, Prometheus series, sources) as text or JSON."


def add_catalog_arguments(parser: argparse.ArgumentParser) -> None:
    """``--root`` and ``--catalog``, shared by the commands that read the catalog."""
    parser.add_argument(
        "--root",
        type=Path,
        default=Path("."),
        help="repository root holding catalog/ (default: the current directory)",
    )
    parser.add_argument(
        "--catalog",
        type=Path,
        nargs="+",
        metavar="PATH",
        help="catalog files or directories to read instead of ROOT/catalog/*.yaml",
    )


def load_or_report(paths: Sequence[Path] | None, root: Path) -> Catalog | None:
    """Load and validate the catalog; print its diagnostics and return None when it has errors.

    Warnings go to stderr too, but do not stop the command.
    """
    # Imported here so ``--help`` does not pay for YAML and JSON schema.
    from codegen.pipeline import load_and_check  # noqa: PLC0415

    result = load_and_check(paths, root=root.resolve(), lint=False)
    if result.diagnostics:
        print(format_diagnostics(result.diagnostics), file=sys.stderr)
    return result.catalog if result.ok else None


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--format`` and the catalog location arguments."""
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text table for people, or JSON (sorted, byte-stable) for tools (default: text)",
    )
    add_catalog_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Print the resolved catalog; 1 when the catalog does not load cleanly."""
    catalog = load_or_report(args.catalog, args.root)
    if catalog is None:
        return 1
    print(render_resolved(catalog, args.format))
    return 0
