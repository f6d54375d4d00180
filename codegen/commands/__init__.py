"""One module per ``python -m codegen`` command; see :mod:`codegen.cli`."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_root_argument"]


def add_root_argument(parser: argparse.ArgumentParser) -> None:
    """``--root``: the repository root holding ``catalog/`` and the output folders."""
    parser.add_argument(
        "--root",
        type=Path,
        default=Path.cwd(),
        help="repository root holding catalog/ and the output folders (default: cwd)",
    )
