"""``metric-catalog generate``: write the generated modules, docs pages and dashboards."""

from __future__ import annotations

import argparse
import sys
from typing import Final

from ..generate import manifest
from ..safe_outputs import check_output_locations
from . import add_root_argument, config_from_args

__all__ = ["HELP", "configure", "run"]

HELP: Final = "Render the catalog into generated modules, docs pages, dashboards and outputs."


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--root`` and ``--verbose``."""
    add_root_argument(parser)
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list each file written or removed"
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="render even when the manifest in the cache folder shows nothing changed",
    )


def run(args: argparse.Namespace) -> int:
    """Write what changed; 0 on success, 1 when the catalog has errors (nothing written).

    2 when a write fails: the run is one transaction (:func:`.writer.apply_changes`),
    so every old file is back and the message names the path and the reason.

    Raises:
        NoCatalogError: The catalog matches no file (exit 2): nothing is
            written or removed, whatever the manifest says.
        UnsafeOutputError: An output location resolves outside the project
            root (exit 2), checked before anything is read or written.
    """
    config = config_from_args(args)
    check_output_locations(config)
    config.catalog_files()
    # Fingerprinted before the catalog is read, so a file changed during the run
    # makes the next run render again instead of trusting outputs of older bytes.
    inputs = manifest.fingerprint_or_none(config)
    cached = None if args.no_cache else manifest.load_if_current(config, inputs=inputs)
    if cached is not None:
        if cached.report:
            print(cached.report, file=sys.stderr)
        print(
            f"generate: 0 written, {len(cached.outputs)} unchanged, 0 removed "
            "(catalog and generator unchanged since the last run)"
        )
        return 0
    # Imported here so the no-op path above never loads YAML, jsonschema or Jinja2.
    from ..generate.writer import WriteError, apply_changes  # noqa: PLC0415
    from . import plan_or_report  # noqa: PLC0415

    planned = plan_or_report(config, "generate", "nothing written")
    if planned is None:
        return 1
    changes, unchanged = planned.changes, planned.unchanged
    try:
        apply_changes(config.root, changes)
    except WriteError as exc:
        print(f"error: {exc.strerror}", file=sys.stderr)
        return 2
    manifest.record(config, planned.plan, config.managed_dirs, planned.report, inputs=inputs)
    removed = [c for c in changes if c.action == "delete"]
    written = [c for c in changes if c.action != "delete"]
    if args.verbose:
        for change in changes:
            verb = "removed" if change.action == "delete" else "wrote"
            print(f"{verb} {change.path}")
    print(f"generate: {len(written)} written, {len(unchanged)} unchanged, {len(removed)} removed")
    return 0
