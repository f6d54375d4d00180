"""``metric-catalog import weaver SRC --out DIR``: catalog files from a Weaver registry.

Reads the registry folder SRC (v1 and v2 files, references resolved:
:mod:`codegen.weaver.registry`), writes one catalog file per catalog file it was
exported from, or per registry file (:mod:`codegen.weaver.importer`), then
validates what it wrote. What the catalog cannot hold is reported as a warning.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path
from typing import Final

from ..catalog.diagnostics import format_diagnostics, has_errors
from ..catalog.pipeline import load_and_check
from ..config import NoCatalogError
from ..safe_fs import write_atomic
from ..weaver.importer import import_registry
from ..weaver.registry import Registry, load_registry
from . import UsageError, add_root_argument, config_from_args

__all__ = ["HELP", "configure", "run"]

HELP = (
    "Import an OpenTelemetry Weaver registry (v1 groups or v2 definition/2, e.g. the "
    "semantic conventions) as catalog files, reporting what the catalog cannot hold."
)

_PREFIX: Final = re.compile(r"([a-z][a-z0-9_]*\.)+\Z")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the target (``weaver``), SRC, ``--out``, ``--prefix`` and the project."""
    parser.add_argument(
        "target", choices=("weaver",), metavar="TARGET", help="what to import from: weaver"
    )
    parser.add_argument("source", type=Path, metavar="SRC", help="the registry folder to read")
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="the folder to write catalog files to",
    )
    parser.add_argument(
        "--prefix",
        default="",
        metavar="NAMESPACE",
        help="put NAMESPACE (e.g. rl.) before every metric name lacking it; without it, "
        "each metric keeps its name and its file declares the metric's namespace (jvm.)",
    )
    add_root_argument(
        parser,
        catalog=False,
        help="the project whose catalog the imported files are validated with, so a name "
        "clash with its rows is caught (default: the nearest pyproject.toml above the cwd)",
    )


def run(args: argparse.Namespace) -> int:
    """Import; 1 (writing nothing) when the registry or the catalog it makes has errors.

    2 on bad flags, or when DIR holds a file of the same name (nothing is overwritten).
    """
    if args.prefix and not _PREFIX.match(args.prefix):
        msg = f"--prefix {args.prefix!r} is not a namespace ending with '.', such as rl."
        raise UsageError(msg)
    registry = load_registry(args.source)
    result = import_registry(registry, prefix=args.prefix)
    findings = [*registry.diagnostics, *result.diagnostics]
    out: Path = args.out
    if has_errors(registry.diagnostics) or not result.files:
        print(format_diagnostics(findings), file=sys.stderr)
        print(f"import: nothing written to {out.as_posix()}", file=sys.stderr)
        return 1
    existing = sorted(name for name in result.files if (out / name).exists())
    if existing:
        msg = (
            f"{out.as_posix()} already holds {', '.join(existing)}; import into an empty "
            "folder (nothing is overwritten)"
        )
        raise UsageError(msg)
    # Validated in a scratch folder first: files that would not validate are not written.
    with tempfile.TemporaryDirectory(prefix="metric-catalog-import-") as scratch:
        for name, text in result.files.items():
            (Path(scratch) / name).write_text(text, encoding="utf-8")
        written = sorted(Path(scratch).iterdir())
        checked = load_and_check([*written, *_project_files(args)], root=Path(scratch), lint=False)
    findings += checked.diagnostics
    if findings:
        print(format_diagnostics(findings), file=sys.stderr)
    if has_errors(checked.diagnostics) or has_errors(result.diagnostics):
        _hint(registry, args.prefix)
        print(f"import: the catalog would not validate; nothing written to {out}", file=sys.stderr)
        return 1
    for name, text in sorted(result.files.items()):
        try:
            write_atomic(out / name, text)
        except OSError as exc:
            print(f"error: cannot write {out / name}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    print(
        f"wrote {len(result.files)} catalog file(s) with {len(registry.metrics)} metric(s) "
        f"to {out.as_posix()}"
    )
    return 0


def _project_files(args: argparse.Namespace) -> list[Path]:
    """The project's catalog files (absolute), or none when there is no catalog."""
    config = config_from_args(args)
    try:
        return [
            path if path.is_absolute() else config.root / path for path in config.catalog_files()
        ]
    except NoCatalogError:
        return []


def _hint(registry: Registry, prefix: str) -> None:
    """Say ``--prefix rl.`` when names in no namespace (``gpu``) are why the catalog fails."""
    outside = sorted(m.name for m in registry.metrics if "." not in m.name)
    if outside and not prefix:
        print(
            f"import: {len(outside)} metric name(s) have no namespace (e.g. {outside[0]}), "
            "which catalog series must; import again with --prefix rl.",
            file=sys.stderr,
        )
