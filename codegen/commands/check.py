"""``metric-catalog check``: prove the committed generated files match the catalog.

Renders in memory and compares with the files on disk; writes nothing. Exit 1
with a unified diff (capped) and the fix command when a generated file is
stale, hand-edited, missing, or left over from a deleted catalog file.
"""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Iterator, Sequence
from typing import Final

from ..catalog.diagnostics import shown_path
from ..generate.writer import FileChange, is_scratch
from ..safe_outputs import check_output_locations
from . import add_no_warnings_argument, add_root_argument, config_from_args, plan_or_report

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


_ROW_LABELS: Final = ("name", "title", "path", "id")
"""Keys that name a one-line JSON object (a catalog row, a dashboard panel, a file)."""

_MAX_LINE: Final = 160
"""Longer diff lines of a JSON output are cut, saying how much was left out."""


def _json_rows(text: str | None) -> tuple[dict[str, dict[str, object]], list[str]]:
    """A JSON output's one-line objects by label, and its other lines (with line ends)."""
    rows: dict[str, dict[str, object]] = {}
    rest: list[str] = []
    for line in (text or "").splitlines(keepends=True):
        body = line.strip().rstrip(",")
        value: object = None
        if body.startswith("{") and body.endswith("}"):
            try:
                value = json.loads(body)
            except ValueError:
                value = None
        if isinstance(value, dict):
            key = next((k for k in _ROW_LABELS if isinstance(value.get(k), str | int)), None)
            if key is not None:
                rows.setdefault(f"{key} {value[key]}", value)
                continue
        rest.append(line)
    return rows, rest


def _short(value: object, limit: int = 60) -> str:
    """A field's value as JSON, cut to ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _json_summary(change: FileChange) -> Iterator[str]:
    """A JSON output's change by row: which objects changed (and which fields), came or went.

    Generated JSON holds one object per line (a catalog row, a dashboard panel),
    often hundreds of characters long; a unified diff of those lines hides the
    one field that changed. The other lines are diffed as usual, cut when long.
    """
    old_rows, old_rest = _json_rows(change.old)
    new_rows, new_rest = _json_rows(change.new)
    changed = [k for k in old_rows.keys() & new_rows.keys() if old_rows[k] != new_rows[k]]
    added = sorted(new_rows.keys() - old_rows.keys())
    removed = sorted(old_rows.keys() - new_rows.keys())
    if changed or added or removed:
        yield (
            f"@@ {change.path}: {len(changed)} row(s) changed, {len(added)} added, "
            f"{len(removed)} removed (JSON, summarised by row) @@"
        )
    for label in sorted(changed):
        old, new = old_rows[label], new_rows[label]
        fields = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        yield f"~ {label}: {', '.join(fields)}"
        for name in fields:
            before, after = _short(old.get(name)), _short(new.get(name))
            yield f"    {name}: {before} -> {after}"
    yield from (f"+ {label}" for label in added)
    yield from (f"- {label}" for label in removed)
    for diffed in difflib.unified_diff(old_rest, new_rest, n=1):
        if diffed.startswith(("---", "+++")):
            continue
        line = diffed.rstrip("\n")
        if len(line) > _MAX_LINE:
            line = f"{line[:_MAX_LINE]}... ({len(line) - _MAX_LINE} more characters)"
        yield line


def diff_lines(changes: Sequence[FileChange]) -> Iterator[str]:
    """Unified diff lines (no trailing newlines) from the files on disk to the rendered ones.

    A JSON output that was there before is summarised by row (:func:`_json_summary`).
    """
    for change in changes:
        fromfile = f"a/{change.path}" if change.old is not None else "/dev/null"
        tofile = f"b/{change.path}" if change.new is not None else "/dev/null"
        if change.path.endswith(".json") and change.old is not None and change.new is not None:
            yield f"--- {fromfile}"
            yield f"+++ {tofile}"
            yield from _json_summary(change)
            continue
        old = (change.old or "").splitlines(keepends=True)
        new = (change.new or "").splitlines(keepends=True)
        for line in difflib.unified_diff(old, new, fromfile, tofile):
            yield line.rstrip("\n")


def run(args: argparse.Namespace) -> int:
    """0 when every generated file is current, 1 otherwise (or when the catalog has errors)."""
    config = config_from_args(args)
    check_output_locations(config)
    planned = plan_or_report(config, "check", "cannot compare", warnings=not args.no_warnings)
    if planned is None:
        return 1
    changes, unchanged = planned.changes, planned.unchanged
    if not changes:
        print(f"check: {len(unchanged)} generated files are current")
        return 0
    for change in changes:
        reason = _REASONS[change.action]
        if change.action == "delete" and is_scratch(change.path):
            reason = "should be removed (left over from an interrupted generate)"
        print(f"{shown_path(change.path, config.root)}: {reason}")
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
