"""``python -m codegen dashboards``: write one Grafana dashboard JSON per catalog file.

By default the dashboards go to ``ROOT/docs/dashboards/`` through the
generator's writer (:mod:`codegen.writer`): unchanged files are not rewritten,
generated dashboards whose catalog file is gone are removed, and hand-written
JSON there is never overwritten. ``make generate`` writes the same files as
part of its plan. ``--out DIR`` writes them into another directory instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..commands import add_catalog_arguments, load_or_report
from ..dashboards import DASHBOARD_DIR, render_dashboards
from ..writer import HandWrittenFileError, apply_changes, compute_changes, write_atomic

__all__ = ["HELP", "configure", "run"]

HELP = "Write a Grafana dashboard JSON per catalog file (docs/dashboards/<module>.json)."


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--out``, ``--check`` and the catalog location."""
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help=f"write the dashboards into DIR instead of ROOT/{DASHBOARD_DIR}",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"write nothing; exit 1 when ROOT/{DASHBOARD_DIR} is out of date",
    )
    add_catalog_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Write (or check) the dashboards; 1 on catalog errors or stale files."""
    catalog = load_or_report(args.catalog, args.root)
    if catalog is None:
        return 1
    try:
        rendered = render_dashboards(catalog)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.out is not None:
        for rel, text in rendered.items():
            write_atomic(args.out / Path(rel).name, text)
            print(f"wrote {args.out / Path(rel).name}")
        return 0
    root: Path = args.root
    try:
        changes, _ = compute_changes(root, rendered, (DASHBOARD_DIR,))
    except HandWrittenFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.check:
        for change in changes:
            print(f"{change.path}: out of date ({change.action}); run make generate")
        return 1 if changes else 0
    apply_changes(root, changes)
    for change in changes:
        print(f"{change.action} {change.path}")
    if not changes:
        print(f"{DASHBOARD_DIR}: up to date ({len(rendered)} dashboard(s))")
    return 0
