"""``python -m codegen lint [PATHS]``: everything ``validate`` checks, plus the lint rules.

The rules live in :mod:`codegen.catalog.lints`; a row silences one with
``no_lint: [RULE]``. Exit status: 0 when there are no errors (warnings
allowed; ``--warnings-as-errors`` to fail on them), 1 otherwise.
"""

from __future__ import annotations

import argparse
from typing import Final

from .validate import add_arguments, run_check

__all__ = ["HELP", "configure", "run"]

HELP: Final = (
    "Validate the catalog and run the naming, unit and description lints; exit 1 on errors."
)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add PATHS, ``--format``, ``--root`` and ``--warnings-as-errors``."""
    add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Validate, lint and report."""
    return run_check(args, lint=True)
