"""``metric-catalog resolve``: the whole resolved catalog, stable for other tools."""

from __future__ import annotations

import argparse

from ..generate.resolve import render_resolved
from . import (
    add_format_argument,
    add_root_argument,
    config_from_args,
    load_or_report,
)

__all__ = ["HELP", "configure", "run"]

HELP = "Print the resolved catalog (derived names, Prometheus series, sources) as text or JSON."


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--format`` and the catalog location arguments."""
    add_format_argument(
        parser,
        "text table for people, or JSON (sorted, byte-stable) for tools (default: text)",
    )
    add_root_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Print the resolved catalog; 1 when the catalog does not load cleanly."""
    config = config_from_args(args)
    catalog = load_or_report(config)
    if catalog is None:
        return 1
    print(render_resolved(catalog, args.format, package=config.package))
    return 0
