"""``metric-catalog scan [PATHS]``: what the source code logs, against the catalog.

Reads Python files statically (see :mod:`codegen.scan`): keys the code logs
that no row declares are errors, what cannot be resolved statically and rows
no scanned code logs are warnings. Without PATHS it scans the project root
(the generated package too: its ``*_KEY`` constants resolve keys written with
them). The report is cached in ``scan/`` under ``cache-dir`` (see
:mod:`codegen.scan.cache`; ``--no-cache`` bypasses it). Exit status: 0 without errors (1 with
``--warnings-as-errors`` and a warning), 1 on errors, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..config import Config
from ..safe_fs import MAX_CATALOG_FILE_BYTES, read_regular
from ..safe_outputs import UnsafeOutputError, check_output_path
from ..scan.calls import merge_calls

if TYPE_CHECKING:
    from ..catalog.model import Catalog
    from ..scan.cache import ScanCache
    from ..scan.scanner import ScanReport
from . import (
    add_format_argument,
    add_root_argument,
    add_warnings_as_errors_argument,
    config_from_args,
    load_or_report,
    refuse_swallowed_paths,
)

__all__ = ["HELP", "NO_CALLS_NOTE", "candidates_note", "configure", "run"]

HELP: Final = (
    "Compare the keys the source code logs (read statically, never run) with the catalog; "
    "exit 1 on undeclared keys."
)

NO_CALLS_NOTE: Final = (
    "note: no logging call was recognised in the {files} scanned file(s), so no key was "
    "checked; if the code logs through a method of its own, such as "
    "`self.tracker.log(metrics, step=...)`, add it to [tool.metric-catalog] in "
    'pyproject.toml: scan-calls = [{{call = "tracker.log", metrics = 0}}] '
    "(docs/guide/adopt.md, 'Adopting a codebase that already logs')"
)
"""Said after the summary when the scanned files hold no call scan reads as logging.

Exit 0 with no findings otherwise reads as "every key is declared", when scan never
saw a key: a trainer logging through its own tracker object matches no default call.
"""


def candidates_note(report: ScanReport) -> str:
    """The calls that hand a dict of literal keys onward, each with its ``scan-calls`` entry:
    what to try when scan recognised few logging calls."""
    lines = [
        f"note: {report.calls} logging call(s) recognised; these calls hand a dict of "
        "literal keys onward and may be how the code logs (add the ones that are to "
        "scan-calls in [tool.metric-catalog]):"
    ]
    lines += [
        f"  `{c.call}` ({c.keys} key(s), first at {c.where}): {c.entry()}"
        for c in report.candidates
    ]
    return "\n".join(lines)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add PATHS, ``--format``, ``--warnings-as-errors``, ``--no-unlogged`` and the catalog."""
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATHS",
        help="Python files or folders to scan (default: the project root)",
    )
    add_format_argument(parser)
    add_warnings_as_errors_argument(
        parser, "warnings (unresolved logging, rows no scanned code logs)"
    )
    parser.add_argument(
        "--no-unlogged",
        action="store_true",
        help="do not warn about rows no scanned code logs (when scanning part of the code)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help=(
            "neither read nor write the scan cache (scan/ in the configured cache-dir, by "
            "default .cache/metric-catalog/scan/): every file is parsed and analysed again"
        ),
    )
    add_root_argument(parser)


class _CatalogError(ValueError):
    """The catalog did not load (its errors are printed already)."""


def _cache(config: Config) -> tuple[ScanCache | None, str | None]:
    """The project's scan cache, keyed by its catalog and configuration, or ``None`` and why
    not when the cache folder is unsafe (a link out of the root)."""
    from ..scan.cache import FOLDER, ScanCache, digest  # noqa: PLC0415 - keeps --help fast

    rel = f"{config.cache_dir}/{FOLDER}"
    try:
        check_output_path(config.root, rel, folder=True)
    except UnsafeOutputError as exc:
        return None, f"note: scanned without the cache: {exc}"
    parts = [config.fingerprint()]
    try:
        for path in config.catalog_files():
            parts += [path.as_posix(), digest(read_regular(path, MAX_CATALOG_FILE_BYTES))]
    except OSError:
        return None, None  # loading the catalog reports the file
    return ScanCache(config.root / rel, "\n".join(parts)), None


def run(args: argparse.Namespace) -> int:
    """Scan, print the findings, return the exit code."""
    from ..scan.scanner import scan  # noqa: PLC0415 - keeps --help fast

    config = config_from_args(args)
    refuse_swallowed_paths(args, "PATHS")
    paths: list[Path] = list(args.paths) or [config.root]
    missing = [path for path in paths if not path.exists() and not path.is_symlink()]
    if missing:
        shown = ", ".join(str(path) for path in missing)
        print(f"error: no such file or folder: {shown}", file=sys.stderr)
        return 2
    cache, note = (None, None) if args.no_cache else _cache(config)

    def catalog() -> Catalog:
        # Loaded only when the report is not cached (a cached one was judged by this catalog).
        loaded = load_or_report(config, warnings=False)
        if loaded is None:
            raise _CatalogError
        return loaded

    try:
        report = scan(
            paths,
            catalog,
            merge_calls(config.scan_calls),
            root=config.root,
            unlogged=not args.no_unlogged,
            cache=cache,
        )
    except _CatalogError:
        print("error: the catalog has errors; fix them before scanning", file=sys.stderr)
        return 1
    note = note or (cache.note if cache is not None else None)
    if note is not None:
        print(note, file=sys.stderr)
    if args.format == "json":
        print(report.to_json())
    else:
        if report.diagnostics:
            print(report.to_text())
        print(report.summary(), file=sys.stderr)
        if report.files and not report.calls:
            print(NO_CALLS_NOTE.format(files=report.files), file=sys.stderr)
        if report.candidates:
            print(candidates_note(report), file=sys.stderr)
    if report.errors:
        return 1
    return 1 if args.warnings_as_errors and report.diagnostics else 0
