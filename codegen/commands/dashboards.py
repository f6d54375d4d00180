"""``metric-catalog dashboards``: write one Grafana dashboard JSON per catalog file,
with the Prometheus rules that ship with it (``<module>.rules.yaml``).

By default the dashboards go to the configured ``dashboards-dir`` through the
generator's writer (:mod:`codegen.generate.writer`): unchanged files are not rewritten,
generated dashboards whose catalog file is gone are removed, and hand-written
JSON there is never overwritten. ``make generate`` writes the same files as
part of its plan. ``--out DIR`` writes them into another directory instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..generate.alerts import render_alerts
from ..generate.dashboards import render_dashboards
from ..generate.writer import (
    HandWrittenFileError,
    WriteError,
    apply_changes,
    compute_changes,
)
from ..safe_fs import write_atomic
from ..safe_outputs import check_output_locations
from . import add_root_argument, config_from_args, load_or_report

__all__ = ["HELP", "configure", "run"]

HELP = (
    "Write a Grafana dashboard JSON per catalog file (<dashboards-dir>/<module>.json) and "
    "its Prometheus rules (<module>.rules.yaml)."
)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--out``, ``--check`` and the catalog location."""
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help=(
            "write the dashboards into the folder DIR instead of the configured "
            "dashboards-dir (nothing is removed there)"
        ),
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the dashboards-dir is out of date",
    )
    add_root_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Write (or check) the dashboards; 1 on catalog errors or stale files."""
    config = config_from_args(args)
    if args.out is None:
        check_output_locations(config)
    catalog = load_or_report(config)
    if catalog is None:
        return 1
    try:
        # The rules ship with the dashboards: one bundle, so neither is stale without the other.
        rendered = dict(
            sorted({**render_dashboards(catalog, config), **render_alerts(catalog, config)}.items())
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.out is not None:
        for rel, text in rendered.items():
            try:
                write_atomic(args.out / Path(rel).name, text)
            except OSError as exc:
                reason = exc.strerror or str(exc)
                print(f"error: cannot write {args.out / Path(rel).name}: {reason}", file=sys.stderr)
                return 2
            print(f"wrote {args.out / Path(rel).name}")
        return 0
    root = config.root
    try:
        changes, _ = compute_changes(root, rendered, (config.dashboards_dir,))
    except HandWrittenFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.check:
        for change in changes:
            print(f"{change.path}: out of date ({change.action}); run {config.generate_command}")
        return 1 if changes else 0
    try:
        apply_changes(root, changes)
    except WriteError as exc:
        print(f"error: {exc.strerror}", file=sys.stderr)
        return 2
    for change in changes:
        print(f"{change.action} {change.path}")
    if not changes:
        shown = sum(1 for path in rendered if path.endswith(".json"))
        print(f"{config.dashboards_dir}: up to date ({shown} dashboard(s)), with their rules")
    return 0
