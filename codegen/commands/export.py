"""``metric-catalog export weaver --out DIR``: the catalog as an OpenTelemetry Weaver registry.

Writes ``manifest.yaml``, one ``<module>.yaml`` per catalog file and
``metric-catalog.json`` into DIR (:mod:`codegen.weaver.export`); a team with
Weaver then runs ``weaver registry check -r DIR`` and ``weaver registry generate``
on it. A ``<module>.yaml`` an earlier export wrote for a catalog file now gone is
removed; any other file in DIR is left alone.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Final

from ..catalog.diagnostics import format_diagnostics, has_errors
from ..config import PYPROJECT, parse_pyproject
from ..safe_fs import read_head, write_atomic
from ..weaver.export import FORMATS, WRITTEN_BY, WeaverFormat, export_registry
from ..weaver.registry import load_registry
from ..weaver.rules import check_registry
from . import UsageError, add_root_argument, config_from_args, load_or_report

__all__ = ["DEFAULT_BASE_URL", "HELP", "configure", "project_version", "run"]

HELP = (
    "Export the catalog as an OpenTelemetry Weaver registry (manifest.yaml, one "
    "<module>.yaml per catalog file, metric-catalog.json)."
)

DEFAULT_BASE_URL: Final = "https://metric-catalog.invalid/schemas"
"""``schema_url`` without ``--schema-url``: this, then the version (a placeholder Weaver takes)."""

_URL: Final = re.compile(
    r"(?P<base>https?://[^\s/]+(/[^\s/]+)*)/(?P<version>[0-9]+\.[0-9]+(\.[0-9]+)?"
    r"([-+][0-9A-Za-z.-]+)?)/?\Z"
)
"""An http(s) URL whose last path segment is a version (Weaver's ``schema_url`` rule)."""


def project_version(root: Path) -> str | None:
    """``[project] version`` of ``root/pyproject.toml``, or ``None`` when it has none.

    Raises:
        ConfigError: The file exists but cannot be read or parsed (exit 2, naming it).
    """
    path = root / PYPROJECT
    if not path.is_file():
        return None
    project = parse_pyproject(path).get("project")
    version = project.get("version") if isinstance(project, dict) else None
    return version if isinstance(version, str) else None


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the target (``weaver``), ``--out``, ``--format``, ``--schema-url`` and the project.

    No ``--catalog``: ``--config catalog=PATH`` picks other catalog files.
    """
    parser.add_argument(
        "target", choices=("weaver",), metavar="TARGET", help="what to export to: weaver"
    )
    parser.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="the registry folder to write"
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="v1",
        help="v1 (groups:, every Weaver reads it; default) or v2 (file_format: definition/2)",
    )
    parser.add_argument(
        "--schema-url",
        metavar="URL",
        help="the registry's schema_url: an http(s) URL whose last segment is its version "
        f"(default: {DEFAULT_BASE_URL}/<the pyproject's [project] version, else 0.0.0>)",
    )
    add_root_argument(parser, catalog=False)


def _remove_stale(out: Path, files: dict[str, str]) -> None:
    """Remove the ``<module>.yaml`` an earlier export wrote for a catalog file now gone.

    Weaver loads every ``*.yaml`` of the folder, so a stale one would come back as
    metrics the catalog no longer has; a file export did not write is left alone
    (the read-back check reports it if Weaver would refuse it).
    """
    for path in sorted(out.glob("*.yaml")):
        if path.name in files or path.is_symlink() or not path.is_file():
            continue
        try:
            head = read_head(path, len(WRITTEN_BY) + 2)
        except OSError:
            continue
        if head == f"# {WRITTEN_BY}".encode():
            path.unlink()
            print(f"removed {path.as_posix()} (its catalog file is gone)")


def run(args: argparse.Namespace) -> int:
    """Write the registry and check it with Weaver's rules.

    Exits 1 when the catalog has errors or the registry breaks a rule (the files
    are written all the same, so the findings can be read in them), 2 on a bad
    flag or a failed write.
    """
    config = config_from_args(args)
    url = args.schema_url or f"{DEFAULT_BASE_URL}/{project_version(config.root) or '0.0.0'}"
    match = _URL.match(url)
    if match is None:
        msg = (
            f"--schema-url {url!r} is not an http(s) URL whose last segment is a version "
            "(1.2.0, 1.2.0-rc.1): Weaver reads the registry's version from it, e.g. "
            "https://example.com/schemas/myrl/1.2.0"
        )
        raise UsageError(msg)
    base, version = match.group("base"), match.group("version")
    catalog = load_or_report(config)
    if catalog is None:
        return 1
    fmt: WeaverFormat = "v2" if args.format == "v2" else "v1"
    files = export_registry(
        catalog,
        version=version,
        base_url=base,
        description=config.title,
        fmt=fmt,
    )
    out: Path = args.out
    for name, text in files.items():
        try:
            write_atomic(out / name, text)
        except OSError as exc:
            print(f"error: cannot write {out / name}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    print(f"wrote {len(files)} file(s) to {out.as_posix()} (Weaver {fmt}, version {version})")
    _remove_stale(out, files)
    # Read back what was written and apply Weaver's rules, so a registry Weaver would
    # refuse (a brief without a period, a name the namespace of another) fails here.
    registry = load_registry(out)
    findings = [*registry.diagnostics, *check_registry(registry)]
    if findings:
        print(format_diagnostics(findings), file=sys.stderr)
    return 1 if has_errors(findings) else 0
