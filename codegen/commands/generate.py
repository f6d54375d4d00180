"""``python -m codegen generate``: write the generated modules, docs pages and dashboards."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Final

from codegen.generate import plan_or_report
from codegen.writer import apply_changes

__all__ = ["HELP", "configure", "run"]

HELP: Final = "Render catalog/*.yaml into generated modules, docs pages and dashboards."


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--root`` and ``--verbose``."""
    parser.add_argument(
        "--root",
        type=Path,
        default=Path.cwd(),
        help="repository root holding catalog/ and the output folders (default: cwd)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list each file written or removed"
    )


def run(args: argparse.Namespace) -> int:
    """Write what changed; 0 on success, 1 when the catalog has errors (nothing written)."""
    # Resolved, so catalog paths show as catalog/x.yaml in headers whatever --root looked like.
    root: Path = args.root.resolve()
    planned = plan_or_report(root, "generate", "nothing written")
    if planned is None:
        return 1
    changes, unchanged = planned
    apply_changes(root, changes)
    removed = [c for c in changes if c.action == "delete"]
    written = [c for c in changes if c.action != "delete"]
    if args.verbose:
        for change in changes:
            verb = "removed" if change.action == "delete" else "wrote"
            print(f"{verb} {change.path}")
    print(f"generate: {len(written)} written, {len(unchanged)} unchanged, {len(removed)} removed")
    return 0
