"""``metric-catalog check``: prove the committed generated files match the catalog.

Renders in memory and compares with the files on disk; writes nothing. Exit 1
with a unified diff (capped) and the fix command when a generated file is
stale, hand-edited, missing, or left over from a deleted catalog file.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterator, Sequence
from typing import Final

from ..commands import add_no_warnings_argument, add_root_argument, config_from_args, plan_or_report
from ..diagnostics import shown_path
from ..writer import FileChange

__all__ = ["DEFAULT_MAX_DIFF_LINES", "HELP", "configure", "diff_lines", "run"]

HELP: Final = "Fail (exit 1, with a diff) when generated files are not what the catalog renders to."

DEFAULT_MAX_DIFF_LINES: Final = 100
"""Diff lines shown before the rest is summarised, as ruff's generate-all check does."""

_REASONS: Final = {
    "create": "missing",
    "update": "stale or hand-edited",
    "delete": "should be removed (its catalog file is gone)",
}


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--root``, ``--no-warnings`` and ``--max-diff-lines``."""
    add_root_argument(parser)
    add_no_warnings_argument(parser)
    parser.add_argument(
        "--max-diff-lines",
        type=int,
        default=DEFAULT_MAX_DIFF_LINES,
        metavar="N",
        help=f"show at most N diff lines (default {DEFAULT_MAX_DIFF_LINES})",
    )


def diff_lines(changes: Sequence[FileChange]) -> Iterator[str]:
    """Unified diff lines (no trailing newlines) from the files on disk to the rendered ones."""
    for change in changes:
        old = (change.old or "").splitlines(keepends=True)
        new = (change.new or "").splitlines(keepends=True)
        fromfile = f"a/{change.path}" if change.old is not None else "/dev/null"
        tofile = f"b/{change.path}" if change.new is not None else "/dev/null"
        for line in difflib.unified_diff(old, new, fromfile, tofile):
            yield line.rstrip("\n")


def run(args: argparse.Namespace) -> int:
    """0 when every generated file is current, 1 otherwise (or when the catalog has errors)."""
    config = config_from_args(args)
    planned = plan_or_report(config, "check", "cannot compare", warnings=not args.no_warnings)
    if planned is None:
        return 1
    changes, unchanged = planned.changes, planned.unchanged
    if not changes:
        print(f"check: {len(unchanged)} generated files are current")
        return 0
    for change in changes:
        print(f"{shown_path(change.path, config.root)}: {_REASONS[change.action]}")
    limit = max(args.max_diff_lines, 0)
    shown = 0
    hidden = 0
    for line in diff_lines(changes):
        if shown < limit:
            print(line)
            shown += 1
        else:
            hidden += 1
    if hidden:
        print(f"... {hidden} more diff lines not shown")
    print(
        f"check: {len(changes)} generated file(s) out of date; run `{config.generate_command}` "
        "and commit the result"
    )
    return 1
